"""The layering rules of CONTRIBUTING.md, enforced: probe -> resolve -> plan -> execute, no back-edges;
only render/ imports rich; only the runner (and the probe's live-command helper) run processes;
no print in the cores; the shipped contract schemas extend the public ones (tests/contracts/);
no module over 500 lines; the resolve helpers below the checks; no file of the repository points
outside it."""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path

import pytest

import gpuenv
from tests.schemas import CONTRACTS, SCHEMAS

PKG = Path(gpuenv.__file__).resolve().parent  # the installed package: what users get
CORES = ("probe", "resolve", "plan")


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        yield path, ast.parse(path.read_text(), filename=str(path))


def _imports(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _layer(path: Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_only_render_imports_rich():
    offenders = [
        str(p.relative_to(PKG))
        for p, tree in _modules()
        if _layer(p) != "render" and any(n == "rich" or n.startswith("rich.") for n in _imports(tree))
    ]
    assert offenders == []


# Which layers each layer may import (besides facts, matrices, exitcodes and the stdlib).
ALLOWED = {
    "probe": {"probe"},
    "resolve": {"resolve"},
    "plan": {"plan", "resolve"},
    "execute": {"execute", "plan", "probe"},  # probe's pure parsers (/etc/passwd)
}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_no_back_edges(layer):
    bad = []
    for path, tree in _modules():
        if _layer(path) != layer:
            continue
        for name in _imports(tree):
            parts = name.split(".")
            if parts[0] != "gpuenv" or len(parts) < 2:
                continue
            if parts[1] in ("facts", "matrices", "exitcodes", "__init__") or parts[1] in ALLOWED[layer]:
                continue
            if parts[1] in ("commands", "render", "cli") or parts[1] in ALLOWED:
                bad.append(f"{path.relative_to(PKG)} imports {name}")
    assert bad == []


def test_cores_do_not_print_or_spawn_processes():
    bad = []
    for path, tree in _modules():
        rel = path.relative_to(PKG)
        if _layer(path) not in CORES:
            continue
        if "subprocess" in _imports(tree) and rel.as_posix() != "probe/host.py":
            bad.append(f"{rel} imports subprocess")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                bad.append(f"{rel}:{node.lineno} calls print")
    assert bad == []


def test_no_shell_strings_anywhere():
    bad = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                        bad.append(f"{path.relative_to(PKG)}:{node.lineno}")
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in ("system", "popen") and getattr(
                    func.value, "id", None
                ) == "os":
                    bad.append(f"{path.relative_to(PKG)}:{node.lineno} os.{func.attr}")
    assert bad == []


@pytest.mark.parametrize("name", ["facts.schema.json", "plan.schema.json"])
def test_shipped_contract_schemas_extend_the_contracts(name):
    ours = json.loads((SCHEMAS / name).read_text())
    theirs = json.loads((CONTRACTS / name).read_text())
    # We may only add optional properties: every required field and declared property of the
    # contract must still be there, unchanged.
    _assert_superset(theirs, ours, name)


def _assert_superset(contract, ours, where):
    if isinstance(contract, dict):
        assert isinstance(ours, dict), where
        for key, value in contract.items():
            if key in ("description", "title"):
                continue
            assert key in ours, f"{where}: {key} missing"
            if key == "required":
                assert ours[key] == value, f"{where}: required changed"
            else:
                _assert_superset(value, ours[key], f"{where}.{key}")
    else:
        assert contract == ours, where


def test_startup_imports_no_heavy_modules():
    import subprocess
    import sys

    code = (
        "import sys, gpuenv.cli, gpuenv.facts, gpuenv.probe;"
        "heavy = [m for m in ('rich', 'requests', 'pynvml', 'psutil', 'jsonschema') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_every_package_of_the_source_tree_is_in_the_wheel():
    """pyproject.toml lists its packages by name: a new subpackage left out of the list works in
    an editable install and is missing from the wheel."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    root = Path(__file__).resolve().parent.parent
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    src = root / "src"
    found = {".".join(p.parent.relative_to(src).parts) for p in src.rglob("__init__.py")}
    assert found - listed == set()


def _check_modules_imported(tree: ast.AST) -> set[str]:
    """The check modules a module imports, at module level or inside a function: by dotted name
    (gpuenv.resolve.checks.amd) or from the package (from gpuenv.resolve.checks import amd)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "gpuenv.resolve.checks":
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level and node.module is not None:
            found.add(node.module.split(".")[0])  # a relative import inside resolve/checks/
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.update(alias.name for alias in node.names)
    for name in _imports(tree):
        if name.startswith("gpuenv.resolve.checks."):
            found.add(name.split(".")[3])
    return found


def test_no_check_module_imports_another_check_module():
    # Checks depend only on the layers below them (inventory, facts_view, target, the matrices): a
    # helper two checks share lives in resolve/facts_view.py, not in one of the check modules.
    checks_dir = PKG / "resolve" / "checks"
    modules = sorted(p for p in checks_dir.glob("*.py") if p.name != "__init__.py")
    assert len(modules) > 10, "check modules not found"
    bad = []
    for path in modules:
        tree = ast.parse(path.read_text(), filename=str(path))
        others = _check_modules_imported(tree) - {path.stem}
        bad.extend(f"{path.name} imports checks.{other}" for other in sorted(others))
    assert bad == []


def test_the_check_import_rule_sees_every_form_of_import():
    # The rule above must fail on what it forbids, whichever way the import is written.
    for source in (
        "from gpuenv.resolve.checks.amd import rocm_gpus",
        "import gpuenv.resolve.checks.rocm",
        "from gpuenv.resolve.checks import apt",
        "def f():\n    from gpuenv.resolve.checks.loader import shadowed_wheel_libraries",
        "from .gpus import nvidia_driver_absent",
        "from . import envpaths",
    ):
        assert _check_modules_imported(ast.parse(source)), source
    assert not _check_modules_imported(ast.parse("from gpuenv.resolve.facts_view import rocm_gpus"))


# -- the executor's rooms (#30): one handler per step kind, keys, preflight, admission ------------


def test_every_step_kind_has_exactly_one_handler_holding_done_and_act():
    from gpuenv.execute.steps import _ALL, HANDLERS
    from gpuenv.plan.plan import Kind

    kinds = [k for h in _ALL for k in h.kinds]
    assert sorted(kinds) == sorted(set(kinds)), "a kind with two handlers"
    assert set(HANDLERS) == set(Kind), f"kinds without a handler: {set(Kind) - set(HANDLERS)}"
    for handler in _ALL:
        assert callable(handler.done) and callable(handler.act)


def test_step_handlers_depend_on_the_context_not_on_one_another():
    """A handler module imports the shared context and base, and the key module for apt-key; never
    another kind's handler nor the executor that calls it."""
    steps = PKG / "execute" / "steps"
    bad = []
    for path in sorted(steps.glob("*.py")):
        if path.name == "__init__.py":
            continue
        for name in _imports(ast.parse(path.read_text())):
            if name.startswith("gpuenv.execute.steps.") and name != "gpuenv.execute.steps.base":
                bad.append(f"{path.name} imports {name}")
            if name == "gpuenv.execute.executor":
                bad.append(f"{path.name} imports the executor")
    assert bad == []


@pytest.mark.parametrize(
    "module, where",
    [("urllib.request", {"execute/keys.py"}), ("fcntl", {"execute/preflight.py", "execute/journal.py"})],
)
def test_network_and_locks_have_one_room_each(module, where):
    users = {
        path.relative_to(PKG).as_posix()
        for path, tree in _modules()
        if _layer(path) == "execute" and module in _imports(tree)
    }
    assert users <= where, users


def test_only_the_runner_spawns_processes_in_the_executor():
    users = {
        path.relative_to(PKG).as_posix()
        for path, tree in _modules()
        if _layer(path) == "execute" and "subprocess" in _imports(tree)
    }
    assert users <= {"execute/runner.py"}, users


def test_saved_plan_admission_is_plan_logic_not_a_command():
    """apply's admission of a saved plan sits in the plan layer (the layering rules above hold for
    it), and the command module defines none of its rules."""
    assert (PKG / "plan" / "admission.py").is_file()
    rules = {"_trusted_uids", "_refuse_edited", "_expected", "trusted_uids", "edited", "stale", "expected"}
    for name in ("install.py", "apply.py"):
        tree = ast.parse((PKG / "commands" / name).read_text())
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert defined.isdisjoint(rules), name


# -- the matrices' rooms (#30): records and queries, reader and parsers, bundles ------------------


def test_the_matrices_import_no_layer():
    """Every layer reads the matrices (the rule above lets it), so they import none of the layers:
    only the small shared modules (record, jsoninput, bundled, trust) and one another."""
    layers = {*ALLOWED, "commands", "render", "cli"}
    bad = [
        f"{path.relative_to(PKG)} imports {name}"
        for path, tree in _modules()
        if _layer(path) == "matrices"
        for name in _imports(tree)
        if name.startswith("gpuenv.") and name.split(".")[1] in layers
    ]
    assert bad == []
    assert (PKG / "matrices" / "__init__.py").is_file() and not (PKG / "matrices.py").exists()


def test_the_matrices_are_a_package_of_rooms():
    assert len(sorted((PKG / "matrices").glob("*.py"))) >= 5


# -- every room (#30) --------------------------------------------------------------------------

MAX_LINES = 500


def _big_modules(root: Path) -> dict[str, int]:
    return {
        p.relative_to(root).as_posix(): n
        for p in sorted(root.rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }


def test_no_module_is_over_500_lines():
    assert len(list(PKG.rglob("*.py"))) > 100, "the package's modules were not found"
    assert _big_modules(PKG) == {}


def test_the_size_rule_sees_a_big_module(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "small.py").write_text("x = 1\n" * MAX_LINES)
    assert _big_modules(tmp_path) == {"pkg/big.py": MAX_LINES + 1}


# -- the resolve helpers (#30): below the checks, in one order ----------------------------------

# The modules the checks, the target choice and the planner share, lowest first: each may import
# only those before it (of gpuenv.resolve), never the registry, a check, a finding or the target.
HELPERS = ("memo", "inventory", "gpuinfo", "toolkitpaths", "wheelfit", "torchpick")


def _resolve_imports(tree: ast.AST) -> set[str]:
    """The gpuenv.resolve modules a module imports, by either form ("from gpuenv.resolve import
    inventory", "from gpuenv.resolve.inventory import series")."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "gpuenv.resolve":
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpuenv.resolve."):
            found.add((node.module or "").split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("gpuenv.resolve."))
    return found


@pytest.mark.parametrize("index, name", list(enumerate(HELPERS)))
def test_the_shared_resolve_helpers_import_only_those_below_them(index, name):
    tree = ast.parse((PKG / "resolve" / f"{name}.py").read_text())
    assert _resolve_imports(tree) <= set(HELPERS[:index])


def test_the_helper_rule_sees_every_form_of_import():
    assert _resolve_imports(ast.parse("from gpuenv.resolve import registry")) == {"registry"}
    assert _resolve_imports(ast.parse("from gpuenv.resolve.checks.amd import x")) == {"checks"}
    assert _resolve_imports(ast.parse("def f():\n    import gpuenv.resolve.target")) == {"target"}


def _memo_lists(tree: ast.AST) -> list[int]:
    """Lines of hand-rolled memos: a list literal [None, {}, ...] (the object last asked about and
    its answers), which resolve/memo.py's LastAsked replaces."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.List)
        and len(node.elts) >= 2
        and isinstance(node.elts[0], ast.Constant)
        and node.elts[0].value is None
        and isinstance(node.elts[1], ast.Dict)
    ]


def test_memos_use_the_one_idiom():
    assert {str(p.relative_to(PKG)): lines for p, tree in _modules() if (lines := _memo_lists(tree))} == {}
    assert _memo_lists(ast.parse("_memo: list = [None, {}]\n_asked = [None, {}, ()]")) == [1, 2]
    assert _memo_lists(ast.parse("pair = [None, 'x']\nrows = [[], {}]")) == []


# -- pointers (#30): what the code and docs name is in the repository ----------------------------

ROOT = Path(__file__).resolve().parent.parent
# Files a clone lacks: the workspace's shared folder (contracts, references, hooks) and its style
# guide. Each pattern is spelled in two parts so that this file names none of them.
OUTSIDE = ("shared" + "/", "../" + "shared", "STYLE" + ".md")


def _repository_files(root: Path) -> list[Path]:
    """What a clone holds: the tracked files and the untracked ones git does not ignore (never a
    virtual environment or a cache)."""
    listed = subprocess.run(
        ["git", "-c", f"safe.directory={root}", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=root, check=True, capture_output=True,
    ).stdout  # fmt: skip
    return [root / os.fsdecode(name) for name in listed.split(b"\0") if name]


def _words(path: Path) -> str:
    """A file's text, or a symbolic link's target (the fixtures' sysfs links dangle)."""
    if path.is_symlink():
        return os.readlink(path)
    return path.read_text(errors="replace") if path.is_file() else ""


def _pointers_outside(root: Path) -> list[str]:
    return sorted(
        f"{path.relative_to(root)}: {name}"
        for path in _repository_files(root)
        for name in OUTSIDE
        if name in _words(path)
    )


def test_nothing_names_a_file_outside_the_repository():
    """Code, docs, tests and fixtures, the matrix tools and the data they write all cite only what
    a clone holds (#30): the reference extracts live under matrices/sources/reference/."""
    seen = {str(path.relative_to(ROOT)) for path in _repository_files(ROOT)}
    assert {"matrices/tools/build_common.py", "matrices/rocm.json", "matrices/repos.json",
            "matrices/bundle.json", "matrices/sources/reference/errata.md"} <= seen  # fmt: skip
    assert len([name for name in seen if name.startswith("src/gpuenv/")]) > 100
    assert _pointers_outside(ROOT) == []


def test_the_pointer_rule_sees_a_pointer(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, capture_output=True)
    (tmp_path / ".gitignore").write_text(".venv/\n")
    (tmp_path / "README.md").write_text("see " + OUTSIDE[0] + "contracts/findings.md")
    (tmp_path / "matrices" / "tools").mkdir(parents=True)
    (tmp_path / "matrices" / "tools" / "build.py").write_text('ERRATA = "' + OUTSIDE[0] + 'reference/errata.md"')
    (tmp_path / "matrices" / "rocm.json").write_text('{"source": "as ' + OUTSIDE[2] + ' says"}')
    (tmp_path / "schema.json").symlink_to(OUTSIDE[1] + "/contracts/report.schema.json")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "notes.md").write_text(OUTSIDE[0])  # ignored: not in a clone
    (tmp_path / "plain.md").write_text("matrices/sources/reference/errata.md section 7")
    assert _pointers_outside(tmp_path) == [
        f"README.md: {OUTSIDE[0]}",
        f"matrices/rocm.json: {OUTSIDE[2]}",
        f"matrices/tools/build.py: {OUTSIDE[0]}",
        f"schema.json: {OUTSIDE[1]}",
        f"schema.json: {OUTSIDE[0]}",
    ]


# -- the stand-ins (src/gpuenv/standins/; what each saves: README.md there) ------------------------


def test_the_standins_import_no_layer():
    """Every layer may use a stand-in, so a stand-in uses none: only one another and rootpath (the
    one safe file reader, under jsoninput)."""
    bad = [
        f"{path.relative_to(PKG)} imports {name}"
        for path, tree in _modules()
        if _layer(path) == "standins"
        for name in _imports(tree)
        if name.startswith("gpuenv.") and not name.startswith("gpuenv.standins") and name != "gpuenv.rootpath"
    ]
    assert bad == []
    names = {p.stem for p in (PKG / "standins").glob("*.py")}
    assert {"record", "jsonout", "jsoninput", "checksum", "bundled", "debversion", "pep440"} <= names
