"""bootstrap.sh as root against what another account can prepare (issue 40), each attack as
written there: a hostile working directory (its venv.py, json.py), directories above /opt/gpuenv
or /var/log/gpuenv that a group can write, and a presigned URL's signature in what it prints.

The directories above are set up in a private mount namespace (``unshare -m``): a directory
bound over /opt or /var/log there is seen by the bootstrap alone, and the host's stay as they
are. Every run here is a --dry-run, and the ones in a namespace stop at a wrong --sha256 (exit 5,
after the checks) before anything is installed anywhere."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_provision import BOOTSTRAP, sha256_of, wheel_and_wheelhouse  # noqa: F401 - a fixture

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the bootstrap runs as root")

NOBODY = 65534
SYSLOG = 104  # a system group (below 1000), as Ubuntu's syslog
USERS = 1000  # a group of people
WHEEL = "gpuenv-0.1.0-py3-none-any.whl"

HOSTILE = """import os
print("ran as", os.getuid(), flush=True)
open({marker!r}, "a").write("{name}\\n")
"""


def plain_env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GPUENV_", "PYTHON"))}
    return {**base, **extra}


@pytest.fixture
def hostile_cwd(open_tmp):
    """The issue's /tmp/h: modules named as those the bootstrap's pythons import, owned by nobody."""
    here = open_tmp / "h"
    here.mkdir()
    marker = open_tmp / "PWNED"
    for name in ("venv", "json", "shutil", "socket", "tempfile", "ensurepip", "encodings", "site", "sitecustomize"):
        (here / f"{name}.py").write_text(HOSTILE.format(marker=str(marker), name=name))
    os.chmod(marker.parent, 0o777)  # the modules, run as anyone, can leave their mark
    for path in (here, *here.iterdir()):
        os.chown(path, NOBODY, NOBODY)
    return here, marker


def test_a_hostile_working_directory_runs_nothing_as_root(hostile_cwd, wheel_and_wheelhouse):  # noqa: F811
    """Issue 40: `cd /tmp/h && sh bootstrap.sh --dry-run --wheel W --sha256 S --stack cuda`, with
    /tmp/h another account's holding venv.py: root ran it (python3 -m venv puts the working
    directory first on sys.path). Also with PYTHONPATH and PYTHONSTARTUP naming it (sudo -E)."""
    here, marker = hostile_cwd
    wheel, house = wheel_and_wheelhouse
    env = plain_env(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(house), PYTHONPATH=str(here),
                    PYTHONSTARTUP=str(here / "site.py"), PYTHONSAFEPATH="")  # fmt: skip
    done = subprocess.run(
        ["sh", str(BOOTSTRAP), "--dry-run", "--wheel", str(wheel), "--sha256", sha256_of(wheel), "--stack", "cuda"],
        cwd=here, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode in (0, 3), out  # the plan shown (3: it has blockers on this machine)
    assert "would install gpuenv into /opt/gpuenv" in out and "dry run: nothing was changed" in out, out
    assert "ran as" not in out and not marker.exists(), out


def test_a_relative_wheel_path_is_read_from_where_it_was_given(open_tmp):
    # The working directory is left for / once the wheel's path is made whole: the bootstrap
    # still finds a wheel named relative to it (the hash then fails, before anything else).
    (open_tmp / WHEEL).write_bytes(b"not a wheel")
    done = subprocess.run(
        ["sh", str(BOOTSTRAP), "--dry-run", "--wheel", WHEEL, "--sha256", "0" * 64],
        cwd=open_tmp, env=plain_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 5 and f"sha256 mismatch for {open_tmp}/{WHEEL}" in done.stdout, done.stdout + done.stderr


def in_namespace(binds: dict[str, tuple[int, int, int]], links: dict[str, tuple[str, int, int]], work: Path,
                 *args: str) -> subprocess.CompletedProcess:  # fmt: skip
    """bootstrap.sh --dry-run ARGS in a private mount namespace where each directory in ``binds``
    (path -> (uid, gid, mode)) is a fresh one bound over the host's, and each link in ``links``
    (path -> (target, uid, gid)) is made in them."""
    script = ["set -e"]
    for i, (path, (uid, gid, mode)) in enumerate(binds.items()):
        fresh = work / f"bind{i}"
        fresh.mkdir()
        os.chown(fresh, uid, gid)
        os.chmod(fresh, mode)
        script.append(f"mount --bind '{fresh}' '{path}'")
    for path, (target, uid, gid) in links.items():
        script.append(f"ln -s '{target}' '{path}' && chown -h {uid}:{gid} '{path}'")
    script.append('exec sh "$@"')
    shutil.copy(BOOTSTRAP, work / "bootstrap.sh")
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", "\n".join(script), "sh",
         str(work / "bootstrap.sh"), "--dry-run", *args],
        env=plain_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


NO_INSTALL = ("--wheel", f"/nonexistent/{WHEEL}", "--sha256", "0" * 64)  # exit 5 once the checks pass


@pytest.fixture
def namespaces(tmp_path):
    from tests.chroot_env import namespace_skip_reason

    why = namespace_skip_reason()
    if why:
        pytest.skip(why)
    return tmp_path


@pytest.mark.parametrize(
    ("where", "uid", "gid", "mode", "said"),
    [
        ("/opt", 0, USERS, 0o775, "/opt (owner root, group {g}, mode 775) could be changed by another account"),
        ("/opt", 1000, 1000, 0o755, "/opt (owner {u}, group {g}, mode 755) could be changed by another account"),
        ("/var/lib", 0, 0, 0o777, "/var/lib (owner root, group root, mode 777) could be changed by another account"),
        # A system group's /var/log passes only above the log's directory, never for /opt.
        ("/opt", 0, SYSLOG, 0o775, "/opt (owner root, group {g}, mode 775) could be changed by another account"),
    ],
)
def test_a_directory_above_that_another_account_can_change_is_refused(namespaces, where, uid, gid, mode, said):
    """Issue 40: a group-writable /opt lets its group swap /opt/gpuenv, so root would run that
    group's gpuenv. Refused before any change, exit 3, naming the directory, owner and mode."""
    done = in_namespace({where: (uid, gid, mode)}, {}, namespaces, *NO_INSTALL)
    u, g = _name(uid, "passwd"), _name(gid, "group")
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"refused: {said.format(u=u, g=g)}; nothing was changed" in done.stderr, done.stderr


def test_ubuntus_var_log_passes(namespaces):
    done = in_namespace({"/var/log": (0, SYSLOG, 0o775)}, {}, namespaces, *NO_INSTALL)
    assert done.returncode == 5 and "no such wheel" in done.stdout, done.stdout + done.stderr


def test_the_syslog_groups_link_for_var_log_gpuenv_is_refused(namespaces):
    """Issue 40: a member of syslog puts a link to /etc where /var/log/gpuenv goes, to have root's
    log written there."""
    done = in_namespace({"/var/log": (0, SYSLOG, 0o775)}, {"/var/log/gpuenv": ("/etc", 1000, SYSLOG)}, namespaces,
                        *NO_INSTALL)  # fmt: skip
    assert done.returncode == 3 and "refused: /var/log/gpuenv is a symbolic link" in done.stderr, done.stderr


def test_a_presigned_urls_signature_is_never_printed():
    """Issue 40: the log kept `X-Amz-Signature=...` of a --wheel URL. (Port 9 on the loopback:
    the download fails at once, and what is said of it is checked.)"""
    url = f"http://127.0.0.1:9/{WHEEL}?X-Amz-Credential=KEY&X-Amz-Signature=SECRET"
    done = subprocess.run(
        ["sh", str(BOOTSTRAP), "--dry-run", "--wheel", url, "--sha256", "0" * 64],
        cwd="/", env=plain_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 5, out
    assert f"downloading http://127.0.0.1:9/{WHEEL}?(query redacted)" in out, out
    assert "SECRET" not in out and "KEY" not in out, out


def _name(num: int, db: str) -> str:
    import grp
    import pwd

    try:
        return pwd.getpwuid(num).pw_name if db == "passwd" else grp.getgrgid(num).gr_name
    except KeyError:
        return "UNKNOWN"


def test_the_ansible_roles_commands_start_in_root_and_its_pythons_are_isolated():
    """Issue 40: the role's Python tasks shared the bootstrap's fault (Ansible's working
    directory can be the connecting account's home). Every command and shell task starts in /,
    and every python it names runs with -I."""
    import re

    import yaml

    tasks = Path(__file__).resolve().parents[1] / "ansible/roles/gpuenv/tasks"
    seen = 0

    def walk(items: list) -> None:
        nonlocal seen
        for task in items or ():
            walk(task.get("block", []))
            for module in ("ansible.builtin.command", "ansible.builtin.shell"):
                if module not in task:
                    continue
                seen += 1
                args = task[module]
                assert args.get("chdir") == "/", task["name"]
                words = args.get("argv") if isinstance(args.get("argv"), list) else None
                if words and re.search(r"python3?$", str(words[0])):
                    assert words[1] == "-I", task["name"]
                text = args.get("cmd", "")
                for flag in re.findall(r"(?:(?<![\w/-])python3|/bin/python\"?) (\S+)", text):
                    assert flag == "-I", (task["name"], flag)

    for path in sorted(tasks.glob("*.yml")):
        walk(yaml.safe_load(path.read_text()))
    assert seen >= 8
