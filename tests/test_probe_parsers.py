"""The probe's pure parsers, table-driven: real file formats in, facts out."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpuenv.facts import User
from gpuenv.probe import (
    apt_sources,
    devices,
    dpkg,
    environment,
    kernel,
    kfd,
    nvidia,
    nvml,
    osinfo,
    pci,
    python_env,
    toolkits,
    users,
)
from gpuenv.probe import platform as plat
from gpuenv.probe.host import Sysroot
from gpuenv.standins.record import FrozenError

NOBLE = """PRETTY_NAME="Ubuntu 24.04.3 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.3 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
UBUNTU_CODENAME=noble
"""


@pytest.mark.parametrize(
    "text, key, want",
    [
        (NOBLE, "PRETTY_NAME", "Ubuntu 24.04.3 LTS"),
        (NOBLE, "VERSION_CODENAME", "noble"),
        ("ID='rhel'\n", "ID", "rhel"),
        ('NAME="A \\"quoted\\" \\$name"\n', "NAME", 'A "quoted" $name'),
        ("# comment\n\nID=arch\n", "ID", "arch"),
        ("not a line\nID=fedora\n", "ID", "fedora"),
        ("NAME=Fedora\\ Linux\n", "NAME", "Fedora Linux"),
    ],
)
def test_parse_os_release(text, key, want):
    assert osinfo.parse_os_release(text)[key] == want


# Assignments in the shell grammar where distro's shlex reads as a shell does (tests/
# test_oracle_osrelease.py holds the rest to sh itself): unquoted words with backslash escapes,
# '...', "..." with \\" and \\\\ escapes, joined; export; comments after the value.
_UNQUOTED = st.from_regex(r"([A-Za-z0-9._/:@%+-]|\\[ a-z\\\"'$#])+", fullmatch=True)
_SINGLE = st.from_regex(r"'[ -&(-~é]*'", fullmatch=True)  # printable: shlex and the shell split lines apart
_DOUBLE = st.from_regex(r'"([ !#%-\[\]-_a-~é]|\\["\\])*"', fullmatch=True)
_ASSIGNMENT = st.builds(
    lambda export, key, parts, comment: f"{export}{key}={''.join(parts)}{comment}",
    st.sampled_from(["", "", "export "]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    st.lists(st.one_of(_UNQUOTED, _SINGLE, _DOUBLE), max_size=3),
    st.sampled_from(["", "", " # a comment", "\t#x=y"]),
)  # fmt: skip
_OS_RELEASE_LINES = st.lists(st.one_of(_ASSIGNMENT, st.sampled_from(["", "# ID=commented", "  "])), max_size=8).map("\n".join)


@settings(max_examples=500, deadline=None)
@given(text=_OS_RELEASE_LINES)
def test_os_release_fields_are_what_distro_reads(text):
    import io

    from distro import LinuxDistribution

    want = LinuxDistribution._parse_os_release_content(io.StringIO(text))
    ours = {k.lower(): v for k, v in osinfo.parse_os_release(text).items()}
    assert ours == {k: v for k, v in want.items() if k not in ("codename", "release_codename") or k in ours}


def test_os_from_release():
    os_ = osinfo.os_from_release(osinfo.parse_os_release(NOBLE))
    assert (os_.id, os_.version_id, os_.codename, os_.id_like) == ("ubuntu", "24.04", "noble", ("debian",))
    # RHEL has no codename: unknown, not empty.
    rhel = osinfo.os_from_release({"ID": "rhel", "VERSION_ID": "9.6", "ID_LIKE": "fedora"})
    assert rhel.codename is None and rhel.id_like == ("fedora",)
    with pytest.raises(ValueError):
        osinfo.os_from_release({"NAME": "no id"})


@pytest.mark.parametrize(
    "text, want",
    [
        (
            "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n",
            "AMD EPYC 9654 96-Core Processor",
        ),
        ("processor : 0\nBogoMIPS : 50.00\n", None),
    ],
)
def test_parse_cpu_model(text, want):
    assert osinfo.parse_cpu_model(text) == want


def _cpu_block(i: int, model: str = "AMD EPYC 9654 96-Core Processor", flags: str = "fpu sse2") -> str:
    return f"processor\t: {i}\nvendor_id\t: AuthenticAMD\nmodel name\t: {model}\nflags\t\t: {flags}\n\n"


def _cpuinfo_host(tmp_path, text: str) -> Sysroot:
    (tmp_path / "proc").mkdir(parents=True)
    (tmp_path / "proc/cpuinfo").write_text(text)
    return Sysroot.at(str(tmp_path))


def test_a_big_cpuinfo_is_judged_by_its_first_cpu(tmp_path):
    text = _cpu_block(0, flags="fpu hypervisor") + "".join(_cpu_block(i, "other", "fpu") for i in range(1, 900))
    assert len(text) > 2 * osinfo.CPUINFO_HEAD
    host = _cpuinfo_host(tmp_path, text)
    assert osinfo.in_cpuinfo(host, osinfo.parse_cpu_model) == "AMD EPYC 9654 96-Core Processor"
    assert osinfo.in_cpuinfo(host, plat.cpu_hypervisor_flag) is True


def test_what_the_head_of_cpuinfo_lacks_is_read_from_the_whole_file(tmp_path):
    """A Raspberry Pi names its Model after every CPU's block; a line the head cuts is not read
    cut."""
    arm = "".join(f"processor\t: {i}\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd\n\n" for i in range(600))
    host = _cpuinfo_host(tmp_path, arm + "Model\t\t: Raspberry Pi 5 Model B Rev 1.0\n")
    assert osinfo.in_cpuinfo(host, osinfo.parse_cpu_model) == "Raspberry Pi 5 Model B Rev 1.0"
    assert osinfo.in_cpuinfo(host, plat.cpu_hypervisor_flag) is None
    pad = "x" * (osinfo.CPUINFO_HEAD - len("model name\t: AMD") - 1) + "\n"
    host = _cpuinfo_host(tmp_path / "cut", pad + "model name\t: AMD EPYC 9654\nflags\t\t: hypervisor\n")
    assert osinfo.in_cpuinfo(host, osinfo.parse_cpu_model) == "AMD EPYC 9654"
    small = _cpuinfo_host(tmp_path / "small", _cpu_block(0, flags="fpu"))
    assert osinfo.in_cpuinfo(small, plat.cpu_hypervisor_flag) is False
    (tmp_path / "none").mkdir()
    assert osinfo.in_cpuinfo(Sysroot.at(str(tmp_path / "none")), osinfo.parse_cpu_model) is None


def test_parse_meminfo():
    assert osinfo.parse_meminfo_mib("MemTotal:       65535068 kB\nMemFree: 1 kB\n") == 63999
    assert osinfo.parse_meminfo_mib("MemFree: 1 kB\n") is None


@pytest.mark.parametrize(
    "text, digits, want",
    [
        ("0x1002\n", 4, "1002"),
        ("0x10DE", 4, "10de"),
        ("0x030000\n", 6, "030000"),
        ("0xc1\n", 2, "c1"),
        ("0x1", 4, "0001"),
    ],
)
def test_parse_hex_id(text, digits, want):
    assert pci.parse_hex_id(text, digits) == want


@pytest.mark.parametrize("text", ["", "0x", "nvidia", "0x12345", "0x10g0"])
def test_parse_hex_id_rejects(text):
    with pytest.raises(ValueError):
        pci.parse_hex_id(text)


@pytest.mark.parametrize(
    "vendor, cls, gpu",
    [("1002", "0300", True), ("10de", "0302", True), ("1002", "1200", True), ("1002", "0403", False),
     ("1022", "0300", False), ("8086", "0300", True), ("8086", "1200", False), ("10de", "0380", True)],
)  # fmt: skip
def test_is_gpu(vendor, cls, gpu):
    assert pci.is_gpu(vendor, cls) is gpu


def _sysfs_device(root, slot, **files):
    d = root / "sys/bus/pci/devices" / slot
    d.mkdir(parents=True)
    for name, text in files.items():
        (d / name).write_text(text)
    return d


def test_pci_scan_reads_only_the_vendor_and_class_of_a_device_that_is_no_gpu(tmp_path):
    import os

    from gpuenv.probe.host import Sysroot

    # An Intel bridge and an AMD audio function whose other files would fail or block if read.
    bridge = _sysfs_device(tmp_path, "0000:00:1f.0", vendor="0x8086\n", subsystem_vendor="junk", **{"class": "0x060100\n"})
    os.mkfifo(bridge / "device")
    audio = _sysfs_device(tmp_path, "0000:03:00.1", vendor="0x1002\n", device="junk", **{"class": "0x040300\n"})
    os.mkfifo(audio / "revision")
    _sysfs_device(tmp_path, "0000:04:00.0", vendor="0x15b3\n", device="junk")  # a NIC: no class read either
    _sysfs_device(tmp_path, "0000:03:00.0", vendor="0x1002\n", device="0x7550\n", subsystem_vendor="0x1da2\n",
                  subsystem_device="0xe490\n", revision="0xc0\n", **{"class": "0x030000\n"})  # fmt: skip
    errors: list = []
    found = pci.scan(Sysroot.at(str(tmp_path)), errors)
    assert errors == []
    assert found == [pci.PciDevice("0000:03:00.0", "1002", "7550", "0300", "1da2:e490", "c0", None)]


PCI_IDS = """# header
1002  Advanced Micro Devices, Inc. [AMD/ATI]
\t7550  Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]
\t\t1da2 e490  Sapphire Pulse Radeon RX 9070 XT
1022  Advanced Micro Devices, Inc. [AMD]
\t7550  Not a GPU
10de  NVIDIA Corporation
\t2b85  GB202 [GeForce RTX 5090]
C 03  Display controller
\t00  VGA compatible controller
"""


def test_parse_pci_ids_reads_only_wanted_vendors():
    names = pci.parse_pci_ids(PCI_IDS, {("1002", "7550"), ("10de", "2b85"), ("10de", "ffff")})
    assert names == {
        ("1002", "7550"): "Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]",
        ("10de", "2b85"): "GB202 [GeForce RTX 5090]",
    }


def test_parse_pci_ids_skips_comments_blank_lines_unwanted_and_unnamed_devices():
    text = (
        "10de  NVIDIA Corporation\n"
        "# a comment between a vendor and its devices\n"
        "\n"
        "\t2b85  GB202 [GeForce RTX 5090]\n"
        "\t2b87  GB202 (not asked for)\n"
        "\t2bff  \n"  # no name
        "#\t2b86  commented out\n"
    )
    wanted = {("10de", "2b85"), ("10de", "2bff"), ("10de", "2b86")}
    assert pci.parse_pci_ids(text, wanted) == {("10de", "2b85"): "GB202 [GeForce RTX 5090]"}


def test_pci_scan_records_a_malformed_gpu_and_goes_on(tmp_path):
    from gpuenv.probe.host import Sysroot

    _sysfs_device(tmp_path, "0000:01:00.0", vendor="0x10de\n", **{"class": "0x030000\n"}, device="0xzzzz\n")
    _sysfs_device(tmp_path, "0000:02:00.0", vendor="0x10de\n", **{"class": "0x030200\n"}, device="0x2b85\n",
                  subsystem_vendor="0x10de\n")  # fmt: skip
    errors: list = []
    found = pci.scan(Sysroot.at(str(tmp_path)), errors)
    assert [e.probe for e in errors] == ["pci"] and errors[0].message.startswith("0000:01:00.0: not a hex id")
    # A subsystem vendor without its device is no subsystem; no revision file, no driver link.
    assert found == [pci.PciDevice("0000:02:00.0", "10de", "2b85", "0302", None, None, None)]
    assert pci.pci_names(Sysroot.at(str(tmp_path)), found) == {}  # no pci.ids on the machine


@pytest.mark.parametrize(
    "version, want",
    [(120001, "gfx1201"), (120000, "gfx1200"), (90402, "gfx942"), (90010, "gfx90a"), (90012, "gfx90c"),
     (100300, "gfx1030"), (110001, "gfx1101"), (110501, "gfx1151"), (90500, "gfx950"), (0, None), (91600, None)],
)  # fmt: skip
def test_gfx_target(version, want):
    assert kfd.gfx_target(version) == want


@pytest.mark.parametrize(
    "domain, location, want",
    [(0, 0x0300, "0000:03:00.0"), (0, 0xC608, "0000:c6:01.0"), (1, 0x1001, "0001:10:00.1")],
)
def test_kfd_pci_slot(domain, location, want):
    assert kfd.pci_slot(domain, location) == want


def test_kfd_node_from_properties():
    props = kfd.parse_properties("cpu_cores_count 0\ngfx_target_version 120001\nvendor_id 4098\ndevice_id 30032\n"
                                 "location_id 768\ndomain 0\nbogus line here\nname x\n")  # fmt: skip
    node = kfd.node_from_properties("1", props)
    assert (node.gfx_target, node.pci_slot, node.pci_id) == ("gfx1201", "0000:03:00.0", "1002:7550")
    assert (
        kfd.node_from_properties("0", kfd.parse_properties("cpu_cores_count 16\ngfx_target_version 0\n"))
        is None
    )


def test_proc_modules_and_blacklists():
    assert kernel.parse_proc_modules("amdgpu 19726336 14 - Live 0x0\namdxcp 12288 1 amdgpu, Live 0x0\n") == (
        "amdgpu",
        "amdxcp",
    )
    conf = "# nouveau off\nblacklist nouveau\noptions nouveau modeset=0\n  blacklist   nvidia-drm # trailing\nblacklist\n"
    assert kernel.parse_blacklist(conf) == ["nouveau", "nvidia_drm"]
    assert kernel.cmdline_blacklist("ro modprobe.blacklist=nouveau,amdgpu module_blacklist=radeon quiet rd.driver.blacklist=nvidia-drm") == [
        "nouveau", "amdgpu", "radeon", "nvidia_drm",
    ]  # fmt: skip


def test_blacklist_by_install_and_alias():
    """`install MODULE /bin/false` (the usual way to keep nouveau or amdgpu out) and `alias MODULE
    off` keep a module from loading as surely as `blacklist`; an install that runs something real
    (a wrapper loading the module) does not."""
    conf = (
        "install nouveau /bin/false\n"
        "install amdgpu /bin/true\n"
        "install radeon exec /usr/bin/false\n"
        "alias nvidiafb off\n"
        "install nvidia /sbin/modprobe nvidia-current $CMDLINE_OPTS\n"
        "alias pci:v000010DEd* nvidia\n"
        "# install snd_hda_intel /bin/false\n"
    )
    assert kernel.parse_blacklist(conf) == ["nouveau", "amdgpu", "radeon", "nvidiafb"]


@pytest.mark.parametrize("data, want", [(bytes([6, 0, 0, 0, 1]), True), (bytes([6, 0, 0, 0, 0]), False)])
def test_secure_boot(data, want):
    assert kernel.parse_secure_boot(data) is want


def test_secure_boot_rejects_short_variable():
    with pytest.raises(ValueError):
        kernel.parse_secure_boot(b"\x06\x00")


@pytest.mark.parametrize(
    "text, want",
    [
        ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.07  Release Build  (dvs-builder@U16)  Fri Mar 14 2025\n",
         ("570.133.07", "open")),
        ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.230.02  Tue Jan  7 2025\nGCC version:  gcc 12\n",
         ("535.230.02", "proprietary")),
        ("garbage\n", (None, None)),
    ],
)  # fmt: skip
def test_nvidia_proc_version(text, want):
    assert nvidia.parse_proc_version(text) == want


def _nvidia_libs(tmp_path, layout: dict[str, list[str]]):
    """A sysroot with these names in these library directories; "NAME -> TARGET" is a link."""
    from gpuenv.probe.host import Sysroot

    for directory, names in layout.items():
        d = tmp_path / directory.lstrip("/")
        d.mkdir(parents=True, exist_ok=True)
        for name in names:
            link, _, target = name.partition(" -> ")
            if target:
                (d / link).symlink_to(target)
            else:
                (d / link).write_bytes(b"")
    return Sysroot.at(str(tmp_path))


LIB = "/usr/lib/x86_64-linux-gnu"


@pytest.mark.parametrize(
    "layout, want",
    [
        ({LIB: ["libnvidia-ml.so.1 -> libnvidia-ml.so.570.133.07", "libnvidia-ml.so.570.133.07"]}, "570.133.07"),
        ({LIB: ["libnvidia-ml.so.1", "libnvidia-ml.so.535.230.02"]}, "535.230.02"),  # a copied soname
        # The soname link dangles (a half-removed driver): the directory is still read.
        ({LIB: ["libnvidia-ml.so.1 -> libnvidia-ml.so.535.1", "libnvidia-ml.so.570.133.07"]}, "570.133.07"),
        # A versioned file with no soname beside it is not what NVML loads.
        ({LIB: ["libnvidia-ml.so.570.133.07"]}, None),
        ({LIB: ["libnvidia-ml.so.1 -> x", "libnvidia-ml.so.570.133.07", "libnvidia-ml.so.535.230.02"]}, None),
        ({LIB: ["libnvidia-ml.so.1 -> libnvidia-ml.so.570.133.07", "libnvidia-ml.so.570.133.07"],
          "/usr/lib64": ["libnvidia-ml.so.1 -> libnvidia-ml.so.535.230.02", "libnvidia-ml.so.535.230.02"]}, None),
        ({LIB: ["libnvidia-ml.so.1 -> libnvidia-ml.so.570.133.07", "libnvidia-ml.so.570.133.07"],
          "/usr/lib64": ["libnvidia-ml.so.535.230.02"]}, "570.133.07"),
        ({"/usr/lib/wsl/lib": ["libnvidia-ml.so.1"]}, None),  # WSL: the soname only
        ({LIB: ["libnvidia-ml.so.1", "libnvidia-ml.so.x1", "libnvidia-ml.so.5.1"]}, None),  # not versions
        ({}, None),
    ],
)  # fmt: skip
def test_nvidia_library_version_is_read_where_the_soname_is(tmp_path, layout, want):
    assert nvidia.library_version(_nvidia_libs(tmp_path, layout)) == want


@pytest.mark.parametrize(
    "code, want",
    [
        (9, "driver_not_loaded"),
        (18, "version_mismatch"),
        (4, "no_permission"),
        (12, "not_installed"),
        (3, "error: Not Supported"),
    ],
)
def test_nvml_states(code, want):
    assert nvml.state_for(code, "Not Supported") == want


def test_nvml_conversions():
    assert (
        nvml.cuda_version(12080) == "12.8"
        and nvml.cuda_version(13000) == "13.0"
        and nvml.cuda_version(11040) == "11.4"
    )
    assert nvml.bus_id("00000000:41:00.0") == "0000:41:00.0"
    assert nvml.bus_id("00000001:C1:00.0") == "0001:c1:00.0"


STATUS = """Package: dpkg
Status: install ok installed
Architecture: amd64
Version: 1.22.6ubuntu6.1
Description: Debian package management system
 This package provides the low-level infrastructure.
 .
 Version: 9.9 (a continuation line, not a field)

Package: nvidia-kernel-dkms
Status: install ok half-configured
Architecture: amd64
Version: 570.133.20-1

Package: libc6
Status: install ok installed
Architecture: i386
Version: 2.36-9+deb12u10

Package: gone
Status: deinstall ok config-files
Architecture: amd64
Version: 1.0

Package: broken
Status: install reinstreq half-installed
Architecture: amd64
Version: 2.0

Package: rocm-core
Status: install ok unpacked
Architecture: amd64
Version: 7.2.0.70200-43~24.04
"""


def test_dpkg_status():
    pk = dpkg.packages_from_status(STATUS)
    assert pk.manager == "dpkg"
    assert pk.installed == {
        "dpkg": "1.22.6ubuntu6.1",
        "libc6:i386": "2.36-9+deb12u10",
        "nvidia-kernel-dkms": "570.133.20-1",
        "rocm-core": "7.2.0.70200-43~24.04",
    }
    assert pk.unconfigured == ("nvidia-kernel-dkms", "broken", "rocm-core")


def test_dpkg_journal_overrides_status():
    """An interrupted dpkg run leaves the packages' real states in /var/lib/dpkg/updates; they
    replace the status file's stanzas (per package and architecture), as dpkg-query reads them."""
    status = (
        "Package: dpkg\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.22.6\n\n"
        "Package: amdgpu-dkms\nStatus: install ok installed\nArchitecture: all\nVersion: 1:6.12.12\n\n"
        "Package: nvidia-driver-570\nStatus: install ok installed\nArchitecture: amd64\nVersion: 570.133.07\n"
    )
    journal = [
        "Package: amdgpu-dkms\nStatus: install reinstreq half-installed\nArchitecture: all\nVersion: 1:6.16.6\n",
        "Package: nvidia-driver-570\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 570.133.07\n",
    ]
    pk = dpkg.packages_from_status(status, updates=journal)
    assert pk.installed == {"dpkg": "1.22.6"}
    assert pk.unconfigured == ("amdgpu-dkms",)


def test_kfd_memory_banks():
    """FB_PRIVATE only on a discrete card; FB_PUBLIC on a resizable-BAR card and on an APU alike
    (unknown); only system-memory banks mean an APU node."""
    gib16 = 17163091968
    assert kfd.memory_from_banks([{"heap_type": 2, "size_in_bytes": gib16}]) == (16368, False)
    assert kfd.memory_from_banks([{"heap_type": 1, "size_in_bytes": gib16}]) == (16368, None)
    assert kfd.memory_from_banks([{"heap_type": 1, "size_in_bytes": 536870912}]) == (512, None)
    assert kfd.memory_from_banks([{"heap_type": 0, "size_in_bytes": 1 << 30}]) == (None, True)
    assert kfd.memory_from_banks([]) == (None, None) and kfd.memory_from_banks([{"bogus": 1}]) == (None, None)


def test_apt_one_line_list():
    text = (
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/7.2 noble main\n"
        "# deb http://archive.ubuntu.com/ubuntu/ noble universe # disabled on upgrade\n"
        "deb-src http://archive.ubuntu.com/ubuntu/ noble main\n"
        "deb https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/ /\n"
        "deb [trusted=yes]\n"
        "deb mirror+file:/etc/apt/mirrors/ubuntu.list noble main\n"
        "deb not-a-uri noble main\n"
    )
    got = apt_sources.parse_list(text, "/etc/apt/sources.list.d/x.list")
    assert [(s.uri, s.suites, s.components, s.signed_by, s.enabled) for s in got] == [
        ("https://repo.radeon.com/rocm/apt/7.2", ("noble",), ("main",), "/etc/apt/keyrings/rocm.gpg", True),
        ("http://archive.ubuntu.com/ubuntu/", ("noble",), ("universe",), None, False),
        (
            "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/",
            ("/",),
            (),
            None,
            True,
        ),
        ("mirror+file:/etc/apt/mirrors/ubuntu.list", ("noble",), ("main",), None, True),
    ]


def test_apt_deb822_sources():
    text = """Types: deb deb-src
URIs: http://archive.ubuntu.com/ubuntu/ http://mirror.example/ubuntu/
Suites: noble noble-updates
Components: main universe
Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg

# a source-only stanza is skipped
Types: deb-src
URIs: http://src.example/

Types: deb
URIs: https://repo.radeon.com/rocm/apt/7.2
Suites: noble
Components: main
Enabled: no
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBFx...
 -----END PGP PUBLIC KEY BLOCK-----
"""
    got = apt_sources.parse_deb822(text, "/etc/apt/sources.list.d/x.sources")
    assert [(s.uri, s.suites, s.components, s.signed_by, s.enabled) for s in got] == [
        ("http://archive.ubuntu.com/ubuntu/", ("noble", "noble-updates"), ("main", "universe"),
         "/usr/share/keyrings/ubuntu-archive-keyring.gpg", True),
        ("http://mirror.example/ubuntu/", ("noble", "noble-updates"), ("main", "universe"),
         "/usr/share/keyrings/ubuntu-archive-keyring.gpg", True),
        ("https://repo.radeon.com/rocm/apt/7.2", ("noble",), ("main",), "inline", False),
    ]  # fmt: skip


def test_users_and_groups():
    passwd = users.parse_passwd(
        "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\nbad:line\n"
    )
    groups = users.parse_group("root:x:0:\nvideo:x:44:alice,bob\nrender:x:992:\nalice:x:1000:\n")
    alice = next(e for e in passwd if e.name == "alice")
    assert users.groups_of(alice, groups) == ("video", "alice")


@pytest.mark.parametrize(
    "line, want",
    [("crw-rw---- root render", (0o660, "root", "render")), ("crw-rw-rw- root root", (0o666, "root", "root")),
     ("crw------- root root", (0o600, "root", "root"))],
)  # fmt: skip
def test_parse_ls_mode(line, want):
    assert devices.parse_ls_mode(line) == want


@pytest.mark.parametrize(
    "mode, owner, group, user, want",
    [
        (0o660, 0, "render", User("alice", 1000, ("alice", "video")), False),
        (0o660, 0, "render", User("alice", 1000, ("render",)), True),
        (0o666, 0, "root", User("alice", 1000, ()), True),
        (0o600, 1000, "alice", User("alice", 1000, ()), True),
        (0o000, 0, "root", User("root", 0, ()), True),
        (0o660, 0, "render", None, None),
    ],
)
def test_can_open(mode, owner, group, user, want):
    assert devices.can_open(mode, owner, group, user) is want


@pytest.mark.parametrize(
    "text, want",
    [
        ("__version__ = '2.6.0+cu126'\ncuda: Optional[str] = '12.6'\nhip: Optional[str] = None\n", ("2.6.0+cu126", "12.6", None)),
        ("__version__ = '2.7.1+rocm6.3'\ncuda: Optional[str] = None\nhip: Optional[str] = '6.3.42131-fa1d09cbd'\n",
         ("2.7.1+rocm6.3", None, "6.3.42131-fa1d09cbd")),
        ("__version__ = '2.7.0+cpu'\ncuda = None\nhip = None\n", ("2.7.0+cpu", None, None)),
    ],
)  # fmt: skip
def test_torch_version_py(text, want):
    t = python_env.parse_torch_version_py(text)
    assert (t.version, t.cuda, t.hip) == want


@pytest.mark.parametrize(
    "version, cuda, hip",
    [("2.6.0+cu126", "12.6", None), ("2.7.0+cu128", "12.8", None), ("2.7.1+rocm6.3", None, "6.3")],
)
def test_torch_from_local_version(version, cuda, hip):
    t = python_env.torch_from_local_version(version)
    assert (t.cuda, t.hip) == (cuda, hip)


@pytest.mark.parametrize(
    "name, want",
    [
        ("torch", True),
        ("nvidia_cudnn_cu12", True),
        ("Flash_Attn", True),
        ("rocm-smi", True),
        ("numpy", False),
        ("jaxlib", True),
    ],
)
def test_relevant_distributions(name, want):
    assert python_env.relevant(name) is want


@settings(max_examples=300, deadline=None)
@given(name=st.text(alphabet="-_.aZ9\u00e9", max_size=12))
@example(name="-_.Flash__Attn..-")
@example(name="")
def test_normalize_is_pep_503s_substitution(name):
    import re

    assert python_env.normalize(name) == re.sub(r"[-_.]+", "-", name).lower()


def test_cuda_and_rocm_version_files():
    assert toolkits.parse_cuda_version_json('{"cuda": {"name": "CUDA SDK", "version": "12.8.1"}}') == "12.8.1"
    assert toolkits.parse_cuda_version_txt("CUDA Version 11.0.228\n") == "11.0.228"
    assert toolkits.parse_rocm_version("7.2.0-43\n") == "7.2.0"
    assert toolkits.parse_rocm_version("6.3.1-48") == "6.3.1"
    for bad in ("", "rocm", "7.x"):
        with pytest.raises(ValueError):
            toolkits.parse_rocm_version(bad)


def test_environment_selection():
    env = {
        "HSA_OVERRIDE_GFX_VERSION": "11.0.0",
        "HOME": "/root",
        "PATH": "/usr/bin:/usr/local/cuda-12.8/bin:/home/u/shipping/bin:/opt/rocm/bin",
    }
    assert environment.select(env) == {
        "HSA_OVERRIDE_GFX_VERSION": "11.0.0",
        "PATH": "/usr/local/cuda-12.8/bin:/opt/rocm/bin",
    }


@pytest.mark.parametrize(
    "text, want",
    [("12:devices:/docker/3f9c2b7e1a04\n", "docker"), ("0::/kubepods/burstable/pod1\n", "kubernetes"), ("0::/\n", None),
     ("0::/machine.slice/libpod-abc.scope\n", "podman")],
)  # fmt: skip
def test_cgroup_container(text, want):
    assert plat.parse_cgroup_container(text) == want


@pytest.mark.parametrize(
    "data, stanzas",
    [
        (b"", []),
        (b"Package: a\nVersion: 1", [{"Package": "a", "Version": "1"}]),  # no final newline
        (  # CRLF lines, a CRLF blank line between stanzas
            b"Package: a\r\nVersion: 1\r\n\r\nPackage: b\r\nVersion: 2\r\n",
            [{"Package": "a", "Version": "1"}, {"Package": "b", "Version": "2"}],
        ),
        (  # a whitespace-only line ends a stanza where a second Package follows (a hand-made file)
            b"Package: a\n \t\nPackage: b\nVersion: 3\n",
            [{"Package": "a"}, {"Package": "b", "Version": "3"}],
        ),
        (  # without a second Package, a whitespace-only line does not split the stanza
            b"Package: a\n \nStatus: install ok installed\n",
            [{"Package": "a", "Status": "install ok installed"}],
        ),
        (  # ... also where another piece of the same file is split
            b"Package: a\n \nStatus: install ok installed\n\nPackage: b\n \nPackage: c\n",
            [{"Package": "a", "Status": "install ok installed"}, {"Package": "b"}, {"Package": "c"}],
        ),
        (  # the first of a field given twice; fields only at the start of a line
            b"Package: a\nVersion: 1\nVersion: 2\nDescription: x\n Version: 9\nXVersion: 8\n",
            [{"Package": "a", "Version": "1"}],
        ),
        (b"Package: caf\xc3\xa9\nVersion: \xff1\n", [{"Package": "café", "Version": "\ufffd1"}]),
        (b"\n\n\nPackage: a\n\n\n\n", [{"Package": "a"}]),
    ],
)
def test_dpkg_stanzas(data, stanzas):
    assert dpkg.parse_status(data) == stanzas
    assert dpkg.parse_status(data.decode("utf-8", "replace")) == stanzas  # text gives the same


_LINES = st.sampled_from(
    [
        b"Package: a", b"Package: b", b"Status: install ok installed", b"Status: deinstall ok config-files",
        b"Architecture: amd64", b"Architecture: i386", b"Version: 1.0", b"Version: 2:3.4-5",
        b"Priority: optional", b"Multi-Arch: same", b" Version: 9 (a continuation line)", b" .",
        b"Description: Status: inside", b"Version:7", b"Status:  install ok unpacked \r", b"XPackage: z",
        b"Version: 3\r", b"Package: a\x1c", b"Architecture: all ", b"Status: install ok  installed",
        b"Package: caf\xc3\xa9", b"Version: 1\xc2\xa0",
    ]
)  # fmt: skip


_DPKG_WRITES = (  # a stanza in dpkg's own order and shape (Essential sits before Status)
    b"Package: {name}\nEssential: yes\nStatus: install ok installed\nPriority: required\n"
    b"Maintainer: Debian <x@debian.org>\nArchitecture: amd64\nMulti-Arch: foreign\nVersion: 1.0\n"
    b"Depends: libc6\nDescription: a package\n Version: 9 (a continuation line)\n .\n"
)
_VALUES = st.sampled_from(
    [b"a", b"2:1.0-1~b+c", b"amd64", b"all", b"caf\xc3\xa9", b"a\x1c", b"3\r", b"x ", b" y", b"", b"\xff"]
)
_STATUSES = st.sampled_from(
    [b"install ok installed", b"deinstall ok config-files", b"install reinstreq half-installed", b"install ok",
     b"install  ok installed", b"install ok installed ", b"hold ok unpacked\r", b"install ok triggers-awaited",
     b"install ok "]
)  # fmt: skip
# A stanza in dpkg's order with any values in its four fields, some not what dpkg writes.
_ORDERED = st.builds(
    lambda name, status, arch, version: b"Package: %s\nStatus: %s\nPriority: optional\nArchitecture: %s\n"
    b"Version: %s\nDescription: d\n more" % (name, status, arch, version),
    _VALUES, _STATUSES, _VALUES, _VALUES,
)  # fmt: skip
_SEPARATORS = st.sampled_from([b"\n", b"\n\n", b"\n\n\n", b"\n \t\n", b"\n\t\n", b"\r\n\r\n", b"\n\r\n", b""])


@settings(max_examples=400, deadline=None)
@given(
    stanzas=st.lists(
        st.one_of(
            st.lists(_LINES, min_size=1, max_size=12).map(b"\n".join),
            st.sampled_from([b"a", b"b", b"dpkg"]).map(lambda n: _DPKG_WRITES.replace(b"{name}", n)),
            _ORDERED,
        ),
        min_size=1,
        max_size=5,
    ),
    separators=st.lists(_SEPARATORS, min_size=5, max_size=5),
)
def test_dpkg_one_pass_reads_what_the_general_path_reads(stanzas, separators):
    # records reads a file dpkg wrote with one findall (dpkg_order), any other with
    # parse_status: where the one pass answers, it must give the general path's records.
    raw = b"".join(stanza + sep for stanza, sep in zip(stanzas, separators, strict=False))
    fast = dpkg.dpkg_order(raw)
    assert fast is None or fast == dpkg.general_records(raw)


@settings(max_examples=400, deadline=None)
@given(stanza=_ORDERED)
def test_dpkg_one_pass_takes_only_the_values_dpkg_writes(stanza):
    # One stanza in dpkg's order, its values odd or not: the one pass reads it as the general
    # path does, or leaves it to that path.
    fast = dpkg.dpkg_order(stanza)
    assert fast is None or fast == dpkg.general_records(stanza)


def test_a_file_as_dpkg_writes_it_takes_the_one_pass_path():
    stanza = (
        b"Package: adduser\nStatus: install ok installed\nPriority: important\nSection: admin\n"
        b"Maintainer: Debian Adduser Developers <adduser@packages.debian.org>\nArchitecture: all\n"
        b"Multi-Arch: foreign\nVersion: 3.134\nDepends: passwd\nDescription: add and remove users\n"
        b" Version: 9 (a continuation line)\n"
    )
    two = stanza + b"\n" + stanza.replace(b"adduser", b"bash").replace(b"Priority", b"Essential: yes\nPriority")
    fast = dpkg.dpkg_order(two)
    assert fast == [
        dpkg.Record("adduser", "install", "ok", "installed", "all", "3.134"),
        dpkg.Record("bash", "install", "ok", "installed", "all", "3.134"),
    ]
    # Built without Record's __init__, yet the same record: named, frozen, hashed alike.
    assert fast[1].package == "bash" and fast[1].version == "3.134"
    assert hash(fast[0]) == hash(dpkg.Record("adduser", "install", "ok", "installed", "all", "3.134"))
    with pytest.raises(FrozenError):
        fast[0].version = "9"
    # A second Version before Architecture (not dpkg's order) sends the file the general way,
    # where the first is kept.
    odd = two.replace(b"Priority: important", b"Version: 1.0", 1)
    assert dpkg.dpkg_order(odd) is None
    assert [r.version for r in dpkg.records(odd)] == ["1.0", "3.134"]
    # So does a Package line no match begins: a stanza without a Status, ...
    assert dpkg.dpkg_order(two + b"\nPackage: c\nVersion: 1\n") is None
    # ... (a "Package: " inside a line is no Package line, and is no match either) ...
    inside = b"\nDescription: Package: d\nStatus: install ok installed\nArchitecture: all\nVersion: 2\n"
    assert dpkg.dpkg_order(two + inside + b"\nPackage: c\nVersion: 1\n") is None
    assert [r.package for r in dpkg.records(two + inside + b"\nPackage: c\nVersion: 1\n")] == ["adduser", "bash", "c"]
    # ... a continuation line before the Version, or a whitespace-only line parting stanzas.
    assert dpkg.dpkg_order(two.replace(b"Section: admin", b" continued", 1)) is None
    assert dpkg.dpkg_order(two.replace(b"\n\nPackage: bash", b"\n \nPackage: bash")) is None
    # A whitespace-only line inside a stanza after three newlines ends it (parse_status splits
    # such a piece again), so the Status below it is not adduser's, on either path.
    for blank in (b" ", b"\t", b"\r", b"\f", b"\v"):
        split = b"\n\n\n" + stanza.replace(b"\nStatus:", b"\n" + blank + b"\nStatus:")
        assert dpkg.dpkg_order(split) is None
        assert dpkg.records(split) == [dpkg.Record("adduser", None, None, None, None, None)]


def test_a_file_as_dpkg_writes_it_never_reaches_the_general_reader(monkeypatch):
    status = _DPKG_WRITES.replace(b"{name}", b"dpkg") + b"\n" + _DPKG_WRITES.replace(b"{name}", b"bash")

    def general(data):
        raise AssertionError("parse_status was asked")

    monkeypatch.setattr(dpkg, "parse_status", general)
    assert dpkg.packages_from_status(status).installed == {"bash": "1.0", "dpkg": "1.0"}


def test_dpkg_a_stanza_with_an_empty_package_name_is_no_package():
    status = b"Package: \nStatus: install ok installed\nVersion: 1\n\nPackage: a\nStatus: install ok installed\nVersion: 2\n"
    pk = dpkg.packages_from_status(status)
    assert pk.installed == {"a": "2"} and pk.unconfigured == ()


def test_dpkg_stanzas_a_piece_that_starts_with_a_newline_is_split_too():
    # Three newlines leave a piece starting "\nPackage:"; a whitespace-only line inside it
    # still separates its stanzas.
    raw = b"Package: a\n\n\nPackage: b\n \nPackage: c\nVersion: 3"
    assert dpkg.parse_status(raw) == [{"Package": "a"}, {"Package": "b"}, {"Package": "c", "Version": "3"}]


def test_dpkg_stanzas_without_a_package_or_a_three_word_status_are_not_packages():
    status = (
        b"Status: install ok installed\nVersion: 1\n\n"  # no Package
        b"Package: two-words\nStatus: install ok\nVersion: 2\n\n"  # a malformed Status
        b"Package: fine\nStatus: install ok installed\nVersion: 3\n"
    )
    pk = dpkg.packages_from_status(status)
    assert pk.installed == {"fine": "3"} and pk.unconfigured == ()


def _dpkg_root(tmp_path, status: bytes | None, journal: dict[str, bytes] | None = None, arch: str | None = None):
    from gpuenv.probe.host import Sysroot

    base = tmp_path / "var/lib/dpkg"
    base.mkdir(parents=True)
    if status is not None:
        (base / "status").write_bytes(status)
    if journal is not None:
        (base / "updates").mkdir()
        for name, text in journal.items():
            (base / "updates" / name).write_bytes(text)
    if arch is not None:
        (base / "arch").write_text(arch)
    return Sysroot.at(str(tmp_path))


def test_dpkg_probe_without_a_status_file_is_unknown(tmp_path):
    assert dpkg.probe(_dpkg_root(tmp_path, None)) is None


def test_dpkg_probe_reads_the_journal_in_numeric_order_and_skips_other_names(tmp_path):
    stanza = "Package: amdgpu-dkms\nStatus: {}\nArchitecture: amd64\nVersion: {}\n".format
    host = _dpkg_root(
        tmp_path,
        b"Package: dpkg\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.22\n\n"
        + stanza("install ok installed", "1").encode(),
        {
            "9": stanza("install ok half-configured", "9").encode(),
            "10": stanza("install ok installed", "10").encode(),  # after 9: dpkg numbers them
            "tmp.i": stanza("install ok installed", "99").encode(),  # dpkg's temporary, not a record
        },
    )
    pk = dpkg.probe(host)
    assert pk.installed["amdgpu-dkms"] == "10" and pk.unconfigured == ()


def test_dpkg_probe_takes_the_native_architecture_from_the_arch_file_without_a_dpkg_stanza(tmp_path):
    host = _dpkg_root(
        tmp_path,
        b"Package: libc6\nStatus: install ok installed\nArchitecture: i386\nVersion: 2.36\n\n"
        b"Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.36\n",
        arch="amd64\ni386\n",
    )
    assert dpkg.probe(host).installed == {"libc6": "2.36", "libc6:i386": "2.36"}
    host = _dpkg_root(tmp_path / "none", b"Package: libc6\nStatus: install ok installed\nArchitecture: i386\nVersion: 2.36\n")
    assert dpkg.probe(host).installed == {"libc6": "2.36"}  # nothing says i386 is foreign


def test_dpkg_text_with_lone_surrogates_is_read_not_refused():
    assert dpkg.parse_status("Package: a\ud800b\nVersion: 1\n") == [{"Package": "a\ufffd\ufffd\ufffdb", "Version": "1"}]
