"""Container, WSL 2 and virtualization: where this Linux runs."""

from __future__ import annotations

from gpuenv.facts import Platform
from gpuenv.probe.host import Host

_DMI_VIRT = (
    ("qemu", "kvm"),
    ("kvm", "kvm"),
    ("vmware", "vmware"),
    ("virtualbox", "virtualbox"),
    ("innotek", "virtualbox"),
    ("xen", "xen"),
    ("amazon ec2", "amazon"),
    ("google compute engine", "google"),
    ("openstack", "kvm"),
    ("parallels", "parallels"),
)


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


def container(host: Host) -> str | None:
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


def is_wsl(host: Host, kernel_release: str) -> bool:
    rel = kernel_release.lower()
    return "microsoft" in rel or "wsl" in rel or host.exists("/dev/dxg")


def virtualization(host: Host) -> str | None:
    vendor = (host.read_optional("/sys/class/dmi/id/sys_vendor") or "").strip().lower()
    product = (host.read_optional("/sys/class/dmi/id/product_name") or "").strip().lower()
    both = f"{vendor} {product}"
    if "microsoft" in vendor and "virtual" in product:
        return "microsoft"
    for marker, kind in _DMI_VIRT:
        if marker in both:
            return kind
    return None


def probe(host: Host, kernel_release: str) -> Platform:
    return Platform(
        container=container(host), wsl=is_wsl(host, kernel_release), virtualization=virtualization(host)
    )
