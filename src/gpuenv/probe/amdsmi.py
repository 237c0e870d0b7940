"""AMD GPUs through AMD SMI (the ``amdsmi`` binding), live machine only.

The binding must match the installed ROCm library, so when ``import amdsmi`` fails, ROCm's own
copy under /opt/rocm/share/amd_smi is tried: as root, only where that tree passes trust's rule
(root's, and no other account could change it, a file in it or a directory above it: a TheRock
tarball a user unpacked, a /opt/rocm a user owns). Otherwise it is not imported, and the result's
``note`` says why the GPUs were read from sysfs and KFD instead.
"""

from __future__ import annotations

from gpuenv.standins.record import field, record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

ROCM_COPY = "/opt/rocm/share/amd_smi"


@record(frozen=True)
class SmiGpu:
    pci_slot: str | None
    name: str | None
    memory_mib: int | None = None


@record(frozen=True)
class SmiResult:
    state: str
    driver_version: str | None = None
    gpus: tuple[SmiGpu, ...] = field(default_factory=tuple)
    note: str | None = None  # why the binding was not imported (facts' notes)


class Untrusted(ImportError):
    """ROCm's copy of the binding could be changed by another account: root does not import it."""


def available() -> bool:
    import os
    import sys

    # importlib.util.find_spec's search for a top-level name, without importing importlib.util
    # (which costs more than the search): ask each finder on sys.meta_path.
    found = "amdsmi" in sys.modules or any(
        getattr(finder, "find_spec", None) is not None and finder.find_spec("amdsmi", None) is not None
        for finder in sys.meta_path
    )
    return found or os.path.isdir(ROCM_COPY)


def _import() -> Any:  # the binding module (untyped), or None
    import sys

    # The probe writes nothing: no __pycache__ in ROCm's tree (root can write there).
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        return _import_binding()
    finally:
        sys.dont_write_bytecode = saved


def _import_binding() -> Any:  # the binding module (untyped), or None
    try:
        import amdsmi

        return amdsmi
    except ImportError:
        import os
        import sys

        if not os.path.isdir(ROCM_COPY):
            return None
        if os.geteuid() == 0:
            from gpuenv.trust import untrusted_tree

            found = untrusted_tree(ROCM_COPY)
            if found:
                raise Untrusted(found[0]) from None
        sys.path.insert(0, ROCM_COPY)
        try:
            import amdsmi

            return amdsmi
        except ImportError:
            return None
        finally:
            sys.path.remove(ROCM_COPY)


def query() -> SmiResult:
    try:
        smi = _import()
    except Untrusted as exc:
        return SmiResult(
            "not_queried",
            note=f"amdsmi was not imported from {ROCM_COPY}: another account could change it ({exc}); "
            "the GPUs were read from sysfs and KFD instead",
        )
    except Exception as exc:  # a binding that fails to load its library raises on import
        return SmiResult(f"error: {exc}")
    if smi is None:
        return SmiResult("not_installed")
    try:
        smi.amdsmi_init()
    except Exception as exc:
        return SmiResult(f"error: {exc}")
    try:
        gpus, driver = [], None
        for handle in smi.amdsmi_get_processor_handles():
            slot = name = mem = None
            try:
                slot = str(smi.amdsmi_get_gpu_device_bdf(handle)).lower()
                name = smi.amdsmi_get_gpu_asic_info(handle).get("market_name") or None
                vram = smi.amdsmi_get_gpu_vram_info(handle)
                mem = int(vram.get("vram_size")) if vram.get("vram_size") not in (None, "N/A") else None
                driver = driver or smi.amdsmi_get_gpu_driver_info(handle).get("driver_version") or None
            except Exception:  # noqa: S110 - one unreadable attribute leaves the others
                pass
            gpus.append(SmiGpu(slot, name, mem))
        return SmiResult("ok", driver, tuple(gpus))
    except Exception as exc:
        return SmiResult(f"error: {exc}")
    finally:
        try:
            smi.amdsmi_shut_down()
        except Exception:  # noqa: S110
            pass
