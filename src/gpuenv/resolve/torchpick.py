"""Which official PyTorch wheel fits a machine: pure (facts + matrices -> a Choice), no I/O.

A variant fits by the rules of ``wheelfit`` (compiled code, driver, Python). Among the variants
of a release that fit, a CUDA version the driver runs natively (at or above its Table 3 minimum)
beats a newer one that needs minor-version compatibility; then the newest. Integrated AMD GPUs
are set aside when a discrete one is present (PyTorch should run on the discrete card; the
doctor reports the iGPU separately). For an AMD GPU no official wheel fits, the community
HSA_OVERRIDE_GFX_VERSION route, where the data records it, is shown apart (``Unofficial``).
On a machine with a release of ROCm's new stream installed (TheRock: 7.14, 10.0), for which PyTorch
publishes no index, AMD's own wheels for that release are shown beside the choice (``amd``), from
torch.json ``amd_wheels``: named, never installed by gpuenv.
"""

from __future__ import annotations

import re

from gpuenv.exitcodes import Exit
from gpuenv.facts import Facts
from gpuenv.matrices import AmdWheels, GfxOverride, Matrices, TorchVariant, vkey
from gpuenv.resolve.wheelfit import GpuArch, cuda_covers, fit, gpu_archs
from gpuenv.standins.record import field, record

VENDORS = ("nvidia", "amd")
LABEL = {"nvidia": "NVIDIA", "amd": "AMD"}


@record(frozen=True)
class Unofficial:
    """The community HSA_OVERRIDE_GFX_VERSION route: a wheel built for ``runs_as`` that the GPU
    runs with the override set. Not an official fit; shown apart, never as the choice."""

    gfx: str  # "gfx1031"
    env: str  # "HSA_OVERRIDE_GFX_VERSION=10.3.0"
    runs_as: str  # "gfx1030"
    torch: str | None
    variant: str | None
    index_url: str | None
    risk: str
    source: str
    confirmed: bool = False

    @property
    def pip(self) -> str | None:
        if self.torch is None or self.index_url is None:
            return None
        return f"pip install torch=={self.torch} --index-url {self.index_url}"

    def to_dict(self) -> dict[str, object]:
        return {
            "official": False,
            "gfx": self.gfx,
            "env": self.env,
            "runs_as": self.runs_as,
            "torch": self.torch,
            "variant": self.variant,
            "index_url": self.index_url,
            "pip": self.pip,
            "run": f"{self.env} python ..." if self.torch else None,
            "risk": self.risk,
            "source": self.source,
            "confirmed": self.confirmed,
        }


@record(frozen=True)
class AmdRoute:
    """AMD's own wheels for the installed release of ROCm's new stream, where PyTorch publishes no
    index: one index, the GPU chosen by a device extra. Shown apart from the choice."""

    rocm: str  # "10.0.0"
    index_url: str
    requirement: str  # 'torch[device-gfx1151]==2.13.0'
    also: tuple[str, ...]  # the other torch releases AMD lists for it
    source: str
    confirmed: bool

    @property
    def pip(self) -> str:
        return f'pip install "{self.requirement}" --index-url {self.index_url}'

    def to_dict(self) -> dict[str, object]:
        return {
            "rocm": self.rocm,
            "index_url": self.index_url,
            "requirement": self.requirement,
            "pip": self.pip,
            "also": list(self.also),
            "source": self.source,
            "confirmed": self.confirmed,
        }


@record(frozen=True)
class Choice:
    torch: str | None
    variant: str | None
    index_url: str | None
    reasons: tuple[str, ...]
    exit: Exit = Exit.OK
    vendor: str | None = None
    gpus: tuple[GpuArch, ...] = ()
    confirmed: bool = True  # False when the chosen wheel's arch list is not from a primary source
    alternatives: tuple[str, ...] = field(default=())  # other variants of the same release that fit
    unofficial: Unofficial | None = None  # the HSA_OVERRIDE route, when no official wheel fits an AMD GPU
    amd: AmdRoute | None = None  # AMD's own wheels for an installed release of ROCm's new stream

    @property
    def pip(self) -> str | None:
        if self.torch is None or self.index_url is None:
            return None
        return f"pip install torch=={self.torch} --index-url {self.index_url}"

    @property
    def uv(self) -> str | None:
        if self.torch is None or self.index_url is None:
            return None
        return f"uv pip install torch=={self.torch} --index-url {self.index_url}"

    def to_dict(self) -> dict[str, object]:
        return {
            "torch": self.torch,
            "variant": self.variant,
            "index_url": self.index_url,
            "pip": self.pip,
            "uv": self.uv,
            "reasons": list(self.reasons),
            "vendor": self.vendor,
            "confirmed": self.confirmed,
            "alternatives": list(self.alternatives),
            "unofficial": self.unofficial.to_dict() if self.unofficial else None,
            "amd_wheels": self.amd.to_dict() if self.amd else None,
            "gpus": [
                {"vendor": g.vendor, "pci_id": g.pci_id, "name": g.name, "arch": g.arch, "via": g.via}
                for g in self.gpus
            ],
        }


class PickError(ValueError):
    """Bad input to the choice (an unknown --version or --vendor): exit 2."""


# -- the choice -------------------------------------------------------------------------------


def _python_minor(facts: Facts) -> str | None:
    version = facts.python.version if facts.python else None
    if not version:
        return None
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else None


def _rank(variant: TorchVariant, mode: str | None) -> tuple[bool, bool, bool, tuple[int, ...]]:
    # A variant whose data a primary source confirms beats one known only from secondary sources
    # (#42: torch 2.9.0 cu129 may be absent from the index, cu128 is in PyTorch's own build matrix);
    # then a wheel that bundles its ROCm runtime beats one that pip-installs it (rocm7.14); then a
    # CUDA version the driver runs natively beats one that needs minor-version compatibility (a 580
    # driver gets cu130, not cu132); then the newest stack. No driver yet: the newest.
    return (variant.confirmed, variant.rocm_from_pip is None, mode != "minor", vkey(variant.stack_version or "0"))


def pick(facts: Facts, matrices: Matrices, version: str | None = None, vendor: str | None = None) -> Choice:
    """The newest official wheel (or the best variant of ``version``) that fits every GPU."""
    if vendor is not None and vendor not in VENDORS:
        raise PickError(f"--vendor {vendor!r}: expected nvidia or amd")
    versions = matrices.torch_versions()
    if version is not None:
        if not matrices.torch_variants(version):
            raise PickError(
                f"--version {version}: not a bundled torch release (bundled: {versions[0]} .. {versions[-1]})"
            )
        wanted = [matrices.torch_variants(version)[0].torch]
    else:
        wanted = list(reversed(versions))

    present = [v for v in VENDORS if facts.gpus_of(v)]
    set_aside: list[str] = []
    if vendor is None and len(present) > 1 and all(g.integrated for g in gpu_archs(facts, matrices, "amd")):
        # A Ryzen iGPU beside an NVIDIA card is no second vendor to choose between.
        present = ["nvidia"]
        set_aside = [
            f"{g.name} ({g.pci_id}) is an AMD integrated GPU: set aside"
            for g in gpu_archs(facts, matrices, "amd")
        ]
    if vendor is None:
        if len(present) > 1:
            return Choice(
                None,
                None,
                None,
                ("both NVIDIA and AMD GPUs are present: pass --vendor nvidia or --vendor amd",),
                Exit.USAGE,
            )
        if not present:
            cpu = [v for v in matrices.torch_variants(wanted[0]) if v.stack == "cpu"]
            cpu_only = ("no NVIDIA or AMD GPU found: the CPU-only build",)
            if cpu:
                return Choice(cpu[0].torch, cpu[0].variant, cpu[0].index_url, cpu_only, Exit.OK)
            return Choice(None, None, None, cpu_only + ("no CPU wheel bundled",), Exit.PROBLEMS)
        vendor = present[0]
    elif vendor not in present:
        return Choice(None, None, None, (f"no {LABEL[vendor]} GPU in the facts",), Exit.PROBLEMS, vendor)

    label = LABEL[vendor]
    gpus = gpu_archs(facts, matrices, vendor)
    reasons: list[str] = list(set_aside)
    if vendor == "amd" and any(not g.integrated for g in gpus):
        for g in gpus:
            if g.integrated:
                reasons.append(f"{g.name} ({g.pci_id}, {g.arch or 'gfx unknown'}) is integrated: set aside")
        gpus = [g for g in gpus if not g.integrated]
    unknown = [g for g in gpus if g.arch is None]
    if unknown:
        what = "compute capability" if vendor == "nvidia" else "gfx target"
        return Choice(
            None,
            None,
            None,
            tuple(
                reasons
                + [
                    f"{g.name} ({g.pci_id}): {what} unknown (no driver and not in the matrices)"
                    for g in unknown
                ]
            ),
            Exit.PROBLEMS,
            vendor,
            tuple(gpus),
        )
    for g in gpus:
        name = g.name if g.name.upper().startswith(label) else f"{label} {g.name}"
        reasons.append(
            f"{name} ({g.pci_id}): {g.arch} (from {'the driver' if g.via == 'facts' else 'its PCI id'})"
        )

    amd, why_not = _amd_route(facts, gpus, matrices) if vendor == "amd" else (None, None)
    if amd is not None:
        reasons.append(
            f"ROCm {amd.rocm} (the new release stream) is installed: PyTorch publishes no index built for it; "
            f"AMD's own wheels for it are shown apart"
            + ("" if amd.confirmed else " (unconfirmed)")
        )
    elif why_not:
        reasons.append(why_not)

    driver = facts.nvidia.driver_version if (vendor == "nvidia" and facts.nvidia) else None
    python = _python_minor(facts)
    if vendor == "nvidia":
        reasons.append(
            f"driver {driver}" if driver else "no NVIDIA driver found: judged by architecture only"
        )
    if python:
        reasons.append(f"Python {python}")

    stack = "cuda" if vendor == "nvidia" else "rocm"
    rejected: list[str] = []
    for ver in wanted:
        fitting = []
        for variant in matrices.torch_variants(ver):
            if variant.stack != stack:
                continue
            ok, why, mode = fit(variant, gpus, driver, python, matrices)
            if ok:
                fitting.append((variant, mode))
            elif version is not None or ver == wanted[0]:
                rejected.append(f"{ver} {variant.variant}: {why}")
        if not fitting:
            continue
        fitting.sort(key=lambda vm: _rank(*vm), reverse=True)
        best, mode = fitting[0]
        reasons.extend(_explain(best, mode, gpus, driver, facts, matrices, fitting))
        if version is None and ver != wanted[0]:
            reasons.append(f"newer releases have no fitting wheel (e.g. {rejected[0]})" if rejected else "")
        return Choice(
            best.torch,
            best.variant,
            best.index_url,
            tuple(r for r in reasons if r),
            Exit.OK,
            vendor,
            tuple(gpus),
            best.confirmed,
            tuple(v.variant + ("" if v.confirmed else " (unconfirmed)") for v, _ in fitting[1:]),
            amd=amd,
        )
    scope = f"torch {wanted[0]}" if version is not None else f"torch {wanted[-1]} .. {wanted[0]}"
    reasons.append(f"no official {'CUDA' if stack == 'cuda' else 'ROCm'} wheel of {scope} fits")
    reasons.extend(rejected)
    reasons.extend(_arch_notes(gpus, matrices))
    unofficial = _unofficial(gpus, wanted, python, matrices) if stack == "rocm" else None
    if unofficial is not None:
        reasons.append(
            f"unofficial route (not an official fit, unsupported by AMD): {unofficial.env} makes the GPU run "
            f"{unofficial.runs_as} code"
            + (
                f"; torch {unofficial.torch} {unofficial.variant} is built for {unofficial.runs_as}"
                if unofficial.torch
                else ""
            )
            + f"; risk: {unofficial.risk}"
        )
    return Choice(
        None, None, None, tuple(reasons), Exit.PROBLEMS, vendor, tuple(gpus), unofficial=unofficial, amd=amd
    )


def _amd_route(facts: Facts, gpus: list[GpuArch], m: Matrices) -> tuple[AmdRoute | None, str | None]:
    """AMD's wheels for the newest installed release of ROCm's new stream, when the data records
    them and every GPU has a device extra there; else why not (None when no such release is installed)."""
    therock = [t for t in facts.toolkits.rocm if t.stream == "therock"]
    if not therock:
        return None, None
    newest = max(therock, key=lambda t: vkey(t.version))
    found = re.match(r"\d+\.\d+(?:\.\d+)?", newest.version)
    release = found.group(0) if found else newest.version
    wheels: AmdWheels | None = m.amd_wheels(release) or m.amd_wheels(".".join(release.split(".")[:2]))
    if wheels is None:
        return None, f"ROCm {release} (the new release stream) is installed: no AMD wheel index is recorded for it"
    archs = tuple(g.arch for g in gpus if g.arch)
    missing = [a for a in dict.fromkeys(archs) if a not in wheels.archs]
    if not archs or missing:
        return None, (
            f"ROCm {wheels.rocm} (the new release stream) is installed: AMD's wheels for it have no device extra "
            f"for {', '.join(missing) or 'these GPUs'}"
        )
    route = AmdRoute(
        wheels.rocm, wheels.index_url, wheels.requirement(archs), wheels.torch[1:], wheels.source, wheels.confirmed
    )
    return route, None


def _arch_notes(gpus: list[GpuArch], m: Matrices) -> list[str]:
    """What the data records about older wheels for these targets (the last that ran on them)."""
    out = []
    for arch in dict.fromkeys(g.arch for g in gpus if g.arch):
        note = m.torch_arch_note(arch)
        if note is None:
            continue
        last = (
            f"last official wheel that ran on {arch}: torch {note.last_torch} {note.last_variant}"
            if note.last_torch and note.last_variant
            else f"no bundled release has a working {arch} wheel"
        )
        out.append(f"{last}. {note.note}")
    return out


def _unofficial(gpus: list[GpuArch], wanted: list[str], python: str | None, m: Matrices) -> Unofficial | None:
    """The HSA_OVERRIDE route for a single unsupported AMD target, with the newest wheel built for
    the target it runs as (same release rules as an official fit, on that target)."""
    targets = {g.arch for g in gpus if g.arch}
    if len(targets) != 1:
        return None
    override: GfxOverride | None = m.gfx_override(next(iter(targets)))
    if override is None:
        return None
    stand_in = [GpuArch("amd", g.pci_id, g.name, override.runs_as, g.via, g.integrated) for g in gpus]
    for ver in wanted:
        fitting = [
            v for v in m.torch_variants(ver) if v.stack == "rocm" and fit(v, stand_in, None, python, m)[0]
        ]
        if fitting:
            best = max(fitting, key=lambda v: _rank(v, None))  # the official pick's order
            return Unofficial(
                override.gfx,
                override.env,
                override.runs_as,
                best.torch,
                best.variant,
                best.index_url,
                override.risk,
                override.source,
                override.confirmed,
            )
    return Unofficial(
        override.gfx,
        override.env,
        override.runs_as,
        None,
        None,
        None,
        override.risk,
        override.source,
        override.confirmed,
    )


def _rule(
    variant: TorchVariant,
    mode: str | None,
    fitting: list[tuple[TorchVariant, str | None]],
    driver: str | None,
) -> str | None:
    """Which ranking rule chose ``variant`` among the fitting CUDA variants of its release."""
    unconfirmed = [v.variant for v, _md in fitting if not v.confirmed and v is not variant]
    if variant.confirmed and unconfirmed:
        return (
            f"rule: a variant whose data a primary source confirms is preferred: {variant.variant} over "
            f"{', '.join(unconfirmed)} (not confirmed: the index may lack the wheel)"
        )
    newer_minor = [
        v.variant
        for v, md in fitting
        if md == "minor" and vkey(v.stack_version or "0") > vkey(variant.stack_version or "0")
    ]
    if mode == "full" and newer_minor:
        return (
            f"rule: a CUDA version driver {driver} runs natively is preferred: {variant.variant} over "
            f"{', '.join(newer_minor)}, which would run only through minor-version compatibility"
        )
    if mode == "minor":
        return (
            f"rule: no variant of torch {variant.torch} runs natively on driver {driver}; {variant.variant} is "
            "the newest that runs through minor-version compatibility"
        )
    if len(fitting) > 1:
        return f"rule: the newest CUDA version that fits: {variant.variant}"
    return None


def _explain(
    variant: TorchVariant,
    mode: str | None,
    gpus: list[GpuArch],
    driver: str | None,
    facts: Facts,
    m: Matrices,
    fitting: list[tuple[TorchVariant, str | None]] | None = None,
) -> list[str]:
    out = []
    if variant.stack == "cuda":
        assert variant.stack_version is not None
        covered = sorted({cuda_covers(variant, g.arch or "") or "" for g in gpus} - {""})
        out.append(
            f"{variant.variant} is built for {', '.join(covered)} (of {', '.join(variant.archs + variant.ptx)})"
        )
        need = m.min_driver(variant.stack_version)
        floor = m.minor_compat_driver(variant.stack_version)
        if mode == "full":
            out.append(f"driver {driver} >= {need}, CUDA {variant.stack_version}'s minimum")
        elif mode == "minor":
            out.append(
                f"driver {driver} runs CUDA {variant.stack_version} through minor-version compatibility "
                f"(>= {floor}); {need or 'its minimum'} or newer gives full support"
            )
        else:
            out.append(f"install an NVIDIA driver >= {need or floor or '?'} for CUDA {variant.stack_version}")
        rule = _rule(variant, mode, fitting or [], driver)
        if rule:
            out.append(rule)
        if variant.find_links:
            out.append(
                f"torch {variant.torch}'s own install page uses pip -f {variant.find_links}; the index above is "
                "the per-variant index of the same wheels"
            )
    elif variant.stack == "rocm":
        out.append(f"{variant.variant} is built for {', '.join(sorted({g.arch or '' for g in gpus}))}")
        system = [t.version for t in facts.toolkits.rocm]
        runtime = (
            f"the wheel installs ROCm {variant.stack_version}'s runtime from pip ({variant.rocm_from_pip})"
            if variant.rocm_from_pip
            else f"the wheel bundles its own ROCm {variant.stack_version} runtime"
        )
        out.append(
            f"{runtime}; it needs only the amdgpu kernel driver"
            + (f" (system ROCm {', '.join(system)} is not used by it)" if system else "")
        )
    if variant.stack != "cuda" and variant.find_links:
        out.append(
            f"torch {variant.torch}'s own install page uses pip -f {variant.find_links}; the index above is "
            "the per-variant index of the same wheels"
        )
    if not variant.python:
        out.append(f"the Python versions of torch {variant.torch} are not stated by the sources read")
    if not variant.confirmed:
        out.append(
            f"the data for torch {variant.torch} {variant.variant} is not confirmed by a primary source "
            "(see its notes: gpuenv matrix show torch)"
        )
    return out
