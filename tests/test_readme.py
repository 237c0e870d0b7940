"""The README's set-up command, verbatim, on a fresh Debian 12 box that has only python3: as root
without sudo (minimal images and containers have none) and as a user with sudo.

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

pytestmark = [pytest.mark.chroot, pytest.mark.timeout(1200)]
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
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                           capture_output=True).stdout.split(b"\0")  # fmt: skip
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


def test_as_root_without_sudo(python_box, tmp_path):
    root = _box(python_box, tmp_path / "root")
    # A fresh box: no sudo, and python3 without venv's pip (python3-venv is what the command adds).
    assert not (root / "usr/bin/sudo").exists()
    assert _in_box(root, "python3 -c 'import ensurepip'").returncode != 0
    _clone_into(root / "src")
    res = _in_box(root, f"cd /src && {SETUP[0]}")
    _doctor_ran(res)
    assert (root / "src/.venv/bin/gpuenv").exists()


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
