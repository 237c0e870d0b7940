"""What an installed PyTorch build has kernels for: its arch list (as torch reports it, else its
official variant's), and which GPUs it lacks, judged from the best evidence the facts hold. Pure
functions of the facts and the matrices, shared by the torch checks (torch.arch-missing,
torch.driver-too-old) and ``gpuenv torch``'s rule (wheelfit), so that they never disagree.
"""

from __future__ import annotations

from gpuenv.facts import Facts, Gpu
from gpuenv.resolve import gpuinfo, toolkitpaths, wheelfit
from gpuenv.resolve import inventory as inv

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import Torch
    from gpuenv.matrices import Matrices, TorchVariant


def cuda_arch_ok(cc: str, archs: tuple[str, ...] | list[str]) -> bool:
    """Does code compiled for ``archs`` (sm_XY cubins, compute_XY PTX) run on compute capability
    ``cc``? The rule is wheelfit's (``gpuenv torch`` and the doctor must never disagree)."""
    return wheelfit.covers(archs, gpuinfo.sm(cc)) is not None


def gpu_fits(gpu: Gpu, matrices: Matrices | None, archs: tuple[str, ...] | list[str]) -> bool | None:
    """None when the GPU's architecture is unknown."""
    if gpu.vendor == "nvidia":
        cc = gpuinfo.compute_capability(gpu, matrices)
        return None if cc is None else cuda_arch_ok(cc, archs)
    gfx = gpuinfo.gfx_target(gpu, matrices)
    return None if gfx is None else gfx.split(":")[0] in archs


def official_variant(torch: Torch, matrices: Matrices | None) -> TorchVariant | None:
    """The bundled official variant of an installed '2.9.0+rocm6.4' build, or None."""
    version, _, local = (torch.version or "").partition("+")
    if matrices is None or not local:
        return None
    return next((v for v in matrices.torch_variants(version) if v.variant == local), None)


def hollow(gpus: list[Gpu], matrices: Matrices | None, listed_only: tuple[str, ...]) -> list[Gpu]:
    """The AMD GPUs whose target a wheel lists but ships no rocBLAS kernels for
    (``archs_without_kernels``: the first matmul aborts)."""
    return [
        g
        for g in gpus
        if g.vendor == "amd" and (gfx := gpuinfo.gfx_target(g, matrices)) and gfx.split(":")[0] in listed_only
    ]


def installed_archs(facts: Facts, matrices: Matrices | None) -> tuple[str, ...] | None:
    """The architectures the installed wheel was built for: as torch reported them, else the
    bundled arch list of its official variant ('2.7.0+cu128' -> cu128's list)."""
    torch = facts.python.torch if facts.python else None
    if torch is None:
        return None
    if torch.arch_list:
        return tuple(torch.arch_list)
    official = official_variant(torch, matrices)
    return tuple(official.archs) + tuple(official.ptx or ()) if official else None


def missing_from(
    facts: Facts, matrices: Matrices | None, torch: Torch, gpus: list[Gpu], build: str | None
) -> tuple[list[Gpu], str]:
    """(GPUs the installed build has no kernels for, how that is known), judged from the best
    evidence the facts hold: the build's own arch list, its official variant's list, what the
    CUDA it was built with can compile, the official builds of its release (when the build is
    not named), and for ROCm builds targets no official ROCm wheel ever carried."""
    archs = installed_archs(facts, matrices)
    if archs:
        how = "the arch list torch reports" if torch.arch_list else "the official wheel's arch list"
        missing = [g for g in gpus if gpu_fits(g, matrices, archs) is False]
        official = official_variant(torch, matrices)
        listed_only = official.archs_without_kernels if official else ()
        empty = [g for g in hollow(gpus, matrices, listed_only) if g not in missing]
        how = f"{how}: {', '.join(archs)}"
        if official and empty:
            how += (
                f"; the official {official.variant} wheel lists {', '.join(official.archs_without_kernels)} but its "
                "bundled rocBLAS has no kernels for them (the first matmul aborts)"
            )
        return missing + empty, how
    if matrices is None:
        return [], ""
    if build == "cuda" and torch.cuda:
        tk = toolkitpaths.toolkit_for(matrices, torch.cuda)
        if tk is not None and tk.compute_capabilities:
            ccs = tk.compute_capabilities
            out = [
                g
                for g in gpus
                if (cc := gpuinfo.compute_capability(g, matrices)) and not cuda_arch_ok(cc, [gpuinfo.sm(c) for c in ccs])
                and not ptx_possible(cc, ccs)
            ]
            return out, (
                f"built with CUDA {torch.cuda}, which compiles for compute capability "
                f"{ccs[0]} to {ccs[-1]} only"
            )
    release = inv.torch_release(torch)
    stack = {"nvidia": "cuda", "amd": "rocm"}[gpus[0].vendor] if gpus else None
    if build in (None, stack) and release and stack:
        variants = [v for v in matrices.torch_variants(release) if v.stack == stack]
        if variants:
            fits = [
                g
                for g in gpus
                if any(
                    gpu_fits(g, matrices, tuple(v.archs) + tuple(v.ptx or ()))
                    and not hollow([g], matrices, v.archs_without_kernels)
                    for v in variants
                )
            ]
            known = [g for g in gpus if gpu_fits(g, matrices, ()) is not None]
            return [g for g in known if g not in fits], (
                f"no official {release} {stack.upper() if stack == 'cuda' else 'ROCm'} wheel has them: "
                + "; ".join(f"{v.variant}: {', '.join(v.archs)}" for v in variants)
            )
    if build == "rocm" or (build is None and stack == "rocm"):
        ever = {a for ver in matrices.torch_versions() for v in matrices.torch_variants(ver) if v.stack == "rocm" for a in v.archs}
        out = [g for g in gpus if (gfx := gpuinfo.gfx_target(g, matrices)) and gfx.split(":")[0] not in ever]
        return out, "no official PyTorch ROCm wheel has ever been built for them"
    return [], ""


def ptx_possible(cc: str, supported: tuple[str, ...]) -> bool:
    """Left unjudged: a GPU newer than every target of a toolkit that ships PTX could still JIT it.
    PyTorch's builds put PTX only on their newest target; without the arch list, a GPU of the
    same major as the toolkit's newest target may run it, so it is not called missing."""
    newest = inv.version_tuple(supported[-1])
    gpu = inv.version_tuple(cc)
    return bool(newest and gpu) and gpu > newest and gpu[0] == newest[0]
