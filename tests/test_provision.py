"""The provisioning hook (install-scripts/): bootstrap.sh, its systemd unit and the cloud-init
user-data `gpuenv provision cloud-init` writes, checked with the real tools and run for real in a
Debian 12 chroot.

- shellcheck (Debian's package) is clean for every shell script in install-scripts/;
- `cloud-init schema --config-file` (Debian's cloud-init) passes for the user-data gpuenv writes
  and fails for broken copies; the bootstrap it embeds is install-scripts/bootstrap.sh byte for
  byte, as the wheel ships it; its bad input is one line and exit 2;
- bootstrap.sh's usage errors (a source is required), and its --dry-run on this machine, which
  changes nothing;
- in a Debian 12 chroot with only python3 (tests/chroot_env.py's, plus python3 and a local APT
  repository holding python3-venv), bootstrap.sh installs python3-venv with apt, gpuenv from a
  wheel built from this checkout, and CUDA from the local signed vendor repository; it writes
  the unit, enables it and asks systemd (a PATH stand-in for systemctl) to reboot; after the
  simulated reboot (a new boot id) the unit's own command finishes and disables it; a second
  run changes nothing;
- what another account can prepare cannot take the root bootstrap over: a wheel swapped after
  its hash, /opt/gpuenv, /var/log/gpuenv or /var/lib/gpuenv of theirs or writable by them, links
  where files go, a setting with a newline, a tampered bootstrap.env.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.chroot_env")
pytest_plugins = ["tests.chroot_env"]  # base_chroot, vendor_repo

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "install-scripts"
BOOTSTRAP = SCRIPTS / "bootstrap.sh"
UNIT = SCRIPTS / "gpuenv-resume.service"
USER_DATA_PATH = "/usr/local/sbin/gpuenv-bootstrap"


def need(tool: str) -> str:
    """A tool the tests need: missing is a failure with the package to install (tests/run.sh
    installs them), never a skip."""
    found = shutil.which(tool)
    package = {"systemd-analyze": "systemd"}.get(tool, tool)
    assert found, f"{tool} is missing: apt-get install {package} (see tests/run.sh)"
    return found


# --------------------------------------------------------------------------------------------
# shellcheck, the unit, cloud-init


def shell_scripts() -> list[Path]:
    out = []
    for p in sorted(SCRIPTS.iterdir()):
        if p.is_file() and (p.suffix == ".sh" or p.read_bytes()[:32].startswith((b"#!/bin/sh", b"#!/usr/bin/env sh"))):
            out.append(p)
    return out


def test_shellcheck_clean():
    scripts = shell_scripts()
    assert BOOTSTRAP in scripts
    res = subprocess.run(
        [need("shellcheck"), "--shell=sh", "--severity=style", *map(str, scripts)], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_bootstrap_is_posix_sh_with_set_eu():
    text = BOOTSTRAP.read_text()
    assert text.startswith("#!/bin/sh\n")
    assert re.search(r"^set -eu$", text, re.M)
    assert "eval" not in re.sub(r"#.*", "", text), "no eval in bootstrap.sh"
    # Parses with dash, Debian's and Ubuntu's /bin/sh.
    dash = shutil.which("dash")
    if dash:
        res = subprocess.run([dash, "-n", str(BOOTSTRAP)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr


def unit_from_bootstrap() -> str:
    text = BOOTSTRAP.read_text()
    m = re.search(r"^unit_text\(\) \{\n\tcat <<'EOF'\n(.*?)^EOF\n", text, re.M | re.S)
    assert m, "unit_text() not found in bootstrap.sh"
    return m.group(1)


def test_unit_file_is_what_bootstrap_writes():
    unit = unit_from_bootstrap()
    assert UNIT.read_text() == unit
    assert "Type=oneshot" in unit and "WantedBy=multi-user.target" in unit
    assert "ExecStart=/bin/sh /opt/gpuenv/bootstrap.sh --resume" in unit
    assert "SuccessExitStatus=10" in unit  # reboot pending: the unit asked for another boot


def test_unit_file_verifies(tmp_path):
    """systemd's own parser: no warning (an unknown key or value is only a warning to it)."""
    unit = tmp_path / UNIT.name
    shutil.copy(UNIT, unit)
    res = subprocess.run([need("systemd-analyze"), "verify", "--man=no", str(unit)], capture_output=True, text=True)
    assert res.returncode == 0 and not res.stderr.strip(), res.stdout + res.stderr
    broken = tmp_path / "broken" / UNIT.name
    broken.parent.mkdir()
    broken.write_text(UNIT.read_text().replace("Type=oneshot", "Type=one-shot"))
    res = subprocess.run(["systemd-analyze", "verify", "--man=no", str(broken)], capture_output=True, text=True)
    # systemd 252 (Debian 12) says "Failed to parse service type", 257 (Debian 13) "Failed to parse Type=".
    assert re.search(r"Failed to parse (service type|Type=)", res.stderr), res.stderr


SHA0 = "0" * 64
WHEEL_URL = "https://files.example/gpuenv-0.1.0-py3-none-any.whl"


def provision(*args: str) -> subprocess.CompletedProcess:
    """`gpuenv provision cloud-init ARGS` (the installed gpuenv under tests/run.sh), as bytes."""
    from tests.chroot_env import gpuenv_argv

    return subprocess.run([*gpuenv_argv(), "provision", "cloud-init", *args], capture_output=True, timeout=120)


def user_data(tmp_path: Path, *args: str) -> tuple[str, subprocess.CompletedProcess]:
    """The user-data `gpuenv provision cloud-init ARGS --out FILE` writes, as text."""
    import gzip

    out = tmp_path / "user-data"
    res = provision(*args, "--out", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    data = out.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode(), res


def cloud_init_schema(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [need("cloud-init"), "schema", "--config-file", str(path)], capture_output=True, text=True, timeout=120
    )


def test_provision_writes_user_data_cloud_init_accepts(tmp_path):
    """Real `cloud-init schema` passes; the script is this checkout's bootstrap.sh byte for byte,
    run once with the settings given; over 16 KB it is gzipped, with a note on stderr."""
    import yaml

    text, res = user_data(tmp_path, "--wheel-url", WHEEL_URL, "--sha256", SHA0, "--stack", "rocm",
                          "--user", "alice", "--no-reboot")  # fmt: skip
    assert len(text.encode()) > 16384 and (tmp_path / "user-data").read_bytes()[:2] == b"\x1f\x8b"
    assert b"written gzipped" in res.stderr and res.stderr.count(b"\n") == 1 and res.stdout == b""
    assert text.startswith("#cloud-config\n")
    doc = yaml.safe_load(text)
    (script,) = doc["write_files"]
    assert script["path"] == USER_DATA_PATH and script["permissions"] == "0755" and script["owner"] == "root:root"
    assert script["content"] == BOOTSTRAP.read_text()
    assert doc["runcmd"] == [["sh", USER_DATA_PATH, "--wheel", WHEEL_URL, "--sha256", SHA0, "--stack", "rocm",
                              "--user", "alice", "--no-reboot"]]  # fmt: skip
    plain = tmp_path / "user-data.yaml"
    plain.write_text(text)
    res = cloud_init_schema(plain)
    # cloud-init 22.4 (Debian 12) says "Valid cloud-config", 25.1 (Debian 13) "Valid schema".
    assert res.returncode == 0 and re.search(r"Valid (cloud-config|schema)", res.stdout + res.stderr), (
        res.stdout + res.stderr
    )


def test_provision_to_stdout_and_from_git(tmp_path):
    import gzip

    import yaml

    res = provision("--git", "https://git.example/gpuenv.git", "--commit", "a" * 40, "--version", "12.8",
                    "--stack", "cuda", "--torch", "2.7.1", "--venv", "/opt/torch")  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = yaml.safe_load(gzip.decompress(res.stdout))
    assert doc["runcmd"][0][2:] == ["--git", "https://git.example/gpuenv.git", "--commit", "a" * 40, "--stack",
                                    "cuda", "--version", "12.8", "--torch", "2.7.1", "--venv", "/opt/torch"]  # fmt: skip


def test_packed_only_over_the_limit():
    import gzip

    from gpuenv.commands.provision import packed

    assert packed("x" * 100, limit=100) == (b"x" * 100, False)
    data, gzipped = packed("x" * 101, limit=100)
    assert gzipped and gzip.decompress(data) == b"x" * 101
    assert packed("x" * 101, limit=100) == (data, True)  # reproducible: no time stamp


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "one source"),
        (("--wheel-url", WHEEL_URL), "--sha256: the wheel's sha256sum"),
        (("--wheel-url", WHEEL_URL, "--sha256", "ABC"), "--sha256: the wheel's sha256sum"),
        (("--wheel-url", "ftp://files.example/gpuenv-0.1.0-py3-none-any.whl", "--sha256", SHA0), "https:// or http://"),
        (("--wheel-url", "https://files.example/evil.whl", "--sha256", SHA0), "a gpuenv wheel"),
        (("--wheel-url", "https://files.example/a b/gpuenv-0.1.0-py3-none-any.whl", "--sha256", SHA0), "without spaces"),
        (("--wheel-url", WHEEL_URL + "\nruncmd: [reboot]", "--sha256", SHA0), "without spaces"),
        (("--git", "https://git.example/g.git", "--commit", "main"), "--commit: the full commit"),
        (("--git", "ext::sh", "--commit", "a" * 40), "--git: an https://"),
        (("--wheel-url", WHEEL_URL, "--sha256", SHA0, "--git", "https://g.example/g.git"), "one source"),
        (("--wheel-url", WHEEL_URL, "--sha256", SHA0, "--user=-o"), "--user: a user name useradd accepts"),
        (("--wheel-url", WHEEL_URL, "--sha256", SHA0, "--user", "alice\nbob"), "--user: a user name"),
        (("--wheel-url", WHEEL_URL, "--sha256", SHA0, "--user", "a" * 33), "at most 32"),
        (("--wheel-url", WHEEL_URL, "--sha256", SHA0, "--version", "--yes"), "expected one argument"),
        (("--wheel-url", WHEEL_URL, "--sha256", SHA0, "--version", "12.8;reboot"), "--version: a version"),
        (("--wheel-url", WHEEL_URL, "--sha256", SHA0, "--venv", "venvs/t"), "--venv: an absolute path"),
        (("--wheel-url", WHEEL_URL, "--sha256", SHA0, "--torch", "2.7.1"), "--torch needs --venv"),
        (("--wheel-url", WHEEL_URL, "--sha256", SHA0, "--stack", "intel"), "invalid choice"),
    ],
)
def test_provision_bad_input_is_one_line_and_nothing_written(tmp_path, args, message):
    out = tmp_path / "user-data"
    res = provision(*args, "--out", str(out))
    err = res.stderr.decode()
    assert res.returncode == 2 and err.count("\n") == 1 and message in err, err
    assert "Traceback" not in err and res.stdout == b"" and not out.exists()


def test_bootstrap_accepts_what_provision_writes(tmp_path):
    """The runcmd line passes the bootstrap's own checks (as --dry-run, which here stops at the
    download of the example URL: exit 5, not a usage error)."""
    import yaml

    text, _ = user_data(tmp_path, "--wheel-url", "http://127.0.0.1:9/gpuenv-0.1.0-py3-none-any.whl", "--sha256",
                        SHA0, "--stack", "cuda", "--version", "12.8", "--user", "al.ice_1$")  # fmt: skip
    argv = yaml.safe_load(text)["runcmd"][0]
    res = bootstrap("--dry-run", *argv[2:])
    assert res.returncode == 5 and "cannot download" in res.stdout, res.stdout + res.stderr


@pytest.mark.parametrize(
    "breakage",
    [
        ("runcmd:\n  - [", "runcmd: 5\n  - ["),
        ("  - path: /usr/local/sbin/gpuenv-bootstrap\n", "  - pathh: /usr/local/sbin/gpuenv-bootstrap\n"),
        ("write_files:\n", "write_files: {\n"),
    ],
    ids=["runcmd-not-a-list", "write_files-without-path", "not-yaml"],
)
def test_cloud_init_schema_fails_for_a_broken_copy(tmp_path, breakage):
    old, new = breakage
    text, _ = user_data(tmp_path, "--wheel-url", WHEEL_URL, "--sha256", SHA0)
    assert old in text
    broken = tmp_path / "user-data.yaml"
    broken.write_text(text.replace(old, new, 1))
    res = cloud_init_schema(broken)
    assert res.returncode != 0, res.stdout + res.stderr


def test_the_wheel_ships_the_bootstrap(wheel_and_wheelhouse):
    """The installed gpuenv embeds its own copy: the wheel must carry it."""
    import zipfile

    wheel, _ = wheel_and_wheelhouse
    with zipfile.ZipFile(wheel) as zf:
        assert zf.read("gpuenv/_install_scripts/bootstrap.sh") == BOOTSTRAP.read_bytes()


# --------------------------------------------------------------------------------------------
# bootstrap.sh on this machine: usage errors and the dry run (nothing changes)


def bootstrap(*args: str, env=None, **kw) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GPUENV_")}
    return subprocess.run(
        ["sh", str(BOOTSTRAP), *args], env={**base, **(env or {})}, capture_output=True, text=True, **kw
    )


HOST_PATHS = (
    "/opt/gpuenv",
    "/etc/systemd/system/gpuenv-resume.service",
    "/etc/systemd/system/multi-user.target.wants/gpuenv-resume.service",
    "/var/lib/gpuenv",
    "/var/log/gpuenv",
)


def host_state() -> dict[str, str | None]:
    from tests.chroot_env import manifest

    out: dict[str, str | None] = {}
    for p in HOST_PATHS:
        path = Path(p)
        if path.is_dir() and not path.is_symlink():
            out[p] = json.dumps(manifest(path), sort_keys=True)
        elif path.is_symlink():
            out[p] = "link:" + os.readlink(path)
        elif path.exists():
            out[p] = path.read_text()
        else:
            out[p] = None
    return out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--stack", "intel"), "--stack: auto, rocm or cuda"),
        (("--frobnicate",), "unknown argument: --frobnicate"),
        (("--torch", "2.7.1"), "--torch: needs --venv DIR"),
        (("--venv", "venvs/torch"), "--venv: an absolute path"),
        (("--version", "--yes"), "--version: a version such as 12.8"),
        (("--user",), "--user needs a value"),
        (("--user", "-o"), "--user: not a user name"),
        (("--user", "al ice"), "--user: not a user name"),
        ((), "no source for gpuenv: give --wheel PATH|URL --sha256 HEX, or --git URL --commit SHA"),
        (("--wheel", "ftp://example.invalid/gpuenv-0.1.0-py3-none-any.whl"), "an https:// or http:// URL, or a path"),
        (("--wheel", "gpuenv-0.1.0-py3-none-any.whl"), "--wheel needs --sha256 HEX"),
        (("--wheel", "gpuenv-0.1.0-py3-none-any.whl", "--sha256", "abc"), "64 lower-case hex digits"),
        (("--wheel", "https://example.invalid/evil.whl", "--sha256", "0" * 64), "a gpuenv wheel"),
        (("--wheel", "https://example.invalid/a b/gpuenv-0.1.0-py3-none-any.whl", "--sha256", "0" * 64),
         "without spaces"),
        (("--git", "https://example.invalid/gpuenv.git"), "--git needs --commit SHA"),
        (("--git", "https://example.invalid/gpuenv.git", "--commit", "main"), "40 lower-case hex digits"),
        (("--git", "ext::sh -c touch% /tmp/x", "--commit", "0" * 40), "--git: an https://"),
        (("--git", "https://example.invalid/g.git", "--commit", "0" * 40, "--wheel", "gpuenv-0.1.0-py3-none-any.whl"),
         "one source, not both"),
    ],
)
def test_usage_errors_exit_2_and_change_nothing(args, message):
    before = host_state()
    res = bootstrap("--dry-run", *args)  # --dry-run: should a check slip, still nothing changes here
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stdout + res.stderr
    assert host_state() == before


def test_help_lists_the_exit_codes():
    res = bootstrap("--help")
    assert res.returncode == 0
    for code in ("0  done", "1  failed", "2  usage", "3  refused", "4  busy", "5  could not install", "10  reboot pending"):
        assert code in res.stdout, code


def test_needs_root_unless_dry_run(open_tmp):
    if os.geteuid() == 0:
        # uid 65534 must read the script, and may not reach the clone (root's home is 0700): a copy.
        script = shutil.copy(BOOTSTRAP, open_tmp)
        res = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", script, "--stack", "cuda"],
            capture_output=True, text=True, cwd=open_tmp, check=False,
        )  # fmt: skip
    else:
        res = bootstrap("--stack", "cuda")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "run as root" in res.stdout + res.stderr


def test_sha256_mismatch_exits_5_before_any_change(wheel_and_wheelhouse):
    wheel, _ = wheel_and_wheelhouse
    before = host_state()
    res = bootstrap("--dry-run", "--wheel", str(wheel), "--sha256", "0" * 64)
    assert res.returncode == 5, res.stdout + res.stderr
    assert "sha256 mismatch" in res.stdout
    assert host_state() == before


def test_dry_run_here_changes_nothing(wheel_and_wheelhouse):
    """On this machine (no GPU, maybe a container): the plan is shown by gpuenv from a throwaway
    venv; the exit status is gpuenv's dry run's (3 with blockers); nothing is written."""
    wheel, wheelhouse = wheel_and_wheelhouse
    before = host_state()
    env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}
    res = bootstrap("--dry-run", "--stack", "cuda", "--wheel", str(wheel), "--sha256", sha256_of(wheel), env=env,
                    timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode in (0, 3), out
    assert "dry run: nothing is changed" in out
    assert "would install gpuenv into /opt/gpuenv (sha256:" in out
    assert "would write /etc/systemd/system/gpuenv-resume.service" in out
    assert "install cuda" in out and "dry run: nothing was changed" in out  # gpuenv's own plan
    assert host_state() == before


# --------------------------------------------------------------------------------------------
# The wheel of this checkout and the wheels it depends on (for installs without PyPI)


# The Pythons that install from the wheelhouse: the chroot boxes' (Debian 12's python3) and the one
# bootstrap.sh finds here (python3 on PATH: 3.13 on Debian 13, 3.14 on sid).
BOX_PYTHON = "3.11"


def installing_pythons() -> tuple[str, ...]:
    here = subprocess.run(["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    return tuple(dict.fromkeys(v for v in (BOX_PYTHON, here) if v))


def build_wheel_and_wheelhouse(work: Path, python_versions: tuple[str, ...] = (BOX_PYTHON,)) -> tuple[Path, Path]:
    """gpuenv's wheel, built from a copy of this checkout (the checkout gets no build/ or
    egg-info), and a wheelhouse with it and its dependencies for each of `python_versions` on
    x86_64 (a dependency's wheel is for one Python: charset_normalizer's)."""
    src = work / "src"
    ignore = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache")
    shutil.copytree(REPO, src, ignore=ignore, symlinks=True)
    dist, house = work / "dist", work / "wheelhouse"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    res = subprocess.run([*pip, "wheel", "-q", "--no-deps", "-w", str(dist), str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    (wheel,) = dist.glob("gpuenv-*.whl")
    for version in python_versions:
        res = subprocess.run(
            [*pip, "download", "-q", "-d", str(house), "--only-binary=:all:", "--python-version", version,
             "--implementation", "cp", "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64",
             str(wheel)],
            capture_output=True, text=True,
        )  # fmt: skip
        assert res.returncode == 0, "cannot fetch gpuenv's dependencies (PyPI):\n" + res.stdout + res.stderr
    shutil.rmtree(src)
    return wheel, house


@pytest.fixture(scope="session")
def wheel_and_wheelhouse(tmp_path_factory) -> tuple[Path, Path]:
    return build_wheel_and_wheelhouse(tmp_path_factory.mktemp("gpuenv-wheel"), installing_pythons())


# --------------------------------------------------------------------------------------------
# A Debian 12 chroot with python3 and nothing else, and bootstrap.sh in it for real

SYSTEMCTL = """#!/bin/sh
# Stand-in systemctl (the chroot runs no systemd): note the call, do nothing.
echo "$*" >>/var/log/systemctl.calls
"""


def _python_chroot(base: Path, dest: Path, suite: str = "bookworm") -> Path:
    """base + python3 (the fresh box) + a local trusted APT repository holding python3-venv,
    ca-certificates, gpg and gpgv with their dependencies (what bootstrap.sh installs; Debian
    12's apt brings gpgv, 13's does not), no other source."""
    from tests.chroot_env import MIRROR, copy_root, in_root, run

    copy_root(base, dest)
    shutil.copy("/etc/resolv.conf", dest / "etc/resolv.conf")
    (dest / "etc/apt/sources.list").write_text(f"deb {MIRROR} {suite} main\n")
    in_root(dest, "apt-get", "-q", "update")
    in_root(dest, "apt-get", "install", "-y", "-q", "--no-install-recommends", "python3")
    in_root(dest, "apt-get", "clean")
    # sudo: for the README's lines run as a user with sudo; python3-apt: what Ansible's apt
    # module installs for itself (tests/test_ansible.py). Those tests install them, not this box.
    in_root(dest, "apt-get", "install", "-y", "-q", "--download-only", "--no-install-recommends",
            "python3-venv", "ca-certificates", "gpg", "gpgv", "sudo", "python3-apt")  # fmt: skip
    debs = dest / "srv/gpuenv-debs"
    debs.mkdir(parents=True)
    for deb in (dest / "var/cache/apt/archives").glob("*.deb"):
        shutil.move(str(deb), debs / deb.name)
    (debs / "Packages").write_text(run(["apt-ftparchive", "packages", "."], cwd=debs).stdout)
    (dest / "etc/apt/sources.list").write_text("deb [trusted=yes] file:/srv/gpuenv-debs ./\n")
    for p in (dest / "var/lib/apt/lists").glob("*_*"):
        p.unlink()
    assert not list((dest / "var/lib/dpkg/info").glob("python3*-venv.list")), "python3-venv must be absent"
    (dest / ".gpuenv-python-chroot").write_text(PYTHON_CHROOT_VERSION)
    return dest


PYTHON_CHROOT_VERSION = "3\n"  # 3: the local repository holds sudo and python3-apt too

@pytest.fixture(scope="session")
def python_chroot(base_chroot, tmp_path_factory) -> Path:
    cache = os.environ.get("GPUENV_CHROOT_CACHE")
    # Not test_readme.py's "-python3" box (python3 and certificates installed, Debian's sources).
    dest = Path(cache + "-provision") if cache else tmp_path_factory.mktemp("bookworm-provision") / "root"
    mark = dest / ".gpuenv-python-chroot"
    if mark.exists() and mark.read_text() == PYTHON_CHROOT_VERSION:
        return dest
    # Built under a name of its own and renamed into place: a session beside this one that
    # finds the cache sees a finished box or none.
    import tempfile

    work = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    _python_chroot(base_chroot, work / "root")
    if dest.exists():
        shutil.rmtree(dest)
    try:
        (work / "root").rename(dest)
    except OSError:  # another session renamed its box first: use that one
        pass
    shutil.rmtree(work)
    return dest


class Chroot:
    def __init__(self, root: Path, repo_env: dict[str, str]) -> None:
        self.root = root
        self.env = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LC_ALL": "C.UTF-8",
            "HOME": "/root",
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": "/srv/wheelhouse",
            "GPUENV_RETRY_DELAY": "1",
            **repo_env,
        }

    def run(self, *argv: str, check: bool = False) -> subprocess.CompletedProcess:
        res = subprocess.run(
            ["chroot", str(self.root), *argv], env=self.env, capture_output=True, text=True, timeout=600
        )
        if check:
            assert res.returncode == 0, f"{argv}: {res.returncode}\n{res.stdout}\n{res.stderr}"
        return res

    def reboot(self) -> None:
        """What a reboot changes for the script: the boot id."""
        import uuid

        (self.root / "proc/sys/kernel/random/boot_id").write_text(f"{uuid.uuid4()}\n")

    def status(self) -> dict:
        return json.loads((self.root / "var/lib/gpuenv/status.json").read_text())

    def systemctl_calls(self) -> list[str]:
        p = self.root / "var/log/systemctl.calls"
        return p.read_text().splitlines() if p.exists() else []

    def packages(self) -> dict[str, str]:
        from tests.chroot_env import end_state

        return end_state(self.root)["packages"]


@pytest.fixture
def fresh_box(python_chroot, vendor_repo, wheel_and_wheelhouse, tmp_path) -> Chroot:
    return box_of(python_chroot, vendor_repo, wheel_and_wheelhouse, tmp_path)


def box_of(
    python_root: Path, vendor_repo, wheel_and_wheelhouse: tuple[Path, Path], tmp_path: Path, gpu: dict | None = None
) -> Chroot:
    """A copy of the fresh box ``python_root`` with ``gpu`` (an NVIDIA one by default), the
    wheelhouse, the wheel and bootstrap.sh where the user-data puts them, and the mirror's bundle."""
    from tests.chroot_env import NVIDIA_GPU, copy_root, give_machine

    wheel, house = wheel_and_wheelhouse
    root = give_machine(copy_root(python_root, tmp_path / "root"), gpu or NVIDIA_GPU)
    # gpuenv in the chroot probes it as its own machine: the kernel is the one running here.
    (root / "lib/modules" / os.uname().release / "build").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/kernel/random").mkdir(parents=True, exist_ok=True)
    shutil.copytree(house, root / "srv/wheelhouse")
    shutil.copy(wheel, root / "root" / wheel.name)
    shutil.copy(BOOTSTRAP, root / "usr/local/sbin/gpuenv-bootstrap")  # as the user-data writes it
    (root / "usr/local/sbin/systemctl").write_text(SYSTEMCTL)
    (root / "usr/local/sbin/systemctl").chmod(0o755)
    (root / "run/systemd/system").mkdir(parents=True)  # "systemd is running": the reboot is asked for
    # The mirror's bundle where root's gpuenv in the box reads it (/var/lib/gpuenv/matrices).
    vendor_repo.install_bundle(root / "var/lib/gpuenv")
    box = Chroot(root, {})
    box.reboot()
    box.wheel = f"/root/{wheel.name}"
    box.sha256 = sha256_of(wheel)
    return box


def exec_start(root: Path) -> list[str]:
    unit = (root / "etc/systemd/system/gpuenv-resume.service").read_text()
    (line,) = [ln for ln in unit.splitlines() if ln.startswith("ExecStart=")]
    return line.split("=", 1)[1].split()


@pytest.mark.chroot
def test_bootstrap_in_a_fresh_debian12(fresh_box):
    from tests.chroot_env import VOLATILE, manifest

    box, root = fresh_box, fresh_box.root
    args = ("sh", "/usr/local/sbin/gpuenv-bootstrap", "--stack", "cuda", "--version", "12.8", "--user", "alice",
            "--wheel", box.wheel, "--sha256", box.sha256)  # fmt: skip
    assert not {"python3.11-venv", "gpg", "ca-certificates"} & set(box.packages())

    # The dry run on the fresh box: what it would do, nothing done.
    before = manifest(root)
    dry = box.run(*args, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert (
        "would run: apt-get update; apt-get install --no-install-recommends python3-venv ca-certificates gpg"
        in dry.stdout
    )
    assert manifest(root) == before

    # First run: python3-venv, gpuenv, the plan up to the driver's reboot.
    first = box.run(*args)
    out = first.stdout + first.stderr
    assert first.returncode == 10, out
    pkgs = box.packages()
    assert "python3.11-venv" in pkgs and "ca-certificates" in pkgs and "gpg" in pkgs
    assert all(p in pkgs for p in ("cuda-toolkit-12-8", "nvidia-open", "nvidia-kernel-open-dkms")), pkgs
    assert (root / "opt/gpuenv/bin/gpuenv").exists()
    assert (root / "opt/gpuenv/bootstrap.sh").read_bytes() == BOOTSTRAP.read_bytes()
    assert (root / "etc/systemd/system/gpuenv-resume.service").read_text() == UNIT.read_text()
    wants = root / "etc/systemd/system/multi-user.target.wants/gpuenv-resume.service"
    assert os.readlink(wants) == "/etc/systemd/system/gpuenv-resume.service"
    assert box.systemctl_calls() == ["daemon-reload", "--no-block reboot"]
    status = box.status()
    assert status["schema"] == "gpuenv.status/1" and status["state"] == "reboot-pending" and status["exit"] == 10
    assert status["doctor"]["schema"] == "gpuenv.report/1" and status["doctor_exit"] in (0, 1)
    assert "verify" in status and "verify_exit" in status
    if status["verify"] is not None:  # gpuenv verify: no torch in the chroot's python3, a finding
        assert status["verify"]["schema"] == "gpuenv.verify/1" and status["verify_exit"] == 1
    assert status["request"] == {"stack": "cuda", "version": "12.8", "torch": None, "venv": None, "user": "alice"}
    log = (root / "var/log/gpuenv/bootstrap.log").read_text()
    assert "gpuenv install cuda --yes --version 12.8 --user alice" in log
    assert oct((root / "var/log/gpuenv/bootstrap.log").stat().st_mode & 0o777) == "0o600"  # root's alone
    assert (root / "var/log/gpuenv/apply.log").exists()

    # The unit, started again in the same boot: still waiting for the reboot, nothing applied.
    unit_cmd = exec_start(root)
    assert unit_cmd == ["/bin/sh", "/opt/gpuenv/bootstrap.sh", "--resume"]
    same = box.run(*unit_cmd)
    assert same.returncode == 10, same.stdout + same.stderr
    assert "still in the boot that needs a reboot" in same.stdout

    # The reboot, then the unit: nothing left to resume; it disables itself; done.
    box.reboot()
    after = box.run(*unit_cmd)
    assert after.returncode == 0, after.stdout + after.stderr
    assert "nothing to resume" in after.stdout
    assert not os.path.lexists(wants)
    assert not (root / "var/lib/gpuenv/reboot-pending").exists()
    assert box.status()["state"] == "done" and box.status()["exit"] == 0

    # A second run on the finished box changes nothing.
    settled = manifest(root, skip=VOLATILE)
    calls = box.systemctl_calls()
    again = box.run(*args)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "gpuenv in /opt/gpuenv is up to date" in again.stdout
    assert "Nothing to do" in again.stdout
    assert manifest(root, skip=VOLATILE) == settled
    assert box.systemctl_calls() == calls  # no reboot asked for, no reload
    assert box.status()["state"] == "done"

    # And the dry run there: every step already done, nothing would be written.
    dry = box.run(*args, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "gpuenv in /opt/gpuenv: up to date" in dry.stdout
    assert "would write" not in dry.stdout.replace("would write /var/lib/gpuenv/status.json", "")
    steps = [ln for ln in dry.stdout.splitlines() if re.match(r"^\S\s+\d+\. ", ln)]
    # A command that would not run says why ("not needed"), never "already done" (#27 item 4).
    assert steps and all("(already done)" in ln or "(not needed: " in ln for ln in steps), steps
    assert manifest(root, skip=VOLATILE) == settled


@pytest.mark.chroot
def test_bootstrap_no_reboot_and_environment_settings(fresh_box):
    """Settings from the environment (what cloud-init could export), --no-reboot: the reboot is
    left to the operator; the unit is enabled and remembers the settings for --resume."""
    box, root = fresh_box, fresh_box.root
    box.env.update(GPUENV_STACK="cuda", GPUENV_VERSION="12.8", GPUENV_USER="alice", GPUENV_WHEEL=box.wheel,
                   GPUENV_WHEEL_SHA256=box.sha256, GPUENV_NO_REBOOT="1")  # fmt: skip
    first = box.run("sh", "/usr/local/sbin/gpuenv-bootstrap")
    assert first.returncode == 10, first.stdout + first.stderr
    assert "reboot this machine (--no-reboot)" in first.stdout
    assert "--no-block reboot" not in box.systemctl_calls()
    settings = (root / "var/lib/gpuenv/bootstrap.env").read_text().splitlines()
    assert "VERSION=12.8" in settings and "TUSER=alice" in settings and "NO_REBOOT=1" in settings
    assert oct((root / "var/lib/gpuenv/bootstrap.env").stat().st_mode & 0o777) == "0o600"
    box.reboot()
    for k in ("GPUENV_STACK", "GPUENV_VERSION", "GPUENV_USER", "GPUENV_WHEEL", "GPUENV_WHEEL_SHA256", "GPUENV_NO_REBOOT"):
        del box.env[k]  # the unit runs with systemd's environment, not cloud-init's
    after = box.run(*exec_start(root))
    assert after.returncode == 0, after.stdout + after.stderr
    status = box.status()
    assert status["state"] == "done" and status["request"]["user"] == "alice"


@pytest.mark.chroot
def test_bootstrap_reports_a_refused_plan(fresh_box):
    """A plan gpuenv refuses (here: --stack rocm for an NVIDIA-only box has blockers): exit 3,
    status.json says failed, the unit is not enabled."""
    box, root = fresh_box, fresh_box.root
    res = box.run("sh", "/usr/local/sbin/gpuenv-bootstrap", "--stack", "rocm", "--wheel", box.wheel, "--sha256", box.sha256)
    assert res.returncode == 3, res.stdout + res.stderr
    status = box.status()
    assert status["state"] == "failed" and status["exit"] == 3
    assert not os.path.lexists(root / "etc/systemd/system/multi-user.target.wants/gpuenv-resume.service")


# --------------------------------------------------------------------------------------------
# The bootstrap runs as root: what another account can set up beforehand must not take it over

ALICE = 1000  # the chroot's ordinary account (tests/chroot_env.py)
PWNED = "pwned"  # a directory at the chroot's top that only a hijacked root process makes
EVIL_PTH = f'import os; os.makedirs("/{PWNED}", exist_ok=True)\n'

# Stand-in sha256sum: the real sum, and right after it alice swaps the wheel at its path (once),
# so that whatever is installed after the hash from that path is hers.
SWAP_AFTER_HASH = """#!/bin/sh
/usr/bin/sha256sum "$@"
rc=$?
if [ -f /home/alice/evil.whl ]; then
	mv -f /home/alice/evil.whl "$(cat /home/alice/target)"
	echo swapped >>/var/log/swaps
fi
exit $rc
"""


def evil_wheel(good: Path, dest: Path) -> Path:
    """The good wheel plus a .pth file: Python runs its import line at every start of the venv."""
    import zipfile

    shutil.copy(good, dest)
    with zipfile.ZipFile(dest, "a") as zf:
        zf.writestr("zz_gpuenv_evil.pth", EVIL_PTH)
    return dest


def chown_tree(path: Path, uid: int) -> None:
    os.lchown(path, uid, uid)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def sha256_of(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.chroot
def test_wheel_swapped_after_the_hash_is_never_installed(fresh_box, wheel_and_wheelhouse):
    """Item 4: the wheel sits where alice can change it; she swaps it right after the bootstrap
    hashed it. Only the copy that was hashed may be installed: her .pth never runs as root."""
    box, root = fresh_box, fresh_box.root
    good, _ = wheel_and_wheelhouse
    home = root / "home/alice"
    path = home / good.name
    shutil.copy(good, path)
    evil_wheel(good, home / "evil.whl")
    (home / "target").write_text(f"/home/alice/{good.name}\n")
    chown_tree(home, ALICE)
    (root / "usr/local/bin/sha256sum").write_text(SWAP_AFTER_HASH)
    (root / "usr/local/bin/sha256sum").chmod(0o755)
    res = box.run("sh", "/usr/local/sbin/gpuenv-bootstrap", "--stack", "cuda", "--version", "12.8",
                  "--wheel", f"/home/alice/{good.name}", "--sha256", sha256_of(good))  # fmt: skip
    out = res.stdout + res.stderr
    assert (root / "var/log/swaps").exists(), "the swap never happened: the test proves nothing\n" + out
    assert res.returncode == 10, out
    assert not (root / PWNED).exists(), "alice's wheel ran as root\n" + out
    assert not list((root / "opt/gpuenv/lib").glob("python3*/site-packages/zz_gpuenv_evil.pth"))
    assert (root / "opt/gpuenv/.gpuenv-source").read_text() == f"sha256:{sha256_of(good)}\n"


def _alice_venv(prefix: Path) -> None:
    """A venv-looking tree of alice's whose python and gpuenv, run as root, leave /pwned."""
    (prefix / "bin").mkdir(parents=True)
    for name in ("python", "gpuenv"):
        script = prefix / "bin" / name
        script.write_text(f"#!/bin/sh\nmkdir -p /{PWNED}\nexit 0\n")
        script.chmod(0o755)
    chown_tree(prefix, ALICE)


def _hostile_opt(root: Path) -> None:
    """/opt/gpuenv made by alice (the test adds a marker claiming the good wheel)."""
    _alice_venv(root / "opt/gpuenv")


def _hostile_opt_link(root: Path) -> None:
    """/opt/gpuenv a link to a venv-looking tree of alice's."""
    _alice_venv(root / "home/alice/venv")
    (root / "opt/gpuenv").symlink_to("/home/alice/venv")


def _hostile_log(root: Path) -> None:
    """/var/log/gpuenv of alice's, its bootstrap.log a link to a file in /etc."""
    logdir = root / "var/log/gpuenv"
    logdir.mkdir(parents=True)
    (logdir / "bootstrap.log").symlink_to("/etc/gpuenv-victim")
    chown_tree(logdir, ALICE)


def _hostile_state(root: Path) -> None:
    """/var/lib/gpuenv of alice's, status.json.tmp a link to a file in /etc."""
    state = root / "var/lib/gpuenv"
    state.mkdir(parents=True, exist_ok=True)
    (state / "status.json.tmp").symlink_to("/etc/gpuenv-victim")
    chown_tree(state, ALICE)


def _open_state(root: Path) -> None:
    """/var/lib/gpuenv root's, but anyone may write it."""
    state = root / "var/lib/gpuenv"
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o777)


def _linked_files(root: Path) -> None:
    """The directories root's, but the files the bootstrap writes are links into /etc."""
    for d, name in (("var/log/gpuenv", "bootstrap.log"), ("var/lib/gpuenv", "status.json.tmp"),
                    ("var/lib/gpuenv", "status.json")):  # fmt: skip
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d / name).symlink_to("/etc/gpuenv-victim")


@pytest.mark.chroot
@pytest.mark.parametrize(
    ("setup", "refused"),
    [
        (_hostile_opt, "/opt/gpuenv"),
        (_hostile_opt_link, "/opt/gpuenv"),
        (_hostile_log, "/var/log/gpuenv"),
        (_hostile_state, "/var/lib/gpuenv"),
        (_open_state, "/var/lib/gpuenv"),
        (_linked_files, None),
    ],
    ids=["opt-of-alice", "opt-a-link", "log-of-alice", "state-of-alice", "state-world-writable", "files-are-links"],
)
def test_directories_another_account_controls_are_refused(fresh_box, wheel_and_wheelhouse, setup, refused):
    """Item 5: nothing from a directory another account owns or can write runs as root, and no
    file is written through a link. A directory like that is refused before any change (exit 3,
    one line naming it); a link where a file goes is replaced, never followed."""
    from tests.chroot_env import manifest

    box, root = fresh_box, fresh_box.root
    good, _ = wheel_and_wheelhouse
    victim = root / "etc/gpuenv-victim"
    victim.write_text("root's own file\n")
    victim.chmod(0o600)
    setup(root)
    (root / "opt/gpuenv").parent.mkdir(exist_ok=True)
    if (root / "opt/gpuenv/bin").is_dir():  # alice's marker: "this is the good wheel, up to date"
        (root / "opt/gpuenv/.gpuenv-source").write_text(f"sha256:{sha256_of(good)}\n")
        os.lchown(root / "opt/gpuenv/.gpuenv-source", ALICE, ALICE)
    before = manifest(root)
    res = box.run("sh", "/usr/local/sbin/gpuenv-bootstrap", "--stack", "cuda", "--version", "12.8",
                  "--wheel", box.wheel, "--sha256", sha256_of(good), "--no-reboot")  # fmt: skip
    out = res.stdout + res.stderr
    assert not (root / PWNED).exists(), "root ran alice's program\n" + out
    assert victim.read_text() == "root's own file\n" and victim.stat().st_mode & 0o777 == 0o600, out
    if refused:
        assert res.returncode == 3, out
        lines = [ln for ln in res.stderr.splitlines() if refused in ln]
        assert len(lines) == 1 and "refused" in lines[0], out
        assert manifest(root) == before, "a refused run changed the box"
    else:
        assert res.returncode == 10, out
        assert not (root / "var/log/gpuenv/bootstrap.log").is_symlink()
        assert json.loads((root / "var/lib/gpuenv/status.json").read_text())["state"] == "reboot-pending"


@pytest.mark.chroot
def test_settings_are_validated_and_read_back_strictly(fresh_box, wheel_and_wheelhouse):
    """Item 6: GPUENV_NO_REBOOT is 0, 1 or empty (a newline in it would add lines to
    bootstrap.env); --resume reads bootstrap.env line by line, known keys once each, and checks
    every value as the flags are checked."""
    from tests.chroot_env import manifest

    box, root = fresh_box, fresh_box.root
    good, _ = wheel_and_wheelhouse
    args = ("sh", "/usr/local/sbin/gpuenv-bootstrap", "--stack", "cuda", "--version", "12.8",
            "--wheel", box.wheel, "--sha256", sha256_of(good))  # fmt: skip
    before = manifest(root)
    for bad in ("1\nVENV=relative", "yes", "2"):
        box.env["GPUENV_NO_REBOOT"] = bad
        res = box.run(*args)
        assert res.returncode == 2, res.stdout + res.stderr
        assert "GPUENV_NO_REBOOT: 0, 1 or empty" in res.stderr
        assert manifest(root) == before
    box.env["GPUENV_NO_REBOOT"] = "1"
    first = box.run(*args)
    assert first.returncode == 10, first.stdout + first.stderr
    del box.env["GPUENV_NO_REBOOT"]
    settings = root / "var/lib/gpuenv/bootstrap.env"
    good_text = settings.read_text()
    assert good_text.splitlines() == ["STACK=cuda", "VERSION=12.8", "TORCH=", "VENV=", "TUSER=", "NO_REBOOT=1"]
    status = (root / "var/lib/gpuenv/status.json").read_text()
    box.reboot()
    for bad in (
        good_text + "VENV=relative/path\n",  # a key twice
        good_text.replace("NO_REBOOT=1", "NO_REBOOT=yes"),
        good_text.replace("TUSER=", "TUSER=--yes"),
        good_text.replace("VENV=", "VENV=tmp/evil"),
        good_text.replace("STACK=cuda", "STACK=intel"),
        good_text + "PATH=/home/alice\n",  # not a setting
        good_text + "no equals sign\n",
    ):
        settings.write_text(bad)
        res = box.run(*exec_start(root))
        assert res.returncode == 2, repr(bad) + "\n" + res.stdout + res.stderr
        assert "bootstrap.env" in res.stderr, res.stderr
        assert (root / "var/lib/gpuenv/status.json").read_text() == status
    settings.write_text(good_text)
    os.chown(settings, ALICE, ALICE)  # a settings file another account could have written
    res = box.run(*exec_start(root))
    assert res.returncode == 3 and "refused" in res.stderr and "bootstrap.env" in res.stderr, res.stdout + res.stderr
    os.chown(settings, 0, 0)
    settings.unlink()
    settings.symlink_to("/etc/gpuenv-settings")  # root's own link, to a file of root's: not read either
    (root / "etc/gpuenv-settings").write_text(good_text)
    (root / "etc/gpuenv-settings").chmod(0o600)
    res = box.run(*exec_start(root))
    assert res.returncode == 2 and "bootstrap.env" in res.stderr, res.stdout + res.stderr
    settings.unlink()
    settings.write_text(good_text)
    settings.chmod(0o600)
    res = box.run(*exec_start(root))
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.chroot
def test_no_source_is_a_usage_error(fresh_box):
    """Item 1: without --wheel or --git the bootstrap never guesses a package name: exit 2,
    one line naming the options, nothing changed."""
    from tests.chroot_env import manifest

    box, root = fresh_box, fresh_box.root
    before = manifest(root)
    res = box.run("sh", "/usr/local/sbin/gpuenv-bootstrap", "--stack", "cuda")
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1, res.stderr
    assert "--wheel PATH|URL --sha256 HEX" in res.stderr and "--git URL --commit SHA" in res.stderr
    assert manifest(root) == before


# --------------------------------------------------------------------------------------------
# The README's provisioning lines, verbatim, as a new user follows them (issue #25)

README = REPO / "README.md"
WHEEL_NAME = "gpuenv-0.1.0-py3-none-any.whl"  # what the README's lines name: checked against the build


def readme_blocks(section: str) -> list[str]:
    """The ```sh blocks of the README's `section` (a heading's text), in order."""
    text = README.read_text()
    m = re.search(rf"^#+ {re.escape(section)}\n(.*?)(?=^## )", text, re.M | re.S)
    assert m, f"no section {section!r} in README.md"
    return re.findall(r"```sh\n(.*?)\n```", m.group(1), re.S)


def provisioning_lines() -> dict[str, list[str]]:
    """The README's lines that make and serve the wheel, and run the bootstrap by hand."""
    blocks = readme_blocks("Provisioning")
    make = next(b for b in blocks if "pip wheel" in b).splitlines()
    by_hand = next(b for b in blocks if "bootstrap.sh --wheel" in b).splitlines()
    return {"make": make, "by_hand": by_hand}


def test_the_readme_provisioning_lines_work_with_or_without_sudo():
    """Item 3: each root line runs through $(command -v sudo), which is empty for root on an image
    without sudo; none starts with a bare sudo (`sudo: command not found` there)."""
    lines = provisioning_lines()
    assert len(lines["make"]) == 2 and len(lines["by_hand"]) == 3, lines
    for line in lines["by_hand"][:2]:
        assert line.startswith("S=$(command -v sudo); $S sh install-scripts/bootstrap.sh "), line
        assert f"--wheel http://HOST:8000/{WHEEL_NAME} --sha256 HEX " in line
    assert "--dry-run" in lines["by_hand"][0] and "--dry-run" not in lines["by_hand"][1]
    assert lines["by_hand"][2] == "cat /var/lib/gpuenv/status.json"
    assert not [ln for blk in readme_blocks("Provisioning") for ln in blk.splitlines() if ln.startswith("sudo ")]


def filled(line: str, port: int, sha256: str) -> str:
    """A README line with the reader's values in place of its placeholders, and nothing else changed."""
    assert line.count("HOST:8000") <= 1 and line.count(" HEX") <= 1
    return line.replace("HOST:8000", f"127.0.0.1:{port}").replace(" HEX", f" {sha256}")


@pytest.fixture(scope="module")
def served_readme_wheel(tmp_path_factory):
    """The README's two lines: the wheel made in a clone with its .venv (here this interpreter's
    venv), and served from dist/ by `python3 -m http.server` (on a free port instead of 8000).
    Yields (port, sha256 the README's line printed)."""
    import socket
    import time

    from tests.test_readme import _clone_into

    make, serve = provisioning_lines()["make"]
    clone = tmp_path_factory.mktemp("readme-clone") / "gpuenv"
    _clone_into(clone)
    venv = Path(sys.prefix)
    assert (venv / "bin/pip").exists(), f"{venv} is no venv with pip: the README's line needs .venv/bin/pip"
    (clone / ".venv").symlink_to(venv)
    made = subprocess.run(["sh", "-c", make], cwd=clone, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    sums = [ln.split() for ln in made.stdout.splitlines() if ln.endswith(".whl")]
    assert [s[1] for s in sums] == [f"dist/{WHEEL_NAME}"], made.stdout  # the name the README's URLs use
    sha256 = sums[0][0]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert serve == "cd dist && python3 -m http.server 8000"
    server = subprocess.Popen(["sh", "-c", serve.replace("8000", f"{port} --bind 127.0.0.1")], cwd=clone,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port, sha256
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)


PIP_CONF = "[global]\nno-index = true\nfind-links = /srv/wheelhouse\n"


def readme_box(box: Chroot, home: str, owner: str | None) -> None:
    """The box as the README's reader has it: bootstrap.sh copied into a clone at `home`/gpuenv
    (the line runs install-scripts/bootstrap.sh from there), and pip's mirror in /etc/pip.conf
    (this test's wheelhouse stands in for PyPI; sudo passes no PIP_* variable on)."""
    root = box.root
    for k in ("PIP_NO_INDEX", "PIP_FIND_LINKS"):
        box.env.pop(k, None)
    (root / "etc/pip.conf").write_text(PIP_CONF)
    dest = root / home.lstrip("/") / "gpuenv/install-scripts"
    dest.parent.mkdir(parents=True)
    shutil.copytree(SCRIPTS, dest, ignore=shutil.ignore_patterns("__pycache__"))
    if owner:
        box.run("chown", "-R", owner, f"{home}/gpuenv", check=True)


def follow_readme(box: Chroot, port: int, sha256: str, home: str, userspec: str | None = None) -> None:
    """The README's three lines, each as the reader types it, then the simulated reboot: the
    dry run changes nothing, the install stops at the driver's reboot, the unit finishes after it."""
    from tests.chroot_env import manifest

    dry, install, show = provisioning_lines()["by_hand"]
    root = box.root

    def line(text: str) -> subprocess.CompletedProcess:
        who = [f"--userspec={userspec}"] if userspec else []
        env = {**box.env, "HOME": home}
        script = f"cd {home}/gpuenv && {filled(text, port, sha256)}"
        return subprocess.run(["chroot", *who, str(root), "sh", "-c", script], env=env, capture_output=True,
                              text=True, timeout=900)  # fmt: skip

    before = manifest(root)
    res = line(dry)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "dry run: nothing is changed" in res.stdout
    assert f"would install gpuenv into /opt/gpuenv (sha256:{sha256})" in res.stdout
    assert manifest(root) == before

    res = line(install)
    assert res.returncode == 10, res.stdout + res.stderr  # applied up to the driver's reboot
    assert f"downloading http://127.0.0.1:{port}/{WHEEL_NAME}" in res.stdout
    pkgs = box.packages()
    assert all(p in pkgs for p in ("python3.11-venv", "cuda-toolkit-12-8", "nvidia-open")), pkgs
    assert box.systemctl_calls()[-1] == "--no-block reboot"
    res = line(show)
    assert res.returncode == 0 and json.loads(res.stdout)["state"] == "reboot-pending", res.stdout + res.stderr

    box.reboot()
    after = box.run(*exec_start(root))  # what gpuenv-resume.service runs after the boot
    assert after.returncode == 0, after.stdout + after.stderr
    res = line(show)
    status = json.loads(res.stdout)
    assert status["state"] == "done" and status["exit"] == 0, status
    assert status["gpuenv"] == f"sha256:{sha256}"
    assert status["request"] == {"stack": "cuda", "version": "12.8", "torch": None, "venv": None, "user": "alice"}
    assert not os.path.lexists(root / "etc/systemd/system/multi-user.target.wants/gpuenv-resume.service")
    assert (root / "opt/gpuenv/.gpuenv-source").read_text() == f"sha256:{sha256}\n"


@pytest.mark.chroot
def test_readme_provisioning_as_root_without_sudo(fresh_box, served_readme_wheel):
    """A fresh Debian 12 box with only python3, no sudo: the README's lines as root."""
    port, sha256 = served_readme_wheel
    assert not (fresh_box.root / "usr/bin/sudo").exists()
    readme_box(fresh_box, "/root", owner=None)
    follow_readme(fresh_box, port, sha256, "/root")


@pytest.mark.chroot
def test_readme_provisioning_as_a_user_with_sudo(fresh_box, served_readme_wheel):
    """The same box with sudo and a user bob allowed to use it: the README's lines as bob."""
    port, sha256 = served_readme_wheel
    box = fresh_box
    box.run("apt-get", "-q", "update", check=True)
    box.run("apt-get", "install", "-y", "-q", "--no-install-recommends", "sudo", check=True)
    box.run("useradd", "--create-home", "--shell", "/bin/sh", "bob", check=True)
    (box.root / "etc/sudoers.d/bob").write_text("bob ALL=(ALL) NOPASSWD: ALL\n")
    (box.root / "etc/sudoers.d/bob").chmod(0o440)
    readme_box(box, "/home/bob", owner="bob:bob")
    assert "python3.11-venv" not in box.packages()  # still the fresh box, but for sudo
    follow_readme(box, port, sha256, "/home/bob", userspec="bob:bob")
