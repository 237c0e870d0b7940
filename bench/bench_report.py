"""`gpuenv report` over a fleet's worth of files: 10,000 files (facts, doctor and verify JSON of
3,334 hosts, laid out as the Ansible role fetches them: DIR/HOST.KIND.json) in one process.

The documents are the fixtures' own (tests/fleet/fetched/*), copied under new host names, so
the report reads real shapes, not a synthetic one. Prints the seconds for --json and --html.

    python bench/bench_report.py [--files N]

Target (issue "provisioning, fleets"): 10,000 files in under 20 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FETCHED = Path(__file__).resolve().parent.parent / "tests" / "fleet" / "fetched"
SCRIPT = str(Path(sys.executable).with_name("gpuenv"))
KINDS = ("facts", "doctor", "verify")


def _templates() -> dict[str, list[dict]]:
    """Every readable fixture document of each kind."""
    found: dict[str, list[dict]] = {k: [] for k in KINDS}
    for path in sorted(FETCHED.rglob("*.json")):
        kind = next((k for k in KINDS if path.name.endswith(f"{k}.json")), None)
        if kind is None:
            continue
        try:
            found[kind].append(json.loads(path.read_text()))
        except ValueError:
            continue  # the fixtures' deliberately broken files
    return {k: v for k, v in found.items() if v}


def _fleet(directory: Path, files: int) -> int:
    templates = _templates()
    kinds = list(templates)
    written = 0
    host = 0
    while written < files:
        host += 1
        for kind in kinds:
            if written >= files:
                break
            doc = templates[kind][host % len(templates[kind])]
            (directory / f"gpu{host:05d}.{kind}.json").write_text(json.dumps(doc))
            written += 1
    return host


def _time(argv: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, done.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuenv-fleet-") as tmp:
        fleet = Path(tmp, "fleet")
        fleet.mkdir()
        hosts = _fleet(fleet, args.files)
        print(f"{args.files} files, {hosts} hosts, through {SCRIPT}")
        for label, extra in (("--json", ["--json"]), ("--html", ["--html", str(Path(tmp, "fleet.html"))])):
            seconds, rc = _time([SCRIPT, "report", str(fleet), *extra])
            verdict = "ok" if seconds < 20 else "MISSED"
            print(f"report {label:7} {seconds:6.2f} s (exit {rc})  target < 20 s {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
