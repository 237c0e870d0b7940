"""The running kernel: release, command line, loaded and blacklisted modules, headers, Secure
Boot and the taint flags."""

from __future__ import annotations

from gpuenv.probe.host import Sysroot

# kmod's search order; a file name found in an earlier directory hides the same name later.
MODPROBE_DIRS = (
    "/etc/modprobe.d",
    "/run/modprobe.d",
    "/usr/local/lib/modprobe.d",
    "/usr/lib/modprobe.d",
    "/lib/modprobe.d",
)
# `install MODULE /bin/false` (or true) is the other common way to keep a module from loading:
# modprobe runs the command instead of loading it (blacklist alone does not stop a dependency
# or an explicit `modprobe MODULE`).
_NO_OP_COMMANDS = ("/bin/false", "/bin/true", "/usr/bin/false", "/usr/bin/true", "false", "true")
SECURE_BOOT_VAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e398403d8c8c"
SECURE_BOOT_SYSFS = "/sys/firmware/efi/vars/SecureBoot-8be4df61-93ca-11d2-aa0d-e398403d8c8c/data"


def release(host: Sysroot) -> str:
    """uname -r; under a root: /proc/sys/kernel/osrelease, else the only tree in /lib/modules."""
    if host.live:
        import os

        return os.uname().release
    text = (host.read_optional("/proc/sys/kernel/osrelease") or "").strip()
    if text:
        return text
    trees = [d for d in host.listdir("/lib/modules") if host.is_dir(f"/lib/modules/{d}")]
    if len(trees) == 1:
        return trees[0]
    raise ValueError(
        "kernel release unknown: no /proc/sys/kernel/osrelease under the root and "
        f"{len(trees)} trees in /lib/modules"
    )


def parse_proc_modules(text: str) -> tuple[str, ...]:
    names = []
    for line in text.splitlines():
        fields = line.split()
        if fields:
            names.append(fields[0])
    return tuple(names)


def parse_blacklist(text: str) -> list[str]:
    """Modules a modprobe.d file keeps from loading: ``blacklist NAME``, ``install NAME
    /bin/false`` (or ``/bin/true``, also with ``exec``), and ``alias NAME off``."""
    out = []
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2:
            continue
        verb, name = fields[0], fields[1].replace("-", "_")
        if verb == "blacklist":
            out.append(name)
        elif verb == "install":
            command = [f for f in fields[2:] if f != "exec"]
            if len(command) == 1 and command[0].rstrip(";") in _NO_OP_COMMANDS:
                out.append(name)
        elif verb == "alias" and fields[2:] == ["off"]:
            out.append(name)
    return out


def cmdline_blacklist(cmdline: str) -> list[str]:
    out: list[str] = []
    for word in cmdline.split():
        key, _, value = word.partition("=")
        if key in ("modprobe.blacklist", "module_blacklist", "rd.driver.blacklist"):  # dracut: initramfs
            out.extend(v.replace("-", "_") for v in value.split(",") if v)
    return out


def blacklisted(host: Sysroot, cmdline: str | None) -> tuple[str, ...]:
    names: list[str] = []
    seen_files: set[str] = set()
    # modprobe reads each file name once, earlier directories overriding later ones.
    for directory in MODPROBE_DIRS:
        for name in host.listdir(directory):
            if not name.endswith(".conf") or name in seen_files:
                continue
            seen_files.add(name)
            text = host.read_optional(f"{directory}/{name}")
            if text:
                names.extend(parse_blacklist(text))
    names.extend(cmdline_blacklist(cmdline or ""))
    return tuple(dict.fromkeys(names))


def parse_secure_boot(data: bytes) -> bool:
    """An efivarfs variable: 4 bytes of attributes, then the value (1 byte for SecureBoot)."""
    if len(data) < 5:
        raise ValueError(f"SecureBoot variable is {len(data)} bytes, expected 5")
    return data[4] == 1


def secure_boot(host: Sysroot) -> bool | None:
    """True/False from the SecureBoot EFI variable; False on a legacy BIOS boot (no
    /sys/firmware/efi: Secure Boot cannot be on); None when it cannot be told: no /sys, an empty
    /sys/firmware (Docker and other runtimes mask it with an empty tmpfs), or efivarfs not
    mounted."""
    if not host.is_dir("/sys/firmware/efi"):
        # A real /sys/firmware always holds something (acpi, dmi, memmap); an empty one is masked.
        return False if host.listdir("/sys/firmware") else None
    if host.exists(SECURE_BOOT_VAR):
        return parse_secure_boot(host.read_bytes(SECURE_BOOT_VAR))
    if host.exists(SECURE_BOOT_SYSFS):  # the old sysfs-efivars interface: the value only
        data = host.read_bytes(SECURE_BOOT_SYSFS)
        if len(data) < 1:
            raise ValueError("SecureBoot data is empty")
        return data[0] == 1
    if host.listdir("/sys/firmware/efi/efivars"):
        return False  # efivarfs is mounted and has no SecureBoot variable: firmware without it
    return None  # efivarfs not mounted (or not mapped in): unknown


def parse_tainted(text: str) -> int:
    return int(text.strip())


def headers_installed(host: Sysroot, rel: str) -> bool:
    return host.is_dir(f"/lib/modules/{rel}/build")
