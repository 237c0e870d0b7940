"""ROCm's new release stream in the doctor (#29): a TheRock 7.14 install is judged like any
release, a legacy install beside a TheRock one is rocm.mixed-streams, and a patch release the
data lacks (6.4.4; a 7.14 patch newer than 7.14.1) is judged as its series' newest bundled one, and says so;
Core SDK 10.1.0 is judged as itself, and a newer minor release than the data knows is not judged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.probe import collect
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.report import diagnose
from tests.cli_runner import CliRunner, app
from tests.doctor_cases import base
from tests.probe_helpers import ROOTS

runner = CliRunner()
THEROCK_ROOT = ROOTS / "ubuntu2404-rx9070xt-rocm714-therock"
LEGACY_ROOT = ROOTS / "ubuntu2404-rx9070xt-igpu-rocm"


@pytest.fixture(scope="module")
def m():
    return load()


def codes(report) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in report.findings:
        out.setdefault(f.code, []).append(f)
    return out


def test_the_714_sysroot_is_judged_against_714(m):
    report = diagnose(collect(root=str(THEROCK_ROOT), user="alice"), m, Target())
    assert (report.target.stack, report.target.version) == ("rocm", "7.14.0")
    found = codes(report)
    assert "rocm.release-unknown" not in found and "doctor.matrices-stale" not in found
    # AMD's 7.14 tables list Ubuntu 24.04.4 with GA 6.8 (Instinct) and HWE/OEM 6.17 (Radeon, Ryzen):
    # the box's 6.8.0-79 kernel is a listed series
    entry = m.rocm_release("7.14.0").os_support("ubuntu", "24.04")
    assert entry.kernels == ("6.8", "6.17") and entry.confirmed
    assert "kernel.unsupported" not in found and "os.unsupported" not in found
    # ... while an OS no 7.14 source offers is said to be unsupported
    assert m.rocm_release("7.14.0").os_support("ubuntu", "20.04") is None
    # the amdgpu-dkms 30.30 line is one AMD lists for 7.14: no driver mismatch, and one stream only
    assert "rocm.driver-mismatch" not in found and "rocm.mixed-streams" not in found


def test_the_714_sysroot_through_the_cli(tmp_path):
    done = runner.invoke(app, ["doctor", "--root", str(THEROCK_ROOT), "--user", "alice", "--json"])
    doc = json.loads(done.stdout)
    assert doc["target"] == {"stack": "rocm", "version": "7.14.0", "torch": None, "basis": "installed"}
    probe = runner.invoke(app, ["probe", "--root", str(THEROCK_ROOT), "--user", "alice"])
    assert "7.14.0" in probe.stdout


def _with_therock(doc: dict) -> dict:
    doc["toolkits"]["rocm"].append(
        {"version": "7.14.0", "path": "/opt/rocm/core-7.14", "source": "package", "stream": "therock"}
    )
    return doc


def test_legacy_beside_therock_is_mixed_streams(m):
    doc = _with_therock(base("doctor-healthy-rocm"))
    report = diagnose(from_dict(doc), m, Target())
    [mixed] = codes(report)["rocm.mixed-streams"]
    assert mixed.severity is Severity.WARNING
    assert "ROCm 7.2.4-70204 at /opt/rocm-7.2.4" in mixed.detail and "ROCm 7.14.0 (/opt/rocm/core-7.14)" in mixed.detail
    assert "rocm-core" in mixed.fix


def test_legacy_packages_alone_beside_rocm_wheels_are_mixed_streams(m):
    doc = base("doctor-healthy-rocm")
    doc["toolkits"]["rocm"] = [{"version": "7.14.0", "path": None, "source": "pip", "stream": "therock"}]
    [mixed] = codes(diagnose(from_dict(doc), m, Target()))["rocm.mixed-streams"]
    assert "rocm-core 7.2.4.70204-1~24.04" in mixed.detail and "pip wheels" in mixed.detail


def test_one_stream_alone_is_not_mixed(m):
    legacy = diagnose(collect(root=str(LEGACY_ROOT), user="alice"), m, Target())
    assert "rocm.mixed-streams" not in codes(legacy)
    # two TheRock releases side by side are multiple versions, not mixed streams
    doc = _with_therock(base("doctor-healthy-rocm"))
    doc["toolkits"]["rocm"] = doc["toolkits"]["rocm"][1:] + [
        {"version": "10.0.0", "path": "/opt/rocm/core-10.0", "source": "package", "stream": "therock"}
    ]
    legacy = inv.rocm_packages(from_dict(doc))
    doc["packages"]["installed"] = {k: v for k, v in doc["packages"]["installed"].items() if k not in legacy}
    assert "rocm.mixed-streams" not in codes(diagnose(from_dict(doc), m, Target()))


def _rocm_644(tmp_path):
    doc = base("doctor-healthy-rocm")
    doc["toolkits"]["rocm"] = [{"version": "6.4.4-40", "path": "/opt/rocm-6.4.4", "source": "package"}]
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    return doc, path


def test_a_patch_release_the_data_lacks_is_judged_as_the_nearest_and_says_so(m, tmp_path):
    assert m.rocm_release("6.4.4") is None and m.rocm_release("6.4.3") is not None  # the premise
    doc, path = _rocm_644(tmp_path)
    report = diagnose(from_dict(doc), m, Target())
    assert report.target.version == "6.4.3" and report.target.extra["installed"] == "6.4.4"
    assert "rocm.release-unknown" not in codes(report)
    text = runner.invoke(app, ["doctor", "--facts", str(path)]).stdout
    assert "ROCm 6.4.4 (installed, judged as 6.4.3)" in text.splitlines()[0]
    doc_json = json.loads(runner.invoke(app, ["doctor", "--facts", str(path), "--json"]).stdout)
    assert doc_json["target"]["version"] == "6.4.3" and doc_json["target"]["installed"] == "6.4.4"


def test_a_release_the_data_has_carries_no_installed_field(tmp_path):
    doc = base("doctor-healthy-rocm")
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    target = json.loads(runner.invoke(app, ["doctor", "--facts", str(path), "--json"]).stdout)["target"]
    assert "installed" not in target and target["version"] == "7.2.4"


def _on_714(os_id: str, version: str, kernel: str) -> dict:
    doc = _with_therock(base("doctor-healthy-rocm"))
    legacy = inv.rocm_packages(from_dict(doc))
    doc["packages"]["installed"] = {k: v for k, v in doc["packages"]["installed"].items() if k not in legacy}
    doc["toolkits"]["rocm"] = doc["toolkits"]["rocm"][1:]
    doc["os"].update({"id": os_id, "version_id": version, "pretty_name": f"{os_id} {version}"})
    doc["kernel"]["release"] = kernel
    return doc


def test_the_714_instinct_table_is_judged(m):
    """ROCm 7.14's Instinct OS/kernel table (legacy-rocm-build system-instinct.rst @ 8eb3b622ad34):
    its distributions are confirmed, so the doctor judges the kernel and the OS release against them."""
    rel = m.rocm_release("7.14.0")
    assert all(o.confirmed for o in rel.os)
    assert rel.os_support("sles", "16.0").kernels == ("6.12",)
    assert rel.os_support("rhel", "8.10").kernels == ("4.18",)
    assert rel.os_support("ol", "10").kernels == ()  # "UEK 8.1" names Oracle's kernel release, no series
    assert rel.os_support("debian", "11") is None
    # a 7.14 install on Ubuntu 24.04 running 6.14 (neither GA 6.8 nor HWE/OEM 6.17) is now judged
    found = codes(diagnose(from_dict(_on_714("ubuntu", "24.04", "6.14.0-37-generic")), m, Target()))
    assert (found.get("rocm.release-unknown"), found.get("os.unsupported")) == (None, None)
    [kernel] = found["kernel.unsupported"]
    assert "ROCm 7.14.0 lists 6.8, 6.17" in kernel.detail
    # ... and Debian 11, which no 7.14 table lists, is not supported
    [os_finding] = codes(diagnose(from_dict(_on_714("debian", "11", "5.10.0-30-amd64")), m, Target()))["os.unsupported"]
    assert "ROCm 7.14.0" in os_finding.title


def _therock_root(tmp_path: Path, release: str, revision: str = "1") -> Path:
    """The RX 9070 XT TheRock sysroot with ``release`` installed in place of 7.14.0: its
    amdrocm*X.Y packages at ``release-revision``, its /opt/rocm/core-X.Y tree and alternative."""
    root = tmp_path / "root"
    shutil.copytree(THEROCK_ROOT, root, symlinks=True)
    series = inv.series(release)
    status = root / "var/lib/dpkg/status"
    text = status.read_text().replace("7.14.0-7", f"{release}-{revision}")
    status.write_text(text.replace("7.14", str(series)))
    (root / "opt/rocm/core-7.14").rename(root / f"opt/rocm/core-{series}")
    (root / f"opt/rocm/core-{series}/.info/version").write_text(f"{release}-{revision}\n")
    (root / "etc/alternatives/core").unlink()
    (root / "etc/alternatives/core").symlink_to(f"/opt/rocm/core-{series}")
    return root


def test_an_installed_7141_is_judged_as_itself(m, tmp_path):
    """ROCm 7.14.1 is bundled (its install page read, 7.14.0's tables carried over): an installed
    7.14.1 in the stream's layout is judged as 7.14.1, not as 7.14.0 and not as unknown."""
    rel = m.rocm_release("7.14.1")
    assert rel is not None and (rel.release_date, rel.stream, rel.confirmed) == ("2026-09-02", "therock", False)
    assert "200-install.rst @ 50600d8da151e4ca8ce7fec9f68fa3048cc5bd85" in rel.source
    assert not any(o.confirmed for o in rel.os) and rel.gpus == m.rocm_release("7.14.0").gpus
    root = _therock_root(tmp_path, "7.14.1")
    report = diagnose(collect(root=str(root), user="alice"), m, Target())
    assert (report.target.version, report.target.extra.get("installed")) == ("7.14.1", None)
    found = codes(report)
    assert "rocm.release-unknown" not in found and "kernel.unsupported" not in found
    done = runner.invoke(app, ["doctor", "--root", str(root), "--user", "alice"])
    assert "judged as" not in done.stdout.splitlines()[0]


def test_a_newer_patch_of_the_new_stream_is_judged_as_its_series_newest_and_says_so(m, tmp_path):
    """A 7.14 patch release newer than the data (7.14.2: a made-up number, not a release read
    anywhere) is judged as 7.14.1, the newest bundled release of its series, and says so."""
    assert m.rocm_release("7.14.2") is None  # the premise
    root = _therock_root(tmp_path, "7.14.2")
    report = diagnose(collect(root=str(root), user="alice"), m, Target())
    assert (report.target.version, report.target.extra["installed"]) == ("7.14.1", "7.14.2")
    assert "rocm.release-unknown" not in codes(report)
    done = runner.invoke(app, ["doctor", "--root", str(root), "--user", "alice"])
    assert "ROCm 7.14.2 (installed, judged as 7.14.1)" in done.stdout.splitlines()[0]
    done = runner.invoke(app, ["doctor", "--root", str(root), "--user", "alice", "--json"])
    target = json.loads(done.stdout)["target"]
    assert (target["version"], target["installed"]) == ("7.14.1", "7.14.2")


def test_an_installed_1010_is_judged_against_1010(m, tmp_path):
    """ROCm Core SDK 10.1.0 is a bundled release (10.0.0's tables with its release notes' changes):
    an installed 10.1.0 is judged as itself, not rocm.release-unknown, and its kernels are 10.1.0's."""
    rel = m.rocm_release("10.1.0")
    assert rel is not None and rel.stream == "therock" and m.rocm_releases()[-1] is rel
    assert rel.os_support("ubuntu", "24.04").point_releases == ("24.04.5",)
    root = _therock_root(tmp_path, "10.1.0")
    report = diagnose(collect(root=str(root), user="alice"), m, Target())
    assert (report.target.stack, report.target.version) == ("rocm", "10.1.0")
    assert "installed" not in report.target.extra
    found = codes(report)
    assert "rocm.release-unknown" not in found and "doctor.matrices-stale" not in found
    # the box runs 6.8.0-79 on Ubuntu 24.04: GA 6.8 is listed for 24.04.5 (Instinct), HWE 7.0 for the
    # RX 9070 XT's class; the kernel series is one 10.1.0 lists
    assert "kernel.unsupported" not in found
    done = runner.invoke(app, ["doctor", "--root", str(root), "--user", "alice", "--json"])
    assert json.loads(done.stdout)["target"] == {"stack": "rocm", "version": "10.1.0", "torch": None, "basis": "installed"}


def test_a_newer_minor_release_than_1010_is_not_judged(m, tmp_path):
    """A release past the newest bundled one (a hypothetical 10.2.0: no source names it) is not
    judged as 10.1.0; the doctor says it is newer than what it knows."""
    assert m.rocm_release("10.2.0") is None  # the premise
    root = _therock_root(tmp_path, "10.2.0")
    report = diagnose(collect(root=str(root), user="alice"), m, Target())
    assert (report.target.version, report.target.extra["installed"]) == (None, "10.2.0")
    [unknown] = codes(report)["rocm.release-unknown"]
    assert "ROCm 10.2.0 is newer than the newest release the matrices know (10.1.0)" in unknown.detail
    assert "matrix update" in unknown.fix
    done = runner.invoke(app, ["doctor", "--root", str(root), "--user", "alice"])
    assert "ROCm 10.2.0 (installed, not in the matrices: not judged)" in done.stdout.splitlines()[0]


def test_1010_carries_1000s_os_entries_but_the_two_ubuntu_releases_its_notes_replace(m):
    """10.1.0's OS entries are 10.0.0's (built from them, so a correction of a 10.0.0 per-GPU limit
    carries over), less Ubuntu 26.04 and 24.04.4, which its release notes replace by 26.04.1 (GA
    7.0) and 24.04.5 (GA 6.8 for Instinct, HWE 7.0 for Radeon and Ryzen)."""
    old, new = m.rocm_release("10.0.0"), m.rocm_release("10.1.0")
    assert [(o.id, o.version) for o in new.os] == [(o.id, o.version) for o in old.os]
    for before, after in zip(old.os, new.os, strict=True):
        if before.id == "ubuntu" and before.version in ("26.04", "24.04"):
            assert "release-notes.md @ 15846f3dbb5e4994c02b1146d2a206df639cc629" in after.source
            continue
        assert (after.kernels, after.point_releases, after.gpus_only, after.gpus_only_by_point, after.source) == (
            before.kernels, before.point_releases, before.gpus_only, before.gpus_only_by_point, before.source
        )
        assert after.notes[-1].startswith(
            "Offered by the 10.1.0 install page; its kernels and per-GPU limits are carried over from 10.0.0"
        )
    assert (new.os_support("ubuntu", "26.04").point_releases, new.os_support("ubuntu", "26.04").ga_kernels) == (
        ("26.04.1",), ("7.0",)
    )
    u2404 = new.os_support("ubuntu", "24.04")
    assert (u2404.point_releases, u2404.ga_kernels, u2404.hwe_kernels) == (("24.04.5",), ("6.8",), ("7.0",))
    assert not any(o.confirmed for o in new.os) and not new.confirmed
    assert new.gpus == old.gpus  # the R9600 adds no target: no source read names its gfx target
    assert (new.torch, new.release_date) == (("2.14.0", "2.13.0", "2.12.0"), "2026-10-05")
    # the driver its install page links (docs-31.60.0), as 10.0.0's page links 31.50.0
    assert (new.amdgpu_driver, new.amdgpu_driver_compat) == ("31.60.x", ("31.60.x",))
    assert "200-install.rst @ f47eb2f8ba97787da0cfd5166d1afbf42956fd9d" in new.source


def test_the_tool_builds_1010s_os_entries_from_1000s():
    """A per-GPU limit added to a 10.0.0 entry (the correction another change may make) reaches
    10.1.0 through matrices/tools/therock.py's _os_101, without a second copy to edit."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "matrices" / "tools" / "therock.py"
    spec = importlib.util.spec_from_file_location("therock_tool", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    edited = [dict(e) for e in tool.OS_100]
    edited[2] = {**edited[2], "gpus_only": {"class": "instinct", "models": ["MI300X"]}}  # Ubuntu 22.04
    built = tool._os_101(edited)
    assert built[2]["gpus_only"] == {"class": "instinct", "models": ["MI300X"]}
    assert [e["point_releases"] for e in built[:2]] == [["26.04.1"], ["24.04.5"]]
    assert edited[2]["notes"] == tool.OS_100[2]["notes"]  # the copy is marked, 10.0.0's entry is not
