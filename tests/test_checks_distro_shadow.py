"""rocm.distro-package-shadow: the distribution's own rocminfo/hipcc/rocm-cmake/rocm-device-libs
in the way of AMD's ROCm packages, APT pins read from a sysroot (gpuenv/probe/apt_prefs.py), and
apt.source-insecure, which does not call a source whose signed-by is not known unsigned."""

from __future__ import annotations

import pytest

from gpuenv.matrices import load
from gpuenv.probe import apt_prefs, collect
from tests.doctor_cases import box, installed, judged, judged_one

CODE = "rocm.distro-package-shadow"
AMD_PIN = {"package": "*", "pin": "release o=repo.radeon.com", "priority": 600, "file": "/etc/apt/preferences.d/rocm-pin-600"}


@pytest.fixture(scope="module")
def matrices():
    return load()


def _no_rocm_installed(doc):
    for name in [n for n in doc["packages"]["installed"] if n.startswith(("rocm", "hip"))]:
        del doc["packages"]["installed"][name]
    doc["toolkits"]["rocm"] = []


def test_amds_own_builds_are_no_shadow(matrices):
    assert judged(box("rocm"), matrices, CODE) == []
    assert judged(box("rocm", ("apt_pins", [AMD_PIN])), matrices, CODE) == []


def test_ubuntus_rocminfo_beside_amds_repository_is_an_error(matrices):
    doc = box("rocm", _no_rocm_installed, installed("rocminfo", "5.7.1-3build1"))
    f = judged_one(doc, matrices, CODE)
    assert f.severity.value == "error"
    assert "rocminfo 5.7.1-3build1" in f.detail
    assert f.fix.startswith("sudo apt remove rocminfo")
    assert "Pin-Priority: 600" in f.fix  # the pins were not read: the fix adds AMD's


@pytest.mark.parametrize("version", ["5.7.1-3", "6.0.0-1", "1:5.0.0-1"])
def test_distribution_versions_of_hipcc_shadow(matrices, version):
    doc = box("rocm", _no_rocm_installed, installed("hipcc", version), ("apt_pins", [AMD_PIN]))
    f = judged_one(doc, matrices, CODE)
    assert f.severity.value == "error" and "Pin-Priority" not in f.fix


def test_without_amds_repository_or_a_rocm_target_the_distributions_rocm_is_its_own(matrices):
    def no_amd_sources(d):
        d["apt_sources"] = [s for s in d["apt_sources"] if "repo.radeon.com" not in s["uri"]]

    doc = box("rocm", _no_rocm_installed, no_amd_sources, installed("rocminfo", "5.7.1-3build1"))
    assert judged(doc, matrices, CODE) == []
    assert judged_one(doc, matrices, CODE, target="rocm").severity.value == "error"


def test_a_missing_pin_on_noble_is_a_warning_and_an_error_for_an_install(matrices):
    doc = box("rocm", _no_rocm_installed, ("apt_pins", []))
    assert judged_one(doc, matrices, CODE).severity.value == "warning"
    assert judged_one(doc, matrices, CODE, target="rocm@7.2.4").severity.value == "error"


def test_a_low_pin_is_no_pin_and_unknown_pins_say_nothing(matrices):
    low = dict(AMD_PIN, priority=100)
    assert judged_one(box("rocm", _no_rocm_installed, ("apt_pins", [low])), matrices, CODE).severity.value == "warning"
    assert judged(box("rocm", _no_rocm_installed), matrices, CODE) == []  # pins not read


def test_a_missing_pin_beside_an_installed_amd_rocm_waits_for_an_install(matrices):
    doc = box("rocm", ("apt_pins", []))
    assert judged(doc, matrices, CODE) == []
    assert judged_one(doc, matrices, CODE, target="rocm").severity.value == "error"


def test_debian_12_is_not_said_to_carry_them(matrices):
    os_ = {"id": "debian", "version_id": "12", "codename": "bookworm", "pretty_name": "Debian GNU/Linux 12"}
    assert judged(box("rocm", _no_rocm_installed, ("apt_pins", []), ("os", os_)), matrices, CODE) == []


# -- the probe -----------------------------------------------------------------------------------


def test_parse_preferences():
    text = (
        "# AMD\nPackage: *\nPin: release o=repo.radeon.com\nPin-Priority: 600\n\n"
        "Explanation: keep\nPackage: rocminfo\nPin: version 5.7.1*\nPin-Priority: -1\n\n"
        "Package: broken\nPin: origin x\nPin-Priority: high\n"
    )
    pins = apt_prefs.parse_preferences(text, "/etc/apt/preferences")
    assert [(p.package, p.pin, p.priority) for p in pins] == [
        ("*", "release o=repo.radeon.com", 600),
        ("rocminfo", "version 5.7.1*", -1),
    ]


def test_stanzas_end_at_blank_or_whitespace_only_lines_and_crlf_files_read_alike():
    one = "Package: a\nPin: origin x\nPin-Priority: 1\n"
    two = "Package: b\nPin: origin y\nPin-Priority: 2\n"
    for gap in ("\n", "\n \t\n", "\n\n\n"):
        pins = apt_prefs.parse_preferences(one + gap + two)
        assert [(p.package, p.priority) for p in pins] == [("a", 1), ("b", 2)], repr(gap)
    crlf = (one + "\n" + two).replace("\n", "\r\n")
    assert [p.package for p in apt_prefs.parse_preferences(crlf)] == ["a", "b"]
    # No blank line between them: one stanza, whose second Package does not replace the first's
    # fields one by one into a new pin.
    assert [(p.package, p.priority) for p in apt_prefs.parse_preferences(one + two)] == [("b", 2)]


@pytest.mark.parametrize(
    ("name", "read"),
    [("rocm-pin-600", True), ("x.pref", True), ("a_b.c.pref", True), ("x.bak", False), ("", False),
     ("bad name", False), ("x\n", False), ("pin~", False), ("ü", False)],
)  # fmt: skip
def test_which_preferences_d_names_apt_reads(name, read):
    assert apt_prefs._read(name) is read


def test_the_probe_reads_the_files_apt_reads(tmp_path):
    d = tmp_path / "etc/apt/preferences.d"
    d.mkdir(parents=True)
    (d / "rocm-pin-600").write_text("Package: *\nPin: release o=repo.radeon.com\nPin-Priority: 600\n")
    (d / "other.pref").write_text("Package: foo\nPin: origin bar\nPin-Priority: 50\n")
    (d / "ignored.bak").write_text("Package: *\nPin: origin baz\nPin-Priority: 1000\n")
    pins = collect(str(tmp_path)).apt_pins
    assert [(p.file, p.priority) for p in pins] == [
        ("/etc/apt/preferences.d/other.pref", 50),
        ("/etc/apt/preferences.d/rocm-pin-600", 600),
    ]


def test_no_apt_no_pins(tmp_path):
    facts = collect(str(tmp_path))
    assert facts.apt_pins is None and "apt_pins" not in facts.to_dict()
    (tmp_path / "etc/apt").mkdir(parents=True)
    assert collect(str(tmp_path)).apt_pins == ()


def test_a_source_whose_signed_by_is_not_known_is_not_called_unsigned(matrices):
    def unknown_signed_by(d):
        del d["apt_sources"][2]["signed_by"]

    assert judged(box("rocm", unknown_signed_by), matrices, "apt.source-insecure") == []
    f = judged_one(box("rocm", ("apt_sources.2.signed_by", None)), matrices, "apt.source-insecure")
    assert "no signed-by" in f.detail
