"""Start-up in instructions (valgrind's callgrind), as a ratio to the same interpreter's `-c pass`.

Deterministic where bench_all.py's wall ratios are not: a change of a few per cent shows even on
a loaded machine. Each venv given is measured with its own interpreter as the baseline, so a
main venv and a branch venv built from the same python compare directly.

    python3 bench/callgrind_ratio.py VENV [VENV ...]

Rows: doctor --json on this machine (no GPU on the bench box; its live probe varies a little from
run to run), on facts files of a box without a GPU, an NVIDIA box and an AMD box, and on an AMD
sysroot; torch --json on the AMD facts file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FACTS = REPO / "tests" / "facts"
AMD_FACTS = str(FACTS / "doctor-healthy-rocm.json")
AMD_ROOT = str(REPO / "tests" / "roots" / "ubuntu2404-rx9070xt-igpu-rocm")

ROWS = [
    ("doctor --json (this machine)", ["doctor", "--json"]),
    ("doctor --json --facts no GPU", ["doctor", "--json", "--facts", str(FACTS / "doctor-cpu-laptop.json")]),
    ("doctor --json --facts NVIDIA", ["doctor", "--json", "--facts", str(FACTS / "doctor-healthy-cuda.json")]),
    ("doctor --json --facts AMD", ["doctor", "--json", "--facts", AMD_FACTS]),
    ("doctor --json --root AMD", ["doctor", "--json", "--root", AMD_ROOT, "--user", "alice"]),
    ("torch --json --facts AMD", ["torch", "--json", "--facts", AMD_FACTS]),
]


def instructions(cmd: list[str]) -> int:
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        capture_output=True, text=True, check=False, cwd="/", env={**os.environ, "COLUMNS": "100"},
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if not found:
        sys.exit(f"no callgrind count for {cmd}: {done.stderr[-400:]}")
    return int(found.group(1))


def main() -> None:
    venvs = sys.argv[1:]
    if not venvs:
        sys.exit(__doc__)
    for venv in venvs:
        base = instructions([f"{venv}/bin/python", "-c", "pass"])
        print(f"{venv}: python -c pass {base:,} instructions")
        for name, args in ROWS:
            n = instructions([f"{venv}/bin/gpuenv", *args])
            print(f"  {name:<32} {n:>14,} {n / base:6.2f}x")


if __name__ == "__main__":
    main()
