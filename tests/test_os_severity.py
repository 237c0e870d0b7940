"""os.unsupported by consequence (#43): an error only where something fails for it (an install
asked for, or an installed release from the vendor's repository that does not list this OS);
otherwise a warning that says what would not be supported. Derivatives are judged as their base,
distribution-packaged stacks as community-supported, and an unnamed OS is never unsupported."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.plan.plan import Kind
from gpuenv.probe.osinfo import os_from_release, parse_os_release
from gpuenv.resolve import inventory
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import base


@pytest.fixture(scope="module")
def matrices():
    return load()


def _box(name: str, os: dict, apt: list | None | str = "keep") -> dict:
    doc = base(name)
    doc["os"] = os
    if apt != "keep":
        if apt is None:
            doc.pop("apt_sources", None)
        else:
            doc["apt_sources"] = apt
    return doc


def _found(doc: dict, matrices, target: str | None = None):
    report = diagnose(from_dict(doc), matrices, Target.parse(target))
    return {f.code: f for f in report.findings}


SCHEMAS = Path(__file__).resolve().parent.parent / "src" / "gpuenv" / "schemas"
FOCAL = {"id": "ubuntu", "version_id": "20.04", "codename": "focal", "pretty_name": "Ubuntu 20.04.6 LTS"}
ARCH = {"id": "arch", "version_id": None, "pretty_name": "Arch Linux"}


def _newest_listing(matrices, os_id: str, version: str) -> str:
    """The newest bundled ROCm release whose OS table has an entry for this release (read here
    from the records, not through the code under test)."""
    listed = [
        r.version
        for r in matrices.rocm_releases()
        if any(o.id == os_id and (version == o.version or version.startswith(o.version + ".")) for o in r.os)
    ]
    assert listed, f"no bundled ROCm release lists {os_id} {version}"
    return listed[-1]


def test_rocm_from_amds_repository_on_an_unlisted_os_is_an_error(matrices):
    # The healthy box's ROCm 7.2.4 comes from repo.radeon.com (its apt sources); 7.2.4 does not list 20.04.
    found = _found(_box("doctor-healthy-rocm", FOCAL), matrices)
    assert found["os.unsupported"].severity is Severity.ERROR
    assert "AMD's repository" in found["os.unsupported"].title


def test_rocm_of_unknown_origin_on_an_unlisted_os_is_a_warning_naming_the_release_that_lists_it(matrices):
    found = _found(_box("doctor-healthy-rocm", FOCAL, apt=None), matrices)
    f = found["os.unsupported"]
    assert f.severity is Severity.WARNING
    newest = _newest_listing(matrices, "ubuntu", "20.04")
    assert f"would not install here; the newest ROCm release that lists ubuntu 20.04 is {newest}" in f.title


def test_an_install_asked_for_on_an_unlisted_os_is_an_error(matrices):
    found = _found(_box("doctor-healthy-rocm", FOCAL, apt=None), matrices, "rocm@7.2.4")
    assert found["os.unsupported"].severity is Severity.ERROR



RESOLUTE = {"id": "ubuntu", "version_id": "26.04", "codename": "resolute", "pretty_name": "Ubuntu 26.04 LTS"}


def test_a_target_whose_table_for_the_os_is_not_confirmed_is_a_warning_never_silence(matrices):
    """7.2.2's Ubuntu table holds an entry no AMD page confirms (22.04's, derived from 7.1.1's), and it
    lists no 26.04: the doctor says so as a warning naming the doubt, where it once passed in silence;
    a release whose Ubuntu table is confirmed (7.2.4) keeps the error for the same install."""
    r722, r724 = matrices.rocm_release("7.2.2"), matrices.rocm_release("7.2.4")
    assert any(o.id == "ubuntu" and not o.confirmed for o in r722.os)
    assert all(o.confirmed for o in r724.os if o.id == "ubuntu")
    assert not any(o.id == "ubuntu" and o.version == "26.04" for r in (r722, r724) for o in r.os)
    doubt = _found(_box("doctor-healthy-rocm", RESOLUTE, apt=None), matrices, "rocm@7.2.2")["os.unsupported"]
    assert doubt.severity is Severity.WARNING
    assert "ROCm 7.2.2's table for ubuntu is not fully confirmed by AMD (" in doubt.detail
    assert "so it may lack this release" in doubt.detail
    firm = _found(_box("doctor-healthy-rocm", RESOLUTE, apt=None), matrices, "rocm@7.2.4")["os.unsupported"]
    assert firm.severity is Severity.ERROR and "not fully confirmed" not in firm.detail

def test_a_distribution_packaged_rocm_is_community_supported_not_an_error(matrices):
    doc = _box("doctor-healthy-rocm", ARCH, apt=None)
    found = _found(doc, matrices)
    f = found["os.unsupported"]
    assert f.severity is Severity.WARNING
    assert "not on AMD's support list; community-supported" in f.title
    # Installing AMD's packages there is another matter: they do not exist for Arch.
    assert _found(doc, matrices, "rocm")["os.unsupported"].severity is Severity.ERROR


def test_debians_own_rocm_packages_are_community_supported(matrices):
    # apt's sources were read and hold no AMD source: the ROCm packages are the distribution's.
    trixie = {"id": "debian", "version_id": "13", "codename": "trixie"}
    archive = [
        {"uri": "http://deb.debian.org/debian", "suites": ["trixie"], "components": ["main"], "enabled": True}
    ]
    doc = _box("doctor-healthy-rocm", {**trixie, "id": "debian"}, apt=archive)
    doc["os"]["version_id"] = "11"  # bullseye: no bundled ROCm release lists it
    doc["os"]["codename"] = "bullseye"
    found = _found(doc, matrices)
    assert found["os.unsupported"].severity is Severity.WARNING
    assert "community-supported" in found["os.unsupported"].title


def test_the_nvidia_driver_on_an_unlisted_os_is_a_warning_unless_cuda_is_asked_for(matrices):
    bionic = {"id": "ubuntu", "version_id": "18.04", "codename": "bionic"}
    doc = _box("doctor-healthy-cuda", bionic)
    assert _found(doc, matrices)["os.unsupported"].severity is Severity.WARNING
    assert _found(doc, matrices, "cuda")["os.unsupported"].severity is Severity.ERROR


@pytest.mark.parametrize("target", [None, "rocm", "cuda"])
def test_the_bare_default_os_release_is_unknown_never_unsupported(matrices, target):
    name = "doctor-healthy-cuda" if target == "cuda" else "doctor-healthy-rocm"
    found = _found(_box(name, {"id": "linux", "version_id": None}), matrices, target)
    assert "os.unsupported" not in found
    assert found["os.unknown"].severity is Severity.WARNING


# -- derivatives judged as their base ----------------------------------------------------------

MINT_22 = """NAME="Linux Mint"
VERSION="22 (Wilma)"
ID=linuxmint
ID_LIKE="ubuntu debian"
PRETTY_NAME="Linux Mint 22"
VERSION_ID="22"
VERSION_CODENAME=wilma
UBUNTU_CODENAME=noble
"""
POP_2204 = """NAME="Pop!_OS"
VERSION="22.04 LTS"
ID=pop
ID_LIKE="ubuntu debian"
PRETTY_NAME="Pop!_OS 22.04 LTS"
VERSION_ID="22.04"
VERSION_CODENAME=jammy
UBUNTU_CODENAME=jammy
"""
LMDE_6 = """PRETTY_NAME="LMDE 6 (faye)"
NAME="LMDE"
VERSION_ID="6"
VERSION="6 (faye)"
VERSION_CODENAME=faye
ID=linuxmint
ID_LIKE=debian
DEBIAN_CODENAME=bookworm
"""


@pytest.mark.parametrize(
    "text, codename, base",
    [
        (MINT_22, "wilma", ("ubuntu", "24.04", "noble")),
        (POP_2204, "jammy", ("ubuntu", "22.04", "jammy")),
        (LMDE_6, "faye", ("debian", "12", "bookworm")),
        ('ID=ubuntu\nVERSION_ID="24.04"\nVERSION_CODENAME=noble\nUBUNTU_CODENAME=noble\n', "noble", None),
        ("ID=arch\n", None, None),
    ],
)
def test_the_probe_reads_the_base_without_letting_version_codename_hide_it(text, codename, base):
    os = os_from_release(parse_os_release(text))
    assert os.codename == codename
    got = (os.base.id, os.base.version_id, os.base.codename) if os.base else None
    assert got == base


def test_the_base_is_in_the_facts_document_and_its_schema():
    os = os_from_release(parse_os_release(MINT_22))
    doc = base("doctor-healthy-rocm")
    doc["os"] = {"id": os.id, "version_id": os.version_id, "codename": os.codename, "base": {"id": "ubuntu"}}
    facts = from_dict(doc)
    assert facts.os.base is not None and facts.os.base.version_id is None  # left out: not known
    assert facts.to_dict()["os"]["base"] == {"id": "ubuntu"}
    schema = json.loads((SCHEMAS / "facts.schema.json").read_text())
    doc["os"]["base"] = {"id": "ubuntu", "version_id": "24.04", "codename": "noble"}
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**doc, "os": {**doc["os"], "base": {"version_id": "24.04"}}}, schema)


def _mint(matrices, target):
    os = os_from_release(parse_os_release(MINT_22))
    doc = base("doctor-healthy-rocm")
    doc["os"] = {
        "id": os.id,
        "version_id": os.version_id,
        "codename": os.codename,
        "id_like": list(os.id_like),
        "pretty_name": os.pretty_name,
        "base": {"id": "ubuntu", "version_id": "24.04", "codename": "noble"},
    }
    return doc, _found(doc, matrices, target)


def test_mint_22_is_judged_as_ubuntu_24_04(matrices):
    doc, found = _mint(matrices, "rocm")
    assert "os.unsupported" not in found and "os.unknown" not in found
    assert inventory.os_label(from_dict(doc)) == "Linux Mint 22 (Ubuntu 24.04 base)"
    from gpuenv.render.facts import summary_rows

    assert ("OS", "Linux Mint 22 (Ubuntu 24.04 base)") in summary_rows(from_dict(doc))


@pytest.mark.parametrize(
    "os",
    [
        {"id": "pop", "version_id": "22.04"},  # a report gives only the ID and number
        {"id": "neon", "version_id": "24.04", "pretty_name": "KDE neon User Edition (Ubuntu 24.04)"},
        {"id": "linuxmint", "version_id": "22", "codename": "wilma", "id_like": ["ubuntu"]},
    ],
)
def test_ubuntu_derivatives_get_no_os_unsupported_error(matrices, os):
    found = _found(_box("doctor-healthy-rocm", os), matrices, "rocm")
    f = found.get("os.unsupported")
    assert f is None or f.severity is not Severity.ERROR


def test_a_derivative_whose_base_is_not_known_is_not_judged(matrices):
    found = _found(_box("doctor-healthy-rocm", {"id": "linuxmint", "version_id": None}), matrices, "rocm")
    assert "os.unsupported" not in found
    assert "os.unknown" in found


def test_pop_21_04_is_judged_as_ubuntu_21_04(matrices):
    """An Ubuntu release no ROCm lists: a derivative of it gets what Ubuntu 21.04 would."""
    pop = _found(_box("doctor-healthy-rocm", {"id": "pop", "version_id": "21.04"}), matrices, "rocm")
    ubuntu = _found(_box("doctor-healthy-rocm", {"id": "ubuntu", "version_id": "21.04"}), matrices, "rocm")
    assert pop["os.unsupported"].severity is ubuntu["os.unsupported"].severity is Severity.ERROR
    assert "judged as its base ubuntu 21.04" in pop["os.unsupported"].detail


def test_install_on_mint_22_plans_what_ubuntu_24_04_gets_and_agrees_with_the_doctor(matrices):
    """One reading of the OS: the planner picks the base's repositories (noble) for Linux Mint 22,
    and neither its blockers nor `doctor --target` call the OS unsupported."""
    from gpuenv.plan import planner, repos

    fixture = Path(__file__).parent / "facts" / "plan-ubuntu2404-rx9070-cuda-leftovers.json"
    doc = json.loads(fixture.read_text())
    os = os_from_release(parse_os_release(MINT_22))
    doc["os"] = {
        "id": os.id,
        "version_id": os.version_id,
        "codename": os.codename,
        "pretty_name": os.pretty_name,
        "base": {"id": "ubuntu", "version_id": "24.04", "codename": "noble"},
    }
    req = planner.Request(action=planner.Action.INSTALL, stack="rocm", version="7.2.4", user="alice")
    plan = planner.make_plan(from_dict(doc), matrices, repos.load(), req)
    sources = [s.content for s in plan.steps if s.kind is Kind.APT_SOURCE]
    assert sources and all(" noble main" in c for c in sources)
    assert "os.unsupported" not in plan.blockers
    assert "os.unsupported" not in _found(doc, matrices, "rocm@7.2.4")
    # Without the base, Mint's own number names no AMD suite: the plan says so, and the doctor agrees.
    doc["os"].pop("base")
    doc["os"]["codename"] = "wilma"
    bare = planner.make_plan(from_dict(doc), matrices, repos.load(), req)
    assert any("no AMD apt suite for Linux Mint 22" in n for n in bare.notes)
    assert "os.unsupported" not in _found(doc, matrices, "rocm@7.2.4")  # not judged: os.unknown


# -- where a stack came from, recorded by the probe ----------------------------------------------


def test_the_probe_records_whether_a_packaged_stack_came_from_the_vendor_or_the_distribution():
    from gpuenv.facts import AptSource, Packages, Toolkit, Toolkits
    from gpuenv.probe.toolkits import with_origin

    found = Toolkits(
        cuda=(Toolkit(version="12.8.1", path="/usr/local/cuda-12.8", source="package"),),
        rocm=(Toolkit(version="5.7.1", path="/usr", source="package"), Toolkit(version="7.14.0", source="pip")),
    )
    dpkg = Packages(manager="dpkg", installed={"rocminfo": "5.7.1-3"})
    debian = (AptSource(uri="http://deb.debian.org/debian", suites=("trixie",)),)
    nvidia = (*debian, AptSource(uri="https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"))
    marked = with_origin(found, dpkg, nvidia)
    assert [t.origin for t in marked.cuda] == ["vendor"]
    assert [t.origin for t in marked.rocm] == ["distribution", None]  # a pip wheel is neither
    disabled = (*debian, AptSource(uri="https://repo.radeon.com/rocm/apt/7.2.4", enabled=False))
    assert [t.origin for t in with_origin(found, dpkg, disabled).rocm] == ["distribution", None]
    # No apt sources read (rpm, pacman), or no dpkg: where it came from is not known.
    assert with_origin(found, dpkg, None) == found
    assert with_origin(found, Packages(manager="rpm"), debian) == found


def test_a_recorded_origin_decides_the_severity(matrices):
    doc = _box("doctor-healthy-rocm", FOCAL, apt=None)
    doc["toolkits"]["rocm"][0]["origin"] = "vendor"
    assert _found(doc, matrices)["os.unsupported"].severity is Severity.ERROR
    doc["toolkits"]["rocm"][0]["origin"] = "distribution"
    assert "community-supported" in _found(doc, matrices)["os.unsupported"].title


@pytest.mark.parametrize(
    "uri",
    [
        "https://repo.amd.com/rocm/packages-multi-arch/ubuntu2404",  # 7.14's (repos.json)
        "https://stable.repo.amd.com/rocm/ubuntu2404",  # 10.x's host (repos.json)
    ],
)
def test_the_new_release_streams_repositories_are_amds(uri, matrices):
    """ROCm 7.14 and 10.x come from repo.amd.com and stable.repo.amd.com, not repo.radeon.com: a
    stack installed from them is the vendor's, and their suite ("stable") is no distribution
    codename to hold against the OS (apt.source-mismatch)."""
    from gpuenv.facts import AptSource, Packages, Toolkit, Toolkits
    from gpuenv.probe.toolkits import with_origin

    found = Toolkits(rocm=(Toolkit(version="7.14.0", path="/opt/rocm/core-7.14", source="package"),))
    source = AptSource(uri=uri, suites=("stable",), components=("main",), signed_by="/etc/apt/keyrings/amdrocm.gpg")
    marked = with_origin(found, Packages(manager="dpkg", installed={"amdrocm-core-sdk7.14": "7.14.0-3"}), (source,))
    assert [t.origin for t in marked.rocm] == ["vendor"]
    doc = _box("doctor-healthy-rocm", {"id": "ubuntu", "version_id": "24.04", "codename": "noble"})
    doc["apt_sources"] = [{"uri": uri, "suites": ["stable"], "components": ["main"], "enabled": True,
                           "signed_by": "/etc/apt/keyrings/amdrocm.gpg", "file": "/etc/apt/sources.list.d/amdrocm.list"}]  # fmt: skip
    assert "apt.source-mismatch" not in _found(doc, matrices)
    doc["apt_sources"][0]["uri"] = uri.replace("https://", "http://")
    assert "apt.source-insecure" in _found(doc, matrices)  # AMD's: held to the vendor sources' rules
