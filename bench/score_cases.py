"""How well `gpuenv doctor` names the confirmed root cause of real-world GPU-environment bug reports.

Runs the doctor in ONE process over every case in tests/cases/ (facts rebuilt from one public
thread each, see tests/cases/README.md) and prints, per case, the expected codes it found, missed
and got wrong (a must_not code reported), then the recall (found must codes / all must codes) beside
the precision (cases whose every error-severity finding is in the case's must or should; the others
carry a stray error, listed), the cases with a must_not code and the facts files gpuenv refused. It is a
measurement: the exit status is always 0.

    .venv/bin/python bench/score_cases.py [--verbose] [--heldout | --cases DIR]

--heldout scores tests/heldout/ instead: machines rebuilt from public threads that no check was
tuned to (issue 43's held-out measurement); --cases scores any directory in the same format.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.cases_score import CASES_DIR, HELDOUT_DIR, score_all  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="also list every code each case got")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--heldout", action="store_true", help=f"score the held-out corpus ({HELDOUT_DIR.name}/)"
    )
    where.add_argument(
        "--cases", type=Path, metavar="DIR", help="score the cases in DIR (default: tests/cases)"
    )
    args = parser.parse_args(argv)

    cases_dir = HELDOUT_DIR if args.heldout else (args.cases or CASES_DIR)
    if not cases_dir.is_dir():
        print(f"score_cases: {cases_dir} is not a directory", file=sys.stderr)
        return 2
    score = score_all(cases_dir=cases_dir)
    width = max((len(r.slug) for r in score.results), default=10)
    for r in score.results:
        if r.refused is not None:
            status = "REFUSED"
        elif r.crashed is not None:
            status = "CRASHED"
        elif r.wrong:
            status = "WRONG"
        elif r.missed:
            status = "MISSED"
        else:
            status = "ok"
        parts = [f"found={','.join(r.found) or '-'}"]
        if r.missed:
            parts.append(f"missed={','.join(r.missed)}")
        if r.wrong:
            parts.append(f"wrong={','.join(r.wrong)}")
        print(f"{r.slug:<{width}}  {status:<7}  {'  '.join(parts)}")
        if r.refused:
            print(f"{'':<{width}}    refused: {r.refused}")
        if r.crashed:
            print(f"{'':<{width}}    crashed: {r.crashed}")
        if args.verbose:
            print(f"{'':<{width}}    codes: {', '.join(r.codes) or '-'}")
            if r.stray_errors:
                print(f"{'':<{width}}    stray errors: {', '.join(r.stray_errors)}")

    print()
    print(f"cases: {len(score.results)}")
    print(f"recall: {score.must_found}/{score.must_total} = {score.recall:.3f}")
    stray = score.cases_with_stray
    clean = len(score.results) - len(stray)
    print(
        f"precision: {clean}/{len(score.results)} = {score.precision:.3f} "
        f"(cases with a stray error: {len(stray)}; healthy cases: {len(score.healthy)}, "
        f"{sum(1 for r in score.healthy if r in stray)} of them with an error)"
    )
    for r in stray:
        print(f"  {r.slug}{' [healthy]' if r.healthy else ''}: {', '.join(r.stray_errors) or r.refused or r.crashed}")
    print(f"cases with a must_not code: {len(score.cases_with_wrong)}")
    for r in score.cases_with_wrong:
        print(f"  {r.slug}: {', '.join(r.wrong)}")
    print(f"refused facts files: {len(score.refusals)}")
    for r in score.refusals:
        print(f"  {r.slug}: {r.refused}")
    if score.crashes:
        print(f"doctor crashed: {len(score.crashes)}")
        for r in score.crashes:
            print(f"  {r.slug}: {r.crashed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
