"""Cost of planning: the pure planner on each facts fixture (in process), and
`gpuenv install rocm --json --facts FILE` as a cold process against `python3 -c pass`.

Usage: python3 bench/bench_plan.py [RUNS]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpuenv import facts as facts_mod  # noqa: E402
from gpuenv import matrices as matrices_mod  # noqa: E402
from gpuenv.plan import planner, repos  # noqa: E402
from gpuenv.plan.plan import Action, PlanError  # noqa: E402


def _cold(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    fixtures = sorted((ROOT / "tests/facts").glob("plan-*.json"))
    m = matrices_mod.load()
    r = repos.load()
    per_plan = []
    for path in fixtures:
        facts = facts_mod.loads(path.read_text())
        for stack in ("rocm", "cuda"):
            req = planner.Request(
                Action.INSTALL, stack, version="12.8" if stack == "cuda" else None, user="u"
            )
            start = time.perf_counter()
            for _ in range(runs):
                try:
                    planner.make_plan(facts, m, r, req)
                except PlanError:
                    pass
            per_plan.append((time.perf_counter() - start) / runs)
    print(
        f"make_plan              median {statistics.median(per_plan) * 1e3:7.2f} ms over {len(per_plan)} fixture/stack pairs"
    )
    base = statistics.median(_cold([sys.executable, "-c", "pass"]) for _ in range(runs))
    argv = [sys.executable, "-m", "gpuenv", "install", "rocm", "--json", "--facts", str(fixtures[0])]
    cli = statistics.median(_cold(argv) for _ in range(runs))
    print(f"python3 -c pass        median {base * 1e3:7.1f} ms")
    print(f"gpuenv install --json  median {cli * 1e3:7.1f} ms  (ratio {cli / base:.1f})")


if __name__ == "__main__":
    main()
