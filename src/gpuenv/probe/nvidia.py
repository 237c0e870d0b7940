"""The NVIDIA driver as files show it: the loaded kernel module (/proc/driver/nvidia/version,
/sys/module/nvidia/version), its flavour (open or proprietary), and the user-space library's
version (the libnvidia-ml.so.VERSION file the driver installs)."""

from __future__ import annotations

import re

from gpuenv.probe.host import Sysroot

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Sequence

LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/lib/wsl/lib",
)
_VERSION = r"\s([0-9]{2,4}\.[0-9]+(?:\.[0-9]+)?)\s"
_LIB = r"^libnvidia-ml\.so\.([0-9]{2,4}\.[0-9]+(?:\.[0-9]+)?)$"


def parse_proc_version(text: str) -> tuple[str | None, str | None]:
    """(module version, "open" | "proprietary") from /proc/driver/nvidia/version."""
    first = next((line for line in text.splitlines() if line.startswith("NVRM version:")), "")
    if not first:
        return None, None
    m = re.search(_VERSION, first + " ")
    flavour = "open" if "Open Kernel Module" in first else "proprietary"
    return (m.group(1) if m else None), flavour


def library_version(host: Sysroot) -> str | None:
    """Version in the name of the installed libnvidia-ml.so.VERSION, if there is exactly one.

    Only a directory holding libnvidia-ml.so.1 (link or file) is listed: that soname is what
    NVML is loaded by, so a versioned file beside none is not a library anything uses, and a
    distribution's library directory is a thousand names to list on every machine without an
    NVIDIA driver."""
    found = set()
    for d in LIB_DIRS:
        soname = f"{d}/libnvidia-ml.so.1"
        if not (host.exists(soname) or host.is_link(soname)):
            continue
        # thousands of names in a distribution's library directory: a C-level test before the regex
        for name in host.listdir(d):
            m = re.match(_LIB, name) if name.startswith("libnvidia-ml.so.") else None
            if m:
                found.add(m.group(1))
    return found.pop() if len(found) == 1 else None


def library_present(host: Sysroot, extra_dirs: Sequence[str] = ()) -> bool:
    return any(host.exists(f"{d}/libnvidia-ml.so.1") for d in (*extra_dirs, *LIB_DIRS))
