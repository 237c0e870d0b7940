"""How long the matrices take to load, in a cold process each time (no pass/fail: it prints).

    python3 bench/bench_matrices.py [RUNS]

Prints medians of: the import of gpuenv.matrices; load() (reads bundle.json; each subject is
parsed on first use); the first answer from every subject (what a doctor run pays at most);
a full eager parse of every file; and the process wall time beside `python3 -c pass`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

PROBE = r"""
import json, time
t0 = time.perf_counter()
import gpuenv.matrices as M
t1 = time.perf_counter()
m = M.load()
t2 = time.perf_counter()
m.amd_gpu("1002:7550"); m.nvidia_gpu("10de:2b85"); m.rocm_release("7.2.4").support("gfx1201")
m.min_driver("12.8"); m.torch_variants("2.7.0")
t3 = time.perf_counter()
M.parse_dir(M.bundled_dir(), "bench")
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first_answers": t3 - t2, "eager_parse": t4 - t3}))
"""


def wall(args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    samples = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True, text=True).stdout
        samples.append(json.loads(out))
    for key in ("import", "load", "first_answers", "eager_parse"):
        print(f"{key:14} {statistics.median(s[key] for s in samples) * 1e3:7.2f} ms (median of {runs})")
    base = statistics.median(wall([sys.executable, "-c", "pass"]) for _ in range(runs))
    proc = statistics.median(
        wall([sys.executable, "-c", "import gpuenv.matrices as M; m = M.load(); m.torch_variants('2.7.0')"])
        for _ in range(runs)
    )
    print(
        f"process wall   {proc * 1e3:7.2f} ms vs python3 -c pass {base * 1e3:.2f} ms: ratio {proc / base:.2f}"
    )
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print(
            "note: PYTHONDONTWRITEBYTECODE is set, so every run recompiles gpuenv from source (import is slower than installed)"
        )


if __name__ == "__main__":
    main()
