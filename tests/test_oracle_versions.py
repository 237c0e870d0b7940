"""Version ordering against the tools that define it: Debian package versions against
``dpkg --compare-versions`` (gpuenv.standins.debversion, and where the checks order installed packages),
PEP 440 torch versions against ``packaging.version`` (where gpuenv orders torch releases)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpuenv.facts import from_dict
from gpuenv.probe import dpkg
from gpuenv.resolve import inventory as inv
from gpuenv.standins import debversion, pep440
from tests.doctor_cases import base, judged, setp

needs_dpkg = pytest.mark.skipif(shutil.which("dpkg") is None, reason="no dpkg on this machine")
ROOTS = Path(__file__).parent / "roots"


def _dpkg_compare(a: str, b: str) -> int:
    """dpkg's answer: -1, 0 or 1."""
    for answer, op in ((-1, "lt"), (0, "eq")):
        done = subprocess.run(["dpkg", "--compare-versions", a, op, b], capture_output=True, check=False)
        assert done.returncode in (0, 1), done.stderr  # 2 or more: dpkg refuses a version
        if done.returncode == 0:
            return answer
    return 1


_DIGITS = st.text("0123456789", min_size=1, max_size=3)
_PART = st.text("0123456789.+~abz", max_size=6)
_VERSION = st.builds(
    lambda epoch, first, rest, revision: f"{epoch}{first}{rest}{revision}",
    st.sampled_from(["", "", "0:", "1:", "2:", "10:"]),
    _DIGITS,
    _PART,
    st.one_of(st.just(""), st.builds(lambda r: f"-{r}", st.text("0123456789.+~abz", min_size=1, max_size=6)
                                     .filter(lambda r: r[0].isalnum()))),
)  # fmt: skip


@needs_dpkg
@settings(max_examples=150, deadline=None)
@given(a=_VERSION, b=_VERSION)
@example("1:570.133.07-1", "580.65.06-1")  # an epoch outranks any upstream version
@example("1.0~rc1", "1.0")  # ~ sorts before the end
@example("1.0", "1.0-0")  # no revision is revision 0
@example("1.0a", "1.0+")  # letters before other characters
@example("7.2.0.70200-43~24.04", "7.2.0.70200-43")
@example("2.36-9+deb12u10", "2.36-9+deb12u9")
@example("001", "1")
def test_debian_versions_order_as_dpkg_orders_them(a, b):
    assert debversion.compare(a, b) == _dpkg_compare(a, b)


def _real_versions() -> list[str]:
    found: set[str] = set()
    for path in [Path("/var/lib/dpkg/status"), *ROOTS.glob("*/var/lib/dpkg/status")]:
        if path.is_file():
            found.update(rec.version for rec in dpkg.records(path.read_bytes()) if rec.version)
    return sorted(found)


@needs_dpkg
def test_the_versions_of_real_databases_order_as_dpkg_orders_them():
    versions = _real_versions()
    assert len(versions) > 100
    rng = random.Random(23)
    pairs = [tuple(rng.sample(versions, 2)) for _ in range(150)]
    # Close neighbours too: same package line, differing in the revision or a suffix.
    pairs += list(zip(versions, versions[1:], strict=False))[::5]
    wrong = [(a, b) for a, b in pairs if debversion.compare(a, b) != _dpkg_compare(a, b)]
    assert wrong == []


def _facts_with_driver_packages(packages: dict[str, str]):
    doc = base("doctor-cpu-laptop")
    setp(doc, "packages", {"manager": "dpkg", "installed": {"dpkg": "1.21.22", **packages}, "unconfigured": []})
    return from_dict(doc)


def test_the_installed_driver_is_the_newest_package_as_dpkg_orders_them():
    # An epoch makes 570 newer than 580 to dpkg and apt (NVIDIA's repository and the
    # distribution's package of one driver); the number alone said otherwise.
    facts = _facts_with_driver_packages({"nvidia-driver-570": "1:570.133.07-1", "libnvidia-compute-580": "580.65.06-1"})
    assert inv.nvidia_package_version(facts) == "570.133.07"
    assert inv.nvidia_branch(facts) == 570
    facts = _facts_with_driver_packages({"nvidia-driver-570": "570.133.07-1", "libnvidia-compute-580": "580.65.06-1"})
    assert inv.nvidia_package_version(facts) == "580.65.06"


# -- PEP 440: torch versions -----------------------------------------------------------------------

_PEP440 = st.builds(
    lambda epoch, release, pre, post, dev, local: f"{epoch}{release}{pre}{post}{dev}{local}",
    st.sampled_from(["", "", "1!"]),
    st.lists(st.integers(0, 12), min_size=1, max_size=4).map(lambda ns: ".".join(map(str, ns))),
    st.sampled_from(["", "", "a1", "b2", "rc1", "rc", ".rc2", "c3", "alpha1", "-beta", "pre1", "RC1"]),
    st.sampled_from(["", "", ".post1", ".post", "post2", "-1", ".rev3", "-r4", "_post5"]),
    st.sampled_from(["", "", ".dev20250101", ".dev", "dev3", "-dev1"]),
    st.sampled_from(["", "", "+cu128", "+rocm6.4", "+cpu", "+rocm7.0.2", "+1.2", "+abc.5", "+CU118"]),
)  # fmt: skip


def _packaging_compare(a: str, b: str) -> int:
    from packaging.version import Version

    va, vb = Version(a), Version(b)
    return (va > vb) - (va < vb)


def _ours_compare(a: str, b: str) -> int:
    ka, kb = pep440.key(a), pep440.key(b)
    assert ka is not None and kb is not None, (a, b)
    return (ka > kb) - (ka < kb)


@settings(max_examples=500, deadline=None)
@given(a=_PEP440, b=_PEP440)
@example("2.9.1.post1", "2.9.1")
@example("2.5.0rc1", "2.5.0")
@example("2.8.0.dev20250101+rocm6.4", "2.8.0a1")
@example("2.8.0.dev20250101+rocm6.4", "2.7.1")
@example("2.5", "2.5.0")
@example("2.7.0+cu128", "2.7.0")
def test_torch_versions_order_as_packaging_orders_them(a, b):
    assert _ours_compare(a, b) == _packaging_compare(a, b)


@pytest.mark.parametrize("text", ["", "abc", "2.5.0-foo", "2..5", "2.5.0+", "1!", "torch 2.5"])
def test_what_is_no_pep_440_version_has_no_key(text):
    from packaging.version import InvalidVersion, Version

    with pytest.raises(InvalidVersion):
        Version(text)
    assert pep440.key(text) is None


def _torch_box(version: str):
    doc = base("doctor-healthy-rocm")
    setp(doc, "python.torch.version", version)
    return doc


@pytest.mark.parametrize("suffix, stale", [(".dev20990101", False), ("rc1", False), (".post1", True), ("", False)])
def test_an_installed_torch_is_newer_than_the_bundle_only_as_packaging_orders_them(suffix, stale):
    # doctor.matrices-stale: a nightly or release candidate of the newest bundled release is not
    # newer than it (the numbers alone made the nightly's date look like a fourth number).
    from gpuenv.matrices import load

    matrices = load()
    newest = matrices.torch_versions()[-1]
    findings = judged(_torch_box(f"{newest}{suffix}+rocm7.2"), matrices, "doctor.matrices-stale")
    assert bool(findings) == stale
