"""Which device nodes the probing process's device cgroup lets it open (cgroup v1).

A batch scheduler (SLURM with ConstrainDevices) or a container runtime confines a job to the
GPUs it was given through the ``devices`` controller. Under cgroup v1 its rules are a file,
``devices.list`` of the process's cgroup (/proc/self/cgroup names it); under cgroup v2 they are
an eBPF program that no file shows, and the answer stays unknown.
"""

from __future__ import annotations

from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.probe.host import Sysroot

V1_ROOT = "/sys/fs/cgroup/devices"


@record(frozen=True)
class DeviceRule:
    kind: str  # a (all), c (char), b (block)
    major: int | None  # None: any ("*")
    minor: int | None
    access: str  # letters of r, w, m


def devices_path(proc_cgroup: str) -> str | None:
    """The cgroup v1 ``devices`` path of /proc/self/cgroup text (``5:devices:/slurm/job_42``)."""
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and "devices" in parts[1].split(","):
            return parts[2].strip() or "/"
    return None


def parse_devices_list(text: str) -> list[DeviceRule]:
    """``a *:* rwm`` / ``c 195:* rwm`` lines; a malformed line raises ValueError."""
    rules = []
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3 or fields[0] not in ("a", "b", "c") or ":" not in fields[1]:
            raise ValueError(f"not a devices.list rule: {line.strip()[:60]!r}")
        major, _, minor = fields[1].partition(":")
        rules.append(
            DeviceRule(fields[0], None if major == "*" else int(major), None if minor == "*" else int(minor), fields[2])
        )
    return rules


def allows(rules: list[DeviceRule], major: int, minor: int) -> bool:
    """Whether a char device major:minor may be opened read-write under these rules."""
    for r in rules:
        if r.kind == "a" or (
            r.kind == "c" and r.major in (None, major) and r.minor in (None, minor)
        ):
            if "r" in r.access and "w" in r.access:
                return True
    return False


def device_rules(host: Sysroot) -> list[DeviceRule] | None:
    """The probing process's device rules, or None when they cannot be read (cgroup v2, no
    devices controller, an unreadable file)."""
    text = host.read_optional("/proc/self/cgroup")
    path = devices_path(text) if text else None
    if path is None:
        return None
    listing = host.read_optional(f"{V1_ROOT}{'' if path == '/' else path}/devices.list")
    if listing is None:
        return None
    try:
        return parse_devices_list(listing)
    except ValueError:
        return None
