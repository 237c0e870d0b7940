"""Mutation testing for the code that runs as root: how many small bugs the fast tests notice.

Usage (from the repository root, with the test extra installed; see README "Mutation testing")::

    python bench/mutate.py                          # every module in MODULES, each with its tests
    python bench/mutate.py rootpath journal         # modules by short name (or path)
    python bench/mutate.py journal --tests tests/test_execute_safety.py   # these test files instead
    python bench/mutate.py src/gpuenv/redact.py --tests tests/test_report.py   # a module not in MODULES
    python bench/mutate.py journal --list           # the mutants only, nothing run
    python bench/mutate.py planner --max 120        # an evenly spaced sample of the mutants
    python bench/mutate.py journal --jobs 2 --survivors bench/journal-survivors.txt

Each module is mutated one small bug at a time (a comparison flipped or moved across its
boundary, a condition negated, ``and``/``or`` swapped, an integer constant moved by one, a
``True``/``False`` flipped, a ``return``/``raise``/``continue``/``break`` or a bare call such as
``fh.flush()``/``os.fsync(fd)`` deleted, a flag such as ``os.O_EXCL``/``os.O_NOFOLLOW`` or
``fcntl.LOCK_NB`` dropped from a bitwise or) and the module's own fast test files run against
every mutant: the ones ``MODULES`` below maps it to, or the files given with ``--tests``. A mutant is *caught* when the tests fail, or when they hang past the
per-mutant timeout (killed: the suite's pytest-timeout makes a hang fail, a timeout here is the
backstop). The score is caught / mutants.

Why a runner of its own rather than mutmut or cosmic-ray: both were weighed against this tree.
gpuenv is an src layout installed editable (a setuptools finder maps ``gpuenv`` and the
``gpuenv._matrices`` data package from ``matrices/``), its tests spawn the CLI in subprocesses,
and a useful run must pick, per module, the few fast test files that cover it (the whole fast
suite is minutes; a mutation run is hundreds of suites). mutmut 3 runs from a ``mutants/`` copy
of its own with trampolined functions and a stats pass over the whole test directory, and does
not carry ``gpuenv._matrices``; cosmic-ray needs a session database and a config file per module
with one test command for all of them. This script needs nothing beyond the test extra, does
the per-module mapping and the restriction to named functions (the executor's refusal paths),
and it checks, before any mutant, that the copy under test is what the tests import.

How: the package is copied to a temporary directory (``gpuenv/`` from ``src/``, ``matrices/`` as
``gpuenv/_matrices``), and pytest runs from the repository root with ``PYTHONPATH`` set to that
copy, so it (not the editable install) is imported, by the tests and by the CLI they spawn.
Before any mutant the unmutated copy must pass the mapped tests and a probe must show
``gpuenv.__file__`` inside the copy; else the module is reported as not run. Chroot tests never
run (``-m "not chroot"``).
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The defaults, one row per module: module -> (test arguments for pytest, functions to restrict
# the mutants to or None for all). Test arguments are files or node ids under tests/, plus pytest
# options such as -k. Keep them fast: every mutant runs them. --tests replaces them for one run.
MODULES: dict[str, tuple[list[str], list[str] | None]] = {
    "src/gpuenv/rootpath.py": (
        ["tests/test_execute_safety.py", "tests/test_rootpath.py"],
        None,
    ),
    "src/gpuenv/execute/journal.py": (
        ["tests/test_execute_safety.py", "tests/test_journal.py"],
        None,
    ),
    # The executor's refusal paths: what is refused before any change, and how.
    "src/gpuenv/execute/executor.py": (["tests/test_execute_safety.py", "tests/test_apply_refusals.py"], ["apply"]),
    "src/gpuenv/execute/keys.py": (
        ["tests/test_execute_safety.py", "tests/test_apply_refusals.py"],
        ["_check_scheme", "_loopback", "fetch_key", "binary_keyring", "redirect_request"],
    ),
    "src/gpuenv/execute/preflight.py": (
        ["tests/test_execute_safety.py", "tests/test_apply_refusals.py"],
        ["check_program", "dpkg_locked", "dpkg_interrupted", "clear_shadow_leftovers", "_lock_left", "_alive"],
    ),
    "src/gpuenv/execute/files.py": (["tests/test_execute_safety.py", "tests/test_apply_refusals.py"], ["write", "remove"]),
    "src/gpuenv/execute/steps/apt.py": (["tests/test_execute_safety.py", "tests/test_apply_refusals.py"], ["allowed_by"]),
    "src/gpuenv/plan/planner.py": (
        ["tests/test_plan.py", "-k", "not test_cli", "tests/test_planner_edges.py"],
        None,
    ),
    # What the planner purges: the other stack's packages, uninstallers, files and autoremove.
    "src/gpuenv/plan/purge.py": (
        ["tests/test_plan.py", "-k", "not test_cli", "tests/test_planner_edges.py", "tests/test_plan_therock.py"],
        None,
    ),
    "src/gpuenv/resolve/torchpick.py": (
        ["tests/test_torch.py", "-k", "not cli", "tests/test_resolve_core.py", "tests/test_torchpick.py"],
        None,
    ),
    # The compiled-code and driver rules the choice and the doctor's torch checks share.
    "src/gpuenv/resolve/wheelfit.py": (
        ["tests/test_torch.py", "-k", "not cli", "tests/test_resolve_core.py", "tests/test_torchpick.py"],
        None,
    ),
    "src/gpuenv/resolve/checks/nvidia.py": (
        ["tests/test_cases.py", "tests/test_resolve_core.py", "tests/test_checks_driver_not_loaded.py", "tests/test_checks_nvidia.py",
         "tests/test_checks_nova_wsl.py"],
        None,
    ),
    "src/gpuenv/resolve/checks/amd.py": (
        ["tests/test_cases.py", "tests/test_resolve_core.py", "tests/test_checks_driver_not_loaded.py", "tests/test_checks_amd.py"],
        None,
    ),
    # The helpers the check modules share (which GPUs ROCm serves, the driver's state, ...).
    "src/gpuenv/resolve/facts_view.py": (
        ["tests/test_cases.py", "tests/test_resolve_core.py", "tests/test_checks_driver_not_loaded.py", "tests/test_checks_amd.py",
         "tests/test_unjudged.py", "tests/test_rock_driver.py"],
        None,
    ),
    "src/gpuenv/resolve/checks/kernel.py": (
        ["tests/test_cases.py", "tests/test_resolve_core.py", "tests/test_checks_driver_not_loaded.py", "tests/test_checks_kernel.py"],
        None,
    ),
    "src/gpuenv/resolve/checks/torch.py": (
        ["tests/test_cases.py", "tests/test_resolve_core.py", "tests/test_checks_driver_not_loaded.py", "tests/test_checks_torch.py"],
        None,
    ),
    # What the planner purges and installs is judged from the packages dpkg lists.
    "src/gpuenv/probe/dpkg.py": (["tests/test_probe_parsers.py", "-k", "dpkg"], None),
    # Which GPUs a probe reports (the doctor and the planner act on them).
    "src/gpuenv/probe/pci.py": (["tests/test_probe_parsers.py", "-k", "pci or hex or is_gpu or test_probe_roots", "tests/test_probe_roots.py"],
                                None),
    # Which installed packages are a driver, a toolkit or ROCm: what the planner purges.
    "src/gpuenv/resolve/inventory.py": (
        ["tests/test_resolve_core.py", "tests/test_plan.py", "-k", "not test_cli", "tests/test_cases.py",
         "tests/test_inventory.py"],
        None,
    ),
    # What each GPU is (gfx target, module flavour) and where toolkit paths lead: what the
    # planner and the checks judge GPUs and loader paths by.
    "src/gpuenv/resolve/gpuinfo.py": (
        ["tests/test_resolve_core.py", "tests/test_plan.py", "-k", "not test_cli", "tests/test_cases.py",
         "tests/test_inventory.py"],
        None,
    ),
    "src/gpuenv/resolve/toolkitpaths.py": (
        ["tests/test_resolve_core.py", "tests/test_plan.py", "-k", "not test_cli", "tests/test_cases.py",
         "tests/test_inventory.py", "tests/test_envpaths_virt.py"],
        None,
    ),
    # Every value at gpuenv's seams (facts, plans, findings) is a record.
    "src/gpuenv/standins/record.py": (["tests/test_record.py", "tests/test_facts.py"], None),
    # How every command, apply as root among them, gets its argparse (its words untranslated).
    "src/gpuenv/startup.py": (["tests/test_cli.py", "tests/test_startup_imports.py"], ["_ngettext"]),
    # Who could have changed what root runs: programs found on the system path, links in
    # sticky directories, and a user's interpreter run as its owner.
    "src/gpuenv/trust.py": (["tests/test_trust.py", "tests/test_apply_refusals.py"],
                            ["untrusted_program", "unprivileged", "_on", "_present", "_walk", "_others_write"]),
    # How root starts an interpreter a user named: isolated, from /, as its owner.
    "src/gpuenv/interpreter.py": (
        ["tests/test_interpreter_isolation.py", "tests/test_interpreter_account.py", "tests/test_trust.py"],
        None,
    ),
    # Which driver and kernel packages are newer (the purge and the next-boot checks).
    "src/gpuenv/standins/debversion.py": (["tests/test_oracle_versions.py", "tests/test_kernel_names.py"], None),
    # The newest bundled CUDA, read without building cuda.json's tables; ROCm releases built when asked for.
    "src/gpuenv/matrices/query.py": (
        ["tests/test_matrices.py", "tests/test_doctor_stale.py", "tests/test_matrices_lazy_rocm.py"],
        ["cuda_versions", "rocm_versions", "rocm_release", "_rocm_at"],
    ),
    # nvidia_gpus.json's fast pass, held to the checked parser it stands in for; rocm.json's
    # versions checked at once and its releases when first asked for.
    "src/gpuenv/matrices/parsers.py": (["tests/test_matrices_nvidia_parse.py", "tests/test_matrices_index.py"],
                                       ["_parse_nvidia", "_amd_located", "_amd_gpu", "_parse_torch_located", "_torch",
                                        "_read_release"]),
    "src/gpuenv/matrices/parsers_rocm.py": (
        ["tests/test_matrices_lazy_rocm.py", "tests/test_matrices_index.py"],
        ["_parse_rocm", "_parse_rocm_located", "_releases", "_rocm_release"],
    ),
    # index.json: the shipped entries located, read one at a time; an index that misplaces one refused.
    "src/gpuenv/matrices/index.py": (["tests/test_matrices_index.py"], None),
}

PYTEST = ["-x", "-q", "-p", "no:cacheprovider", "-m", "not chroot", "--no-header", "-o", "addopts="]


# -- mutants --
_CMP_SWAP = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip


@dataclass
class Mutant:
    index: int
    line: int
    what: str


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    out: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[id(child)] = node
    return out


def _skipped(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Nodes no behaviour hangs on: docstrings, annotations, f-string texts."""
    child, parent = node, parents.get(id(node))
    while parent is not None:
        if isinstance(parent, ast.JoinedStr):
            return True
        if isinstance(parent, (ast.arg, ast.AnnAssign)) and child is getattr(parent, "annotation", None):
            return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and child is parent.returns:
            return True
        child, parent = parent, parents.get(id(parent))
    return False


def _in_functions(node: ast.AST, parents: dict[int, ast.AST], only: list[str] | None) -> bool:
    if only is None:
        return True
    parent = parents.get(id(node))
    while parent is not None:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.name in only:
            return True
        parent = parents.get(id(parent))
    return False


def _sites(tree: ast.AST, only: list[str] | None):
    """Every mutation of ``tree`` as (line, description, apply), in a fixed order; ``apply``
    changes the tree in place."""
    parents = _parents(tree)
    for node in ast.walk(tree):
        if _skipped(node, parents) or not _in_functions(node, parents, only):
            continue
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                new = _CMP_SWAP.get(type(op))
                if new:
                    yield line, f"{type(op).__name__} -> {new.__name__}", _set_op(node, i, new)
                    if isinstance(op, (ast.Lt, ast.Gt, ast.LtE, ast.GtE)):
                        flipped = {ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.Gt: ast.LtE, ast.GtE: ast.Lt}[type(op)]
                        yield line, f"{type(op).__name__} -> {flipped.__name__}", _set_op(node, i, flipped)
        elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
            yield line, f"negate the {type(node).__name__.lower()} condition", _negate(node)
        elif isinstance(node, ast.BoolOp):
            other = ast.Or if isinstance(node.op, ast.And) else ast.And
            yield line, f"{type(node.op).__name__.lower()} -> {other.__name__.lower()}", _set_attr(node, "op", other())
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield line, "drop a not", _replace_expr(node, parents, node.operand)
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            for delta in (1, -1):
                yield line, f"{node.value} -> {node.value + delta}", _set_attr(node, "value", node.value + delta)
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            yield line, f"{node.value} -> {not node.value}", _set_attr(node, "value", not node.value)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            for side in ("left", "right"):
                flag = getattr(node, side)
                if isinstance(flag, ast.Attribute) and flag.attr.isupper():
                    keep = node.right if side == "left" else node.left
                    yield line, f"drop {ast.unparse(flag)}", _replace_expr(node, parents, keep)
        if isinstance(node, (ast.Return, ast.Raise, ast.Continue, ast.Break)) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        ):
            what = ast.unparse(node).splitlines()[0][:60]
            yield line, f"delete `{what}`", _delete(node, parents)


def _set_op(node: ast.Compare, i: int, new: type) -> callable:
    return lambda: node.ops.__setitem__(i, new())


def _set_attr(node: ast.AST, name: str, value) -> callable:
    return lambda: setattr(node, name, value)


def _negate(node: ast.AST) -> callable:
    return lambda: setattr(node, "test", ast.UnaryOp(op=ast.Not(), operand=node.test))


def _replace_expr(node: ast.AST, parents: dict[int, ast.AST], new: ast.AST) -> callable:
    def apply() -> None:
        parent = parents[id(node)]
        for name, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, name, new)
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is node:
                        value[i] = new
                        return

    return apply


def _delete(node: ast.stmt, parents: dict[int, ast.AST]) -> callable:
    return _replace_expr(node, parents, ast.Pass())


def mutants(source: str, only: list[str] | None) -> list[tuple[Mutant, str]]:
    """Every distinct, compilable mutant of ``source`` as (Mutant, mutated source)."""
    base = ast.unparse(ast.parse(source))
    count = sum(1 for _ in _sites(ast.parse(source), only))
    out, seen = [], {base}
    for i in range(count):
        tree = ast.parse(source)
        line, what, apply = list(_sites(tree, only))[i]
        apply()
        ast.fix_missing_locations(tree)
        text = ast.unparse(tree)
        if text in seen:
            continue
        try:
            compile(text, "<mutant>", "exec")
        except SyntaxError:
            continue
        seen.add(text)
        out.append((Mutant(len(out), line, what), text))
    return out


# -- running --
def _copy_tree(dest: Path) -> Path:
    pkg = dest / "gpuenv"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "src" / "gpuenv", pkg, ignore=ignore)
    shutil.copytree(REPO / "matrices", pkg / "_matrices", ignore=ignore)
    return pkg


def _env(copy_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy_dir) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("GPUENV_TEST_INSTALLED", None)
    return env


def _run(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[str, float]:
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "timeout", time.monotonic() - start
    status = "passed" if proc.returncode == 0 else "failed" if proc.returncode == 1 else f"error {proc.returncode}"
    if proc.returncode not in (0, 1):
        sys.stderr.write(out.decode(errors="replace")[-2000:])
    return status, time.monotonic() - start


def _tests(module: str, args: argparse.Namespace) -> list[str]:
    """The test arguments for ``module``: ``--tests``, else its row in MODULES."""
    return args.tests or MODULES[module][0]


def _missing(tests: list[str]) -> list[str]:
    """The test files ``tests`` names that do not exist (options and their values aside): pytest
    would stop on them, or, given no file at all, run the whole suite."""
    return [
        arg
        for i, arg in enumerate(tests)
        if not arg.startswith("-") and not (i and tests[i - 1] in ("-k", "-m")) and not (REPO / arg.split("::")[0]).exists()
    ]


def run_module(module: str, args: argparse.Namespace) -> dict:
    tests = _tests(module, args)
    only = MODULES[module][1] if module in MODULES else None
    source = (REPO / module).read_text()
    found = mutants(source, only)
    if args.max and len(found) > args.max:
        step = len(found) / args.max
        found = [found[int(i * step)] for i in range(args.max)]
    if args.list:
        for m, _ in found:
            print(f"{module}:{m.line}: {m.what}")
        return {"module": module, "mutants": len(found), "caught": 0, "survivors": []}

    workers = max(1, args.jobs)
    dirs = [Path(tempfile.mkdtemp(prefix="gpuenv-mutate-")) for _ in range(workers)]
    try:
        rel = Path(module).relative_to("src")
        for d in dirs:
            _copy_tree(d)
        cmd = [sys.executable, "-m", "pytest", *PYTEST, *tests]
        env0 = _env(dirs[0])
        probe = subprocess.run([sys.executable, "-c", "import gpuenv, gpuenv._matrices; print(gpuenv.__file__)"],
                               cwd=REPO, env=env0, capture_output=True, text=True)  # fmt: skip
        if not probe.stdout.strip().startswith(str(dirs[0])):
            print(f"{module}: the copy is not what is imported ({probe.stdout.strip()}{probe.stderr[-300:]})")
            return {"module": module, "mutants": 0, "caught": 0, "survivors": [], "error": "import"}
        status, base = _run(cmd, env0, args.baseline_timeout)
        if status != "passed":
            print(f"{module}: the unmutated tests do not pass ({status}): {' '.join(tests)}")
            return {"module": module, "mutants": 0, "caught": 0, "survivors": [], "error": status}
        timeout = args.timeout or max(10.0, 3 * base + 5)
        print(f"{module}: {len(found)} mutants, tests {base:.1f}s unmutated, timeout {timeout:.0f}s", flush=True)

        pool = list(range(workers))
        survivors: list[Mutant] = []
        caught = 0

        def one(item: tuple[Mutant, str]) -> tuple[Mutant, str]:
            m, text = item
            slot = pool.pop()
            try:
                target = dirs[slot] / rel
                target.write_text(text)
                status, _ = _run(cmd, _env(dirs[slot]), timeout)
                target.write_text(source)
                return m, status
            finally:
                pool.append(slot)

        with ThreadPoolExecutor(workers) as ex:
            for m, status in ex.map(one, found):
                if status == "passed":
                    survivors.append(m)
                    if args.verbose:
                        print(f"  survived {module}:{m.line}: {m.what}", flush=True)
                else:
                    caught += 1
        return {"module": module, "mutants": len(found), "caught": caught, "survivors": survivors}
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


def _pick(names: list[str], tests: list[str] | None) -> list[str]:
    """The modules to mutate: MODULES' rows by short name or path, or, with ``--tests``, any
    module of the package by its path."""
    if not names:
        return list(MODULES)
    out = []
    for name in names:
        hits = [m for m in MODULES if m == name or Path(m).stem == name or m.endswith("/" + name)]
        if not hits and tests and name.startswith("src/gpuenv/") and (REPO / name).is_file():
            hits = [name]
        if not hits:
            sys.exit(f"unknown module {name!r}: one of {', '.join(Path(m).stem for m in MODULES)}, "
                     "or a path under src/gpuenv/ with --tests")  # fmt: skip
        out.extend(hits)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help="short names (rootpath, journal, nvidia ...) or paths; default all of MODULES")
    ap.add_argument("--max", type=int, default=0, help="an evenly spaced sample of at most this many mutants")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="mutants run at once (default 1)")
    ap.add_argument("--timeout", type=float, default=0, help="seconds per mutant (default 3x the clean run + 5)")
    ap.add_argument("--baseline-timeout", type=float, default=600)
    ap.add_argument("--tests", nargs="+", metavar="FILE",
                    help="test files or node ids to run against every mutant, instead of MODULES' defaults")  # fmt: skip
    ap.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    ap.add_argument("--verbose", "-v", action="store_true", help="print each survivor as it is found")
    ap.add_argument("--survivors", type=Path, help="write the survivors to this file")
    args = ap.parse_args(argv)

    picked = _pick(args.modules, args.tests)
    missing = sorted({t for m in picked for t in _missing(_tests(m, args))})
    if missing:
        sys.exit(f"no such test file: {', '.join(missing)}")
    results = [run_module(m, args) for m in picked]
    if args.list:
        return 0
    lines = []
    print(f"\n{'module':45} {'mutants':>8} {'caught':>7} {'%':>6}")
    for r in results:
        pct = 100 * r["caught"] / r["mutants"] if r["mutants"] else 0.0
        print(f"{r['module']:45} {r['mutants']:>8} {r['caught']:>7} {pct:>5.1f}%" + (f"  ({r['error']})" if r.get("error") else ""))
        lines += [f"{r['module']}:{m.line}: {m.what}" for m in r["survivors"]]
    if args.survivors:
        args.survivors.write_text("".join(line + "\n" for line in lines))
    elif lines:
        print("\nsurvivors:")
        print("\n".join(lines))
    return 0 if all(not r.get("error") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
