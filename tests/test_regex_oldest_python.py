"""Every supported Python runs the code (pyproject: requires-python >= 3.10).

``re`` grew syntax after 3.10 (possessive quantifiers and atomic groups in 3.11), and a pattern
is compiled only when its code runs: a module-level one breaks the import, one inside a function
breaks the command that reaches it, and neither shows on a newer interpreter. So each pattern in
src/ is found in the source (an ast walk: the first argument of every ``re`` call, ``pattern=``
arguments, the package-name ``Family`` patterns, with module constants, concatenations and
f-strings of constants followed) and compiled by the oldest supported Python, and every module is
imported there.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests import pythons

# re's functions -> the position of their flags argument
_RE_CALLS = {"compile": 1, "match": 2, "fullmatch": 2, "search": 2, "findall": 2, "finditer": 2,
             "split": 3, "sub": 4, "subn": 4}  # fmt: skip


class _Unknown(Exception):
    """A pattern made at run time (a parameter, a computed string): not judged here."""


class _Module:
    def __init__(self, tree: ast.Module):
        # Names bound once in the module (at any depth): their values can stand in for the name.
        bound: dict[str, list[ast.expr]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                bound.setdefault(node.targets[0].id, []).append(node.value)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                bound.setdefault(node.target.id, []).append(node.value)
        self.bound = {name: values[0] for name, values in bound.items() if len(values) == 1}

    def value(self, node: ast.expr, depth: int = 0) -> str | bytes | int:
        if depth > 20:
            raise _Unknown
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes | int):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.bound:
            return self.value(self.bound[node.id], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.BitOr):
            left, right = self.value(node.left, depth + 1), self.value(node.right, depth + 1)
            if isinstance(node.op, ast.BitOr) and isinstance(left, int) and isinstance(right, int):
                return left | right
            if isinstance(node.op, ast.Add) and type(left) is type(right) and not isinstance(left, int):
                return left + right  # type: ignore[operator]
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    if part.format_spec is not None or part.conversion != -1:
                        raise _Unknown
                    part = part.value
                value = self.value(part, depth + 1)
                if not isinstance(value, str):
                    raise _Unknown
                parts.append(value)
            return "".join(parts)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
            import re

            flag = getattr(re, node.attr, None)
            if isinstance(flag, int):
                return int(flag)
        raise _Unknown


def _patterns() -> tuple[list[dict], int]:
    """Every pattern of src/ that the source alone determines, and how many it does not."""
    found: list[dict] = []
    unknown = 0
    for path in sorted((pythons.SRC / "gpuenv").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        module = _Module(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            args: list[tuple[ast.expr, ast.expr | None]] = []
            if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "re"
                    and func.attr in _RE_CALLS and node.args):  # fmt: skip
                at = _RE_CALLS[func.attr]
                flags = node.args[at] if len(node.args) > at else None
                flags = next((k.value for k in node.keywords if k.arg == "flags"), flags)
                args.append((node.args[0], flags))
            elif isinstance(func, ast.Name) and func.id == "Family" and node.args:
                args.append((node.args[0], None))
            args += [(k.value, None) for k in node.keywords if k.arg == "pattern"]
            for pattern, flags in args:
                try:
                    text = module.value(pattern)
                    flag = module.value(flags) if flags is not None else 0
                except _Unknown:
                    unknown += 1
                    continue
                if isinstance(text, int) or not isinstance(flag, int):
                    unknown += 1
                    continue
                where = f"{path.relative_to(pythons.SRC)}:{node.lineno}"
                if isinstance(text, bytes):
                    found.append({"where": where, "bytes": text.decode("latin-1"), "flags": flag})
                else:
                    found.append({"where": where, "str": text, "flags": flag})
    return found, unknown


_COMPILE = """
import json, re
failed = []
for p in json.loads(sys.stdin.read()):
    pattern = p["bytes"].encode("latin-1") if "bytes" in p else p["str"]
    try:
        re.compile(pattern, p["flags"])
    except re.error as exc:
        failed.append(f"{p['where']}: {exc}")
print(json.dumps(failed))
"""

_IMPORT_ALL = """
import importlib, json, pkgutil
import gpuenv
failed = []
for info in pkgutil.walk_packages(gpuenv.__path__, "gpuenv."):
    if info.name.endswith(".__main__"):
        continue  # runs the command line
    try:
        importlib.import_module(info.name)
    except Exception as exc:
        failed.append(f"{info.name}: {exc!r}")
print(json.dumps(failed))
"""


def _oldest() -> tuple[tuple[int, int, int], str]:
    found = pythons.oldest()
    if found is None:
        pytest.skip(f"no Python {'.'.join(map(str, pythons.OLDEST))} on this machine (pyenv's or python3.10 on PATH)")
    return found


def test_the_walk_finds_the_patterns_of_src():
    # The walk itself can fail (a refactor that hides patterns from it): it must keep seeing the
    # bulk of them, one it knows among them.
    found, unknown = _patterns()
    assert len(found) >= 80 and len(found) > 4 * unknown
    assert any(p["where"].startswith("gpuenv/probe/dpkg.py") and "Architecture: " in p.get("bytes", "") for p in found)


def test_every_regex_in_src_compiles_under_the_oldest_supported_python():
    version, python = _oldest()
    found, _ = _patterns()
    done = pythons.run_source(python, _COMPILE, stdin=json.dumps(found))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [], pythons.label(version, python)


def test_every_module_imports_under_the_oldest_supported_python():
    version, python = _oldest()
    done = pythons.run_source(python, _IMPORT_ALL)
    assert done.returncode == 0, done.stderr
    failed = json.loads(done.stdout)
    assert failed == [], pythons.label(version, python)
    assert not list(Path(pythons.SRC).rglob("__pycache__/*.cpython-310.pyc"))  # -B: the checkout unchanged
