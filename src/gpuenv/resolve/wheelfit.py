"""Which GPU a PyTorch wheel's compiled code runs on, and which driver runs its CUDA: the rules
``gpuenv torch`` chooses by and the doctor's torch checks judge by (pure, no I/O).

A wheel fits every GPU of the chosen vendor when
- NVIDIA: the GPU's compute capability is covered by the wheel's compiled code: an sm_XY cubin
  runs on the same major version with an equal or higher minor (CUDA binary compatibility), and a
  compute_XY PTX entry is JIT-compiled for any higher compute capability (both rules from
  cuda.json ``binary_compatibility``). Only PTX the wheel's build list names is counted (cu129 and
  later "+PTX"); a third-party sighting of compute_120 PTX in 2.7 cu128 is not.
- NVIDIA: the driver runs the wheel's CUDA, at its full minimum or through minor-version
  compatibility (the wheels bundle the CUDA runtime, so only the driver matters). With no driver
  yet, the wheel is judged by architecture alone and the reasons say which driver it will need.
- AMD: the GPU's gfx target is in the wheel's gfx list and the wheel's bundled libraries have
  kernels for it (``archs_without_kernels``: ROCm 6.4/7.x wheels list gfx900/gfx906 but their
  rocBLAS has none, so the first matmul aborts). No compatibility across gfx targets: the
  HSA_OVERRIDE_GFX_VERSION route is unofficial and never a fit; where the data records it for a
  target, the Choice shows it apart (``unofficial``) and the exit status stays 1.
- the Python the facts name (if any) is one the release ships wheels for (not checked for a
  release whose Python versions the sources do not state).
"""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.matrices import Matrices, TorchVariant
from gpuenv.standins.record import record


@record(frozen=True)
class GpuArch:
    """One GPU as the wheel choice sees it."""

    vendor: str
    pci_id: str
    name: str
    arch: str | None  # "sm_120", "gfx1201"; None when no source knows it
    via: str  # where arch came from: "facts" (NVML/KFD) or "matrices" (PCI id)
    integrated: bool = False


# -- compiled code ----------------------------------------------------------------------------


_CODE = r"(sm|compute)_(\d+)(\d)([a-z]?)"


def _cc(code: str) -> tuple[int, int] | None:
    """ "sm_120" / "compute_86" / "sm_90a" -> (12, 0) / (8, 6) / (9, 0): the last digit is the
    minor; None for anything else (a torch arch list may hold entries gpuenv does not know)."""
    m = re.fullmatch(_CODE, code)
    return (int(m.group(2)), int(m.group(3))) if m else None


def covers(codes: tuple[str, ...] | list[str], sm: str) -> str | None:
    """The entry of a compiled-code list (cubins ``sm_XY``, PTX ``compute_XY``, mixed as
    torch.cuda.get_arch_list() prints them) that runs on a GPU ``sm``, or None.

    The one rule gpuenv uses for PyTorch's CUDA code, shared by ``gpuenv torch`` and the doctor's
    torch checks: a cubin runs on the same major version with an equal or higher minor (an
    arch-specific ``sm_90a`` cubin only on exactly that GPU); PTX counts for a GPU of the same
    major and an equal or higher minor. The driver could JIT older PTX across majors too, but a
    PyTorch build does not run there: the CUDA libraries it bundles (cuBLAS, cuDNN of the build's
    CUDA) have no code for the newer major, and torch's own check (torch.cuda._check_cubins)
    counts only kernels of the GPU's major. Real reports agree: RTX 3090s (sm_86) fail on builds
    listing compute_37 PTX (tests/cases: pytorch-46794, spice-26). A cubin is preferred to PTX,
    the closest one first."""
    gpu = _cc(sm)
    if gpu is None:
        return None
    cubins, ptx = [], []
    for code in codes:
        cc = _cc(code)
        if cc is None:
            continue
        if code.startswith("compute_"):
            if cc[0] == gpu[0] and cc <= gpu:
                ptx.append((cc, code))
        elif code.endswith("a"):  # arch-specific features: no forward compatibility at all
            if cc == gpu:
                cubins.append((cc, code))
        elif cc[0] == gpu[0] and cc[1] <= gpu[1]:
            cubins.append((cc, code))
    if cubins:
        return max(cubins)[1]
    return max(ptx)[1] if ptx else None


def cuda_covers(variant: TorchVariant, sm: str) -> str | None:
    """The wheel entry that runs on ``sm`` ("sm_86" for an sm_89 GPU, "compute_120" PTX), or None.
    Only PTX the wheel's build list names counts (``variant.ptx``)."""
    return covers(tuple(variant.archs) + tuple(variant.ptx), sm)


def driver_fit(matrices: Matrices, driver: str, cuda: str, via_ptx: list[str]) -> tuple[str | None, str]:
    """How an NVIDIA driver runs code built with CUDA ``cuda``: ("full" | "minor", "") or
    (None, why not). Minor-version compatibility covers cubins only: GPUs that would run through
    PTX (``via_ptx``) need the toolkit's full minimum driver, since an older driver cannot JIT
    newer PTX. The one driver rule of ``gpuenv torch`` and the doctor's torch.driver-too-old."""
    mode = matrices.driver_runs_cuda(driver, cuda)
    need = matrices.min_driver(cuda)
    if mode == "minor" and via_ptx:
        return None, (
            f"{', '.join(via_ptx)} would run through CUDA {cuda} PTX, which needs "
            f"driver >= {need or '?'}; this one is {driver}"
        )
    if mode is None:
        floor = matrices.minor_compat_driver(cuda)
        return None, (
            f"CUDA {cuda} needs driver >= {need or '?'} "
            f"(or >= {floor or '?'} with minor-version compatibility); this one is {driver}"
        )
    return mode, ""


def gpu_archs(facts: Facts, matrices: Matrices, vendor: str) -> list[GpuArch]:
    """Each GPU of ``vendor`` with its architecture: its compute capability or gfx target, and
    whether it is integrated, as gpuinfo reads them (the one reading the checks use, #43)."""
    gpus = facts.gpus_of(vendor)
    if not gpus:
        return []
    # Imported past the return: `gpuenv torch` on a box without this vendor's GPU loads no more
    # than it did (two modules, about 1M instructions; bench/bench_all.py).
    from gpuenv.resolve import gpuinfo

    out = []
    for g in gpus:
        if vendor == "nvidia":
            known = matrices.nvidia_gpu(g.pci_id)
            name = g.name or (known.name if known else g.pci_id)
            cc = gpuinfo.compute_capability(g, matrices)
            via = "facts" if g.compute_capability else "matrices" if cc else "unknown"
            out.append(GpuArch(vendor, g.pci_id, name, gpuinfo.sm(cc) if cc else None, via))
        else:
            amd = matrices.amd_gpu(g.pci_id)
            name = g.name or (amd.name if amd else g.pci_id)
            gfx = gpuinfo.gfx_target(g, matrices)
            via = "facts" if g.gfx_target else "matrices" if gfx else "unknown"
            out.append(GpuArch(vendor, g.pci_id, name, gfx, via, gpuinfo.is_integrated(g, matrices)))
    return out


# -- a wheel on these GPUs ---------------------------------------------------------------------


def fit(
    variant: TorchVariant, gpus: list[GpuArch], driver: str | None, python: str | None, matrices: Matrices
) -> tuple[bool, str, str | None]:
    """(fits, why, driver mode "full"/"minor"/None)."""
    if python and variant.python and python not in variant.python:
        return False, f"no wheel for Python {python} (ships {', '.join(variant.python)})", None
    for g in gpus:
        assert g.arch is not None
        if variant.stack == "cuda":
            if not variant.archs:
                return False, "its arch list is not known (not read from a build script)", None
            if cuda_covers(variant, g.arch) is None:
                return False, f"no {g.arch} code (has {', '.join(variant.archs + variant.ptx)})", None
        elif g.arch in variant.archs_without_kernels:
            return (
                False,
                (
                    f"lists {g.arch}, but its bundled rocBLAS has no {g.arch} kernels (the first matmul aborts)"
                ),
                None,
            )
        elif g.arch not in variant.archs:
            return False, f"no {g.arch} code (has {', '.join(variant.archs)})", None
    mode = None
    if variant.stack == "cuda" and driver:
        assert variant.stack_version is not None
        via_ptx = [g.arch or "" for g in gpus if (cuda_covers(variant, g.arch or "") or "").startswith("compute_")]
        mode, why = driver_fit(matrices, driver, variant.stack_version, via_ptx)
        if mode is None:
            return False, why, None
    return True, "fits", mode

