"""Start-up cost of `gpuenv probe --json` as a cold process, against `python3 -c pass`.

Prints the median wall time of each, measured alternately in the same run, and their ratio
(target on the development machine: <= 3). Usage: python3 bench/bench_probe.py [RUNS]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    # The baseline is the `python3` a user types (on pyenv machines, its shim), the probe is the
    # installed console script; fall back to `python -m gpuenv` when it is not on PATH.
    python3 = shutil.which("python3") or sys.executable
    gpuenv = shutil.which("gpuenv")
    probe = [gpuenv, "probe", "--json"] if gpuenv else [sys.executable, "-m", "gpuenv", "probe", "--json"]
    baseline = [python3, "-c", "pass"]
    _time(baseline), _time(probe)  # warm the page cache: "cold" means a new process, not a cold disk
    base_t, probe_t = [], []
    for _ in range(runs):
        base_t.append(_time(baseline))
        probe_t.append(_time(probe))
    b, p = statistics.median(base_t), statistics.median(probe_t)
    print(f"python3 -c pass        median {b * 1000:7.1f} ms  ({' '.join(baseline)})")
    print(f"gpuenv probe --json    median {p * 1000:7.1f} ms  ({' '.join(probe)})")
    print(f"ratio                  {p / b:.2f}  (target <= 3; {runs} runs each, {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
