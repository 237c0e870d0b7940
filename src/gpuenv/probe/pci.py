"""GPUs on the PCI bus, read from sysfs, with names from the pci.ids database.

Every display/3D/accelerator function of a GPU vendor is listed, bound to a driver or not: a
fresh machine has no driver yet, and that is exactly when gpuenv is needed.
"""

from __future__ import annotations

from gpuenv.probe.host import Sysroot
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import ProbeError

SYSFS_PCI = "/sys/bus/pci/devices"
PCI_IDS = ("/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids")
VENDORS = {"10de": "nvidia", "1002": "amd", "8086": "intel"}
# 03xx display controllers (VGA, XGA, 3D, other) and 1200 processing accelerators.
GPU_CLASSES = ("0300", "0301", "0302", "0380", "1200")


@record(frozen=True)
class PciDevice:
    slot: str
    vendor: str  # 4 lower-case hex digits
    device: str
    pci_class: str  # 4 hex digits: class and subclass
    subsystem: str | None = None  # "vvvv:dddd"
    revision: str | None = None  # 2 hex digits
    driver: str | None = None


def parse_hex_id(text: str, digits: int = 4) -> str:
    """``0x1002\\n`` -> ``1002``; raises ValueError on anything else."""
    value = text.strip().lower()
    if value.startswith("0x"):
        value = value[2:]
    if not value or len(value) > digits or any(c not in "0123456789abcdef" for c in value):
        raise ValueError(f"not a hex id: {text.strip()[:40]!r}")
    return value.zfill(digits)


def read_device(host: Sysroot, slot: str) -> PciDevice | None:
    """The device in ``slot``, or None for one that is no GPU (its vendor and class tell, so the
    other files of the dozens of bridges, disks and NICs a server has are never read)."""
    base = f"{SYSFS_PCI}/{slot}"
    vendor = parse_hex_id(host.read_text(f"{base}/vendor"))
    if vendor not in VENDORS:
        return None
    pci_class = parse_hex_id(host.read_text(f"{base}/class"), 6)[:4]
    if not is_gpu(vendor, pci_class):
        return None
    device = parse_hex_id(host.read_text(f"{base}/device"))
    subsystem = revision = None
    sv, sd = host.read_optional(f"{base}/subsystem_vendor"), host.read_optional(f"{base}/subsystem_device")
    if sv and sd:
        subsystem = f"{parse_hex_id(sv)}:{parse_hex_id(sd)}"
    rev = host.read_optional(f"{base}/revision")
    if rev:
        revision = parse_hex_id(rev, 2)
    link = host.readlink(f"{base}/driver")
    driver = link.rstrip("/").rsplit("/", 1)[-1] if link else None
    return PciDevice(slot, vendor, device, pci_class, subsystem, revision, driver or None)


def is_gpu(vendor: str, pci_class: str) -> bool:
    """A display or accelerator function of a GPU vendor (Intel's accelerators are no GPUs)."""
    return vendor in VENDORS and pci_class in GPU_CLASSES and not (vendor == "8086" and pci_class == "1200")


def scan(host: Sysroot, errors: list[ProbeError]) -> list[PciDevice]:
    """GPU functions on the bus; an unreadable device is an error entry, not an abort."""
    from gpuenv.facts import ProbeError

    out: list[PciDevice] = []
    if not host.listdir("/sys"):
        # No sysfs mounted (a rescue mount or a chroot that never mounted /sys, a report's tree
        # without it): the bus was not read, which is not "no GPU" (Facts.bus_read). A mounted
        # sysfs without PCI devices is a machine without them.
        errors.append(ProbeError("pci", "/sys is empty (sysfs not mounted): the GPUs on the PCI bus could not be read"))
        return out
    for slot in host.listdir(SYSFS_PCI):
        try:
            dev = read_device(host, slot)
        except Exception as exc:  # a malformed or vanished sysfs entry
            errors.append(ProbeError("pci", f"{slot}: {exc}"))
            continue
        if dev is not None:
            out.append(dev)
    return out


def parse_pci_ids(text: str, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Device names for (vendor, device) pairs from pci.ids text, reading only those vendors."""
    vendors = {v for v, _ in wanted}
    names: dict[tuple[str, str], str] = {}
    current = None
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        if line[0] != "\t":
            if line.startswith("C "):  # the class list closes the vendor list
                break
            vid = line[:4].lower()
            current = vid if vid in vendors else None
            continue
        if current is None or line.startswith("\t\t"):
            continue
        did, _, name = line[1:].partition("  ")
        key = (current, did.strip().lower())
        if key in wanted and name.strip():
            names[key] = name.strip()
    return names


def pci_names(host: Sysroot, devices: list[PciDevice]) -> dict[tuple[str, str], str]:
    wanted = {(d.vendor, d.device) for d in devices}
    if not wanted:
        return {}
    for path in PCI_IDS:
        text = host.read_optional(path)
        if text is not None:
            return parse_pci_ids(text, wanted)
    return {}
