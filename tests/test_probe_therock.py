"""ROCm's new release stream (TheRock, #29): the /opt/rocm/core-X.Y tree, amdrocm-* packages and
the rocm wheels are found and reported with their release, and the legacy probe does not take
TheRock's /opt/rocm link farm for a legacy tree."""

from __future__ import annotations

import os

from gpuenv.facts import Python, Toolkit
from gpuenv.probe import collect, therock, toolkits
from gpuenv.probe.host import Sysroot
from tests.probe_helpers import ROOTS


def test_package_series_reads_the_major_minor_from_every_name_form():
    assert therock.package_series("amdrocm-core7.14") == "7.14"
    assert therock.package_series("amdrocm7.14-gfx1201") == "7.14"
    assert therock.package_series("amdrocm-core-dev10.0-gfx1201") == "10.0"
    assert therock.package_series("amdrocm-runtime10.0") == "10.0"
    assert therock.package_series("amdrocm-fft-host8.2") == "8.2"
    # unversioned meta packages and other vendors' names carry no series
    for name in ("amdrocm", "amdrocm-core", "amdrocm-core-sdk", "rocm-core", "amdgpu-dkms", "xamdrocm-core7.14"):
        assert therock.package_series(name) is None, name


def test_package_release_is_the_release_only_for_a_stable_build():
    assert therock.package_release("7.14.0-7") == "7.14.0"
    assert therock.package_release("10.0.0-4") == "10.0.0"
    assert therock.package_release("1:10.0.0-4") == "10.0.0"
    assert therock.package_release("7.14.0") == "7.14.0"
    # pre-releases and nightlies (TheRock docs/packaging/versioning.md) are not the release
    assert therock.package_release("7.14.0~pre1") is None
    assert therock.package_release("7.14.0~20260501") is None
    assert therock.package_release("garbage") is None


def _tree(root, version_text: str | None, packages: dict[str, str]):
    core = root / "opt/rocm/core-7.14"
    core.mkdir(parents=True)
    if version_text is not None:
        (core / ".info").mkdir()
        (core / ".info/version").write_text(version_text)
    (root / "etc/alternatives").mkdir(parents=True)
    os.symlink("/opt/rocm/core-7.14", root / "etc/alternatives/core")
    os.symlink("/etc/alternatives/core", root / "opt/rocm/core")
    # the alternatives postinst also links /opt/rocm/include into the tree
    (core / "include/rocm-core").mkdir(parents=True)
    (core / "include/rocm-core/rocm_version.h").write_text(
        "#define ROCM_VERSION_MAJOR 7\n#define ROCM_VERSION_MINOR 14\n#define ROCM_VERSION_PATCH 0\n"
    )
    os.symlink("/opt/rocm/core-7.14/include", root / "opt/rocm/include")
    return packages


def test_the_tree_is_reported_once_with_its_release_and_the_link_farm_is_not(tmp_path):
    installed = _tree(tmp_path, "7.14.0-7\n", {"amdrocm-core7.14": "7.14.0-7", "amdrocm7.14-gfx1201": "7.14.0-7"})
    errors: list = []
    got = toolkits.probe(Sysroot.at(str(tmp_path)), installed, errors)
    assert got.rocm == (Toolkit(version="7.14.0", path="/opt/rocm/core-7.14", source="package", stream="therock"),)
    assert errors == []


def test_a_tree_without_info_version_falls_back_to_rocm_version_h(tmp_path):
    _tree(tmp_path, None, {})
    got = toolkits.probe(Sysroot.at(str(tmp_path)), {}, [])
    # no amdrocm package: a tarball/runfile-style tree, source unknown
    assert got.rocm == (Toolkit(version="7.14.0", path="/opt/rocm/core-7.14", source=None, stream="therock"),)


def test_packages_without_their_tree_still_report_the_release(tmp_path):
    got = therock.probe(Sysroot.at(str(tmp_path)), {"amdrocm-runtime10.0": "10.0.0-4", "amdrocm10.0-gfx1201": "10.0.0-4"}, [])
    assert got == [Toolkit(version="10.0.0", path=None, source="package", stream="therock")]
    # a nightly's packages are not reported as the release they lead to
    assert therock.probe(Sysroot.at(str(tmp_path)), {"amdrocm-core7.15": "7.15.0~20260801-1"}, []) == []


def test_a_1010_install_probes_to_1010_and_is_judged_as_itself(tmp_path):
    """Core SDK 10.1.0 in the stream's layout (/opt/rocm/core-10.1, amdrocm-*10.1 at 10.1.0-N: the
    scheme of 7.14 and 10.0 applied, since 10.1.0's install page was not read) is reported as
    10.1.0, a release the matrices now bundle, so the doctor judges it as itself."""
    from gpuenv.matrices import load
    from gpuenv.resolve.finding import Target
    from gpuenv.resolve.target import effective_target

    got = therock.probe(Sysroot.at(str(tmp_path)), {"amdrocm-runtime10.1": "10.1.0-1", "amdrocm10.1-gfx1201": "10.1.0-1"}, [])
    assert got == [Toolkit(version="10.1.0", path=None, source="package", stream="therock")]
    tree = tmp_path / "opt/rocm/core-10.1/.info"
    tree.mkdir(parents=True)
    (tree / "version").write_text("10.1.0-1\n")
    facts = collect(root=str(tmp_path))
    assert [(t.version, t.path, t.stream) for t in facts.toolkits.rocm] == [("10.1.0", "/opt/rocm/core-10.1", "therock")]
    target = effective_target(facts, load(), Target())
    assert (target.stack, target.version, target.extra.get("installed")) == ("rocm", "10.1.0", None)


def test_the_rocm_wheels_of_the_probed_python_are_an_install():
    py = Python(executable="/home/a/venv/bin/python", packages={"rocm": "7.14.0", "rocm-sdk-core": "7.14.0"})
    assert therock.from_python(py) == [Toolkit(version="7.14.0", path=None, source="pip", stream="therock")]
    nightly = Python(packages={"rocm-sdk-core": "7.15.0a20260801"})
    assert therock.from_python(nightly)[0].version == "7.15.0a20260801"  # not passed off as 7.15.0
    assert therock.from_python(Python(packages={"torch": "2.12.0"})) == []
    assert therock.from_python(None) == []


def test_a_sysroot_venv_with_rocm_wheels_is_reported(tmp_path):
    site = tmp_path / "home/a/venv/lib/python3.12/site-packages"
    site.mkdir(parents=True)
    (tmp_path / "home/a/venv/pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.12.3\n")
    (tmp_path / "home/a/venv/bin").mkdir()
    (tmp_path / "home/a/venv/bin/python").write_text("")
    for dist, name in (("rocm-7.14.0", "rocm"), ("rocm_sdk_core-7.14.0", "rocm-sdk-core")):
        (site / f"{dist}.dist-info").mkdir()
        (site / f"{dist}.dist-info/METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 7.14.0\n\n")
    facts = collect(root=str(tmp_path), python="/home/a/venv/bin/python")
    assert facts.toolkits.rocm == (Toolkit(version="7.14.0", path=None, source="pip", stream="therock"),)


def test_the_therock_fixture_probes_to_7_14():
    facts = collect(root=str(ROOTS / "ubuntu2404-rx9070xt-rocm714-therock"), user="alice")
    assert [(t.version, t.path, t.stream) for t in facts.toolkits.rocm] == [("7.14.0", "/opt/rocm/core-7.14", "therock")]
    assert "rocm-core" not in facts.packages.installed  # nothing of the legacy stream to find it by


def test_stream_is_left_out_of_a_legacy_toolkit_and_round_trips():
    from gpuenv import facts as facts_mod

    fx = collect(root=str(ROOTS / "ubuntu2404-rx9070xt-igpu-rocm"), user="alice")
    assert "stream" not in fx.to_dict()["toolkits"]["rocm"][0]
    fx2 = collect(root=str(ROOTS / "ubuntu2404-rx9070xt-rocm714-therock"), user="alice")
    assert facts_mod.loads(fx2.to_json()).toolkits.rocm == fx2.toolkits.rocm
