"""Every code of the findings catalog: a facts case that fires it (with the catalog's severity) and
healthy machines where nothing fires (no false positives)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.registry import CRASHED, known_codes
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import BASES, CASES, base, variant
from tests.schemas import CONTRACTS, validate

HERE = Path(__file__).resolve().parent


def _codes(path: Path) -> list[str]:
    codes = re.findall(r"^\| ([a-z0-9]+\.[a-z0-9-]+) \|", path.read_text(), flags=re.M)
    assert len(codes) > 40, f"{path}: catalog not parsed"
    return codes


def catalog_codes() -> list[str]:
    """Codes of the public findings catalog (the contract, tests/contracts/findings.md)."""
    return _codes(CONTRACTS / "findings.md")


def test_the_product_catalog_keeps_every_contract_code_and_lists_every_code_gpuenv_reports():
    ours = _codes(HERE.parent / "FINDINGS.md")
    assert sorted(set(catalog_codes()) - set(ours)) == []
    assert sorted(set(known_codes()) - set(ours)) == []


@pytest.fixture(scope="module")
def matrices():
    return load()


def judge(doc, matrices, target=None, **kw):
    return diagnose(from_dict(doc), matrices, Target.parse(target), **kw)


def test_every_catalog_code_is_registered():
    assert sorted(set(catalog_codes()) - set(known_codes())) == []


def test_every_catalog_code_has_a_firing_case():
    # doctor.check-crashed is fired by a crashing check, not by facts: test_registry covers it.
    missing = [c for c in catalog_codes() if c not in CASES and c != CRASHED]
    assert missing == []


@pytest.mark.parametrize("name", BASES)
def test_bases_are_valid_facts(name):
    validate(base(name), "facts")


@pytest.mark.parametrize("name", BASES)
def test_healthy_bases_have_no_errors_or_warnings(name, matrices):
    report = judge(base(name), matrices)
    loud = [(f.code, f.title) for f in report.findings if f.severity is not Severity.INFO]
    assert loud == []
    assert report.exit_code() == 0


@pytest.mark.parametrize("code", sorted(CASES))
def test_case_fires_its_code(code, matrices):
    doc, target, severity = variant(code)
    validate(doc, "facts")
    report = judge(doc, matrices, target)
    fired = [f for f in report.findings if f.code == code]
    assert fired, f"{code} did not fire; got {[f.code for f in report.findings]}"
    assert {f.severity.value for f in fired} == {severity}
    for f in fired:
        assert f.title and "\n" not in f.title
        assert f.detail and f.fix
    validate(report.to_dict(), "report")


@pytest.mark.parametrize("code", sorted(CASES))
def test_code_is_silent_on_the_base_its_case_derives_from(code, matrices):
    name, _, target, _ = CASES[code]
    if code == "gpu.none":  # the laptop has no GPU (an info there): silent where there is one
        name = "doctor-healthy-rocm"
    report = judge(base(name), matrices, target)
    assert code not in [f.code for f in report.findings]


def test_findings_come_errors_first(matrices):
    doc, _, _ = variant("rocm.multiple-versions")  # info
    doc["environment"] = dict(doc.get("environment") or {}, HSA_OVERRIDE_GFX_VERSION="12.0.1")  # warning
    doc["packages"]["unconfigured"] = ["rocm-core"]  # error
    ranks = [f.severity.rank for f in judge(doc, matrices).findings]
    assert ranks == sorted(ranks) and set(ranks) == {0, 1, 2}
