"""The bundled compatibility matrices: loaded once per process, validated, and asked questions.

CONTRACT: the records and the public methods of ``Matrices`` below are the interface the
resolver, ``gpuenv torch`` and the planner are built against. Fields were only ever added (with
defaults); ``CudaToolkit.min_driver`` may be None where NVIDIA's table was not found (13.4, 13.5);
``CudaToolkit.minor_compat_driver`` is None before CUDA 11 (no minor-version compatibility);
``NvidiaArch.first_cuda`` may be None (not stated), per-capability overrides in
``first_cuda_by_cc``/``last_cuda_by_cc``; ``TorchVariant.archs_without_kernels`` lists targets the
wheel names but cannot run (``usable_archs`` leaves them out); ``TorchVariant.python`` may be empty
(not stated by the sources). ``torch_arch_note`` and ``gfx_override`` answer what older wheels did
for a target and the unofficial HSA_OVERRIDE_GFX_VERSION route.

Versions are strings as the vendors print them ("7.2.4", "12.8", "570.133.07", "2.7.0"); compare
them with ``vkey`` (a cheap numeric key) or ``packaging.version.Version`` (imported lazily).

Where the data comes from: ``$GPUENV_STATE_DIR/matrices`` (or /var/lib/gpuenv/matrices as root,
~/.cache/gpuenv/matrices otherwise) when ``gpuenv matrix update`` installed a bundle there and it
parses; else the copy shipped inside gpuenv (``gpuenv.standins.bundled``: the package gpuenv._matrices),
read a subject, and of rocm.json, amd_gpus.json and torch.json an entry, at a time as asked for
(the tests validate it whole; an installed bundle is parsed whole before use).

The package, by what each module holds: ``records`` (the records, ``MatrixError``, ``vkey``),
``query`` (``Matrices`` and its questions), ``reader`` (the JSON read, the field reader and the
patterns), ``parsers`` (one per file; rocm.json's in ``parsers_rocm``), ``index`` (the shipped
entries of rocm.json, amd_gpus.json and torch.json located by their indexes (rocm.index.json, ...), read one at a time) and ``bundles``
(locating, trusting and caching bundles: ``load``). Import the names below from ``gpuenv.matrices``.
"""

from gpuenv.matrices.bundles import (
    FILES,
    OPTIONAL_FILES,
    bundled_dir,
    clear_cache,
    load,
    parse_dir,
    state_dir,
)
from gpuenv.matrices.parsers import SUBJECTS
from gpuenv.matrices.query import Matrices
from gpuenv.matrices.reader import MAX_FILE, Reader
from gpuenv.matrices.records import (
    AmdGpu,
    AmdWheels,
    BundleInfo,
    CudaToolkit,
    DriverBranch,
    GfxOverride,
    GpuLimit,
    HostCompilers,
    MatrixError,
    NvidiaArch,
    NvidiaGpu,
    OsSupport,
    RocmRelease,
    TorchArchNote,
    TorchVariant,
    vkey,
)

__all__ = [
    "FILES", "MAX_FILE", "OPTIONAL_FILES", "SUBJECTS", "AmdGpu", "AmdWheels", "BundleInfo", "CudaToolkit", "DriverBranch",
    "GfxOverride", "GpuLimit", "HostCompilers", "MatrixError", "Matrices", "NvidiaArch", "NvidiaGpu", "OsSupport", "Reader",
    "RocmRelease", "TorchArchNote", "TorchVariant", "bundled_dir", "clear_cache", "load", "parse_dir", "state_dir",
    "vkey",
]  # fmt: skip
