"""How well `gpuenv doctor` names the confirmed root cause of real-world GPU-environment bug reports.

Runs the doctor in ONE process over every case in tests/cases/ (facts rebuilt from one public
thread each, see tests/cases/README.md) and prints, per case, the expected codes it found, missed
and got wrong (a must_not code reported), then the recall (found must codes / all must codes), the
cases with a must_not code, the facts files gpuenv refused, and the error-severity codes that were
neither expected nor ruled out, for review. It is a measurement: the exit status is always 0.

    .venv/bin/python bench/score_cases.py [--verbose]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.cases_score import score_all  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="also list every code each case got")
    args = parser.parse_args(argv)

    score = score_all()
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
            if r.unexpected_errors:
                print(f"{'':<{width}}    unexpected errors: {', '.join(r.unexpected_errors)}")

    print()
    print(f"cases: {len(score.results)}")
    print(f"recall: {score.must_found}/{score.must_total} = {score.recall:.3f}")
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
    unexpected = [r for r in score.results if r.unexpected_errors]
    print(f"cases with unexpected errors (for review): {len(unexpected)}")
    for r in unexpected:
        print(f"  {r.slug}: {', '.join(r.unexpected_errors)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
