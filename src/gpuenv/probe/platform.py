"""Container, WSL 2 and virtualization: where this Linux runs."""

from __future__ import annotations

import re

from gpuenv.facts import Platform
from gpuenv.probe.host import Sysroot
from gpuenv.probe.osinfo import in_cpuinfo

# DMI strings that name a hypervisor, tested with startswith in systemd's order: product_name
# (first, "to detect KVM over QEMU"), sys_vendor, board_vendor, bios_vendor, product_version
# (Hyper-V). systemd src/basic/virt.c, detect_vm_dmi_vendor() @ 0099e558.
DMI_FILES = ("product_name", "sys_vendor", "board_vendor", "bios_vendor", "product_version")
DMI_HYPERVISORS = (
    ("KVM", "kvm"),
    ("OpenStack", "kvm"),
    ("KubeVirt", "kvm"),
    ("Amazon EC2", "kvm"),  # Nitro, KVM-based; "*.metal" products are bare metal (below)
    ("Google Compute Engine", "kvm"),
    ("QEMU", "kvm"),
    ("VMware", "vmware"),
    ("VMW", "vmware"),
    ("innotek GmbH", "virtualbox"),
    ("VirtualBox", "virtualbox"),
    ("Xen", "xen"),
    ("Bochs", "bochs"),
    ("Parallels", "parallels"),
    ("BHYVE", "bhyve"),
    ("Hyper-V", "hyperv"),
    ("Apple Virtualization", "apple"),
)
VIRT_SOURCE = "https://github.com/systemd/systemd/blob/main/src/basic/virt.c"
# Cloud vendors by DMI field, as cloud-init's tools/ds-identify tells them apart (@ 04eacd06):
# (field, match, cloud); match ends with "*" for a prefix.
CLOUD_SOURCE = "https://github.com/canonical/cloud-init/blob/main/tools/ds-identify"
DMI_CLOUDS = (
    ("sys_vendor", "Amazon EC2", "aws"),
    ("product_name", "Google Compute Engine", "gcp"),
    ("chassis_asset_tag", "7783-7084-3265-9085-8269-3286-77", "azure"),
    ("chassis_asset_tag", "OracleCloud.com", "oracle"),
    ("product_name", "Alibaba Cloud ECS", "alibaba"),
    ("sys_vendor", "DigitalOcean", "digitalocean"),
    ("sys_vendor", "Hetzner", "hetzner"),
    ("sys_vendor", "Linode", "akamai"),
    ("sys_vendor", "Akamai", "akamai"),
    ("sys_vendor", "UpCloud", "upcloud"),
    ("sys_vendor", "Scaleway", "scaleway"),
    ("sys_vendor", "Vultr", "vultr"),
    ("product_name", "Exoscale*", "exoscale"),
    ("product_name", "OpenStack Nova", "openstack"),
    ("product_name", "OpenStack Compute", "openstack"),
    ("chassis_asset_tag", "OpenStack Nova", "openstack"),
    ("chassis_asset_tag", "OpenStack Compute", "openstack"),
)
# Firecracker writes this OEM ID into every ACPI table it builds (src/vmm/src/acpi/mod.rs).
FIRECRACKER_OEM_ID = b"FIRECK"


def parse_cgroup_container(text: str) -> str | None:
    """Container runtime named in /proc/1/cgroup paths (cgroup v1; v2 shows only ``0::/``)."""
    lowered = text.lower()
    for marker, kind in (
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("libpod", "podman"),
        ("lxc", "lxc"),
    ):
        if marker in lowered:
            return kind
    return None


def container(host: Sysroot) -> str | None:
    if host.exists("/var/run/secrets/kubernetes.io") or host.exists("/run/secrets/kubernetes.io"):
        return "kubernetes"
    if host.live:
        import os

        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return "kubernetes"
    if host.exists("/.dockerenv"):
        return "docker"
    if host.exists("/run/.containerenv"):
        return "podman"
    env = host.read_optional("/run/systemd/container")
    # systemd names WSL among its container types; WSL is the `wsl` fact, not a container.
    if env and env.strip() and env.strip() != "wsl":
        value = env.strip()
        return (
            value if value in ("docker", "podman", "lxc") else ("lxc" if value.startswith("lxc") else "other")
        )
    try:
        cgroup = host.read_optional("/proc/1/cgroup")
    except OSError:
        cgroup = None
    return parse_cgroup_container(cgroup or "")


def is_wsl(host: Sysroot, kernel_release: str) -> bool:
    rel = kernel_release.lower()
    return "microsoft" in rel or "wsl" in rel or host.exists("/dev/dxg")


def _dmi(host: Sysroot) -> dict[str, str]:
    out = {}
    for name in (*DMI_FILES, "chassis_asset_tag", "bios_version"):
        try:
            text = host.read_optional(f"/sys/class/dmi/id/{name}")
        except OSError:  # product_serial and friends are root-only; these are not, but be safe
            text = None
        if text and text.strip():
            out[name] = text.strip()
    return out


def _acpi_oem(host: Sysroot) -> tuple[bytes | None, bool]:
    """The OEM ID of the ACPI tables (bytes 10-15 of a table header), and whether a table was
    there but this process may not read it (they are root-only)."""
    denied = False
    for table in ("FACP", "DSDT"):
        try:
            head = host.read_bytes(f"/sys/firmware/acpi/tables/{table}", 16)
        except PermissionError:
            denied = True
            continue
        except OSError:
            continue
        if len(head) >= 16:
            return head[10:16], False
    return None, denied


def cloud_of(dmi: dict[str, str], hypervisor_uuid: str | None) -> tuple[str | None, str | None]:
    """(cloud, evidence) from the DMI strings (and Xen's /sys/hypervisor/uuid)."""
    for key, match, cloud in DMI_CLOUDS:
        value = dmi.get(key)
        if value is None:
            continue
        if (value.startswith(match[:-1]) if match.endswith("*") else value == match):
            return cloud, f"DMI {key} {value!r}"
    if hypervisor_uuid and hypervisor_uuid.lower().startswith("ec2"):
        return "aws", "/sys/hypervisor/uuid starts with ec2"
    return None, None


def detect(host: Sysroot, cmdline: str | None = None) -> tuple[str | None, str | None, str | None]:
    """(virtualization, cloud, evidence): the hypervisor this Linux runs under (None: bare metal
    or not known), the cloud the DMI names, and which evidence decided."""
    dmi = _dmi(host)
    hv_type = (host.read_optional("/sys/hypervisor/type") or "").strip() or None
    hv_uuid = (host.read_optional("/sys/hypervisor/uuid") or "").strip() or None
    cloud, cloud_why = cloud_of(dmi, hv_uuid)
    kind = why = None
    oem, oem_denied = _acpi_oem(host)
    if oem == FIRECRACKER_OEM_ID:
        kind, why = "firecracker", "ACPI OEM ID FIRECK"
    elif not dmi and cmdline and "virtio_mmio.device=" in cmdline:
        kind, why = "firecracker", "virtio_mmio.device= on the kernel command line and no DMI (a Firecracker-style microVM)"
    elif hv_type == "xen":
        kind, why = "xen", "/sys/hypervisor/type xen"
    if kind is None:
        for key in DMI_FILES:
            value = dmi.get(key)
            hit = next((k for marker, k in DMI_HYPERVISORS if value and value.startswith(marker)), None)
            if hit:
                kind, why = hit, f"DMI {key} {value!r}"
                break
        if kind is None and dmi.get("sys_vendor", "").startswith("Microsoft Corporation") and (
            dmi.get("product_name") == "Virtual Machine"
        ):
            kind, why = "hyperv", "DMI sys_vendor 'Microsoft Corporation', product_name 'Virtual Machine'"
        # systemd: EC2 "*.metal" instances carry Amazon's DMI strings but run on bare metal.
        if kind is not None and dmi.get("sys_vendor") == "Amazon EC2":
            if re.search(r"\.metal($|-)", dmi.get("product_name", "")):
                kind, why = None, f"DMI product_name {dmi['product_name']!r} (an EC2 bare-metal instance)"
    if kind is None:
        compatible = (host.read_optional("/proc/device-tree/hypervisor/compatible") or "").strip("\0\n ")
        if compatible:
            kind = "kvm" if compatible.startswith("linux,kvm") else "xen" if "xen" in compatible else (
                "vmware" if "vmware" in compatible else "vm")
            why = f"/proc/device-tree/hypervisor/compatible {compatible!r}"
        elif any("fw-cfg" in n for n in host.listdir("/proc/device-tree")):
            kind, why = "kvm", "QEMU fw-cfg in /proc/device-tree"
    if kind is None and why is None and _cpu_hypervisor_flag(host):
        unnamed = (
            "the ACPI tables that could name it are readable only by root"
            if oem_denied
            else "nothing readable here names it"
        )
        kind, why = "vm", f"/proc/cpuinfo flags: hypervisor (hypervisor not named: {unnamed})"
    evidence = "; ".join(x for x in (why, cloud_why if cloud_why != why else None) if x) or None
    return kind, cloud, evidence


def _cpu_hypervisor_flag(host: Sysroot) -> bool:
    try:
        return bool(in_cpuinfo(host, cpu_hypervisor_flag))
    except OSError:
        return False


def cpu_hypervisor_flag(cpuinfo: str) -> bool | None:
    """Whether the first "flags" line of cpuinfo names "hypervisor"; None without one."""
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return "hypervisor" in line.split(":", 1)[-1].split()
    return None


def virtualization(host: Sysroot) -> str | None:
    return detect(host, host.read_optional("/proc/cmdline"))[0]


# Windows keeps a directory named by its full build under C:\Windows\servicing\Version; WSL mounts
# C: at /mnt/c unless /etc/wsl.conf's [automount] root says otherwise.
_BUILD = r"^10\.0\.\d{5}\.\d+$"


def windows_build(host: Sysroot) -> str | None:
    """The Windows build a WSL 2 guest runs on, read from the mounted Windows directory."""
    root = "/mnt/"
    conf = host.read_optional("/etc/wsl.conf") or ""
    section = ""
    for line in conf.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
        elif section == "automount" and line.split("=", 1)[0].strip().lower() == "root" and "=" in line:
            root = line.split("=", 1)[1].strip().strip("\"'") or root
    names = [n for n in host.listdir(f"{root.rstrip('/')}/c/Windows/servicing/Version") if re.match(_BUILD, n)]
    return max(names, key=lambda n: tuple(int(x) for x in n.split(".")), default=None)


def probe(host: Sysroot, kernel_release: str) -> Platform:
    wsl = is_wsl(host, kernel_release)
    # WSL 2 runs in Hyper-V, but the `wsl` fact says so: no DMI is exposed there anyway.
    kind, cloud, evidence = (None, None, None) if wsl else detect(host, host.read_optional("/proc/cmdline"))
    return Platform(
        container=container(host),
        wsl=wsl,
        virtualization=kind,
        cloud=cloud,
        virtualization_evidence=evidence,
        windows_build=windows_build(host) if wsl else None,
    )
