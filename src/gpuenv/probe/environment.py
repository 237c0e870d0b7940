"""Environment variables that change which GPU stack a process sees (live machine only)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.probe.host import Sysroot

VARIABLES = (
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "HSA_OVERRIDE_GFX_VERSION", "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH",
    "ROCM_PATH", "HIP_PATH", "PYTORCH_ROCM_ARCH", "TORCH_CUDA_ARCH_LIST", "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES", "CUDA_DEVICE_ORDER",
    # Which toolkit and host compiler a build uses (torch.utils.cpp_extension, CMake, nvcc).
    "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "ROCM_HOME", "HIP_PLATFORM", "NVCC_CCBIN", "CUDAHOSTCXX",
    "CC", "CXX", "HIP_CLANG_PATH",
    # A batch scheduler's job, and the GPUs it allocated to it (none set: none allocated).
    "SLURM_JOB_ID", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE",
)  # fmt: skip
# Variables that decide where downloads come from and whom they trust (proxies, CA bundles, pip's
# index): recorded by name only, set or not (``downloads``); a value (a proxy's password, a token
# in an index URL) is never kept.
DOWNLOAD_VARIABLES = (
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy",
    "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CERT", "PIP_CLIENT_CERT", "PIP_FIND_LINKS",
    "PIP_CONFIG_FILE", "PIP_NO_INDEX",
)  # fmt: skip
# Variables naming one toolkit directory: where they lead is recorded (``path_targets``).
HOME_VARIABLES = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "ROCM_PATH", "ROCM_HOME", "HIP_PATH")
_TOOLKIT_MARKERS = ("cuda", "rocm", "nvidia", "hip")


def select(environ: dict[str, str]) -> dict[str, str]:
    """The GPU-relevant variables; PATH reduced to its toolkit entries (kept in order)."""
    out = {k: environ[k] for k in VARIABLES if k in environ}
    path = [p for p in environ.get("PATH", "").split(":") if _toolkit_dir(p)]
    if path:
        out["PATH"] = ":".join(path)
    return out


def downloads(environ: dict[str, str]) -> dict[str, bool]:
    """Each of DOWNLOAD_VARIABLES: whether it is set (to anything but the empty string). Names
    only: the values are redacted by never being read into the facts."""
    return {name: bool(environ.get(name)) for name in DOWNLOAD_VARIABLES}


def _toolkit_dir(path: str) -> bool:
    """A directory of a GPU toolkit: one of its components names it (/usr/local/cuda-12.8/bin,
    /opt/rocm/bin), not merely contains the letters (/home/u/shipping/bin)."""
    return any(part.lower().startswith(_TOOLKIT_MARKERS) for part in path.split("/"))


def path_targets(host: Sysroot, environ: dict[str, str] | None) -> dict[str, str | None]:
    """Where the toolkit paths lead: the directories HOME_VARIABLES name and the toolkit entries of
    PATH and LD_LIBRARY_PATH (from ``environ``, the selected variables; None under --root), and
    the /usr/local/cuda* and /opt/rocm* links of the machine. The real path as the machine sees
    it, or None for a path that does not exist."""
    wanted: list[str] = []
    for key in HOME_VARIABLES:
        if environ and environ.get(key):
            wanted.append(environ[key])
    for key in ("PATH", "LD_LIBRARY_PATH"):
        for entry in (environ or {}).get(key, "").split(":"):
            if entry and _toolkit_dir(entry):
                wanted.append(entry)
    for parent, prefix in (("/usr/local", "cuda"), ("/opt", "rocm")):
        for name in host.listdir(parent):
            if name.startswith(prefix) and host.is_link(f"{parent}/{name}"):
                wanted.append(f"{parent}/{name}")
    out: dict[str, str | None] = {}
    for path in wanted:
        norm = path.rstrip("/") or "/"
        if norm in out or not norm.startswith("/"):
            continue
        out[norm] = _real(host, norm)
    return out


def _real(host: Sysroot, path: str) -> str | None:
    import os

    try:
        resolved = os.path.realpath(host.path(path))
    except OSError:
        return None
    if not os.path.exists(resolved):
        return None
    if host.root == "/":
        return resolved
    rel = os.path.relpath(resolved, host.root)
    return "/" if rel == "." else "/" + rel
