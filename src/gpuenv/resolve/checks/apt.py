"""APT sources of the GPU vendors, and dpkg's own state."""

from __future__ import annotations

import re

from gpuenv.facts import AptSource, Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.vendorrepos import vendor_of

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices

KEYS_REF = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/install-methods/package-manager/package-manager-ubuntu.html"
_NVIDIA_DISTRO = r"/repos/([a-z]+)(\d+)/"  # …/compute/cuda/repos/ubuntu2404/x86_64/
# AMD builds for Ubuntu suites; Debian 13 uses AMD's noble suite and Debian 12 its jammy suite
# (AMD's docs' conf.py, debian_version_numbers). matrices/repos.json amd.suites is the planner's
# copy, held equal to this one by tests/test_planner_edges.py: the doctor does not read the
# planner's file at start-up. Another release is not judged (silence, not a guess).
_AMD_SUITE = {
    ("ubuntu", "24.04"): "noble",
    ("ubuntu", "22.04"): "jammy",
    ("debian", "13"): "noble",
    ("debian", "12"): "jammy",
}


def _where(src: AptSource) -> str:
    return f"{src.file or '?'}: {src.uri} {' '.join(src.suites)}".rstrip()


def _gpu_sources(facts: Facts) -> list[tuple[str, AptSource]]:
    return [(v, s) for s in facts.apt_sources or () if s.enabled and (v := vendor_of(s.uri))]


@check(code="apt.source-insecure", area="stacks", needs=("apt_sources",))
def source_insecure(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    for vendor, src in _gpu_sources(facts):
        problems = []
        if src.uri.startswith("http://"):
            problems.append("plain http")
        if not src.signed_by and not src.signed_by_unknown:  # left out: not known, not "none"
            problems.append("no signed-by: it trusts every key in the legacy trusted.gpg keyring")
        if not problems:
            continue
        yield Finding(
            severity=Severity.ERROR,
            title=f"GPU vendor source {src.file or src.uri} is not pinned to its signing key",
            detail=f"{_where(src)}: {'; '.join(problems)}.",
            fix="Rewrite it as\n  deb [signed-by=/etc/apt/keyrings/<vendor>.gpg] "
            + src.uri.replace("http://", "https://", 1)
            + f" {' '.join(src.suites)} {' '.join(src.components)}\n"
            "(or the deb822 form with Signed-By:) with the vendor key in /etc/apt/keyrings"
            + (
                ", and delete NVIDIA's legacy key: sudo apt-key del 7fa2af80"
                if vendor == "nvidia"
                else ", and remove the vendor key from /etc/apt/trusted.gpg(.d)"
            ),
            refs=(KEYS_REF,),
        )


def _expected_suite(facts: Facts, vendor: str, src: AptSource) -> tuple[str | None, str | None]:
    """(seen, expected) distro marker of a vendor source; (None, None) when it cannot be judged."""
    os_id, version = inv.repo_os(facts)  # a derivative's sources are its base's (Mint 22: noble)
    version = version or ""
    if vendor == "amd":
        if "repo.radeon.com" not in src.uri:
            return None, None  # the new stream's repositories name the release in the path, suite "stable"
        expected = _AMD_SUITE.get((os_id, ".".join(version.split(".")[:2])))
        seen = src.suites[0] if src.suites else None
        return (seen, expected) if expected and seen else (None, None)
    m = re.search(_NVIDIA_DISTRO, src.uri)
    if not m or "/compute/cuda/repos/" not in src.uri:
        return None, None
    if os_id in ("", "unknown") or not version:
        return None, None  # which release this is is not known: nothing to compare with
    seen = m.group(1) + m.group(2)
    expected = f"{os_id}{version.replace('.', '')}"
    return seen, expected


def _stack_key(vendor: str, uri: str) -> str | None:
    """What one stack may have only one of: the CUDA repository, the amdgpu driver repository."""
    if vendor == "nvidia" and "/compute/cuda/repos/" in uri:
        return "CUDA repository"
    if vendor == "amd" and "/amdgpu/" in uri:
        return "amdgpu driver repository"
    return None


@check(code="apt.source-mismatch", area="stacks", needs=("apt_sources",))
def source_mismatch(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    sources = _gpu_sources(facts)
    for vendor, src in sources:
        seen, expected = _expected_suite(facts, vendor, src)
        if seen and expected and seen != expected:
            yield Finding(
                severity=Severity.ERROR,
                title=f"{src.file or src.uri} is for {seen}, this is {inv.os_label(facts)}",
                detail=f"{_where(src)}: built for {seen}, expected {expected}. Packages for another release pull in "
                "the wrong libraries or fail to install.",
                fix=f"Point it at {expected} (or remove it): sudo sed -i 's/{seen}/{expected}/' {src.file or '<file>'}\n"
                "sudo apt-get update",
            )
    groups: dict[str, list[AptSource]] = {}
    for vendor, src in sources:
        key = _stack_key(vendor, src.uri)
        if key:
            groups.setdefault(key, []).append(src)
    for key, srcs in groups.items():
        distinct = {(s.uri.rstrip("/"), s.suites) for s in srcs}
        if len(srcs) < 2:
            continue
        yield Finding(
            severity=Severity.ERROR,
            title=f"Two sources for the {key}",
            detail="; ".join(_where(s) for s in srcs)
            + (" (the same repository listed twice)" if len(distinct) == 1 else "")
            + ". apt mixes their packages and versions.",
            fix="Keep one and delete the others: "
            + " ".join(f"sudo rm {s.file};" for s in srcs[1:] if s.file)
            + " sudo apt-get update",
        )


# A DKMS module that does not build fails its package's configure step: dpkg leaves it unconfigured.
@check(code="dpkg.interrupted", area="stacks", needs=("packages",), blocking=True, follows=("kernel.dkms_not_built",))
def interrupted(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    assert facts.packages is not None  # run_checks skips the check while its needs are unknown
    broken = facts.packages.unconfigured
    if not broken:
        return
    yield Finding(
        severity=Severity.ERROR,
        title="dpkg left packages half-installed or unconfigured",
        detail=f"{len(broken)} package(s): {', '.join(broken[:12])}{' …' if len(broken) > 12 else ''}. "
        "apt refuses to install anything until this is resolved.",
        fix="sudo dpkg --configure -a\nsudo apt-get -f install  # if dependencies are still broken",
        commands=("sudo dpkg --configure -a", "sudo apt-get -f install"),
    )


# -- the distribution's own ROCm packages ------------------------------------------------------

# Package names that both a distribution archive and AMD's ROCm repository carry, each with the
# distribution's higher version number, as apt showed them blocking AMD's packages:
# rocminfo 5.0.0-1, rocm-device-libs 5.0.0-1 and rocm-cmake 5.0.0-1 (Ubuntu 22.04, ROCm/legacy-rocm-build#1899);
# rocminfo 5.7.1-3build1 (KDE neon 24.04, ROCm/rocm-install-on-linux#583); hipcc 5.7.1-3 and
# rocm-cmake 6.0.0-1 (Ubuntu 24.04.4, ROCm/legacy-rocm-build#6367).
SHADOWED = ("rocminfo", "rocm-device-libs", "rocm-cmake", "hipcc")
SHADOW_THREADS = (
    "https://github.com/ROCm/legacy-rocm-build/issues/1899",
    "https://github.com/ROCm/rocm-install-on-linux/issues/583",
    "https://github.com/ROCm/legacy-rocm-build/issues/6367",
)
# Ubuntu releases (by codename) whose archive holds those packages, per the same threads.
SHADOWING_SUITES = ("jammy", "noble")
PIN_REF = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/install-methods/package-manager/package-manager-ubuntu.html"
# AMD's builds of the same packages carry the ROCm release as a five-digit build number:
# rocminfo 1.0.0.60401-83~22.04, hipcc 1.1.1.70204-93~24.04.
_AMD_BUILD = r"\.\d{5}(-|$)"


def _amd_rocm_source(facts: Facts) -> AptSource | None:
    return next(
        (s for s in facts.apt_sources or () if s.enabled and "repo.radeon.com/rocm" in s.uri), None
    )


def _pinned_to_amd(facts: Facts) -> bool | None:
    """Whether a pin puts repo.radeon.com above the distribution (> 500, apt's default for the
    target release's archive is 500 and AMD's guide uses 600); None when pins were not read."""
    if facts.apt_pins is None:
        return None
    return any("repo.radeon.com" in p.pin and p.package.strip() in ("*", *SHADOWED) and p.priority > 500
               for p in facts.apt_pins)  # fmt: skip


@check(code="rocm.distro-package-shadow", area="stacks", needs=("packages",), blocking=True)
def distro_package_shadow(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    amd = _amd_rocm_source(facts)
    # Without AMD's repository the distribution's ROCm is its own stack, unless an install of AMD's
    # ROCm is asked for (an inferred target is not a request).
    if amd is None and not (target.stack == "rocm" and target.explicit):
        return
    shadow = {
        n: v
        for n in SHADOWED
        if (v := facts.installed(n)) is not None and not re.search(_AMD_BUILD, v.partition(":")[2] or v)
    }
    pinned = _pinned_to_amd(facts)
    if shadow:
        yield Finding(
            severity=Severity.ERROR,
            title="The distribution's own ROCm packages block AMD's",
            detail=f"Installed from the distribution: {', '.join(f'{n} {v}' for n, v in shadow.items())}"
            + (f"; AMD's ROCm repository is configured ({_where(amd)})" if amd else "")
            + ". AMD's ROCm packages depend on AMD's builds of these exact packages (rocminfo (= 1.0.0.X), ...), "
            "and the distribution's have higher version numbers, so apt keeps them: "
            "'Depends: rocminfo (= 1.0.0...) but 5.7.1-3build1 is to be installed ... held broken packages'.",
            fix=f"sudo apt remove {' '.join(shadow)}\n"
            + ("" if pinned else "printf 'Package: *\\nPin: release o=repo.radeon.com\\nPin-Priority: 600\\n' | "
               "sudo tee /etc/apt/preferences.d/rocm-pin-600\n")
            + "sudo apt update && sudo apt install rocm",
            refs=(PIN_REF, *SHADOW_THREADS),
        )
        return
    codename = (facts.os.codename or "").lower()
    if amd is None or pinned is not False or codename not in SHADOWING_SUITES:
        return  # nothing installed shadows, and either no pin is missing or it is not known
    asked = target.stack == "rocm" and target.explicit
    core = facts.installed("rocm-core")
    if not asked and core is not None and re.search(_AMD_BUILD, core):
        return  # AMD's ROCm is installed: apt chose AMD's builds then; nothing is being installed now
    yield Finding(
        severity=Severity.ERROR if asked else Severity.WARNING,
        title="No pin keeps AMD's ROCm packages ahead of the distribution's",
        detail=f"AMD's ROCm repository is configured ({_where(amd)}), and no /etc/apt/preferences(.d) pin gives "
        f"repo.radeon.com a priority above 500. This release ({facts.os.pretty_name or codename}) carries its "
        f"own {', '.join(SHADOWED)} with higher version numbers than AMD's, so `apt install rocm` picks the "
        "distribution's and fails on AMD's exact dependencies.",
        fix="printf 'Package: *\\nPin: release o=repo.radeon.com\\nPin-Priority: 600\\n' | "
        "sudo tee /etc/apt/preferences.d/rocm-pin-600\nsudo apt update",
        refs=(PIN_REF, *SHADOW_THREADS),
    )
