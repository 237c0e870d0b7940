"""Per-GPU OS limits of a ROCm release (an OS entry's ``gpus_only``): AMD lists some distributions
for Instinct GPUs only, or for named Instinct models (ROCm 10.0 on Debian 12: Instinct GPUs only;
7.14 on RHEL 8: Instinct GPUs except the MI350P and MI325X). `install auto` does not choose a release
whose entry leaves the machine's GPUs out, and os.unsupported says so for a target that does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuenv import matrices as M
from gpuenv.facts import from_dict
from gpuenv.matrices import GpuLimit, MatrixError, routes
from gpuenv.matrices.records import instinct_models
from gpuenv.plan import repos
from gpuenv.resolve import gpuinfo
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.registry import run_checks
from gpuenv.resolve.target import fitting_rocm
from gpuenv.standins.record import replace

FACTS = Path(__file__).resolve().parent / "facts"
UNKNOWN_AMD = FACTS / "os-limit-debian12-unknown-amd.json"
PRETTY = {
    "ubuntu": "Ubuntu", "debian": "Debian GNU/Linux", "rhel": "Red Hat Enterprise Linux", "sles": "SUSE Linux Enterprise Server",
    "rocky": "Rocky Linux",
}  # fmt: skip


@pytest.fixture(scope="module")
def m():
    return M.load()


def box(os_id: str, version: str, pci: str, gfx: str | None = None):
    """A machine with one AMD GPU (named by PCI id only, as the tables know it) on a distribution."""
    doc = json.loads(UNKNOWN_AMD.read_text())
    doc["os"] = {"id": os_id, "version_id": version, "pretty_name": f"{PRETTY[os_id]} {version}"}
    doc["gpus"][0]["pci_id"] = pci
    if gfx:
        doc["gpus"][0]["gfx_target"] = gfx
    return from_dict(doc)


def checks(facts, matrices, version):
    found = run_checks(facts, matrices, Target(stack="rocm", version=version), only=("os.unsupported", "os.unknown"))
    return {f.code: f for f in found}


RX9070XT, MI300X, MI325X, MI350P, MI355X, MI100, MI210, STRIX_HALO = (
    "1002:7550", "1002:74a1", "1002:74a5", "1002:75a8", "1002:75a3", "1002:738c", "1002:740f", "1002:1586"
)  # fmt: skip


# -- the record --------------------------------------------------------------------------------


def test_a_limit_admits_its_class_and_models_and_not_the_others():
    only = GpuLimit(gpu_class="instinct", models=("MI300X", "MI300A"))
    assert only.admits("instinct", frozenset({"MI300X"})) is True
    assert only.admits("instinct", frozenset({"MI325X"})) is False
    assert only.admits("radeon", frozenset()) is False
    assert only.admits("instinct", frozenset()) is None  # an Instinct GPU of unknown model
    assert only.admits(None, frozenset({"MI300X"})) is None  # class unknown: never "fine"
    but = GpuLimit(gpu_class="instinct", excluded=("MI350P", "MI325X"))
    assert but.admits("instinct", frozenset({"MI355X"})) is True
    assert but.admits("instinct", frozenset({"MI350P"})) is False
    assert but.admits("instinct", frozenset()) is None
    assert GpuLimit(gpu_class="instinct").admits("instinct", frozenset()) is True
    assert GpuLimit(gpu_class="instinct").admits("ryzen", frozenset()) is False
    also = GpuLimit(gpu_class="instinct", excluded=("MI350P",), also=("radeon",))
    assert also.admits("radeon", frozenset()) is True  # a whole class: no model needed
    assert also.admits("ryzen", frozenset()) is False
    assert also.admits("instinct", frozenset({"MI350P"})) is False  # the exception still holds
    assert also.admits("instinct", frozenset({"MI300X"})) is True


def test_one_pci_id_sold_as_two_models_is_judged_only_when_both_agree():
    both = instinct_models("AMD Instinct MI250X / MI250")
    assert both == {"MI250X", "MI250"}
    assert GpuLimit(gpu_class="instinct", models=("MI250X", "MI250")).admits("instinct", both) is True
    assert GpuLimit(gpu_class="instinct", models=("MI250X",)).admits("instinct", both) is None
    assert GpuLimit(gpu_class="instinct", excluded=("MI250",)).admits("instinct", both) is None


def test_a_limit_says_what_it_allows():
    assert GpuLimit(gpu_class="instinct").describe() == "Instinct GPUs"
    assert GpuLimit(gpu_class="instinct", excluded=("MI100",)).describe() == "Instinct GPUs except the MI100"
    assert GpuLimit(gpu_class="instinct", models=("MI300X", "MI300A")).describe() == "Instinct MI300X and MI300A"
    assert (
        GpuLimit(gpu_class="instinct", excluded=("MI350P",), also=("radeon",)).describe()
        == "Instinct GPUs except the MI350P, and Radeon GPUs"
    )
    assert GpuLimit(gpu_class="instinct", also=("radeon", "ryzen")).describe() == (
        "Instinct GPUs, Radeon GPUs and Ryzen APUs"
    )


# -- the data ----------------------------------------------------------------------------------


def _entry(m, version, os_id, os_version):
    release = m.rocm_release(version)
    assert release is not None
    entry = release.os_support(os_id, os_version)
    assert entry is not None
    return entry


def test_the_bundled_limits_are_amds_statements(m):
    debian12 = ("MI355X", "MI350X", "MI325X", "MI300X", "MI300A", "MI250X", "MI250")  # not the MI350P, MI210, MI100
    for version in ("7.14.0", "10.0.0"):  # 10.0's os-support.yaml lists Debian 12 for the models 7.14's table does
        assert _entry(m, version, "debian", "12").gpus_only == GpuLimit(gpu_class="instinct", models=debian12)
    assert _entry(m, "7.14.0", "rhel", "8.10").gpus_only == GpuLimit(gpu_class="instinct", excluded=("MI350P", "MI325X"))
    assert _entry(m, "7.14.0", "sles", "16.0").gpus_only == GpuLimit(gpu_class="instinct", excluded=("MI100",))
    assert _entry(m, "7.14.0", "rocky", "9").gpus_only == GpuLimit(gpu_class="instinct", models=("MI300X", "MI300A"))
    assert _entry(m, "7.2.4", "debian", "12").gpus_only == GpuLimit(
        gpu_class="instinct", models=("MI325X", "MI300X", "MI300A", "MI250X", "MI250", "MI210")
    )
    assert _entry(m, "7.14.0", "ubuntu", "22.04").gpus_only == GpuLimit(
        gpu_class="instinct", excluded=("MI350P",), also=("radeon",)
    )  # the Instinct table but the MI350P, and the Radeon table; the Ryzen table leaves 22.04 out
    for version in ("7.14.0", "10.0.0"):  # listed for Instinct, Radeon and Ryzen alike
        assert _entry(m, version, "ubuntu", "24.04").gpus_only is None


def test_an_old_bundle_without_the_field_still_loads_as_not_limited(m, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(M.bundled_dir(), old)
    doc = json.loads((old / "rocm.json").read_text())
    for release in doc["releases"]:
        for entry in release["os"]:
            entry.pop("gpus_only", None)
    (old / "rocm.json").write_text(json.dumps(doc))
    legacy = M.parse_dir(old, "installed")
    assert legacy.rocm_release("10.0.0").os_support("debian", "12").gpus_only is None
    radeon = box("debian", "12", RX9070XT)
    assert fitting_rocm(radeon, legacy, newest=True).version == "10.1.0"  # not known to be limited (10.1.0: 10.0.0's entries carried over)
    assert "os.unsupported" not in checks(radeon, legacy, "7.14.0")


def test_a_malformed_limit_is_refused(tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(M.bundled_dir(), bad)
    doc = json.loads((bad / "rocm.json").read_text())
    doc["releases"][-1]["os"][3]["gpus_only"] = {"class": "datacenter"}
    (bad / "rocm.json").write_text(json.dumps(doc))
    with pytest.raises(MatrixError, match=r"gpus_only\.class"):
        M.parse_dir(bad, "installed")
    doc["releases"][-1]["os"][3]["gpus_only"] = {"class": "instinct", "models": []}  # would admit nothing
    (bad / "rocm.json").write_text(json.dumps(doc))
    with pytest.raises(MatrixError, match=r"gpus_only\.models"):
        M.parse_dir(bad, "installed")
    for also in (["instinct"], ["datacenter"]):  # the entry's own class, or none AMD names
        doc["releases"][-1]["os"][3]["gpus_only"] = {"class": "instinct", "also": also}
        (bad / "rocm.json").write_text(json.dumps(doc))
        with pytest.raises(MatrixError, match=r"gpus_only\.also"):
            M.parse_dir(bad, "installed")


# -- install auto --------------------------------------------------------------------------------


def _installable(facts):
    # The new stream's key is pinned when the user repeats its fingerprint (#42): these plans do.
    r = repos.load()
    trust = "D0F004A0025A1145C7807FCD0701EAC4D5E02107"
    return set(routes.installable(r.rocm_routes(), facts.os.id, facts.os.version_id, trust))


def test_install_auto_does_not_plan_an_instinct_only_release_for_a_radeon_card(m):
    radeon = box("debian", "12", RX9070XT)
    installable = _installable(radeon)
    assert {"10.0.0", "7.14.0", "7.2.4"} <= installable  # each has a Debian 12 repository
    for pick in (fitting_rocm(radeon, m, installable), fitting_rocm(radeon, m, newest=True), fitting_rocm(radeon, m)):
        entry = pick.os_support("debian", "12")
        assert pick.version not in ("10.0.0", "7.14.0"), pick.version
        assert entry is not None and pick.support("gfx1201")
    # Every installable release that lists Debian 12 lists it for Instinct GPUs only: the default
    # is planned, and the doctor says why it does not fit (os.unsupported blocks the plan).
    planned = fitting_rocm(radeon, m, installable)
    assert planned.version == "7.2.4"
    assert checks(radeon, m, planned.version)["os.unsupported"].severity is Severity.ERROR


def test_install_auto_plans_the_newest_release_for_an_instinct_card_on_debian_12(m):
    mi300x = box("debian", "12", MI300X)
    assert fitting_rocm(mi300x, m, _installable(mi300x)).version == "10.1.0"
    # 7.14 and 10.0 list Debian 12 for the MI250 but not the MI210; 7.2.4's footnote names it:
    # the newest release that supports an MI210 on Debian 12 is 7.2.4.
    mi210 = box("debian", "12", MI210)
    assert fitting_rocm(mi210, m, newest=True).version == "7.2.4"
    assert fitting_rocm(mi210, m, _installable(mi210)).version == "7.2.4"
    for version in ("7.14.0", "10.0.0", "10.1.0"):
        assert "os.unsupported" in checks(mi210, m, version)
    assert "os.unsupported" not in checks(mi210, m, "7.2.4")
    mi250 = box("debian", "12", "1002:740c")  # the MI250X / MI250 PCI id: both models listed
    assert fitting_rocm(mi250, m, _installable(mi250)).version == "10.1.0"


# -- the doctor ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "version, os_id, os_version, pci, out",
    [
        ("10.0.0", "debian", "12", MI300X, False),  # Instinct on an Instinct-only entry
        ("10.0.0", "debian", "12", RX9070XT, True),
        ("7.14.0", "rhel", "8.10", MI355X, False),  # "except the MI350P and MI325X": exactly those
        ("7.14.0", "rhel", "8.10", MI350P, True),
        ("7.14.0", "rhel", "8.10", MI325X, True),
        ("7.14.0", "rhel", "8.10", MI300X, False),
        ("7.14.0", "sles", "16.0", MI100, True),  # "except the MI100"
        ("7.14.0", "sles", "16.0", MI210, False),
        ("7.14.0", "sles", "16.0", RX9070XT, True),
        ("7.14.0", "rocky", "9", "1002:74a0", False),  # the MI300A: an APU, and an Instinct GPU
        ("7.14.0", "rocky", "9", MI325X, True),
        ("7.2.4", "debian", "12", MI210, False),
        ("7.2.4", "debian", "12", MI355X, True),  # not in the 7.2.4 footnote's list
        ("7.14.0", "ubuntu", "22.04", RX9070XT, False),  # "Instinct GPUs except the MI350P, and Radeon GPUs"
        ("7.14.0", "ubuntu", "22.04", MI300X, False),
        ("7.14.0", "ubuntu", "22.04", MI350P, True),
        ("7.14.0", "ubuntu", "22.04", STRIX_HALO, True),  # a Ryzen APU: the Ryzen table leaves 22.04 out
    ],
)
def test_os_unsupported_names_the_limit(m, version, os_id, os_version, pci, out):
    found = checks(box(os_id, os_version, pci), m, version)
    assert "os.unknown" not in found
    if not out:
        assert "os.unsupported" not in found
        return
    finding = found["os.unsupported"]
    limit = m.rocm_release(version).os_support(os_id, os_version).gpus_only
    assert finding.title == f"ROCm {version} supports {PRETTY[os_id]} {os_version} only for {limit.describe()}"
    assert finding.gpus == ("0000:03:00.0",)
    confirmed = m.rocm_release(version).os_support(os_id, os_version).confirmed
    assert finding.severity is (Severity.ERROR if confirmed else Severity.WARNING)


def test_the_finding_says_what_the_gpu_is_and_that_10_0s_table_is_unconfirmed(m):
    finding = checks(box("debian", "12", RX9070XT), m, "10.0.0")["os.unsupported"]
    assert finding.title == (
        "ROCm 10.0.0 supports Debian GNU/Linux 12 only for Instinct MI355X, MI350X, MI325X, MI300X, MI300A, "
        "MI250X and MI250"
    )
    assert "/ RX 9070 (C3) (0000:03:00.0): a Radeon GPU)" in finding.detail
    assert "OS table is not confirmed" in finding.detail and finding.severity is Severity.WARNING
    excluded = checks(box("rhel", "8.10", MI325X), m, "7.14.0")["os.unsupported"]
    assert excluded.severity is Severity.ERROR
    assert excluded.title == "ROCm 7.14.0 supports Red Hat Enterprise Linux 8.10 only for Instinct GPUs except the MI350P and MI325X"
    assert "AMD Instinct MI325X (0000:03:00.0): Instinct MI325X" in excluded.detail
    apu = checks(box("ubuntu", "22.04", STRIX_HALO), m, "7.14.0")["os.unsupported"]
    assert apu.title == "ROCm 7.14.0 supports Ubuntu 22.04 only for Instinct GPUs except the MI350P, and Radeon GPUs"
    assert apu.detail.startswith("AMD's table lists Ubuntu 22.04 for these GPUs only, and this machine's is not one")
    assert apu.detail.endswith("(0000:03:00.0): a Ryzen APU).")


def test_a_gpu_the_tables_do_not_know_is_not_judged_fine(m):
    unknown = from_dict(json.loads(UNKNOWN_AMD.read_text()))  # 1002:ffff, no gfx target
    found = checks(unknown, m, "10.0.0")
    assert "os.unsupported" not in found
    assert "only for Instinct MI355X, MI350X, MI325X, MI300X, MI300A, MI250X and MI250" in found["os.unknown"].detail
    assert "AMD GPU 1002:ffff (0000:03:00.0) is one is not known" in found["os.unknown"].detail
    # Its gfx target makes it an Instinct GPU (every gfx942 the tables list is one), which is all
    # SLES 15 asks; Debian 12 names models, and the model is not known.
    gfx942 = box("debian", "12", "1002:ffff", gfx="gfx942")
    for version in ("7.14.0", "10.0.0", "10.1.0"):
        assert "os.unknown" in checks(gfx942, m, version)
        assert checks(box("sles", "15.7", "1002:ffff", gfx="gfx942"), m, version) == {}
    assert fitting_rocm(unknown, m, newest=True).version == "10.1.0"  # an unknown GPU does not narrow


def test_install_auto_does_not_fall_back_to_an_older_release_whose_radeon_terms_leave_the_os_out(m):
    # An RX 7900 XTX on Debian 12: 7.2.4's footnote lists Debian 12 for Instinct models only, and
    # 6.x-7.2.3 support gfx1100 on Radeon terms (Ubuntu and RHEL only). None fits, so the default is
    # planned and the doctor says why, instead of an older release that fits no better.
    radeon = box("debian", "12", "1002:744c")
    for pick in (fitting_rocm(radeon, m, _installable(radeon)), fitting_rocm(radeon, m)):
        assert pick.version == "7.2.4", pick.version
    assert checks(radeon, m, "7.2.4")["os.unsupported"].severity is Severity.ERROR
    ubuntu = box("ubuntu", "22.04", "1002:744c")  # Radeon terms admit Ubuntu: the default fits
    assert fitting_rocm(ubuntu, m).version == "7.2.4"


# -- point releases (gpus_only_by_point) ---------------------------------------------------------


def rhel(version_id: str, pretty: str, pci: str):
    """A RHEL machine whose os-release says VERSION_ID and PRETTY_NAME as given."""
    facts = box("rhel", "9.8", pci)
    return replace(facts, os=replace(facts.os, version_id=version_id, pretty_name=pretty))


def test_the_rhel_point_releases_are_amds_statements(m):
    # The 7.14 Instinct and Radeon tables and 10.0's os-support.yaml list RHEL 10.0 and 9.4 for
    # Instinct GPUs but the MI350P, Radeon GPUs on 10.2 and 9.8 only, and no RHEL for Ryzen APUs.
    but_mi350p = GpuLimit(gpu_class="instinct", excluded=("MI350P",))
    for version in ("7.14.0", "10.0.0", "10.1.0"):
        for major, points in (("10", {"10.0": but_mi350p}), ("9", {"9.6": GpuLimit(gpu_class="instinct"), "9.4": but_mi350p})):
            entry = _entry(m, version, "rhel", major)
            assert entry.gpus_only == GpuLimit(gpu_class="instinct", also=("radeon",))
            assert entry.gpus_only_by_point == points
            assert entry.point_limit("9.8") is None and entry.point_limit(None) is None
    assert _entry(m, "7.2.4", "rhel", "9").gpus_only_by_point is None


@pytest.mark.parametrize("version_id, pretty, point", [
    ("9.4", "Red Hat Enterprise Linux 9.4 (Plow)", "9.4"),
    ("", "Red Hat Enterprise Linux 9.4 (Plow)", "9.4"),  # no VERSION_ID: PRETTY_NAME's
    ("9", "Red Hat Enterprise Linux 9.6 (Plow)", "9.6"),  # VERSION_ID names the major only
    ("9", "Red Hat Enterprise Linux 9", None),
    ("", "", None),
    ("8.10", "Red Hat Enterprise Linux 8.10 (Ootpa)", None),  # another major's
])  # fmt: skip
def test_the_point_release_comes_from_os_release(version_id, pretty, point):
    assert inv.os_point(rhel(version_id, pretty, MI300X), "9") == point
    ubuntu = box("ubuntu", "24.04", MI300X)
    assert inv.os_point(replace(ubuntu, os=replace(ubuntu.os, pretty_name="Ubuntu 24.04.3 LTS")), "24.04") == "24.04.3"
    assert inv.os_point(ubuntu, "24.04") is None  # "Ubuntu 24.04": no point release said


@pytest.mark.parametrize("version", ["7.14.0", "10.0.0", "10.1.0"])
@pytest.mark.parametrize("point, pci, limit", [
    ("9.4", MI350P, "Instinct GPUs except the MI350P"),
    ("9.6", MI350P, None),
    ("9.8", MI350P, None),
    ("9.4", MI300X, None),
    ("9.4", RX9070XT, "Instinct GPUs except the MI350P"),
    ("9.6", RX9070XT, "Instinct GPUs"),  # Radeon GPUs: 9.8 only
    ("9.8", RX9070XT, None),
    ("10.0", MI350P, "Instinct GPUs except the MI350P"),
    ("10.0", RX9070XT, "Instinct GPUs except the MI350P"),
    ("10.2", MI350P, None),
    ("10.2", RX9070XT, None),
    ("10.0", MI325X, None),
    ("9.8", STRIX_HALO, "Instinct GPUs and Radeon GPUs"),  # no point release lists Ryzen APUs
    ("10.2", STRIX_HALO, "Instinct GPUs and Radeon GPUs"),
])  # fmt: skip
def test_os_unsupported_names_the_point_release(m, version, point, pci, limit):
    pretty = f"Red Hat Enterprise Linux {point} (Plow)"
    found = checks(rhel(point, pretty, pci), m, version)
    assert "os.unknown" not in found
    if limit is None:
        assert "os.unsupported" not in found
        return
    finding = found["os.unsupported"]
    assert finding.title == f"ROCm {version} supports {pretty} only for {limit}"
    assert finding.severity is (Severity.ERROR if version == "7.14.0" else Severity.WARNING)
    major = point.split(".")[0]
    narrower = limit != "Instinct GPUs and Radeon GPUs"
    assert (f"(point release {point}; rhel {major} as a whole: Instinct GPUs and Radeon GPUs)" in finding.detail) is narrower


def test_the_point_release_is_named_where_pretty_name_does_not_say_it(m):
    finding = checks(rhel("9.4", "Red Hat Enterprise Linux", MI350P), m, "7.14.0")["os.unsupported"]
    assert finding.title == "ROCm 7.14.0 supports Red Hat Enterprise Linux (rhel 9.4) only for Instinct GPUs except the MI350P"
    assert finding.detail.startswith("AMD's table lists Red Hat Enterprise Linux (rhel 9.4) for these GPUs only (point")
    # No VERSION_ID: the point release PRETTY_NAME carries is judged.
    bare = checks(rhel("", "Red Hat Enterprise Linux 9.4 (Plow)", RX9070XT), m, "7.14.0")["os.unsupported"]
    assert bare.title == "ROCm 7.14.0 supports Red Hat Enterprise Linux 9.4 (Plow) only for Instinct GPUs except the MI350P"


def test_an_unknown_point_release_is_not_judged_fine_where_a_point_limit_could_matter(m):
    for version in ("7.14.0", "10.0.0", "10.1.0"):
        for pci in (RX9070XT, MI350P):  # left out by 9.4 (and 9.6), admitted by 9.8
            found = checks(rhel("9", "Red Hat Enterprise Linux 9", pci), m, version)
            assert "os.unsupported" not in found
            assert found["os.unknown"].detail.startswith(
                f"ROCm {version} lists some point releases of rhel 9 for fewer GPUs (9.6: Instinct GPUs; 9.4: "
                "Instinct GPUs except the MI350P), and this machine's point release is not known"
            )
        # Every point release lists the MI300X: the point release does not matter.
        assert checks(rhel("9", "Red Hat Enterprise Linux 9", MI300X), m, version) == {}
        # No point release lists a Ryzen APU: unsupported whatever the point release.
        apu = checks(rhel("9", "Red Hat Enterprise Linux 9", STRIX_HALO), m, version)
        assert "os.unknown" not in apu and "os.unsupported" in apu


def test_install_auto_does_not_pick_a_release_whose_point_limit_leaves_the_gpu_out(m):
    for point, pci in (("9.4", MI350P), ("10.0", MI350P), ("9.4", RX9070XT), ("9.6", RX9070XT), ("10.0", RX9070XT)):
        facts = rhel(point, f"Red Hat Enterprise Linux {point}", pci)
        pick = fitting_rocm(facts, m, newest=True)
        assert pick.version not in ("7.14.0", "10.0.0", "10.1.0"), (point, pci, pick.version)
    for point, pci in (("9.6", MI350P), ("9.8", MI350P), ("10.2", MI350P), ("9.8", RX9070XT), ("10.2", RX9070XT)):
        assert fitting_rocm(rhel(point, f"Red Hat Enterprise Linux {point}", pci), m, newest=True).version == "10.1.0"
    # The point release not known: it does not narrow the choice (os.unknown then says so).
    assert fitting_rocm(rhel("9", "Red Hat Enterprise Linux 9", RX9070XT), m, newest=True).version == "10.1.0"


def test_a_bundle_without_point_limits_loads_as_before(m, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(M.bundled_dir(), old)
    doc = json.loads((old / "rocm.json").read_text())
    for release in doc["releases"]:
        for entry in release["os"]:
            entry.pop("gpus_only_by_point", None)
    (old / "rocm.json").write_text(json.dumps(doc))
    legacy = M.parse_dir(old, "installed")
    assert legacy.rocm_release("7.14.0").os_support("rhel", "9.4").gpus_only_by_point is None
    radeon = rhel("9.4", "Red Hat Enterprise Linux 9.4", RX9070XT)
    assert checks(radeon, legacy, "7.14.0") == {}  # judged by gpus_only alone: Radeon GPUs are listed
    assert fitting_rocm(radeon, legacy, newest=True).version == "10.1.0"


def test_a_malformed_point_limit_is_refused(tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(M.bundled_dir(), bad)
    doc = json.loads((bad / "rocm.json").read_text())
    release = next(r for r in doc["releases"] if r["version"] == "7.14.0")
    entry = next(o for o in release["os"] if o["id"] == "rhel" and o["version"] == "9")
    for value, where in (
        ({"9.5": {"class": "instinct"}}, r"gpus_only_by_point\.9\.5"),  # not a point release the entry lists
        ({}, r"gpus_only_by_point"),
        ({"9.4": {"class": "datacenter"}}, r"gpus_only_by_point\.9\.4\.class"),
        ({"9.4": "instinct"}, r"gpus_only_by_point"),
    ):
        entry["gpus_only_by_point"] = value
        (bad / "rocm.json").write_text(json.dumps(doc))
        with pytest.raises(MatrixError, match=where):
            M.parse_dir(bad, "installed")


# -- an APU the tables do not know -----------------------------------------------------------------


def _apu(pci: str, gfx: str | None, integrated: bool | None):
    facts = box("ubuntu", "22.04", pci, gfx=gfx)
    return replace(facts, gpus=(replace(facts.gpus[0], integrated=integrated),))


@pytest.mark.parametrize("gfx, integrated, expected", [
    (None, True, "ryzen"),  # the facts call it integrated: an APU
    ("gfx1151", True, "ryzen"),
    ("gfx1036", True, "ryzen"),  # a gfx target the tables do not list
    ("gfx942", True, "instinct"),  # an integrated gfx942 is an MI300A: Instinct
    (None, False, None),  # a discrete GPU the tables do not know: not judged
    (None, None, None),  # integrated or not, not said
    ("gfx942", None, "instinct"),
])  # fmt: skip
def test_an_amd_gpu_the_tables_lack_that_the_facts_call_integrated_is_a_ryzen_apu(m, gfx, integrated, expected):
    facts = _apu("1002:ffff", gfx, integrated)
    assert gpuinfo.gpu_class(facts.gpus[0], m) == expected


def test_an_unknown_apu_is_judged_as_a_ryzen_apu(m):
    # 7.14 lists Ubuntu 22.04 for Instinct and Radeon GPUs, not for Ryzen APUs: an APU the tables
    # lack is now left out (os.unsupported), where its class unknown left it unjudged (os.unknown).
    found = checks(_apu("1002:ffff", None, True), m, "7.14.0")
    assert "os.unknown" not in found
    assert found["os.unsupported"].detail.endswith("(0000:03:00.0): a Ryzen APU).")
    assert "os.unknown" in checks(_apu("1002:ffff", None, None), m, "7.14.0")


# -- the 7.0.x footnotes ---------------------------------------------------------------------------


def test_the_7_0_footnotes_that_name_instinct_models_are_limits(m):
    sles_db = GpuLimit(gpu_class="instinct", models=("MI300X", "MI300A", "MI250X", "MI250", "MI210"))
    for version in ("7.0.0", "7.0.1", "7.0.2"):
        assert _entry(m, version, "rhel", "8.10").gpus_only == GpuLimit(
            gpu_class="instinct", models=("MI300X", "MI300A", "MI250X", "MI250", "MI210", "MI100")
        )
        assert _entry(m, version, "sles", "15.7").gpus_only == sles_db
        assert _entry(m, version, "debian", "12").gpus_only == sles_db
        assert _entry(m, version, "ol", "9").gpus_only == GpuLimit(gpu_class="instinct", models=("MI355X", "MI350X", "MI300X"))
        assert _entry(m, version, "ol", "8").gpus_only == GpuLimit(gpu_class="instinct", models=("MI300X",))
        assert _entry(m, version, "rocky", "9").gpus_only == GpuLimit(gpu_class="instinct", models=("MI300X", "MI300A"))
        # "MI300X and the Radeon PRO V710": a Radeon model, which the limit's terms cannot hold
        azure = _entry(m, version, "azurelinux", "3.0")
        assert azure.gpus_only is None and "Radeon PRO V710" in azure.notes[-1]
        for os_id, os_version in (("ubuntu", "24.04"), ("ubuntu", "22.04"), ("rhel", "9")):
            assert _entry(m, version, os_id, os_version).gpus_only is None
    assert _entry(m, "7.0.2", "debian", "13").gpus_only == GpuLimit(gpu_class="instinct", models=("MI300X",))
    assert _entry(m, "7.0.2", "ol", "10").gpus_only == GpuLimit(gpu_class="instinct", models=("MI355X", "MI350X", "MI300X"))
    assert "7603fed08001716a8b968e7a3a2ec9b6c54c49d9" in _entry(m, "7.0.1", "rocky", "9").source
    assert "245d53a021979f24eea1b6c7e0f366bea8ead3cb" in _entry(m, "7.0.2", "rocky", "9").source


def test_the_doctor_judges_the_7_0_footnotes(m):
    assert "os.unsupported" not in checks(box("rhel", "8.10", MI100), m, "7.0.1")  # RHEL 8.10 names the MI100
    excluded = checks(box("rhel", "8.10", MI325X), m, "7.0.1")["os.unsupported"]
    assert excluded.title == (
        "ROCm 7.0.1 supports Red Hat Enterprise Linux 8.10 only for Instinct MI300X, MI300A, MI250X, MI250, MI210 and MI100"
    )
    assert "os.unsupported" in checks(box("sles", "15.7", MI100), m, "7.0.1")  # SLES 15 SP7 does not
    assert "os.unsupported" not in checks(box("sles", "15.7", MI210), m, "7.0.1")
    assert "os.unsupported" in checks(box("rocky", "9", MI210), m, "7.0.0")


def test_a_rhel_point_release_newer_than_the_listed_ones_is_said_as_for_ubuntu(m):
    """One reader of the point release (inv.os_point) serves the GPU limits and the "newer point
    release" warning, so RHEL's two-part VERSION_ID counts as Ubuntu's three-part PRETTY_NAME does.
    9.9 is a made-up number, not a release read anywhere: newer than 7.14's 9.8 / 9.6 / 9.4."""
    newer = checks(rhel("9.9", "Red Hat Enterprise Linux 9.9 (Plow)", MI300X), m, "7.14.0")
    assert list(newer) == ["os.unsupported"] and newer["os.unsupported"].severity is Severity.WARNING
    assert newer["os.unsupported"].detail.startswith("running 9.9; ROCm 7.14.0 lists 9.8, 9.6, 9.4 for rhel 9.")
    assert checks(rhel("9.8", "Red Hat Enterprise Linux 9.8 (Plow)", MI300X), m, "7.14.0") == {}
