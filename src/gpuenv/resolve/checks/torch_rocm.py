"""A ROCm build of PyTorch beside another ROCm release on the machine: whether the build runs on
the machine's ROCm libraries at all."""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check, code_named

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices

# PyTorch's own ROCm wheels (download.pytorch.org/whl/rocmX.Y[.Z], local version "+rocmX.Y[.Z]")
# copy the ROCm user space they were built with into torch/lib: libamdhip64, libhsa-runtime64,
# rocBLAS (with its Tensile kernel files), MIOpen, hipBLAS(Lt), rocFFT, RCCL, ... and set an RPATH
# (not RUNPATH) so that LD_LIBRARY_PATH does not override them. Source: pytorch/pytorch
# .ci/manywheel/build_rocm.sh @ 0155a3fe32cf (ROCM_SO_FILES, ROCBLAS_LIB_FILES, FORCE_RPATH=
# "--force-rpath"; read 2026-12-05), and before it pytorch/builder manywheel/build_rocm.sh @ 00ce5406ab81,
# the same lists from ROCm 5.x on.
BUNDLING_SOURCE = "https://github.com/pytorch/pytorch/blob/0155a3fe32cfca4e1099d66a35bb98df0e2b7bf9/.ci/manywheel/build_rocm.sh"
# ROCm 7.14 and later (TheRock) install ROCm itself from wheels beside torch (pytorch/pytorch#191688,
# matrices/sources/reference/matrices.json): not what the script above does, so not assumed.
_LAST_BUNDLING = (7, 13)
# Exactly the index's naming: AMD's own wheels ("+rocm7.2.0.lw.git…", repo.radeon.com) and
# distribution or source builds (no "+rocm") are not known to bundle, so they are not assumed to.
# Nightlies ("2.10.0.dev20250101+rocm7.0") come from the same script.
# A pattern, compiled (and cached by re) at its first use: only a machine with a ROCm torch needs it.
_INDEX_WHEEL = r"^\d+\.\d+(?:\.\d+)?(?:\.dev\d+|a\d+|b\d+|rc\d+)?\+rocm(\d+\.\d+(?:\.\d+)?)$"


def bundled_rocm(version: str | None) -> str | None:
    """'2.0.1+rocm5.4.2' -> '5.4.2': the ROCm release a PyTorch index wheel carries in itself;
    None for any other build."""
    m = re.match(_INDEX_WHEEL, (version or "").strip())
    if not m or inv.version_tuple(m.group(1))[:2] > _LAST_BUNDLING:
        return None
    return m.group(1)


@check(code="torch.rocm-bundled", area="torch", needs=("python.torch",))
def rocm_bundled(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    torch = facts.python.torch if facts.python else None
    if torch is None or not torch.hip:
        return
    wheel = inv.series(torch.hip)
    rocm = inv.installed_rocm(facts)
    system = inv.series(rocm)
    if not wheel or not system or wheel == system:
        return
    carried = bundled_rocm(torch.version)
    if carried:
        yield Finding(
            severity=Severity.INFO,
            title=f"torch {torch.version} runs on its own ROCm {wheel}, not the machine's ROCm {rocm}",
            detail=f"PyTorch's ROCm wheels carry the ROCm user space they were built with (HIP {torch.hip}: "
            "libamdhip64, libhsa-runtime64, rocBLAS and its kernels, MIOpen, hipBLAS, RCCL, ... in torch/lib, "
            f"found through an RPATH), so the installed ROCm {rocm} is not loaded by it and the difference "
            f"between {wheel} and {system} does not matter to this build. What it needs from the machine is an "
            f"amdgpu kernel driver its ROCm supports ({code_named('torch.rocm_mismatch')} judges that) and access to /dev/kfd. "
            f"It matters only for code built against the machine's ROCm {rocm} (a HIP extension compiled with "
            "its hipcc) and loaded into this torch.",
            fix=f"Nothing for torch itself. To build extensions for it, use ROCm {wheel} (ROCM_PATH), or install "
            f"the wheel built for ROCm {system} if the index has one: gpuenv torch",
            refs=(BUNDLING_SOURCE,),
        )
        return
    yield Finding(
        severity=Severity.INFO,
        title=f"torch {torch.version or '(version unknown)'} (HIP {torch.hip}) and the machine's ROCm {rocm} differ: "
        "whether that matters was not judged",
        detail=f"This torch is not a PyTorch index wheel ('+rocmX.Y'), so gpuenv cannot tell whether it carries "
        f"its own ROCm {wheel} libraries (as the index wheels do) or loads the machine's ROCm {rocm} "
        "(distribution and source builds link the system's ROCm; then the build and the libraries it loads are "
        "of different releases).",
        fix="python -c 'import torch, os; print(os.listdir(os.path.join(os.path.dirname(torch.__file__), \"lib\")))'"
        "  # libamdhip64.so there: bundled",
        refs=(BUNDLING_SOURCE,),
    )
