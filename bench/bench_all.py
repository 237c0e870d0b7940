"""Every command's start-up, as a ratio to this interpreter's own `-c pass`, measured interleaved.

The baseline is ``sys.executable -c pass``: the interpreter that runs gpuenv, never a `python3`
found on PATH (on pyenv machines that is a shell shim several times slower, which flatters every
ratio). Each round runs every command once, each right after a baseline run of its own, so
that load on the machine hits a command and its baseline alike; a row's ratio is the median of
its rounds' quotients, printed with the middle half of them. The commands run through the
console script of this interpreter's environment (what users type), with live sources as on a
real box. Then one process judges 10,000 facts files.

    python bench/bench_all.py [--rounds N] [--files N]

Targets (issue "Speed"): probe --json <= 3, doctor --json <= 4, torch --json <= 4, doctor (rich)
<= 5, install rocm --dry-run --facts F --json (the planner, no apt simulation) <= 6, any --help
<= 8, 10,000 facts files under 20 s. A last row, for reference, is the floor every command
stands on: gpuenv.cli and the standard modules it cannot do without.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FACTS = Path(__file__).resolve().parent.parent / "tests" / "facts"
SCRIPT = str(Path(sys.executable).with_name("gpuenv"))
PLAN_FACTS = str(FACTS / "plan-ubuntu2404-rx9070-cuda-leftovers.json")
AMD_FACTS = str(FACTS / "doctor-healthy-rocm.json")  # an AMD box: reads rocm.json and amd_gpus.json

ROWS = [
    ("probe --json", [SCRIPT, "probe", "--json"], 3),
    ("doctor --json", [SCRIPT, "doctor", "--json"], 4),
    ("doctor --json --facts AMD", [SCRIPT, "doctor", "--json", "--facts", AMD_FACTS], 4),
    ("torch --json", [SCRIPT, "torch", "--json"], 4),
    ("doctor (rich output)", [SCRIPT, "doctor"], 5),
    ("install rocm --dry-run --facts F --json", [SCRIPT, "install", "rocm", "--dry-run", "--facts", PLAN_FACTS, "--json"], 6),
    ("--help", [SCRIPT, "--help"], 8),
    ("doctor --help", [SCRIPT, "doctor", "--help"], 8),
    ("install --help", [SCRIPT, "install", "--help"], 8),
    ("apply --help", [SCRIPT, "apply", "--help"], 8),
    ("matrix --help", [SCRIPT, "matrix", "--help"], 8),
]
# What every command pays before gpuenv's own code runs, shown for reference (no target): the
# interpreter, and gpuenv.cli with one parser built: argparse, re and gettext (argparse imports
# them), without gettext's lookups; no help option, whose default formatter
# imports shutil, which gpuenv's does not. json is not on it: a probe writes its JSON with
# gpuenv.standins.jsonout.
FLOOR = ("(floor: gpuenv.cli, argparse, re)", [
    sys.executable, "-c", "from gpuenv.cli import argparse; argparse.ArgumentParser(add_help=False)",
], None)  # fmt: skip


def _once(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def startup(rounds: int) -> int:
    env = {**os.environ, "COLUMNS": "100"}
    env.pop("PYTHONPATH", None)
    baseline = [sys.executable, "-c", "pass"]
    rows = [r for r in ROWS if Path(r[1][0]).exists()] + [FLOOR]
    for _, cmd, _ in rows:  # warm the page cache: "cold" means a new process, not a cold disk
        _once(cmd, env)
    # Each command runs right after a baseline run of its own, and its ratio in that round is
    # the quotient of the two: load on the machine that comes and goes hits both alike. The
    # figure is the median of the rounds' ratios, with the middle half of them beside it.
    base_t: list[float] = []
    times: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    ratios: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    for _ in range(rounds):
        for name, cmd, _ in rows:
            base = _once(baseline, env)
            took = _once(cmd, env)
            base_t.append(base)
            times[name].append(took)
            ratios[name].append(took / base)
    base = statistics.median(base_t)
    print(
        f"baseline {sys.executable} -c pass: {base * 1000:.1f} ms "
        f"(median of {len(base_t)}, one before each command run; {rounds} rounds, {os.cpu_count()} CPUs)"
    )
    print(f"{'command':<44} {'ms':>7} {'ratio':>6} {'middle half':>12} {'target':>7}")
    missed = 0
    for name, _, target in rows:
        t = statistics.median(times[name])
        ratio = statistics.median(ratios[name])
        low, _, high = statistics.quantiles(ratios[name], n=4) if rounds > 1 else (ratio, ratio, ratio)
        spread = f"{low:.2f}-{high:.2f}"
        if target is None:
            print(f"{name:<44} {t * 1000:7.1f} {ratio:6.2f} {spread:>12}")
            continue
        ok = ratio <= target
        missed += not ok
        print(f"{name:<44} {t * 1000:7.1f} {ratio:6.2f} {spread:>12} {'<= ' + str(target):>7} {'ok' if ok else 'MISSED'}")
    return missed


def make_fleet(directory: Path, count: int) -> None:
    """``count`` facts files, the three doctor bases with per-file variations (hostnames, kernel
    ABI numbers, a broken dpkg here and there) so that no two are identical."""
    bases = [json.loads((FACTS / f"{b}.json").read_text()) for b in ("doctor-healthy-rocm", "doctor-healthy-cuda", "doctor-cpu-laptop")]
    for i in range(count):
        doc = json.loads(json.dumps(bases[i % len(bases)]))
        doc["host"]["hostname"] = f"node{i:05d}"
        doc["kernel"]["release"] = f"6.8.0-{40 + i % 50}-generic"
        if i % 7 == 0 and doc.get("packages"):
            doc["packages"]["unconfigured"] = ["rocm-core"]
        (directory / f"facts-{i:05d}.json").write_text(json.dumps(doc))


def fleet(count: int) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        make_fleet(Path(tmp), count)
        start = time.perf_counter()
        done = subprocess.run([SCRIPT, "doctor", "--json", "--facts", tmp], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, check=False)  # fmt: skip
        took = time.perf_counter() - start
    lines = done.stdout.count(b"\n")
    ok = took < 20 and lines == count
    print(f"{count} facts files through one `doctor --json`: {took:.1f} s ({lines} reports) {'ok' if ok else 'MISSED'} (target < 20 s)")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--files", type=int, default=10000)
    args = ap.parse_args()
    if not Path(SCRIPT).exists():
        sys.exit(f"no console script at {SCRIPT}: run this with the python of a venv that has gpuenv installed")
    missed = startup(args.rounds)
    fleet_ok = fleet(args.files) if args.files else True
    sys.exit(1 if missed or not fleet_ok else 0)


if __name__ == "__main__":
    main()
