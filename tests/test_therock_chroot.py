"""ROCm's new release stream installed for real (#29): apt installs TheRock-layout packages from the
local signed repository into a Debian 12 chroot (never the host), and `gpuenv probe --root` /
`gpuenv doctor --root` report and judge what dpkg and the packages' postinst left there; the legacy
stream installed beside it is rocm.mixed-streams."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.chroot_env")

from tests.chroot_env import AMD_GPU, copy_root, give_machine, gpuenv, in_root  # noqa: E402

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
    in_root(root, "apt-get", "install", "-y", "--no-install-recommends", "amdrocm7.14-gfx1100")
    return root


def _probe(root: Path) -> dict:
    done = gpuenv("probe", "--json", "--root", str(root), env={})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_apt_left_the_therock_layout(therock_root):
    assert (therock_root / "opt/rocm/core").is_symlink()  # the alternative amdrocm-core's postinst made
    assert (therock_root / "opt/rocm/core-7.14/.info/version").read_text() == "7.14.0-7\n"
    assert not (therock_root / "opt/rocm/.info").exists()


def test_probe_reports_the_installed_release(therock_root):
    facts = _probe(therock_root)
    assert facts["toolkits"]["rocm"] == [
        {"version": "7.14.0", "path": "/opt/rocm/core-7.14", "source": "package", "stream": "therock"}
    ]
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
