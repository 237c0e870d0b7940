"""Each finding code is written once: in its check's @check (the registry stamps it on the
findings the check yields), and FINDINGS.md catalogs exactly the codes gpuenv can report (#30)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve import registry
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import CRASHED, check, known_codes, run_checks
from tests.doctor_cases import base

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "gpuenv"
CODE = re.compile(r"[a-z0-9]+\.[a-z0-9]+(?:-[a-z0-9]+)*")
# The plan cites the code a step answers in its `why` prose; a citation, not a definition.
CITING = {SRC / "plan" / "planner.py"}


def _literals() -> dict[str, list[str]]:
    """Every string literal in src/ that is exactly a finding code -> where it is."""
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.fullmatch(node.value):
                found.setdefault(node.value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _catalog() -> list[str]:
    return re.findall(r"^\| ([a-z0-9]+\.[a-z0-9-]+) \|", (ROOT / "FINDINGS.md").read_text(), flags=re.M)


def test_every_registered_code_is_written_once_in_src():
    literals = _literals()
    cited = {str(p.relative_to(ROOT)) for p in CITING}
    written = {
        code: [w for w in literals.get(code, []) if w.rsplit(":", 1)[0] not in cited] for code in known_codes()
    }
    assert {code: where for code, where in written.items() if len(where) != 1} == {}


def test_the_plan_cites_only_registered_codes():
    literals = _literals()
    cited = {str(p.relative_to(ROOT)) for p in CITING}
    citations = {code for code, where in literals.items() for w in where if w.rsplit(":", 1)[0] in cited}
    assert citations, "planner.py cites no code: update CITING"
    assert sorted(citations - set(known_codes())) == []


def _verify_codes() -> set[str]:
    # gpuenv verify's codes are not doctor checks: each is written once, in gpuenv/verify/.
    return {c for c, where in _literals().items() if c.startswith("verify.") and all("/verify/" in w for w in where)}


def test_findings_md_catalogs_exactly_the_registered_codes_and_verify_s():
    catalog = _catalog()
    assert len(catalog) == len(set(catalog)), "a code is cataloged twice"
    assert len(_verify_codes()) > 10
    assert sorted(set(catalog) ^ (set(known_codes()) | _verify_codes())) == []


@pytest.fixture
def odd_checks():
    registry.all_checks()
    before = list(registry._REGISTERED)

    @check(code="gpu.mixed-vendors", area="gpus")
    def foreign(facts, matrices, target):
        yield Finding(code="gpu.none", severity=Severity.ERROR, title="t", detail="d", fix="f")

    @check(code="amd.igpu-present", area="gpus")
    def plain(facts, matrices, target):
        yield Finding(severity=Severity.INFO, title="t", detail="d", fix="f")

    yield
    registry._REGISTERED[:] = before


def test_the_registry_stamps_the_check_s_code_and_refuses_a_foreign_one(odd_checks):
    # A foreign code would escape --only/--ignore and the blocker judgement: it is a bug in
    # that check, reported as one (the other checks still run).
    facts = from_dict(base("doctor-healthy-rocm"))
    found = run_checks(facts, load(), Target(), only=("gpu.mixed-vendors", "amd.igpu-present", CRASHED))
    assert "gpu.none" not in [f.code for f in found]
    crashed = [f for f in found if f.code == CRASHED]
    assert len(crashed) == 1 and "foreign" in crashed[0].detail and "'gpu.none'" in crashed[0].detail
    assert [f.title for f in found if f.code == "amd.igpu-present"] == ["t"]


def test_blocking_noted_and_not_judged_are_declared_on_registered_checks():
    codes = set(known_codes())
    for declared in (registry.blocking_codes(), registry.noted_codes(), registry.not_judged_codes()):
        assert declared and declared <= codes
