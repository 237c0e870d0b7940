"""Which Ubuntu or Debian release a derivative is built on: the release codenames and numbers,
and the os-release fields a derivative names its base with.

Read by the probe (os-release -> ``os.base`` in the facts) and by resolve (a facts file written
without ``os.base``: an older gpuenv, a report), so that both judge a derivative as its base.

The codename tables are Debian's distro-info-data (0.58+deb12u6), /usr/share/distro-info/ubuntu.csv
and debian.csv (https://salsa.debian.org/debian/distro-info-data), the list Ubuntu's and Debian's
own tools (ubuntu-distro-info, debian-distro-info) read: the version and series columns. Releases
before 18.04 and 9 are left out: no bundled GPU stack release lists them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import OS

DISTRO_INFO = "https://salsa.debian.org/debian/distro-info-data"

UBUNTU_CODENAMES = {
    "bionic": "18.04",
    "cosmic": "18.10",
    "disco": "19.04",
    "eoan": "19.10",
    "focal": "20.04",
    "groovy": "20.10",
    "hirsute": "21.04",
    "impish": "21.10",
    "jammy": "22.04",
    "kinetic": "22.10",
    "lunar": "23.04",
    "mantic": "23.10",
    "noble": "24.04",
    "oracular": "24.10",
    "plucky": "25.04",
    "questing": "25.10",
    "resolute": "26.04",
}
DEBIAN_CODENAMES = {
    "stretch": "9",
    "buster": "10",
    "bullseye": "11",
    "bookworm": "12",
    "trixie": "13",
    "forky": "14",
}

# Derivatives whose releases carry the number of the Ubuntu release they are built on (Pop!_OS
# 22.04 on Ubuntu 22.04, https://pop.system76.com/; KDE neon's VERSION_ID is its Ubuntu LTS base,
# https://neon.kde.org/faq): read so only where the facts carry no codename to go by.
UBUNTU_NUMBERED = ("pop", "neon")
# os-release IDs of Ubuntu derivatives (their os-release says ID_LIKE="ubuntu debian" or
# ID_LIKE=ubuntu): a facts file that names one without its base is a derivative whose base is not
# known, never a distribution no vendor lists.
UBUNTU_DERIVED = ("linuxmint", "pop", "neon", "elementary", "zorin")


def base_of(
    os_id: str,
    version_id: str | None,
    codename: str | None,
    id_like: tuple[str, ...] | list[str],
    ubuntu_codename: str | None = None,
    debian_codename: str | None = None,
) -> tuple[str, str | None, str | None] | None:
    """(id, version_id, codename) of the Ubuntu or Debian release a derivative is built on; None
    for Ubuntu and Debian themselves and for anything else. The base's version is None when its
    codename is one the tables do not know (a newer release: its name is still said)."""
    if os_id in ("ubuntu", "debian"):
        return None
    if ubuntu_codename:
        return "ubuntu", UBUNTU_CODENAMES.get(ubuntu_codename), ubuntu_codename
    if debian_codename:
        return "debian", DEBIAN_CODENAMES.get(debian_codename), debian_codename
    like = set(id_like)
    if codename in UBUNTU_CODENAMES and ("ubuntu" in like or os_id in UBUNTU_NUMBERED):
        return "ubuntu", UBUNTU_CODENAMES[codename], codename
    if codename in DEBIAN_CODENAMES and "debian" in like and "ubuntu" not in like:
        return "debian", DEBIAN_CODENAMES[codename], codename
    if os_id in UBUNTU_NUMBERED and version_id:
        for name, number in UBUNTU_CODENAMES.items():
            if version_id == number or version_id.startswith(number + "."):
                return "ubuntu", number, name
    return None


_BASE_NAMES = {"ubuntu": "Ubuntu", "debian": "Debian"}


def base_release(os: OS) -> tuple[str, str | None] | None:
    """(id, version) of the release a derivative is built on: the facts' os.base, else what its
    codename and ID_LIKE say (a facts file written without os.base); None for Ubuntu and Debian
    themselves and anything not known to be a derivative."""
    if os.base is not None:
        return os.base.id, os.base.version_id
    found = base_of(os.id, os.version_id, os.codename, tuple(x.lower() for x in os.id_like))
    return (found[0], found[1]) if found else None


def label(os: OS) -> str:
    """How gpuenv names the OS: "Linux Mint 22 (Ubuntu 24.04 base)", "Ubuntu 24.04.2 LTS"."""
    name = os.pretty_name or " ".join(x for x in (os.id or "?", os.version_id) if x)
    base = base_release(os) or (("ubuntu", None) if os.id in UBUNTU_DERIVED else None)
    if base is None:
        return name
    said = _BASE_NAMES.get(base[0], base[0]) + (f" {base[1]}" if base[1] else "")
    return name if said in name else f"{name} ({said} base)"


# The tool that rebuilds the initramfs, by distribution family: a module blacklisted in
# /etc/modprobe.d stays loaded from an initramfs built before the change. initramfs-tools on the
# Debian family (update-initramfs(8)), dracut on the Fedora, RHEL and SUSE families and on Void
# (dracut(8): --force rebuilds the running kernel's image), mkinitcpio on the Arch family
# (mkinitcpio(8): -P, every preset). A fix that names Debian's tool on Fedora does not run.
_INITRAMFS = (
    (("debian", "ubuntu", *UBUNTU_DERIVED), "sudo update-initramfs -u"),
    (("fedora", "rhel", "centos", "rocky", "almalinux", "ol", "amzn", "suse", "opensuse", "opensuse-leap",
      "opensuse-tumbleweed", "sles", "void"), "sudo dracut --force"),
    (("arch", "manjaro", "endeavouros", "cachyos", "garuda"), "sudo mkinitcpio -P"),
)  # fmt: skip
_INITRAMFS_ANY = (
    "rebuild the initramfs (update-initramfs -u on Debian and Ubuntu, dracut --force on Fedora, RHEL and "
    "openSUSE, mkinitcpio -P on Arch) and reboot"
)


def initramfs_rebuild(os: OS) -> str | None:
    """The command that rebuilds this OS's initramfs (its ID, else the first family ID_LIKE
    names); None where it is not known (NixOS, Gentoo, an unnamed OS)."""
    for name in (os.id, *(x.lower() for x in os.id_like)):
        for family, command in _INITRAMFS:
            if name in family:
                return command
    return None


def initramfs_then_reboot(os: OS, sep: str = "\n") -> str:
    """The end of a fix that changed /etc/modprobe.d: this OS's initramfs rebuild, then a reboot
    (joined by ``sep``); where the tool is not known, each family's, in words."""
    command = initramfs_rebuild(os)
    return f"{command}{sep}sudo reboot" if command else _INITRAMFS_ANY
