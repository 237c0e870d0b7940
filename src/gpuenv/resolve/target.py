"""What the checks judge against: an explicit install target, the installed stack, or what
`gpuenv install auto` would choose on a bare box.

The planner imports ``choose_auto``, ``fitting_rocm`` and ``newest_cuda_for`` so that `install auto`
and `doctor` never disagree about the target. All functions are pure (facts and matrices in,
answer out).
The ``basis`` in ``Target.extra`` says where the target came from: "explicit" (--target),
"installed" (the stack found on the machine), "auto" (bare box: what install auto would pick) or
"none" (nothing to judge: no GPU stack and no GPU a stack could serve, or both vendors).
"""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.matrices import routes
from gpuenv.resolve import facts_view, gpuinfo, toolkitpaths
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Target
from gpuenv.standins.record import replace

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Container, Iterable

    from gpuenv.facts import Gpu
    from gpuenv.matrices import CudaToolkit, GpuLimit, Matrices, OsSupport, RocmRelease
    from gpuenv.matrices.routes import RocmRoute


class TargetError(ValueError):
    """A --target naming a release the matrices do not know (a usage error)."""


def choose_auto(facts: Facts, matrices: Matrices | None) -> Target | None:
    """The stack `install auto` installs here: ROCm (``fitting_rocm``) for AMD discrete GPUs, CUDA
    (``newest_cuda_for``) for NVIDIA GPUs; None when there are both vendors (the user must choose)
    or no GPU a stack could serve. An AMD integrated GPU alone counts only when a bundled ROCm
    release lists its gfx target (e.g. Strix Halo). Without matrices (None) the stack is chosen
    from the GPUs alone and the version left None."""
    nvidia = facts.gpus_of("nvidia")
    amd = gpuinfo.amd_discrete(facts, matrices)
    if not amd and matrices is not None:
        integrated = gpuinfo.amd_integrated(facts, matrices)
        amd = tuple(g for g in integrated if matrices.newest_rocm_for(gpuinfo.gfx_target(g, matrices) or ""))
    if nvidia and amd:
        return None
    if amd:
        if matrices is None:
            return Target(stack="rocm", version=None, extra={"basis": "auto"})
        release = auto_rocm(facts, matrices).version
        said = {"key": key_to_trust(matrices, release), "newer": newer_with_trust(facts, matrices, release)}
        return Target(stack="rocm", version=release, extra={"basis": "auto", **{k: v for k, v in said.items() if v}})
    if nvidia:
        version = newest_cuda_for(facts, matrices) if matrices is not None else None
        return Target(stack="cuda", version=version, extra={"basis": "auto"})
    return None


def auto_rocm(
    facts: Facts, matrices: Matrices, found: Iterable[RocmRoute] | None = None, trust: str | None = None
) -> RocmRelease:
    """The ROCm release `install auto` (and `install rocm` without --version) installs here, one
    answer for the doctor and the planner (#42): ``fitting_rocm`` over the releases gpuenv can
    install by default (``routes.installable``: a repository route, a key it may pin without
    --trust-unconfirmed-key, a directory for this OS). ``found``: the planner's routes (repos.json);
    the doctor's are the matrices' copy of them. ``trust``: --trust-unconfirmed-key's fingerprint."""
    found = matrices.rocm_routes() if found is None else found
    if not found:  # a bundle from before #42 (no routes in rocm.json): not narrowed, as then
        return fitting_rocm(facts, matrices)
    allowed = routes.choosable(found, matrices.default_rocm().version, *inv.repo_os(facts), trust)
    return fitting_rocm(facts, matrices, allowed)


def key_to_trust(matrices: Matrices, version: str) -> str | None:
    """One sentence when `install auto`'s release is pinned only with --trust-unconfirmed-key (its
    repository key's fingerprint is not confirmed by AMD, #42); None otherwise."""
    release = matrices.rocm_release(version)
    route = release.repository if release is not None else None
    flag = route.trust_flag() if route is not None else None
    if flag is None:
        return None
    return (
        f"install auto plans ROCm {version} only with --trust-unconfirmed-key {flag} "
        "(its repository key's fingerprint is not confirmed by AMD)"
    )


def newer_with_trust(
    facts: Facts, matrices: Matrices, version: str, found: Iterable[RocmRoute] | None = None
) -> str | None:
    """One sentence when a release newer than ``version`` (install auto's) would fit this machine
    were its repository key trusted with --trust-unconfirmed-key; None otherwise."""
    found = tuple(matrices.rocm_routes() if found is None else found)
    os_id, os_version = inv.repo_os(facts)
    pinned = {r.rocm for r in found if r.fingerprint and r.serves(os_id, os_version)}
    newer = fitting_rocm(facts, matrices, pinned)
    route = next((r for r in found if r.rocm == newer.version), None)
    flag = route.trust_flag() if route is not None else None
    if flag is None or not inv.older(version, newer.version):
        return None
    return (
        f"ROCm {newer.version} is newer and also fits this machine; install auto plans it only with "
        f"--trust-unconfirmed-key {flag} (its repository key's fingerprint is not confirmed by AMD)"
    )


def fitting_rocm(
    facts: Facts, matrices: Matrices, installable: Container[str] | None = None, newest: bool | None = None
) -> RocmRelease:
    """The ROCm release to install here when none is named (`install auto`, `install rocm`, a bare
    `--target rocm`): the default release when it lists every ROCm GPU's gfx target and this OS,
    else the newest release that does, else the default where it lists the GPUs on any OS, else
    the newest that does, else the default (the checks then say what does not fit:
    amd.gpu-unsupported, os.unsupported). A release fits this OS only where neither its entry's
    per-GPU limit nor, in the legacy stream, its Radeon terms leave the GPUs out. GPUs of
    unknown gfx target and an unknown OS do not narrow the choice. ``installable`` (the planner's:
    versions it has repository data for) leaves out the releases it cannot install, and then the
    newest fitting release wins over the default, whichever release stream it is in (#29: `install
    auto` plans the newest production release that supports the machine); ``newest`` asks for
    that order without the installable filter."""
    newest = installable is not None if newest is None else newest
    default = matrices.default_rocm()
    gpus = facts_view.rocm_gpus(facts, matrices)
    gfx = sorted({t for g in gpus if (t := gpuinfo.gfx_target(g, matrices))})
    os_id = inv.os_id(facts)
    os_version = inv.os_version(facts)

    def can_install(r: RocmRelease) -> bool:
        return installable is None or r.version in installable

    def fits_os(r: RocmRelease, os_id: str) -> bool:
        # A release whose entry for this OS (or for its point release: 7.14 on RHEL 9.4 leaves the
        # MI350P out) is limited to other GPUs (10.0 on Debian 12: named Instinct models), or whose
        # Radeon terms leave this OS out (6.3.3 for an RX 7900 XTX on Debian 12), does not fit; a
        # GPU the limit cannot judge does not narrow the choice.
        entry = r.os_support(os_id, os_version)
        point = inv.os_point(facts, entry.version) if entry is not None else None
        return not limited_out(entry, gpus, matrices, point)[0] and not any(
            facts_view.off_radeon_terms(r, t, os_id) for t in gfx
        )

    listed = matrices.rocm_releases_for(gfx, os_id, os_version) if os_id else []
    fits = [r for r in listed if os_id and can_install(r) and fits_os(r, os_id)]
    if newest and fits:
        return fits[-1]
    if default in fits:
        return default
    if fits:
        return fits[-1]
    # Nothing fits this OS (or it is not known): the default where it lists the GPUs, else the
    # newest release that does on any OS; the checks then say what does not fit.
    anywhere = [r for r in matrices.rocm_releases_for(gfx) if can_install(r)]
    if default in anywhere:
        return default
    return anywhere[-1] if anywhere else default


def limited_out(
    entry: OsSupport | None, gpus: Iterable[Gpu], matrices: Matrices, point: str | None = None
) -> tuple[tuple[Gpu, ...], tuple[Gpu, ...]]:
    """The GPUs an OS entry's per-GPU limit (``gpus_only``, and its limit for the machine's
    ``point`` release) leaves out, and those it cannot judge: their class, or their model where the
    limit names models, unknown; or, the point release unknown, one of the entry's point limits
    would not admit them. Both empty when the entry is not limited (or not known to be)."""
    if entry is None:
        return (), ()
    sure = [x for x in (entry.gpus_only, entry.point_limit(point)) if x is not None]
    # The point release not known: a GPU some point release leaves out may or may not be supported.
    maybe = list((entry.gpus_only_by_point or {}).values()) if point is None else []
    out: list[Gpu] = []
    unknown: list[Gpu] = []
    for g in gpus:
        verdicts = [admits(limit, g, matrices) for limit in sure]
        if False in verdicts:
            out.append(g)
        elif None in verdicts or any(admits(limit, g, matrices) is not True for limit in maybe):
            unknown.append(g)
    return tuple(out), tuple(unknown)


def admits(limit: GpuLimit, gpu: Gpu, matrices: Matrices) -> bool | None:
    """Whether an OS entry's per-GPU limit admits this GPU; None when its class (or its model,
    where the limit names models) is not known."""
    return limit.admits(gpuinfo.gpu_class(gpu, matrices), gpuinfo.instinct_models(gpu, matrices))


def newest_cuda_for(facts: Facts, matrices: Matrices) -> str | None:
    """Series ('12.8') of the newest bundled CUDA toolkit that supports every NVIDIA GPU's compute
    capability (GPUs of unknown capability do not narrow the choice)."""
    gpus = facts.gpus_of("nvidia")
    caps = {cc for g in gpus if (cc := gpuinfo.compute_capability(g, matrices))}
    toolkits = [t for t in matrices.cuda_toolkits() if t.confirmed and t.min_driver]
    branch = _last_branch(gpus, matrices)
    for tk in reversed(toolkits):
        if caps <= set(tk.compute_capabilities) and (branch is None or _runs_on(tk, branch)):
            return tk.series
    return toolkits[-1].series if toolkits else None


def _last_branch(gpus: Iterable[Gpu], matrices: Matrices) -> int | None:
    """The newest driver branch every GPU still runs (R470 for Kepler), None when not limited."""
    last: list[int] = []
    for g in gpus:
        arch_name = gpuinfo.nvidia_architecture(g, matrices)
        arch = matrices.nvidia_arch(arch_name) if arch_name else None
        nums = inv.version_tuple(arch.last_driver) if arch is not None and arch.last_driver else ()
        if nums:
            last.append(nums[0])
    return min(last, default=None)


def _runs_on(toolkit: CudaToolkit, branch: int) -> bool:
    """A toolkit runs on a driver branch at or above its minimum, or, within its major release,
    at or above the minor-version-compatibility floor."""
    nums = inv.version_tuple(toolkit.minor_compat_driver or toolkit.min_driver)
    return not nums or nums[0] <= branch


def resolve_version(stack: str, version: str | None, facts: Facts, matrices: Matrices) -> str | None:
    """A target version as the matrices know it; raises ValueError for one they do not.
    ROCm '7.2' means its newest bundled patch release."""
    if stack == "rocm":
        if not version:
            return fitting_rocm(facts, matrices).version
        known = matrices.rocm_release(version)
        if known is not None and inv.version_tuple(known.version)[
            : len(inv.version_tuple(version))
        ] == inv.version_tuple(version):
            return known.version
        # "6.4" is its newest patch release; "6.4.4", newer than the bundled matrices know, is
        # judged as the newest bundled release of its series (the checks' basis says so).
        wanted = version if inv.series(version) == version else inv.series(version)
        patches = [r.version for r in matrices.rocm_releases() if inv.series(r.version) == wanted]
        if patches:
            return patches[-1]
        bundled = ", ".join(r.version for r in matrices.rocm_releases())
        raise TargetError(f"unknown ROCm release {version!r}; bundled: {bundled}")
    if not version:
        return newest_cuda_for(facts, matrices)
    if toolkitpaths.toolkit_for(matrices, version):
        return version
    bundled = ", ".join(dict.fromkeys(t.series for t in matrices.cuda_toolkits()))
    raise TargetError(f"unknown CUDA version {version!r}; bundled: {bundled}")


def installed_target(facts: Facts) -> Target | None:
    """The stack installed here, judged as it is; None when none (or both with no way to tell)."""
    rocm, cuda = inv.has_rocm_stack(facts), inv.has_cuda_stack(facts)
    # A running NVIDIA driver is an installed stack even when no package owns it (a runfile
    # install, or a facts file without the package list): judge it, not a fresh install.
    cuda = cuda or bool(facts.nvidia and facts.nvidia.driver_version) or bool(facts.module_loaded("nvidia"))
    amd, nvidia = bool(facts.gpus_of("amd")), bool(facts.gpus_of("nvidia"))
    # A stack whose GPUs are gone while the other vendor's are here is leftovers (stack.leftovers
    # says so), not what this machine runs: judge the present GPUs' stack, or install auto's.
    rocm = rocm and not (nvidia and not amd)
    cuda = cuda and not (amd and not nvidia)
    if rocm and cuda:
        # Both installed: judge the one whose GPUs are present; stack.both-installed says the rest.
        if amd == nvidia:
            return None
        rocm, cuda = amd, nvidia
    if rocm:
        return Target(stack="rocm", version=inv.installed_rocm(facts), extra={"basis": "installed"})
    if cuda:
        versions = inv.installed_cuda(facts)
        return Target(
            stack="cuda", version=inv.series(versions[0]) if versions else None, extra={"basis": "installed"}
        )
    return None


def effective_target(facts: Facts, matrices: Matrices, target: Target) -> Target:
    """The target the checks use. Explicit --target: its version resolved (default ROCm release,
    or the newest CUDA every GPU supports). Otherwise the installed stack, else install auto's
    choice, else an empty target (basis "none"). ``target.torch`` is always kept."""
    if target.explicit and target.stack:
        version = resolve_version(target.stack, target.version, facts, matrices)
        return replace(target, version=version, extra={**target.extra, "basis": "explicit"})
    found = installed_target(facts) or (choose_auto(facts, matrices) if matrices is not None else None)
    if found is None:
        return Target(torch=target.torch, extra={"basis": "none"})
    if found.stack == "rocm" and found.version and matrices is not None:
        # An installed release the matrices lack: a newer patch of a bundled series is judged as
        # that series' newest; an older or unknown series is left unjudged (version None).
        try:
            version = resolve_version("rocm", found.version, facts, matrices)
        except TargetError:
            version = None
        extra = {**found.extra, **({"installed": found.version} if version != found.version else {})}
        found = replace(found, version=version, extra=extra)
    return replace(found, torch=target.torch)


def basis(target: Target) -> str:
    return target.extra.get("basis", "explicit" if target.explicit else "none")


def rocm_release(matrices: Matrices | None, target: Target) -> RocmRelease | None:
    """The ROCm release a rocm target names, or None (other stack, or a release not bundled)."""
    if target.stack != "rocm" or matrices is None or not target.version:
        return None
    return matrices.rocm_release(target.version)


def cuda_toolkit(matrices: Matrices | None, target: Target) -> CudaToolkit | None:
    if target.stack != "cuda" or matrices is None or not target.version:
        return None
    return toolkitpaths.toolkit_for(matrices, target.version)
