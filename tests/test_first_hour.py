"""A newcomer's first hour, through the installed console script: the apply line `plan` prints
works as printed, a plan made by a normal user is for that user, text fits the terminal without
cutting words, a closed pipe is exit status 141 everywhere, JSON runs keep stderr quiet, a fleet of
facts files says it was not judged, shell completion, `advise` skips build copies and what
.gitignore ignores, and the platform line of a user who cannot read the ACPI tables.

The script is GPUENV_E2E_BIN (the built wheel, installed: tests/run.sh sets it), else the console
script of the interpreter running the tests. The normal user is nobody (uid 65534), by setpriv.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_term_output import on_tty

TESTS = Path(__file__).parent
ROOTS = TESTS / "roots"
FACTS = TESTS / "facts"
BIN = os.environ.get("GPUENV_E2E_BIN") or str(Path(sys.executable).with_name("gpuenv"))
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
pytestmark = pytest.mark.skipif(not os.path.exists(BIN), reason=f"no gpuenv console script at {BIN}")
as_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GPUENV_TEST", "SUDO_"))}
    return {**env, "COLUMNS": "200", **extra}


def gpuenv(*args: str, user: str = "root", cwd: str | Path = "/", env: dict[str, str] | None = None):
    argv = [*(NOBODY if user == "nobody" else []), BIN, *map(str, args)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd, env=env or _env())
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _box(where: Path, machine: str = "ubuntu2404-rx9070xt-raphael-fresh") -> Path:
    root = where / "box"
    shutil.copytree(ROOTS / machine, root, symlinks=True)
    return root


def _apply_line(stdout: str) -> list[str]:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("apply it with: "))
    return shlex.split(line[len("apply it with: ") :].split("    (unattended:")[0])


# -- item 1: the apply line works as printed -------------------------------------------------------


@as_root
def test_the_printed_apply_line_runs_this_gpuenv_as_printed(open_tmp):
    root = _box(open_tmp)
    made = gpuenv("plan", "rocm", "--root", root, "--user", "alice", "--out", "p.json", cwd=open_tmp)
    assert made.returncode == 0, made.stderr
    argv = _apply_line(made.stdout)
    # As root: no sudo (minimal images have none), and this very script by its absolute path.
    assert argv[:4] == [os.path.abspath(BIN), "apply", "p.json", "--root"] and argv[4] == str(root)
    ran = subprocess.run(argv, capture_output=True, text=True, cwd=open_tmp, env=_env(), stdin=subprocess.DEVNULL)
    # It reached the confirmation: the plan was found, matched the machine, and nothing changed.
    assert ran.returncode == 3 and "not confirmed: no terminal" in ran.stderr, ran.stderr
    assert not (root / "var/lib/gpuenv").exists()


@as_root
def test_a_normal_users_apply_line_goes_through_sudo_and_works_as_root(open_tmp):
    work = open_tmp / "alice"
    work.mkdir()
    os.chown(work, 65534, 65534)
    root = _box(open_tmp)
    made = gpuenv("plan", "rocm", "--root", root, "--user", "alice", "--out", "p.json", user="nobody", cwd=work)
    assert made.returncode == 0, made.stderr
    argv = _apply_line(made.stdout)
    assert argv[:3] == ["sudo", os.path.abspath(BIN), "apply"]
    # What sudo would run, as root, with what sudo sets: the plan file is the sudo user's.
    env = _env(SUDO_UID="65534", SUDO_USER="nobody")
    ran = subprocess.run(argv[1:], capture_output=True, text=True, cwd=work, env=env, stdin=subprocess.DEVNULL)
    assert ran.returncode == 3 and "not confirmed: no terminal" in ran.stderr, ran.stderr


# -- item 2: the plan's user --------------------------------------------------------------------------


@as_root
def test_a_plan_made_by_a_normal_user_is_for_that_user(open_tmp):
    work = open_tmp / "u"
    work.mkdir()
    os.chown(work, 65534, 65534)
    made = gpuenv("plan", "rocm", "--out", "p.json", user="nobody", cwd=work)
    assert made.returncode in (0, 3), made.stderr
    assert json.loads((work / "p.json").read_text())["request"]["user"] == "nobody"
    assert "--expect 'install rocm --user nobody'" in made.stdout


@pytest.mark.parametrize("where", ["live", "root"])
def test_an_unknown_user_is_refused_with_one_line(open_tmp, where):
    out = open_tmp / "p.json"
    extra = ["--root", str(ROOTS / "ubuntu2404-rx9070xt-raphael-fresh")] if where == "root" else []
    for args in (["plan", "rocm", "--out", str(out)], ["install", "rocm", "--dry-run"]):
        res = gpuenv(*args, "--user", "nosuchuser", *extra)
        assert res.returncode == 2 and res.stdout == "", res.stdout
        assert res.stderr.count("\n") == 1 and "--user 'nosuchuser'" in res.stderr and "no such account" in res.stderr
    assert not out.exists()


def test_a_user_the_facts_do_not_describe_is_planned_with_a_note():
    res = gpuenv("install", "rocm", "--json", "--user", "nosuchuser", "--facts", FACTS / "torch-rx9070xt.json")
    plan = json.loads(res.stdout)
    assert plan["user"] == "nosuchuser"
    assert any("whether the account nosuchuser exists was not checked" in n for n in plan["notes"])


# -- item 5: the terminal -------------------------------------------------------------------------------


def _words_of(text: str) -> set[str]:
    return set(re.split(r"[\s│┃┏┓┗┛┡┩┣┫━─┳┻╇╋┼┬┴└┘┌┐├┤]+", text)) - {""}


@pytest.mark.parametrize("columns", [60, 80])
def test_matrix_show_rocm_fits_the_width_without_cutting_words(columns):
    whole = _words_of(gpuenv("matrix", "show", "rocm", env=_env(COLUMNS="400")).stdout)
    res = gpuenv("matrix", "show", "rocm", env=_env(COLUMNS=str(columns)))
    assert res.returncode == 0
    assert max(len(line.rstrip()) for line in res.stdout.splitlines()) <= columns
    assert _words_of(res.stdout) <= whole  # no `unconfirme`/`d`
    assert "unconfirmed" in res.stdout


def test_matrix_show_keeps_its_table_where_it_fits():
    res = gpuenv("matrix", "show", "rocm", env=_env(COLUMNS="400"))
    assert res.stdout.splitlines()[1].startswith("┏")


def test_text_on_a_terminal_wraps_at_spaces():
    facts = FACTS / "torch-rtx4090-nodriver.json"
    piped = gpuenv("doctor", "--facts", facts).stdout
    shown = on_tty([BIN, "doctor", "--facts", str(facts)], _env(COLUMNS="60", NO_COLOR="1")).replace("\r\n", "\n")
    lines = shown.splitlines()
    assert len(lines) > len(piped.splitlines())  # it did wrap
    assert all(len(ln) <= 60 or len(ln.split()) == 1 for ln in lines), [ln for ln in lines if len(ln) > 60]
    assert shown.split() == piped.split()  # the same words, none cut in two


CLOSED_PIPE_COMMANDS = [
    ["matrix", "show", "rocm"],
    ["matrix", "show"],
    ["matrix", "check"],
    ["doctor", "--facts", str(FACTS / "torch-rx9070xt.json")],
    ["doctor", "--json", "--facts", str(FACTS / "torch-rx9070xt.json")],
    ["probe", "--root", str(ROOTS / "vm-xen-debian12")],
    ["probe", "--json", "--root", str(ROOTS / "vm-xen-debian12")],
    ["torch", "--facts", str(FACTS / "torch-rx9070xt.json")],
    ["install", "rocm", "--dry-run", "--facts", str(FACTS / "torch-rx9070xt.json")],
    ["uninstall", "rocm", "--json", "--facts", str(FACTS / "torch-rx9070xt.json")],
    ["report", str(TESTS / "fleet" / "plain")],
    ["advise", str(TESTS / "advise" / "kernels-work")],
    ["completion", "bash"],
    ["--help"],
    ["doctor", "--help"],
    ["--version"],
]


@pytest.mark.parametrize("args", CLOSED_PIPE_COMMANDS, ids=" ".join)
def test_a_closed_pipe_is_exit_status_141_quietly(args):
    # `gpuenv ... | head -1` with the reader already gone: what the README promises.
    proc = subprocess.Popen([BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), cwd="/")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == "", err


# -- item 7: noise ----------------------------------------------------------------------------------------


def test_json_runs_keep_stderr_quiet_and_markdown_says_it_once():
    facts = FACTS / "torch-rx9070xt.json"
    for args in (["doctor", "--json", "--facts", facts], ["probe", "--json", "--root", ROOTS / "vm-xen-debian12"]):
        res = gpuenv(*args)
        assert res.stderr == "" and json.loads(res.stdout)
    md = gpuenv("doctor", "--format", "markdown", "--no-redact", "--facts", facts).stdout
    assert md.count("not redacted") == 1


def test_a_report_of_facts_files_says_they_were_not_judged(tmp_path):
    shutil.copy(FACTS / "torch-rx9070xt.json", tmp_path / "gpu7.facts.json")
    res = gpuenv("report", tmp_path)
    assert "No findings on any host" not in res.stdout
    assert "No host was judged: gpu7 has only facts" in res.stdout


# -- item 9: completion -----------------------------------------------------------------------------------


BASH_PROBE = """
source <("$1" completion bash) || exit 9
complete -p gpuenv
at() { COMP_WORDS=("${@}"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _gpuenv; echo "${COMPREPLY[*]}"; }
at gpuenv ins
at gpuenv install ""
at gpuenv install rocm --dry
at gpuenv doctor --format m
at gpuenv matrix ""
at gpuenv matrix show g
at gpuenv matrix update --s
at gpuenv --
"""


def test_bash_completion_from_the_one_definition():
    done = subprocess.run(["bash", "--norc", "-c", BASH_PROBE, "probe", BIN], capture_output=True, text=True,
                          timeout=60, env=_env())  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "complete -o filenames -F _gpuenv gpuenv",
        "install",
        "rocm cuda auto",
        "--dry-run",
        "markdown",
        "show check update reset",
        "gpus",
        "--sha256",
        "--help --version",
    ]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_parse(shell, tmp_path):
    if not shutil.which(shell):
        pytest.skip(f"{shell} is not installed (apt-get install {shell})")
    script = tmp_path / f"gpuenv.{shell}"
    made = gpuenv("completion", shell)
    assert made.returncode == 0 and "gpuenv" in made.stdout, made.stderr
    script.write_text(made.stdout)
    done = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_fish_completes_from_the_script(tmp_path):
    if not shutil.which("fish"):
        pytest.skip("fish is not installed (apt-get install fish)")
    script = tmp_path / "gpuenv.fish"
    script.write_text(gpuenv("completion", "fish").stdout)
    done = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C 'gpuenv matrix show '"],
                          capture_output=True, text=True, timeout=60, env={**_env(), "HOME": str(tmp_path)})  # fmt: skip
    assert sorted(line.split("\t")[0] for line in done.stdout.splitlines()) == ["cuda", "gpus", "rocm", "torch"]


# -- item 8: advise skips copies and what .gitignore ignores -------------------------------------------------


def test_advise_reads_the_project_once_not_its_build_copy(tmp_path):
    shutil.copytree(TESTS / "advise" / "kernels-work", tmp_path / "proj")
    proj = tmp_path / "proj"
    once = json.loads(gpuenv("advise", "--json", proj).stdout)
    shutil.copytree(proj, tmp_path / "copy")
    (tmp_path / "copy").rename(proj / "build")  # what `pip install .` leaves behind
    shutil.copytree(proj / "csrc", proj / "generated")
    (proj / ".gitignore").write_text("# generated by the build\n/generated/\n")
    res = gpuenv("advise", "--json", proj)
    doc = json.loads(res.stdout)
    assert doc["findings"] == once["findings"] and doc["files"]["sources"] == once["files"]["sources"]
    assert doc["files"]["skipped"]["ignored"] == 2
    text = gpuenv("advise", proj).stdout
    assert "2 ignored (what .gitignore ignores; build, dist, *.egg-info and venv directories)" in text


GITIGNORES = {
    ".gitignore": "# comment\n\n*.o\n!keep.o\n/top-only.txt\nlogs/\ndocs/**/*.tmp\n**/cache\nx[0-9].c\n"
    "y[!a].c\n\\#hash.c\nspace\\ \nsub/anchored.c\nfoo/**\n*.log  \n",
    "src/.gitignore": "!important.log\n*.gen.c\n/local.c\n",
    "src/deep/.gitignore": "*.c\n!keep.c\n",
}
FILES = [
    "a.o", "keep.o", "src/b.o", "top-only.txt", "src/top-only.txt", "logs/x.c", "src/logs/y.c", "logs.c",
    "docs/a/b/c.tmp", "docs/c.tmp", "c.tmp", "cache/z.c", "src/cache/z.c", "x1.c", "x10.c", "ya.c", "yb.c",
    "#hash.c", "space ", "space", "sub/anchored.c", "src/sub/anchored.c", "foo/bar/baz.c", "foo.c",
    "a.log", "src/important.log", "src/other.log", "src/x.gen.c", "x.gen.c", "src/local.c", "src/deep/local.c",
    "src/deep/d.c", "src/deep/keep.c", "src/deep/more/e.c", "plain.c",
]  # fmt: skip


def test_the_gitignore_matcher_agrees_with_git_check_ignore(tmp_path):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    from gpuenv.advise.tree import Ignore

    for rel, text in GITIGNORES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("int x;\n")
    git_env = {**_env(), "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=git_env)
    paths = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if ".git" not in p.parts)
    done = subprocess.run(["git", "check-ignore", "--no-index", "--stdin", "-z"], input="\0".join(paths),
                          capture_output=True, text=True, cwd=tmp_path, env=git_env)  # fmt: skip
    git_says = set(filter(None, done.stdout.split("\0")))
    rules: dict[str, Ignore] = {}

    def rules_of(rel_dir: str) -> Ignore:
        if rel_dir not in rules:
            parent = rules_of(os.path.dirname(rel_dir)) if rel_dir else Ignore()
            gitignore = tmp_path / rel_dir / ".gitignore"
            rules[rel_dir] = parent.below(rel_dir, gitignore.read_text() if gitignore.exists() else "")
        return rules[rel_dir]

    compared = 0
    for rel in paths:
        parents = [str(p) for p in Path(rel).parents if str(p) != "."]
        if any(p in git_says for p in parents):
            continue  # under an ignored directory: never looked at (git cannot re-include it either)
        mine = rules_of(os.path.dirname(rel)).ignores(rel, (tmp_path / rel).is_dir())
        assert mine == (rel in git_says), rel
        compared += 1
    assert compared > 30 and len(git_says) > 15


# -- item 6: the platform line of a normal user ------------------------------------------------------------


@as_root
def test_a_user_who_cannot_read_the_acpi_tables_is_told_so_in_plain_words(open_tmp):
    root = _box(open_tmp, "vm-firecracker-debian12")
    (root / "proc/cmdline").write_text("console=ttyS0 reboot=k panic=1\n")  # only ACPI names it
    table = root / "sys/firmware/acpi/tables/FACP"
    table.parent.mkdir(parents=True)
    table.write_bytes(b"FACP\x14\x01\x00\x00\x06\x66FIRECKFCVMFADT" + b"\0" * 8)
    table.chmod(0o400)  # root-only, as the kernel makes them
    assert "VM: firecracker" in gpuenv("probe", "--root", root).stdout
    human = gpuenv("probe", "--root", root, user="nobody").stdout
    assert "virtual machine (hypervisor not identified)" in human and "VM: vm" not in human
    facts = json.loads(gpuenv("probe", "--json", "--root", root, user="nobody").stdout)
    assert "readable only by root" in facts["platform"]["virtualization_evidence"]
    doctor = gpuenv("doctor", "--root", root, user="nobody").stdout
    assert "Running in a virtual machine (the hypervisor could not be identified)" in doctor
    assert "a an " not in doctor
