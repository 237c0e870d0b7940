"""The running kernel: release, command line, loaded and blacklisted modules, headers, Secure
Boot and the taint flags."""

from __future__ import annotations

from gpuenv.probe.host import Host

MODPROBE_DIRS = ("/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d")
SECURE_BOOT_VAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e398403d8c8c"


def release(host: Host) -> str:
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
    """Module names of ``blacklist NAME`` lines of a modprobe.d file."""
    out = []
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2 and fields[0] == "blacklist":
            out.append(fields[1].replace("-", "_"))
    return out


def cmdline_blacklist(cmdline: str) -> list[str]:
    out = []
    for word in cmdline.split():
        key, _, value = word.partition("=")
        if key in ("modprobe.blacklist", "module_blacklist"):
            out.extend(v.replace("-", "_") for v in value.split(",") if v)
    return out


def blacklisted(host: Host, cmdline: str | None) -> tuple[str, ...]:
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


def secure_boot(host: Host) -> bool | None:
    if not host.is_dir("/sys/firmware/efi"):
        # Legacy BIOS boot (or no /sys mapped): no Secure Boot, if /sys is there at all.
        return False if host.is_dir("/sys/firmware") else None
    if not host.exists(SECURE_BOOT_VAR):
        return None if not host.is_dir("/sys/firmware/efi/efivars") else False
    return parse_secure_boot(host.read_bytes(SECURE_BOOT_VAR))


def parse_tainted(text: str) -> int:
    return int(text.strip())


def headers_installed(host: Host, rel: str) -> bool:
    return host.is_dir(f"/lib/modules/{rel}/build")
