"""The README's set-up command, verbatim, on a fresh Debian 12 box that has only python3: as root
without sudo (minimal images and containers have none) and as a user with sudo. And its
walkthrough: the output it shows is compared with the installed command's on the sysroot it
names (#27), so it cannot drift. (Its provisioning lines: tests/test_provision.py.)

The box is a debootstrapped chroot (python3 and its certificates, nothing else); /proc is mounted
inside a mount namespace the test makes, so the host sees nothing. The command reaches Debian's
archive and PyPI as a real box would; the only thing the test adds is this workplace's egress
certificate authority (PIP_CERT and the CA bundle), which any box here needs to reach PyPI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.chroot_env import MIRROR, copy_root, namespace_skip_reason, run, skip_reason

CHROOT = [pytest.mark.chroot, pytest.mark.timeout(1200)]
REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
SETUP = re.findall(r"```sh\n(.*?)\n```", README, re.S)


def test_the_readme_shows_the_two_set_up_commands():
    assert SETUP[0].endswith(".venv/bin/gpuenv doctor")
    assert "sudo" not in SETUP[0].replace("$(command -v sudo)", "")  # works where there is no sudo
    assert SETUP[1] == "bash tests/run.sh"
    ci = (REPO / ".ci/run").read_text()
    assert "bash tests/run.sh" in ci


@pytest.fixture(scope="session")
def python_box(tmp_path_factory) -> Path:
    reason = skip_reason() or namespace_skip_reason()  # the box's /proc is mounted in a namespace
    if reason:
        pytest.skip(reason)
    cache = os.environ.get("GPUENV_CHROOT_CACHE")
    dest = Path(cache + "-python3") if cache else tmp_path_factory.mktemp("bookworm-python3") / "root"
    if not (dest / "usr/bin/python3").exists():
        if dest.exists():
            shutil.rmtree(dest)
        run(["debootstrap", "--variant=minbase", "--include=python3,ca-certificates", "bookworm", str(dest), MIRROR])
    return dest


def _box(base: Path, where: Path) -> Path:
    root = copy_root(base, where)
    shutil.copy("/etc/resolv.conf", root / "etc/resolv.conf")
    for crt in Path("/usr/local/share/ca-certificates").glob("*.crt"):
        shutil.copy(crt, root / "usr/local/share/ca-certificates" / crt.name)
    shutil.copy("/etc/ssl/certs/ca-certificates.crt", root / "etc/ssl/certs/ca-certificates.crt")
    return root


def _clone_into(dest: Path, owner: str | None = None, root: Path | None = None) -> None:
    """The checkout as a clone would hold it: tracked files and untracked ones git does not ignore."""
    dest.mkdir(parents=True)
    # safe.directory: as a sudo user, the suite runs as root in the user's clone (and conftest
    # drops SUDO_UID, which git would go by), so git would refuse to read another user's repository.
    files = subprocess.run(["git", "-c", f"safe.directory={REPO}", "ls-files", "-co", "--exclude-standard", "-z"],
                           cwd=REPO, check=True, capture_output=True).stdout.split(b"\0")  # fmt: skip
    for name in filter(None, files):
        src = REPO / os.fsdecode(name)
        if src.is_file() or src.is_symlink():  # the fixtures' sysfs links dangle, as in a clone
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / os.fsdecode(name), follow_symlinks=False)
    if owner:
        subprocess.run(["chroot", str(root), "chown", "-R", "-h", owner, "/" + str(dest.relative_to(root))], check=True)


def _in_box(root: Path, script: str, userspec: str | None = None) -> subprocess.CompletedProcess:
    chroot = ["chroot", *([f"--userspec={userspec}"] if userspec else []), str(root)]
    env = "env PIP_CERT=/etc/ssl/certs/ca-certificates.crt PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    inner = " ".join([*chroot, *env.split(), "sh", "-c", _quote(script)])
    return subprocess.run(
        ["unshare", "--mount", "--fork", "sh", "-c", f"mount -t proc proc {root}/proc && {inner}"],
        capture_output=True, text=True, timeout=1100, check=False,
    )  # fmt: skip


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _doctor_ran(res: subprocess.CompletedProcess) -> None:
    out = res.stdout + res.stderr
    assert res.returncode in (0, 1), out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    assert re.search(r"judged against|All good|no GPU stack|error|warning", res.stdout), out[-3000:]


@CHROOT[0]
@CHROOT[1]
def test_as_root_without_sudo(python_box, tmp_path):
    root = _box(python_box, tmp_path / "root")
    # A fresh box: no sudo, and python3 without venv's pip (python3-venv is what the command adds).
    assert not (root / "usr/bin/sudo").exists()
    assert _in_box(root, "python3 -c 'import ensurepip'").returncode != 0
    _clone_into(root / "src")
    res = _in_box(root, f"cd /src && {SETUP[0]}")
    _doctor_ran(res)
    assert (root / "src/.venv/bin/gpuenv").exists()


@CHROOT[0]
@CHROOT[1]
def test_as_a_user_with_sudo(python_box, tmp_path):
    root = _box(python_box, tmp_path / "root")
    prep = _in_box(root, "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sudo >/dev/null"
                         " && useradd --create-home --shell /bin/sh bob"
                         " && echo 'bob ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/bob && chmod 0440 /etc/sudoers.d/bob")  # fmt: skip
    assert prep.returncode == 0, prep.stdout + prep.stderr
    _clone_into(root / "home/bob/src", owner="bob:bob", root=root)
    res = _in_box(root, f"cd /home/bob/src && HOME=/home/bob && export HOME && {SETUP[0]}", userspec="bob:bob")
    _doctor_ran(res)
    venv = root / "home/bob/src/.venv"
    assert venv.stat().st_uid == os.stat(root / "home/bob").st_uid  # bob's own venv, not root's


# --------------------------------------------------------------------------------------------
# The walkthrough: what the README shows is what the installed command prints (#27)

BIN = os.environ.get("GPUENV_E2E_BIN") or str(Path(__import__("sys").executable).with_name("gpuenv"))


def walkthrough() -> tuple[str, list[tuple[str, list[str]]]]:
    """The walkthrough's sysroot, and its commands with the output the README shows for each."""
    m = re.search(r"^### A walkthrough: (.*?)\n(.*?)(?=^### )", README, re.M | re.S)
    assert m, "no walkthrough in README.md"
    section = m.group(2)
    (root,) = re.findall(r"`(tests/roots/[^`]+)`", section)
    block = re.search(r"```console\n(.*?)\n```", section, re.S)
    assert block, "no console block in the walkthrough"
    shown: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            shown.append((line[2:], []))
        else:
            assert shown, f"output before any command: {line!r}"
            shown[-1][1].append(line)
    return root, shown


def matches(shown: list[str], real: list[str]) -> str | None:
    """None when the README's lines are the real output: line for line, where `...` stands for
    one or more lines left out. Otherwise what differs."""
    i = 0
    gap = False
    for want in shown:
        if want == "...":
            gap = True
            i += 1  # at least one line left out
            continue
        if gap:
            while i < len(real) and real[i] != want:
                i += 1
        if i >= len(real) or real[i] != want:
            got = real[i] if i < len(real) else "(end of output)"
            return f"README: {want!r}\nreal:   {got!r}"
        i += 1
        gap = False
    if not gap and i != len(real):
        return f"the real output goes on: {real[i]!r} (end the README's lines with ...)"
    if gap and i > len(real):
        return "the README ends with ..., but nothing was left out"
    return None


def test_the_matcher_can_fail():
    real = ["a", "b", "c", "d"]
    assert matches(["a", "...", "c", "..."], real) is None
    assert matches(["a", "b", "c", "d"], real) is None
    assert matches(["a", "c", "..."], real)  # c does not follow a
    assert matches(["a", "b"], real)  # output left out without ...
    assert matches(["a", "...", "x"], real)
    assert matches(["a", "b", "c", "d", "..."], real)  # nothing left out


def test_the_walkthrough_shows_the_real_output():
    """Each command the walkthrough shows output for, run through the installed console script
    on the sysroot it names (as the user the sysroot's args.json gives), prints those lines."""
    import json

    assert os.path.exists(BIN), f"no gpuenv console script at {BIN}"
    root, shown = walkthrough()
    args = json.loads((REPO / f"{root}.args.json").read_text())
    with_output = [(cmd, out) for cmd, out in shown if out]
    assert [cmd for cmd, _ in with_output] == [".venv/bin/gpuenv doctor", ".venv/bin/gpuenv torch"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUENV_", "SUDO_"))}
    env.update(COLUMNS="200", NO_COLOR="1", LC_ALL="C.UTF-8")
    for cmd, out in with_output:
        sub = cmd.split()[1:]
        extra = ["--user", args["user"]] if sub[0] == "doctor" and args.get("user") else []
        res = subprocess.run([BIN, *sub, "--root", str(REPO / root), *extra], capture_output=True, text=True,
                             env=env, timeout=120)  # fmt: skip
        assert "Traceback" not in res.stderr, res.stderr
        assert res.returncode == (1 if sub[0] == "doctor" else 0), res.stdout + res.stderr  # doctor: errors found
        diff = matches(out, res.stdout.rstrip("\n").splitlines())
        assert diff is None, f"{cmd}:\n{diff}\n--- real output ---\n{res.stdout}"
