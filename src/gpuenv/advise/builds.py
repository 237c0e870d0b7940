"""Build files: what the CUDA build asks for (HIPIFY does not port it), and evidence of a ROCm build.

CMake (CMakeLists.txt, *.cmake): ``LANGUAGES CUDA``, ``enable_language(CUDA)``,
``find_package(CUDAToolkit)``, ``CUDA::cublas`` targets, CUDA architectures. Python build
scripts (setup*.py): nvcc's ``-gencode``/``arch=compute_XX``, ``sm_90a`` targets. Each is
``construct:cuda-build`` (work). A ROCm branch of either (``if(USE_ROCM)``, ``enable_language(HIP)``,
``if torch.version.hip:`` in setup.py) is evidence that the project builds for ROCm; what sits
inside it is the port, and what sits in its other side is covered. Pure functions of text.
"""

from __future__ import annotations

import re

from gpuenv.advise.model import Hit
from gpuenv.advise.regions import CUDA, HIP, cmake_sides, python_side

BUILD_RULE = "construct:cuda-build"

_CMAKE_CUDA = re.compile(
    r"\bLANGUAGES\b[^)\n]*\bCUDA\b|\benable_language\s*\(\s*CUDA\b|\bfind_package\s*\(\s*(?:CUDAToolkit|CUDA)\b"
    r"|\bCUDA::\w+|\bCMAKE_CUDA_ARCHITECTURES\b|\bCUDA_ARCHITECTURES\b|\bcuda_add_(?:library|executable)\b"
    r"|\bCUDA_NVCC_FLAGS\b|-gencode\b|\bsm_\d+[af]?\b",
    re.IGNORECASE,
)
_CMAKE_ROCM = re.compile(
    r"\benable_language\s*\(\s*HIP\b|\bLANGUAGES\b[^)\n]*\bHIP\b|\bfind_package\s*\(\s*(?:hip|HIP|rocm\w*|hipblas\w*)\b"
    r"|\bhip::(?:host|device|amdhip64)\b|\bLANGUAGE\s+HIP\b|\bCMAKE_HIP_ARCHITECTURES\b|\bhip_add_\w+\b"
    r"|\b(?:else)?if\s*\([^)\n]*(?:USE_ROCM|\w*_HIP\b|ROCM\w*|STREQUAL\s+\"?HIP\b)"
)
_PY_CUDA = re.compile(r"-gencode\b|\barch=compute_\d+|\bsm_\d+[af]?\b|--generate-code\b")
_PY_ROCM = re.compile(r"torch\.version\.hip\b|\b\w*version\.hip\b|\bROCM_HOME\b|\bIS_HIP_EXTENSION\b|\bUSE_ROCM\b|\bis_rocm\w*|\bhipify\w*"
                      r"|\bBUILD_TARGET\b[^\n]*rocm|--offload-arch\b", re.IGNORECASE)  # fmt: skip


def is_cmake(name: str) -> bool:
    low = name.lower()
    return low == "cmakelists.txt" or low.endswith(".cmake")


def scan_cmake(path: str, text: str) -> tuple[list[Hit], str | None]:
    """(CUDA build hits outside ROCm branches; the first ROCm evidence as 'file:line what')."""
    lines = text.splitlines()
    has_cuda = _CMAKE_CUDA.search(text) is not None
    has_rocm = _CMAKE_ROCM.search(text) is not None
    if not has_cuda and not has_rocm:
        return [], None
    sides = cmake_sides(lines) if has_rocm else [None] * len(lines)
    hits: list[Hit] = []
    evidence = None
    for n, (raw, side) in enumerate(zip(lines, sides, strict=True), 1):
        code = raw.split("#", 1)[0]
        if not code.strip():
            continue
        if evidence is None and (m := _CMAKE_ROCM.search(code)):
            evidence = f"{path}:{n} {_short(m.group())}"
        if side == HIP or not has_cuda:
            continue
        m = _CMAKE_CUDA.search(code)
        if m is not None:
            hits.append(Hit(BUILD_RULE, code.strip()[:120], path, n, "build", True, 1, "", side == CUDA))
    return hits, evidence


def scan_build_script(path: str, text: str) -> tuple[list[Hit], str | None]:
    """(nvcc architecture flags outside ROCm branches; the first ROCm evidence) of a setup*.py."""
    has_rocm = _PY_ROCM.search(text)
    if _PY_CUDA.search(text) is None and has_rocm is None:
        return [], None
    lines = text.splitlines()
    hits: list[Hit] = []
    evidence = None
    if has_rocm is not None:
        line = text.count("\n", 0, has_rocm.start()) + 1
        evidence = f"{path}:{line} {has_rocm.group()}"
    for n, raw in enumerate(lines, 1):
        code = raw.split("#", 1)[0]
        m = _PY_CUDA.search(code)
        if m is None:
            continue
        side = python_side(lines, n - 1) if has_rocm is not None else None
        if side == HIP:
            continue
        hits.append(Hit(BUILD_RULE, code.strip()[:120], path, n, "build", True, 1, "", side == CUDA))
    return hits, evidence


def _short(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= 60 else s[:57] + "..."
