"""Environment variables that change which GPU stack a process sees (live machine only)."""

from __future__ import annotations

VARIABLES = (
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "HSA_OVERRIDE_GFX_VERSION", "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH",
    "ROCM_PATH", "HIP_PATH", "PYTORCH_ROCM_ARCH", "TORCH_CUDA_ARCH_LIST", "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES", "CUDA_DEVICE_ORDER",
)  # fmt: skip
_TOOLKIT_MARKERS = ("cuda", "rocm", "nvidia", "hip")


def select(environ: dict[str, str]) -> dict[str, str]:
    """The GPU-relevant variables; PATH reduced to its toolkit entries (kept in order)."""
    out = {k: environ[k] for k in VARIABLES if k in environ}
    path = [p for p in environ.get("PATH", "").split(":") if _toolkit_dir(p)]
    if path:
        out["PATH"] = ":".join(path)
    return out


def _toolkit_dir(path: str) -> bool:
    """A directory of a GPU toolkit: one of its components names it (/usr/local/cuda-12.8/bin,
    /opt/rocm/bin), not merely contains the letters (/home/u/shipping/bin)."""
    return any(part.lower().startswith(_TOOLKIT_MARKERS) for part in path.split("/"))
