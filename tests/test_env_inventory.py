"""Every environment variable gpuenv reads, and why each is safe when gpuenv runs as root.

Under sudo with ``env_keep += "GPUENV_*"`` (plausible: the provisioning hook documents GPUENV_*
variables) or ``sudo -E``, the caller chooses root's environment. The rule: nothing in it changes
what root fetches, trusts or runs. The scan below finds every read in src/ (``os.environ`` by
name, ``os.getenv``, ``"X" in os.environ``, and the places that take the environment whole or by
a computed name) and every GPUENV_* name written anywhere in src/; the test fails when one
appears that is not listed here with its reason, and when a listed one is no longer read.

What gpuenv cannot guard is its own start: the dynamic loader reads LD_* and the interpreter
PYTHON* before gpuenv's first line runs. sudo's env_reset (its default) removes them; the README
says to run gpuenv through sudo, never with ``sudo -E``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "gpuenv"

# name -> why it is safe as root
NAMES = {
    "COLUMNS": "the width output is wrapped at; layout only",
    "NO_COLOR": "colour off; layout only",
    "TERM": "TERM=dumb turns colour off; layout only",
    "PATH": "read as facts (the toolkits on the caller's PATH) and to find the interpreter `verify` "
    "checks by default; root runs programs from the fixed system PATH only (trust.SYSTEM_PATH), and "
    "an interpreter found on the caller's PATH runs as whoever could have changed it "
    "(gpuenv.interpreter)",
    "LD_LIBRARY_PATH": "read as facts (the doctor's loader checks); never passed to a child root runs",
    "KUBERNETES_SERVICE_HOST": "a fact: in a container; a plan then leaves out kernel parts, it never "
    "adds a source, a key or a program",
    "SUDO_USER": "set by sudo itself (over any inherited value): the account that ran sudo, the default "
    "--user that gets the GPU groups and owns a --venv (pip runs as that account, never as root)",
    "SUDO_UID": "set by sudo itself: as root, a plan file that account could write is accepted (it "
    "could become root anyway); any other account's is refused",
    "TMPDIR": "where temporary directories go; as root only where it passes trust's rule (root's, "
    "no other account can write it or a directory above it: trust.temp_parent), else /run or /tmp",
    "GPUENV_STATE_DIR": "where an installed matrices bundle lives; as root a bundle is used only when "
    "no other account could have changed it or a directory above it, and `matrix update`/`reset` "
    "refuse a state directory another account could change (gpuenv.matrices, gpuenv.matrixbundle)",
}
# file:function -> why taking the environment there (whole, or by a computed name) is safe as root
WHOLE = {
    "probe/__init__.py:_environment": "the GPU-relevant variables (probe.environment.VARIABLES) recorded "
    "as facts for the doctor; nothing is run or loaded from them",
    "probe/__init__.py:_downloads": "the proxy, CA and pip index variables (probe.environment."
    "DOWNLOAD_VARIABLES) recorded by name as set or not, never their values; nothing is run or fetched "
    "from them",
    "probe/environment.py:downloads": "the mapping _downloads passes: only whether each of "
    "DOWNLOAD_VARIABLES is set is kept",
    "probe/environment.py:select": "the mapping _environment passes: the same GPU-relevant variables, "
    "kept as facts",
    "probe/environment.py:path_targets": "the facts' own variables: where the toolkit paths lead is read "
    "(realpath), nothing there is run",
    "interpreter.py:start": "as root, only the values of the names a caller lists in `keep` "
    "(verify.run.KEEP: which GPUs to use, never a path) on top of the fixed interpreter.ENV; not as "
    "root, the caller's own environment for an interpreter that runs as the caller",
}


def _environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ" and getattr(node.value, "id", None) == "os") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def _const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def scan() -> tuple[set[str], set[str], set[str]]:
    """(names read, file:function sites that take the environment otherwise, GPUENV_* names written)."""
    names: set[str] = set()
    whole: set[str] = set()
    written: set[str] = set()
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text(), str(path))
        parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(tree):
            text = _const(node)
            if text:
                written |= set(re.findall(r"\bGPUENV_[A-Z0-9_]+", text))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "getenv":
                name = _const(node.args[0]) if node.args else None
                names.add(name) if name else whole.add(f"{rel}:{_function(node, parents)}")
            if not _environ(node):
                continue
            up = parents.get(node)
            name = None
            if isinstance(up, ast.Subscript):
                name = _const(up.slice)
            elif isinstance(up, ast.Attribute) and up.attr == "get":
                call = parents.get(up)
                name = _const(call.args[0]) if isinstance(call, ast.Call) and call.args else None
            elif isinstance(up, ast.Compare) and len(up.ops) == 1 and isinstance(up.ops[0], (ast.In, ast.NotIn)):
                name = _const(up.left)
            names.add(name) if name else whole.add(f"{rel}:{_function(node, parents)}")
    return names, whole, written


def _function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node.name
    return "<module>"


def test_every_variable_gpuenv_reads_is_listed_with_why_it_is_safe_as_root():
    names, whole, written = scan()
    assert names == set(NAMES), f"read but not listed: {sorted(names - set(NAMES))}; gone: {sorted(set(NAMES) - names)}"
    assert whole == set(WHOLE), f"taken whole, not listed: {sorted(whole - set(WHOLE))}; gone: {sorted(set(WHOLE) - whole)}"
    assert written <= set(NAMES), f"GPUENV_* names in src/ that gpuenv does not read: {sorted(written - set(NAMES))}"


def test_no_test_only_switch_is_left_in_the_package():
    _, _, written = scan()
    assert not [n for n in written if n.startswith("GPUENV_TEST")]


def test_every_child_gets_an_environment_chosen_by_gpuenv():
    """No subprocess call in src/ leaves its environment to inheritance by default: each passes
    ``env=`` (the runner's fixed one for apt, dpkg and the rest; gpuenv.interpreter's for an
    interpreter)."""
    bare = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and getattr(node.func.value, "id", None) == "subprocess"
                and node.func.attr in ("run", "Popen", "call", "check_call", "check_output")
                and not any(kw.arg == "env" for kw in node.keywords)
            ):
                bare.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert bare == []


@pytest.mark.skipif(os.geteuid() != 0, reason="root's rule (CI is root)")
def test_apt_and_dpkg_as_root_get_the_fixed_environment_not_the_callers(tmp_path, monkeypatch):
    from gpuenv.execute import runner

    monkeypatch.setenv("APT_CONFIG", str(tmp_path / "evil.conf"))
    monkeypatch.setenv("LD_PRELOAD", str(tmp_path / "evil.so"))
    monkeypatch.setenv("GPUENV_STATE_DIR", str(tmp_path))
    result = runner.Runner("/").run(["env"], check=True)
    env = dict(line.split("=", 1) for line in result.output.splitlines() if "=" in line)
    assert env == runner._ENV


# -- GPUENV_STATE_DIR as root ---------------------------------------------------------------------------


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GPUENV_"))}
    return subprocess.run([sys.executable, "-m", "gpuenv", *args], env={**full, **env}, cwd="/",
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


@pytest.fixture
def users_dir(tmp_path):
    """A state directory another account owns (what a user would point GPUENV_STATE_DIR at)."""
    state = tmp_path / "alice-state"
    state.mkdir()
    os.chown(state, 1000, 1000)
    return state


@pytest.mark.skipif(os.geteuid() != 0, reason="root's rule (CI is root)")
def test_as_root_matrix_update_and_reset_refuse_a_state_directory_another_account_controls(tmp_path, users_dir):
    from gpuenv import matrices as M
    from gpuenv import matrixbundle as B
    from tests.test_repos_bundle import mirror_bundle

    bundle = mirror_bundle(tmp_path / "bundle")
    for args in (["update", "--from", str(bundle), "--sha256", B.digest(bundle)], ["reset"]):
        done = _cli("matrix", *args, env={"GPUENV_STATE_DIR": str(users_dir)})
        assert done.returncode == 3, done.stdout + done.stderr
        assert done.stderr.count("\n") == 1 and "belongs to uid 1000" in done.stderr, done.stderr
        assert list(users_dir.iterdir()) == []
    M.clear_cache()


@pytest.mark.skipif(os.geteuid() != 0, reason="root's rule (CI is root)")
def test_as_root_a_bundle_in_a_directory_another_account_controls_steers_no_plan(tmp_path, users_dir):
    import shutil

    from tests.test_repos_bundle import AMD_FACTS, FPR, keys, mirror_bundle, plan_json

    shutil.copytree(mirror_bundle(tmp_path / "bundle"), users_dir / "matrices")  # alice put it there
    plan = plan_json("rocm", "--facts", str(AMD_FACTS), env={"GPUENV_STATE_DIR": str(users_dir)})
    assert keys(plan) and FPR not in str(keys(plan)) and "127.0.0.1" not in str(plan)


def test_the_proxy_and_ca_variables_are_recorded_by_name_never_by_value():
    """Issue 40: the inventory and verify's report did not record the variables that decide
    where downloads come from. Now each is listed, set or not; a value (a proxy's password, a
    token in an index URL) appears nowhere."""
    secret = "s3cr3t-token"
    from gpuenv.probe.environment import DOWNLOAD_VARIABLES

    env = {k: v for k, v in os.environ.items() if k not in DOWNLOAD_VARIABLES}
    env |= {"HTTPS_PROXY": f"http://u:{secret}@proxy.example:3128", "PIP_INDEX_URL": f"https://t:{secret}@idx.example/simple"}
    probe = subprocess.run([sys.executable, "-m", "gpuenv", "probe", "--json"], env=env, capture_output=True,
                           text=True, timeout=120, check=False)  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    downloads = json.loads(probe.stdout)["downloads"]
    assert downloads["HTTPS_PROXY"] is True and downloads["PIP_INDEX_URL"] is True
    assert downloads["NO_PROXY"] is False and downloads["REQUESTS_CA_BUNDLE"] is False
    assert secret not in probe.stdout
    verify = subprocess.run([sys.executable, "-m", "gpuenv", "verify", "--json"], env=env, capture_output=True,
                            text=True, timeout=300, check=False)  # fmt: skip
    assert verify.returncode in (0, 1), verify.stderr
    machine = json.loads(verify.stdout)["machine"]
    assert machine["downloads"] == downloads and secret not in verify.stdout + verify.stderr
    shown = subprocess.run([sys.executable, "-m", "gpuenv", "probe"], env=env, capture_output=True, text=True,
                           timeout=120, check=False)  # fmt: skip
    assert "set: HTTPS_PROXY, PIP_INDEX_URL (values not shown)" in shown.stdout and secret not in shown.stdout
