"""NVIDIA GPUs and driver through NVML (the real ``pynvml`` binding), live machine only.

NVML failures are facts, not crashes: each maps to one ``nvidia.nvml`` state.
"""

from __future__ import annotations

from gpuenv.standins.record import field, record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import TypeVar

    _T = TypeVar("_T")

# NVML return codes (nvml.h), named here so the mapping does not need pynvml imported.
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18

_STATES = {
    NVML_ERROR_NO_PERMISSION: "no_permission",
    NVML_ERROR_DRIVER_NOT_LOADED: "driver_not_loaded",
    NVML_ERROR_LIBRARY_NOT_FOUND: "not_installed",
    NVML_ERROR_LIB_RM_VERSION_MISMATCH: "version_mismatch",
}


@record(frozen=True)
class NvmlGpu:
    pci_id: str
    pci_slot: str | None
    name: str | None
    compute_capability: str | None
    memory_mib: int | None
    uuid: str | None


@record(frozen=True)
class NvmlResult:
    state: str
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    gpus: tuple[NvmlGpu, ...] = field(default_factory=tuple)
    persistence_mode: bool | None = None  # on for every GPU


def state_for(code: int | None, message: str) -> str:
    return _STATES.get(code, f"error: {message}") if code is not None else f"error: {message}"


def cuda_version(value: int) -> str:
    """NVML's CUDA driver version integer (12080) -> "12.8"."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def bus_id(text: str) -> str:
    """NVML's "00000000:41:00.0" -> sysfs's "0000:41:00.0"."""
    domain, _, rest = text.strip().lower().partition(":")
    return f"{int(domain, 16):04x}:{rest}" if rest else text.strip().lower()


def _text(value: object) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def query() -> NvmlResult:
    import sys

    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # the probe writes nothing
    try:
        import pynvml
    except ImportError:
        return NvmlResult("not_installed")
    finally:
        sys.dont_write_bytecode = saved
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return NvmlResult(state_for(getattr(exc, "value", None), _safe_str(exc)))
    except OSError as exc:
        return NvmlResult(f"error: {exc}")
    try:
        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        cuda = None
        try:
            cuda = cuda_version(pynvml.nvmlSystemGetCudaDriverVersion_v2())
        except pynvml.NVMLError:
            cuda = cuda_version(pynvml.nvmlSystemGetCudaDriverVersion())
        gpus, persistence = [], []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            pci = pynvml.nvmlDeviceGetPciInfo(handle)
            dev_id = pci.pciDeviceId
            pci_id = f"{dev_id & 0xFFFF:04x}:{dev_id >> 16 & 0xFFFF:04x}"
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            memory = _optional(lambda h=handle: pynvml.nvmlDeviceGetMemoryInfo(h).total // (1 << 20), pynvml)
            uuid = _optional(lambda h=handle: _text(pynvml.nvmlDeviceGetUUID(h)), pynvml)
            persistence.append(
                _optional(lambda h=handle: pynvml.nvmlDeviceGetPersistenceMode(h) == 1, pynvml)
            )
            gpus.append(
                NvmlGpu(
                    pci_id=pci_id,
                    pci_slot=bus_id(_text(pci.busId)),
                    name=_text(pynvml.nvmlDeviceGetName(handle)),
                    compute_capability=f"{major}.{minor}",
                    memory_mib=memory,
                    uuid=uuid,
                )
            )
        persistent = None if not persistence or None in persistence else all(persistence)
        return NvmlResult("ok", driver, cuda, tuple(gpus), persistent)
    except pynvml.NVMLError as exc:
        return NvmlResult(state_for(getattr(exc, "value", None), _safe_str(exc)))
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: S110 - shutting down a half-initialised NVML is best effort
            pass


# fn is called with no arguments; Callable[..., _T] because mypy infers no type for a lambda that
# binds its handle as a default argument against Callable[[], _T].
def _optional(fn: Callable[..., _T], pynvml: ModuleType) -> _T | None:
    try:
        return fn()
    except pynvml.NVMLError:
        return None


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return type(exc).__name__
