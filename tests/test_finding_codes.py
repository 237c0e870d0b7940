"""Each finding code is written once in src/: in its check's @check (the registry stamps it on the
findings the check yields) or in verify/codes.py; whatever else names a code (a plan step's
reason, verify's fixes) cites it through the registry. FINDINGS.md catalogs exactly the codes
gpuenv can report (#30)."""

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


def _strings(tree: ast.AST) -> list[ast.Constant]:
    """The string constants of a module but its docstrings (the parts of an f-string included)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def _literals() -> dict[str, list[str]]:
    """Every string literal in src/ that is exactly a finding code -> where it is."""
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in _strings(ast.parse(path.read_text(), str(path))):
            if CODE.fullmatch(node.value):
                found.setdefault(node.value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _mentions(codes: set[str], sources: dict[str, str]) -> dict[str, list[str]]:
    """Each code -> where a string (not a docstring) of ``sources`` (name -> Python source) names
    it, as the whole string or inside prose ("stack.both-installed: ..."; comments do not count)."""
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, sorted(codes, key=len, reverse=True))) + r")(?![\w-])")
    found: dict[str, list[str]] = {code: [] for code in codes}
    for name, text in sources.items():
        for node in _strings(ast.parse(text, name)):
            found_here = pattern.findall(node.value)
            for code in found_here:
                found[code].append(f"{name}:{node.lineno}")
    return found


def _catalog() -> list[str]:
    return re.findall(r"^\| ([a-z0-9]+\.[a-z0-9-]+) \|", (ROOT / "FINDINGS.md").read_text(), flags=re.M)


def test_every_finding_code_is_written_once_in_src():
    """Once: where it is defined (a check's @check, verify/codes.py, the registry's own
    doctor.check-crashed). Plan steps, verify's fixes and the CLI cite it through the registry."""
    sources = {str(p.relative_to(ROOT)): p.read_text() for p in sorted(SRC.rglob("*.py"))}
    mentions = _mentions(set(_catalog()), sources)
    assert {code: where for code, where in mentions.items() if len(where) != 1} == {}
    literals = _literals()
    assert {code: where for code, where in mentions.items() if literals.get(code) != where} == {}


def test_the_mention_rule_sees_codes_in_prose_and_f_strings():
    code = {"stack.both-installed", "amd.kfd-missing"}
    source = (
        'why = f"stack.both-installed: {a} replaces {b}"\n'
        'fix = "gpuenv doctor amd.kfd-missing    # the machine"\n'
        '# stack.both-installed in a comment\n'
        'def f():\n    """amd.kfd-missing in a docstring."""\n'
        'other = "amd.kfd-missing-not"\n'
    )
    assert _mentions(code, {"m.py": source}) == {"stack.both-installed": ["m.py:1"], "amd.kfd-missing": ["m.py:2"]}


def test_a_plan_cites_codes_through_the_registry():
    from gpuenv.plan import purge
    from gpuenv.resolve.checks import cuda, stack

    assert registry.code_of(stack.both_installed) == "stack.both-installed"
    assert registry.cite(cuda.mixed_install, "why") == "cuda.mixed-install: why"
    assert registry.cite(cuda.mixed_install) == "cuda.mixed-install"
    with pytest.raises(LookupError):
        registry.code_of(purge.purge_steps)
    assert registry.code_named("torch.rocm_mismatch") == "torch.rocm-mismatch"
    with pytest.raises(LookupError):
        registry.code_named("torch.no_such_check")


def test_the_report_order_is_the_check_modules_order_whichever_module_is_imported_first():
    # The planner and verify import the checks they cite before the registry loads the rest.
    import subprocess
    import sys

    code = (
        "import gpuenv.verify.codes, gpuenv.plan.planner\n"
        "from gpuenv.resolve import registry\n"
        "print(' '.join(c.func.__module__.rsplit('.', 1)[1] for c in registry.all_checks()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    order = list(dict.fromkeys(out))
    assert order == [m for m in registry.CHECK_MODULES if m in order] and len(order) == len(registry.CHECK_MODULES)


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
