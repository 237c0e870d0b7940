"""ROCm's new release stream installed for real (#29): apt installs TheRock-layout packages from the
local signed repository into a Debian 12 chroot (never the host), and `gpuenv probe --root` /
`gpuenv doctor --root` report and judge what dpkg and the packages' postinst left there; the legacy
stream installed beside it is rocm.mixed-streams. gpuenv's own plan installs it the same way (the
pinned key, AMD's source line), and a switch from the legacy stream purges it but not the driver."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gpuenv.plan import planfile

pytest.register_assert_rewrite("tests.chroot_env")

from tests.chroot_env import AMD_GPU, copy_root, end_state, give_machine, gpuenv, in_root  # noqa: E402

pytest_plugins = ["tests.chroot_env"]  # base_chroot, vendor_repo
pytestmark = pytest.mark.chroot


def _add_source(root: Path, repo, name: str, line: str) -> None:
    (root / "etc/apt/keyrings").mkdir(parents=True, exist_ok=True)
    (root / "etc/apt/keyrings/amdrocm.gpg").write_bytes(repo.keyring())
    (root / f"etc/apt/sources.list.d/{name}.list").write_text(line + "\n")


@pytest.fixture(scope="module")
def therock_root(base_chroot, vendor_repo, tmp_path_factory) -> Path:
    root = copy_root(base_chroot, tmp_path_factory.mktemp("therock") / "root")
    give_machine(root, AMD_GPU)
    # The line AMD's 7.14 install page writes, with the local repository for repo.amd.com.
    _add_source(root, vendor_repo, "rocm",
                f"deb [arch=amd64 signed-by=/etc/apt/keyrings/amdrocm.gpg] "
                f"{vendor_repo.url}/amd/rocm/packages-multi-arch/debian12 stable main")  # fmt: skip
    in_root(root, "apt-get", "update")
    in_root(root, "apt-get", "install", "-y", "--no-install-recommends", "amdrocm7.14-gfx942")
    return root


def _probe(root: Path) -> dict:
    done = gpuenv("probe", "--json", "--root", str(root), env={})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_apt_left_the_therock_layout(therock_root):
    assert (therock_root / "opt/rocm/core").is_symlink()  # the alternative amdrocm-core's postinst made
    assert (therock_root / "opt/rocm/core-7.14/.info/version").read_text() == "7.14.0-7\n"
    assert not (therock_root / "opt/rocm/.info").exists()


# The origin is the distribution's: the test's repository stands at a loopback address, not at
# AMD's hosts (repo.amd.com, stable.repo.amd.com), so the probe cannot tell it is AMD's; an admin's
# mirror of AMD's repository reads the same. AMD's own hosts: test_os_severity.
INSTALLED_7_14 = {
    "version": "7.14.0", "path": "/opt/rocm/core-7.14", "source": "package", "stream": "therock", "origin": "distribution"
}


def test_probe_reports_the_installed_release(therock_root):
    facts = _probe(therock_root)
    assert facts["toolkits"]["rocm"] == [INSTALLED_7_14]
    assert facts["packages"]["installed"]["amdrocm-core7.14"] == "7.14.0-7"


def test_doctor_judges_it_as_7_14(therock_root):
    done = gpuenv("doctor", "--json", "--root", str(therock_root), env={})
    report = json.loads(done.stdout)
    assert report["target"]["version"] == "7.14.0" and report["target"]["basis"] == "installed"
    codes = {f["code"] for f in report["findings"]}
    assert "rocm.release-unknown" not in codes and "rocm.mixed-streams" not in codes


def test_the_legacy_stream_beside_it_is_mixed_streams(therock_root, vendor_repo, tmp_path):
    root = copy_root(therock_root, tmp_path / "root")
    (root / "etc/apt/sources.list.d/legacy.list").write_text(
        f"deb [arch=amd64 signed-by=/etc/apt/keyrings/amdrocm.gpg] {vendor_repo.url}/amd/rocm/apt/7.2.4 jammy main\n"
    )
    in_root(root, "apt-get", "update")
    in_root(root, "apt-get", "install", "-y", "--no-install-recommends", "rocm")
    facts = _probe(root)
    assert {t.get("stream") for t in facts["toolkits"]["rocm"]} == {None, "therock"}
    report = json.loads(gpuenv("doctor", "--json", "--root", str(root), env={}).stdout)
    [mixed] = [f for f in report["findings"] if f["code"] == "rocm.mixed-streams"]
    assert "/opt/rocm-7.2.4" in mixed["detail"] and "/opt/rocm/core-7.14" in mixed["detail"]


# --------------------------------------------------------------------------------------------
# gpuenv installs it: `gpuenv plan rocm --version 7.14.0` and `gpuenv apply`, from the local
# repository (an installed mirror bundle: repo.amd.com's tree and key, the key pinned)


@pytest.fixture(scope="module")
def mirror(vendor_repo, tmp_path_factory) -> dict[str, str]:
    """The environment of a state directory whose bundle pins the new stream's keys too."""
    state = vendor_repo.install_bundle(tmp_path_factory.mktemp("therock-state") / "state", therock=True)
    return {"GPUENV_STATE_DIR": str(state)}


def _plan_and_apply(root: Path, env: dict[str, str], out: Path, *extra: str):
    give_machine(root, AMD_GPU)
    made = gpuenv("plan", "rocm", "--root", str(root), "--user", "alice", "--out", str(out), *extra, env=env)
    assert made.returncode == 0, made.stdout + made.stderr
    expect = planfile.load(out).request.line()
    done = gpuenv("apply", str(out), "--root", str(root), "--yes", "--expect", expect, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return planfile.load(out)


def _installed(root: Path) -> dict[str, str]:
    return end_state(root)["packages"]


@pytest.fixture(scope="module")
def gpuenv_therock(base_chroot, mirror, tmp_path_factory):
    work = tmp_path_factory.mktemp("gpuenv-therock")
    root = copy_root(base_chroot, work / "root")
    plan = _plan_and_apply(root, mirror, work / "plan.json", "--version", "7.14.0")
    return root, plan


def test_gpuenv_installs_7_14_through_the_pinned_key_and_amds_source(gpuenv_therock, vendor_repo):
    root, plan = gpuenv_therock
    assert plan.target.version == "7.14.0" and plan.target.driver is None
    pkgs = _installed(root)
    assert {"amdrocm7.14-gfx942", "amdrocm-core7.14", "amdrocm-runtime7.14"} <= set(pkgs)
    assert not {"amdgpu-dkms", "rocm", "rocm-core"} & set(pkgs)  # no driver, nothing of the legacy stream
    assert (root / "etc/apt/sources.list.d/rocm.list").read_text() == (
        f"deb [arch=amd64 signed-by=/etc/apt/keyrings/amdrocm.gpg] {vendor_repo.url}/amd/rocm/packages-multi-arch/debian12 stable main\n"
    )  # fmt: skip
    ring = subprocess.run(
        ["gpg", "--no-autostart", "--homedir", str(root / "tmp"), "--show-keys", "--with-colons",
         str(root / "etc/apt/keyrings/amdrocm.gpg")], capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert [ln.split(":")[9] for ln in ring.splitlines() if ln.startswith("fpr:")][:1] == [vendor_repo.fingerprint]
    members = {ln.split(":")[0] for ln in (root / "etc/group").read_text().splitlines() if "alice" in ln.split(":")[3].split(",")}
    assert {"render", "video"} <= members


def test_what_gpuenv_installed_is_probed_and_doctored_as_7_14(gpuenv_therock):
    root, _ = gpuenv_therock
    facts = _probe(root)
    assert facts["toolkits"]["rocm"] == [INSTALLED_7_14]
    report = json.loads(gpuenv("doctor", "--json", "--root", str(root), env={}).stdout)
    assert report["target"]["version"] == "7.14.0" and report["target"]["basis"] == "installed"
    assert "rocm.mixed-streams" not in {f["code"] for f in report["findings"]}


def test_a_switch_from_the_legacy_stream_purges_it_and_keeps_the_driver(base_chroot, mirror, tmp_path):
    root = copy_root(base_chroot, tmp_path / "root")
    _plan_and_apply(root, mirror, tmp_path / "legacy.json", "--version", "7.2.4")
    assert {"rocm-core", "amdgpu-dkms"} <= set(_installed(root))
    plan = _plan_and_apply(root, mirror, tmp_path / "therock.json", "--version", "7.14.0")
    assert "purge-legacy-rocm-packages" in [s.id for s in plan.steps]
    pkgs = _installed(root)
    assert "amdgpu-dkms" in pkgs and "amdrocm-core7.14" in pkgs
    assert not {"rocm", "rocm-core", "hip-runtime-amd"} & set(pkgs)
    assert (root / "etc/apt/sources.list.d/amdgpu.list").exists()  # the driver's repository stays
    assert not (root / "etc/apt/preferences.d/rocm-pin-600").exists()
    assert not (root / "etc/ld.so.conf.d/rocm.conf").exists()
    facts = _probe(root)
    assert [t.get("stream") for t in facts["toolkits"]["rocm"]] == ["therock"]
