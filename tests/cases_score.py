"""Scores gpuenv's doctor against the real-world case corpus in tests/cases/.

Each case is two files, ``<slug>.facts.json`` (a gpuenv.facts/1 document rebuilt from one public
thread) and ``<slug>.case.json`` (the source, the root cause the thread confirmed, the finding
codes the doctor must report and those it must not). This module runs the doctor in-process over
every case and measures it; it judges nothing itself. Used by ``bench/score_cases.py`` (a report)
and ``tests/test_cases.py`` (the corpus checks and the recall target).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

CASES_DIR = Path(__file__).resolve().parent / "cases"
# The held-out corpus (tests/heldout/): machines from public threads that no check was tuned to; scored
# with the same rules, reported apart (bench/score_cases.py --heldout, tests/test_heldout.py).
HELDOUT_DIR = Path(__file__).resolve().parent / "heldout"
CONTRACTS = Path(__file__).resolve().parent / "contracts"
CASE_KEYS = ("source", "title", "root_cause", "must", "must_not", "target", "torch", "notes")
# Optional keys: ``should`` (codes a careful engineer would add beside the cause: true of the machine,
# not stray), ``healthy`` (true: a machine that worked, posted in a thread about something else; its
# ``must`` is empty and no error-severity finding is allowed), ``uncoded`` (a sentence: the thread's
# cause has no catalog code; ``must`` is empty and, as for a healthy machine, every error is stray).
OPTIONAL_KEYS = ("should", "healthy", "uncoded")


def catalog_codes() -> set[str]:
    """Every finding code gpuenv reports: its catalog FINDINGS.md, which keeps every code of the public
    contract (tests/contracts/findings.md; tests/test_checks_catalog.py holds it to that) and adds
    the codes checks added since (rocm.release-unknown, ...)."""
    codes = set()
    for line in (CONTRACTS.parent.parent / "FINDINGS.md").read_text().splitlines():
        m = re.match(r"\|\s*([a-z]+\.[a-z0-9-]+)\s*\|", line)
        if m:
            codes.add(m.group(1))
    return codes


def case_slugs(cases_dir: Path = CASES_DIR) -> list[str]:
    """Slugs of every case that has a case file, sorted."""
    return sorted(p.name[: -len(".case.json")] for p in cases_dir.glob("*.case.json"))


def load_case(slug: str, cases_dir: Path = CASES_DIR) -> tuple[dict, str]:
    """(the case document, the facts file's text) of one case."""
    case = json.loads((cases_dir / f"{slug}.case.json").read_text())
    facts_text = (cases_dir / f"{slug}.facts.json").read_text()
    return case, facts_text


@dataclass
class CaseResult:
    slug: str
    must: list[str]
    must_not: list[str]
    should: list[str] = field(default_factory=list)
    healthy: bool = False
    found: list[str] = field(default_factory=list)  # must codes the doctor reported
    missed: list[str] = field(default_factory=list)  # must codes it did not
    wrong: list[str] = field(default_factory=list)  # must_not codes it reported
    unexpected_errors: list[str] = field(default_factory=list)  # other error-severity codes
    stray_errors: list[str] = field(default_factory=list)  # error-severity codes outside must and should
    codes: list[str] = field(default_factory=list)  # every code reported, in report order
    refused: str | None = None  # gpuenv would not read the facts file (counts as all missed)
    crashed: str | None = None  # diagnose raised (counts as all missed)

    @property
    def ok(self) -> bool:
        return not self.missed and not self.wrong and self.refused is None and self.crashed is None


@dataclass
class Score:
    results: list[CaseResult]

    @property
    def must_total(self) -> int:
        return sum(len(r.must) for r in self.results)

    @property
    def must_found(self) -> int:
        return sum(len(r.found) for r in self.results)

    @property
    def recall(self) -> float:
        return self.must_found / self.must_total if self.must_total else 1.0

    @property
    def cases_with_stray(self) -> list[CaseResult]:
        """Cases whose report carries an error that is neither the cause nor one it should add
        (a refused or crashed case has no report, and counts here too: nothing it said can be trusted)."""
        return [r for r in self.results if r.stray_errors or r.refused is not None or r.crashed is not None]

    @property
    def stray_share(self) -> float:
        return len(self.cases_with_stray) / len(self.results) if self.results else 0.0

    @property
    def precision(self) -> float:
        """Share of cases whose errors are all expected (must or should): 1 - stray_share."""
        return 1.0 - self.stray_share

    @property
    def healthy(self) -> list[CaseResult]:
        return [r for r in self.results if r.healthy]

    @property
    def cases_with_wrong(self) -> list[CaseResult]:
        return [r for r in self.results if r.wrong]

    @property
    def refusals(self) -> list[CaseResult]:
        return [r for r in self.results if r.refused is not None]

    @property
    def crashes(self) -> list[CaseResult]:
        return [r for r in self.results if r.crashed is not None]


def score_case(slug: str, matrices, cases_dir: Path = CASES_DIR) -> CaseResult:
    """Run the doctor on one case and compare with what the case expects."""
    from gpuenv.facts import loads
    from gpuenv.resolve.finding import Target
    from gpuenv.resolve.report import diagnose

    case, facts_text = load_case(slug, cases_dir)
    result = CaseResult(
        slug=slug,
        must=list(case["must"]),
        must_not=list(case["must_not"]),
        should=list(case.get("should", [])),
        healthy=bool(case.get("healthy", False)),
    )
    try:
        facts = loads(facts_text)
    except Exception as exc:  # any refusal of a schema-valid document is a miss
        result.refused = f"{type(exc).__name__}: {exc}"
        result.missed = list(result.must)
        return result
    try:
        target = Target.parse(case["target"], torch=case["torch"])
        report = diagnose(facts, matrices, target)
    except Exception as exc:
        result.crashed = f"{type(exc).__name__}: {exc}"
        result.missed = list(result.must)
        return result
    result.codes = [f.code for f in report.findings]
    reported = set(result.codes)
    result.found = [c for c in result.must if c in reported]
    result.missed = [c for c in result.must if c not in reported]
    result.wrong = [c for c in result.must_not if c in reported]
    expected = set(result.must) | set(result.must_not)
    # An error that follows from another (Finding.cause) is shown under it, not as an error of
    # its own: one cause, one error (#43).
    errors = {f.code for f in report.findings if f.severity.value == "error" and not f.cause}
    result.unexpected_errors = sorted(errors - expected - set(result.should))
    result.stray_errors = sorted(errors - set(result.must) - set(result.should))
    return result


def score_all(slugs: list[str] | None = None, cases_dir: Path = CASES_DIR) -> Score:
    """Score every case of a corpus directory (or the given ones) in one process with the bundled matrices."""
    from gpuenv import matrices as matrices_mod

    m = matrices_mod.load()
    chosen = slugs if slugs is not None else case_slugs(cases_dir)
    return Score([score_case(slug, m, cases_dir) for slug in chosen])
