"""The provisioning hook (install-scripts/): bootstrap.sh, its systemd unit and the cloud-init
user-data, checked with the real tools and run for real in a Debian 12 chroot.

- shellcheck (Debian's package) is clean for every shell script in install-scripts/;
- `cloud-init schema --config-file` (Debian's cloud-init) passes for cloud-init.yaml and fails for
  broken copies; the bootstrap it embeds is install-scripts/bootstrap.sh byte for byte;
- bootstrap.sh's usage errors, and its --dry-run on this machine, which changes nothing;
- in a Debian 12 chroot with only python3 (tests/chroot_env.py's, plus python3 and a local APT
  repository holding python3-venv), bootstrap.sh installs python3-venv with apt, gpuenv from a
  wheel built from this checkout, and CUDA from the local signed vendor repository; it writes
  the unit, enables it and asks systemd (a PATH stand-in for systemctl) to reboot; after the
  simulated reboot (a new boot id) the unit's own command finishes and disables it; a second
  run changes nothing.

Refresh the bootstrap that cloud-init.yaml embeds after editing bootstrap.sh:
    python3 tests/test_provision.py --sync
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
CLOUD_INIT = SCRIPTS / "cloud-init.yaml"
EMBED_INDENT = "      "
EMBED_START = "    content: |\n"
EMBED_END = "runcmd:\n"


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
    assert "Failed to parse service type" in res.stderr


def embedded_bootstrap(text: str) -> str:
    start = text.index(EMBED_START) + len(EMBED_START)
    end = text.index(EMBED_END, start)
    lines = text[start:end].splitlines(True)
    return "".join(ln[len(EMBED_INDENT) :] if ln.strip() else ln.lstrip(" ") for ln in lines)


def embed(bootstrap: str, text: str) -> str:
    start = text.index(EMBED_START) + len(EMBED_START)
    end = text.index(EMBED_END, start)
    block = "".join((EMBED_INDENT + ln) if ln.strip() else "\n" for ln in bootstrap.splitlines(True))
    return text[:start] + block + text[end:]


def test_cloud_init_embeds_this_bootstrap():
    import yaml

    doc = yaml.safe_load(CLOUD_INIT.read_text())
    files = {f["path"]: f for f in doc["write_files"]}
    script = files["/usr/local/sbin/gpuenv-bootstrap"]
    assert script["content"] == BOOTSTRAP.read_text(), "cloud-init.yaml is stale: python3 tests/test_provision.py --sync"
    assert script["permissions"] == "0755"
    assert doc["runcmd"][0][:2] == ["sh", "/usr/local/sbin/gpuenv-bootstrap"]
    assert CLOUD_INIT.read_text().startswith("#cloud-config\n")


def cloud_init_schema(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [need("cloud-init"), "schema", "--config-file", str(path)], capture_output=True, text=True, timeout=120
    )


def test_cloud_init_schema_passes():
    res = cloud_init_schema(CLOUD_INIT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Valid cloud-config" in res.stdout + res.stderr


@pytest.mark.parametrize(
    "breakage",
    [
        ("runcmd:\n  - [sh, /usr/local/sbin/gpuenv-bootstrap, --stack, auto]\n", "runcmd: 5\n"),
        ("  - path: /usr/local/sbin/gpuenv-bootstrap\n", "  - pathh: /usr/local/sbin/gpuenv-bootstrap\n"),
        ("write_files:\n", "write_files: {\n"),
    ],
    ids=["runcmd-not-a-list", "write_files-without-path", "not-yaml"],
)
def test_cloud_init_schema_fails_for_a_broken_copy(tmp_path, breakage):
    old, new = breakage
    text = CLOUD_INIT.read_text()
    assert old in text
    broken = tmp_path / "user-data.yaml"
    broken.write_text(text.replace(old, new, 1))
    res = cloud_init_schema(broken)
    assert res.returncode != 0, res.stdout + res.stderr


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
        (("--torch", "2.7.1"), "--torch needs --venv DIR"),
        (("--wheel", "http://example.invalid/gpuenv.whl"), "an https:// URL or a path"),
        (("--sha256", "abc"), "64 lower-case hex digits"),
        (("--version", "--yes"), "unexpected value"),
        (("--user",), "--user needs a value"),
    ],
)
def test_usage_errors_exit_2_and_change_nothing(args, message):
    before = host_state()
    res = bootstrap(*args)
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stdout + res.stderr
    assert host_state() == before


def test_help_lists_the_exit_codes():
    res = bootstrap("--help")
    assert res.returncode == 0
    for code in ("0  done", "1  failed", "2  usage", "3  refused", "4  busy", "5  could not install", "10  reboot pending"):
        assert code in res.stdout, code


def test_needs_root_unless_dry_run():
    if os.geteuid() == 0:
        res = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", str(BOOTSTRAP), "--stack", "cuda"],
            capture_output=True,
            text=True,
        )
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
    res = bootstrap("--dry-run", "--stack", "cuda", "--wheel", str(wheel), env=env, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode in (0, 3), out
    assert "dry run: nothing is changed" in out
    assert "would install gpuenv into /opt/gpuenv (sha256:" in out
    assert "would write /etc/systemd/system/gpuenv-resume.service" in out
    assert "install cuda" in out and "dry run: nothing was changed" in out  # gpuenv's own plan
    assert host_state() == before


# --------------------------------------------------------------------------------------------
# The wheel of this checkout and the wheels it depends on (for installs without PyPI)


def build_wheel_and_wheelhouse(work: Path, python_version: str = "3.11") -> tuple[Path, Path]:
    """gpuenv's wheel, built from a copy of this checkout (the checkout gets no build/ or
    egg-info), and a wheelhouse with it and its dependencies for `python_version` on x86_64."""
    src = work / "src"
    ignore = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache")
    shutil.copytree(REPO, src, ignore=ignore, symlinks=True)
    dist, house = work / "dist", work / "wheelhouse"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    res = subprocess.run([*pip, "wheel", "-q", "--no-deps", "-w", str(dist), str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    (wheel,) = dist.glob("gpuenv-*.whl")
    res = subprocess.run(
        [*pip, "download", "-q", "-d", str(house), "--only-binary=:all:", "--python-version", python_version,
         "--implementation", "cp", "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64",
         str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert res.returncode == 0, "cannot fetch gpuenv's dependencies (PyPI):\n" + res.stdout + res.stderr
    shutil.rmtree(src)
    return wheel, house


@pytest.fixture(scope="session")
def wheel_and_wheelhouse(tmp_path_factory) -> tuple[Path, Path]:
    return build_wheel_and_wheelhouse(tmp_path_factory.mktemp("gpuenv-wheel"))


# --------------------------------------------------------------------------------------------
# A Debian 12 chroot with python3 and nothing else, and bootstrap.sh in it for real

SYSTEMCTL = """#!/bin/sh
# Stand-in systemctl (the chroot runs no systemd): note the call, do nothing.
echo "$*" >>/var/log/systemctl.calls
"""


def _python_chroot(base: Path, dest: Path) -> Path:
    """base + python3 (the fresh box) + a local trusted APT repository holding python3-venv,
    ca-certificates and gpg with their dependencies (what bootstrap.sh installs), no other
    source."""
    from tests.chroot_env import MIRROR, copy_root, in_root, run

    copy_root(base, dest)
    shutil.copy("/etc/resolv.conf", dest / "etc/resolv.conf")
    (dest / "etc/apt/sources.list").write_text(f"deb {MIRROR} bookworm main\n")
    in_root(dest, "apt-get", "-q", "update")
    in_root(dest, "apt-get", "install", "-y", "-q", "--no-install-recommends", "python3")
    in_root(dest, "apt-get", "clean")
    in_root(dest, "apt-get", "install", "-y", "-q", "--download-only", "--no-install-recommends",
            "python3-venv", "ca-certificates", "gpg")  # fmt: skip
    debs = dest / "srv/gpuenv-debs"
    debs.mkdir(parents=True)
    for deb in (dest / "var/cache/apt/archives").glob("*.deb"):
        shutil.move(str(deb), debs / deb.name)
    (debs / "Packages").write_text(run(["apt-ftparchive", "packages", "."], cwd=debs).stdout)
    (dest / "etc/apt/sources.list").write_text("deb [trusted=yes] file:/srv/gpuenv-debs ./\n")
    for p in (dest / "var/lib/apt/lists").glob("*_*"):
        p.unlink()
    assert not list((dest / "var/lib/dpkg/info").glob("python3*-venv.list")), "python3-venv must be absent"
    (dest / ".gpuenv-python-chroot").write_text("1\n")
    return dest


@pytest.fixture(scope="session")
def python_chroot(base_chroot, tmp_path_factory) -> Path:
    cache = os.environ.get("GPUENV_CHROOT_CACHE")
    # Not test_readme.py's "-python3" box (python3 and certificates installed, Debian's sources).
    dest = Path(cache + "-provision") if cache else tmp_path_factory.mktemp("bookworm-provision") / "root"
    if (dest / ".gpuenv-python-chroot").exists():
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    return _python_chroot(base_chroot, dest)


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
    from tests.chroot_env import NVIDIA_GPU, copy_root, give_machine

    wheel, house = wheel_and_wheelhouse
    root = give_machine(copy_root(python_chroot, tmp_path / "root"), NVIDIA_GPU)
    # gpuenv in the chroot probes it as its own machine: the kernel is the one running here.
    (root / "lib/modules" / os.uname().release / "build").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/kernel/random").mkdir(parents=True, exist_ok=True)
    shutil.copytree(house, root / "srv/wheelhouse")
    shutil.copy(wheel, root / "root" / wheel.name)
    shutil.copy(BOOTSTRAP, root / "usr/local/sbin/gpuenv-bootstrap")  # as cloud-init.yaml writes it
    (root / "usr/local/sbin/systemctl").write_text(SYSTEMCTL)
    (root / "usr/local/sbin/systemctl").chmod(0o755)
    (root / "run/systemd/system").mkdir(parents=True)  # "systemd is running": the reboot is asked for
    box = Chroot(root, vendor_repo.env)
    box.reboot()
    box.wheel = f"/root/{wheel.name}"
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
            "--wheel", box.wheel)  # fmt: skip
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
    assert steps and all("(already done)" in ln for ln in steps), steps
    assert manifest(root, skip=VOLATILE) == settled


@pytest.mark.chroot
def test_bootstrap_no_reboot_and_environment_settings(fresh_box):
    """Settings from the environment (what cloud-init could export), --no-reboot: the reboot is
    left to the operator; the unit is enabled and remembers the settings for --resume."""
    box, root = fresh_box, fresh_box.root
    box.env.update(GPUENV_STACK="cuda", GPUENV_VERSION="12.8", GPUENV_USER="alice", GPUENV_WHEEL=box.wheel,
                   GPUENV_NO_REBOOT="1")  # fmt: skip
    first = box.run("sh", "/usr/local/sbin/gpuenv-bootstrap")
    assert first.returncode == 10, first.stdout + first.stderr
    assert "reboot this machine (--no-reboot)" in first.stdout
    assert "--no-block reboot" not in box.systemctl_calls()
    settings = (root / "var/lib/gpuenv/bootstrap.env").read_text().splitlines()
    assert "VERSION=12.8" in settings and "TUSER=alice" in settings and "NO_REBOOT=1" in settings
    assert oct((root / "var/lib/gpuenv/bootstrap.env").stat().st_mode & 0o777) == "0o600"
    box.reboot()
    for k in ("GPUENV_STACK", "GPUENV_VERSION", "GPUENV_USER", "GPUENV_WHEEL", "GPUENV_NO_REBOOT"):
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
    res = box.run("sh", "/usr/local/sbin/gpuenv-bootstrap", "--stack", "rocm", "--wheel", box.wheel)
    assert res.returncode == 3, res.stdout + res.stderr
    status = box.status()
    assert status["state"] == "failed" and status["exit"] == 3
    assert not os.path.lexists(root / "etc/systemd/system/multi-user.target.wants/gpuenv-resume.service")


# --------------------------------------------------------------------------------------------


def _sync() -> int:
    text = CLOUD_INIT.read_text()
    new = embed(BOOTSTRAP.read_text(), text)
    if new != text:
        CLOUD_INIT.write_text(new)
        print(f"updated {CLOUD_INIT}")
    assert embedded_bootstrap(new) == BOOTSTRAP.read_text()
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--sync"]:
        sys.exit(_sync())
    print(__doc__)
