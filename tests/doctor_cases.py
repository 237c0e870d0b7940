"""Facts cases for the doctor checks: three healthy base machines (tests/facts/doctor-*.json) and,
per catalog code, a variant derived from one of them by patching a few fields; and the builders
the check tests make their machines with (a healthy box edited, GPU and OS records)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

FACTS_DIR = Path(__file__).resolve().parent / "facts"
BASES = ("doctor-healthy-rocm", "doctor-healthy-cuda", "doctor-cpu-laptop")


def base(name: str) -> dict:
    return json.loads((FACTS_DIR / f"{name}.json").read_text())


def setp(doc: dict, path: str, value) -> None:
    """setp(doc, "kernel.secure_boot", True)."""
    value = copy.deepcopy(value)  # a case's literal must not be shared with (and mutated by) a test
    *parents, last = path.split(".")
    for p in parents:
        doc = doc[int(p)] if isinstance(doc, list) else doc[p]
    if isinstance(doc, list):
        doc[int(last)] = value
    else:
        doc[last] = value


def _nvidia_driver(doc: dict, version: str) -> None:
    doc["nvidia"]["driver_version"] = version
    doc["nvidia"]["module_version"] = version
    branch = version.split(".")[0]
    pk = doc["packages"]["installed"]
    for name in [n for n in pk if "570" in n]:
        del pk[name]
    for name in (f"nvidia-driver-{branch}-open", f"nvidia-dkms-{branch}-open", f"libnvidia-compute-{branch}"):
        pk[name] = f"{version}-0ubuntu1"
    doc["kernel"]["dkms"][0]["version"] = version


def _gpu(doc: dict, **kw) -> dict:
    g = copy.deepcopy(doc["gpus"][0])
    g.update(kw)
    return g


def _p(*edits):
    """A patch made of (path, value) edits and callables."""

    def apply(doc):
        for e in edits:
            if callable(e):
                e(doc)
            else:
                setp(doc, *e)

    return apply


def installed(name: str, version: str):
    """An edit: the package ``name`` installed at ``version``."""
    return lambda d: d["packages"]["installed"].__setitem__(name, version)


def nvidia_gpu(pci_id: str, name: str | None, cc: str | None, architecture: str | None) -> dict:
    """GPU fields (over a healthy box's own) of an NVIDIA GPU of compute capability ``cc``."""
    return {"pci_id": pci_id, "name": name, "compute_capability": cc, "architecture": architecture}


def amd_gpu(pci_id: str, name: str, gfx: str, architecture: str, integrated: bool = False) -> dict:
    """GPU fields (over a healthy box's own) of an AMD GPU of gfx target ``gfx``."""
    return {"pci_id": pci_id, "name": name, "gfx_target": gfx, "architecture": architecture, "integrated": integrated}


GTX1080TI = nvidia_gpu("10de:1b06", "NVIDIA GeForce GTX 1080 Ti", "6.1", "Pascal")
RTX5090 = nvidia_gpu("10de:2b85", "NVIDIA GeForce RTX 5090", "12.0", "Blackwell")
RX6700XT = amd_gpu("1002:73df", "AMD Radeon RX 6700 XT", "gfx1031", "RDNA2")
MI300X = amd_gpu("1002:74a1", "AMD Instinct MI300X", "gfx942", "CDNA3")
DEBIAN = {
    "id": "debian",
    "version_id": "12",
    "codename": "bookworm",
    "id_like": [],
    "pretty_name": "Debian GNU/Linux 12 (bookworm)",
}


# code -> (base, patch, target text or None, expected severity)
CASES: dict[str, tuple[str, object, str | None, str]] = {
    "platform.wsl": (
        "doctor-healthy-cuda",
        _p(("platform.wsl", True), ("gpus", []), ("kernel.release", "5.15.167.4-microsoft-standard-WSL2")),
        None,
        "error",
    ),
    "platform.container": (
        "doctor-healthy-rocm",
        _p(("platform.container", "docker"), ("device_nodes./dev/kfd.exists", False)),
        None,
        "error",
    ),
    "platform.arch-unsupported": ("doctor-healthy-rocm", _p(("host.arch", "aarch64")), None, "error"),
    "os.unsupported": (
        "doctor-healthy-rocm",
        _p(
            (
                "os",
                {
                    "id": "fedora",
                    "version_id": "41",
                    "codename": None,
                    "id_like": [],
                    "pretty_name": "Fedora Linux 41",
                },
            )
        ),
        None,
        "error",
    ),
    "os.point-release": (
        "doctor-healthy-rocm",
        _p(("os.pretty_name", "Ubuntu 24.04.1 LTS")),
        None,
        "warning",
    ),
    "kernel.unsupported": (
        "doctor-healthy-rocm",
        _p(
            ("kernel.release", "6.11.0-29-generic"),
            lambda d: setp(d, "kernel.dkms", [{**d["kernel"]["dkms"][0], "kernel": "6.11.0-29-generic"}]),
        ),
        None,
        "warning",
    ),
    "kernel.headers-missing": ("doctor-healthy-rocm", _p(("kernel.headers_installed", False)), None, "error"),
    "kernel.next-boot-no-module": (
        "doctor-healthy-rocm",
        _p(installed("linux-image-6.8.0-85-generic", "6.8.0-85.85")),
        None,
        "error",
    ),
    "kernel.dkms-not-built": (
        "doctor-healthy-rocm",
        _p(
            (
                "kernel.dkms",
                [
                    {
                        "module": "amdgpu",
                        "version": "6.16.6-2255209.24.04",
                        "kernel": "6.8.0-79-generic",
                        "status": "built",
                    }
                ],
            )
        ),
        None,
        "error",
    ),
    # A fresh box about to get the DKMS driver (the healthy box without amdgpu-dkms) under Secure Boot.
    "kernel.secure-boot": (
        "doctor-healthy-rocm",
        _p(
            ("kernel.secure_boot", True),
            ("kernel.dkms", []),
            lambda d: [d["packages"]["installed"].pop(n) for n in ("amdgpu-dkms", "amdgpu-dkms-firmware")],
        ),
        "rocm",
        "warning",
    ),
    "kernel.reboot-required": (
        "doctor-healthy-cuda",
        _p(("nvidia.module_version", "565.57.01")),
        None,
        "warning",
    ),
    "kernel.iommu": (
        "doctor-healthy-rocm",
        _p(
            lambda d: setp(
                d,
                "gpus",
                [
                    _gpu(
                        d,
                        pci_id="1002:74a1",
                        name="AMD Instinct MI300X",
                        gfx_target="gfx942",
                        architecture="CDNA3",
                        pci_slot=f"0000:{n:02x}:00.0",
                    )
                    for n in (0x11, 0x21)
                ],
            ),
        ),
        None,
        "info",
    ),
    "gpu.none": ("doctor-cpu-laptop", _p(), "rocm", "error"),
    "gpu.unknown": (
        "doctor-healthy-rocm",
        _p(
            lambda d: d["gpus"].append(
                _gpu(d, pci_id="1002:fffe", name=None, gfx_target=None, pci_slot="0000:04:00.0")
            )
        ),
        None,
        "warning",
    ),
    # The nvidia module is loaded but did not take the GPU (a branch too new or too old for it).
    "gpu.no-driver": ("doctor-healthy-cuda", _p(("gpus.0.kernel_driver", None)), None, "error"),
    "gpu.mixed-vendors": (
        "doctor-healthy-rocm",
        _p(lambda d: d["gpus"].append(base("doctor-healthy-cuda")["gpus"][0])),
        None,
        "info",
    ),
    "amd.igpu-present": (
        "doctor-healthy-rocm",
        _p(
            lambda d: d["gpus"].append(
                _gpu(
                    d,
                    pci_id="1002:164e",
                    name="Raphael",
                    gfx_target="gfx1036",
                    integrated=True,
                    pci_slot="0000:10:00.0",
                )
            )
        ),
        None,
        "warning",
    ),
    "nvidia.nouveau-loaded": (
        "doctor-healthy-cuda",
        _p(("gpus.0.kernel_driver", "nouveau"), ("kernel.modules_loaded", ["nouveau"])),
        None,
        "error",
    ),
    "nvidia.driver-missing": (
        "doctor-healthy-cuda",
        _p(
            ("gpus.0.kernel_driver", None),
            ("kernel.modules_loaded", []),
            ("kernel.dkms", []),
            ("nvidia", {"nvml": "not_installed"}),
            lambda d: [
                d["packages"]["installed"].pop(n) for n in list(d["packages"]["installed"]) if "570" in n
            ],
        ),
        None,
        "error",
    ),
    "nvidia.driver-not-loaded": (
        "doctor-healthy-cuda",
        _p(
            ("gpus.0.kernel_driver", None),
            ("kernel.modules_loaded", []),
            ("nvidia", {"nvml": "driver_not_loaded"}),
        ),
        None,
        "error",
    ),
    "nvidia.version-mismatch": (
        "doctor-healthy-cuda",
        _p(("nvidia.nvml", "version_mismatch")),
        None,
        "error",
    ),
    "nvidia.driver-too-old": (
        "doctor-healthy-cuda",
        # Below 525.60.13, the CUDA 12 minor-version compatibility floor: the installed 12.8 cannot run.
        _p(lambda d: _nvidia_driver(d, "520.61.05")),
        None,
        "error",
    ),
    "nvidia.module-flavor": (
        "doctor-healthy-cuda",
        _p(
            ("gpus.0.pci_id", "10de:2b85"),
            ("gpus.0.name", "NVIDIA GeForce RTX 5090"),
            ("gpus.0.compute_capability", "12.0"),
            ("gpus.0.architecture", "Blackwell"),
            ("nvidia.kernel_module", "proprietary"),
        ),
        None,
        "error",
    ),
    "nvidia.gpu-dropped": (
        "doctor-healthy-cuda",
        _p(
            ("gpus.0.pci_id", "10de:1b06"),
            ("gpus.0.name", "NVIDIA GeForce GTX 1080 Ti"),
            ("gpus.0.compute_capability", "6.1"),
            ("gpus.0.architecture", "Pascal"),
            lambda d: _nvidia_driver(d, "590.48.01"),
        ),
        None,
        "error",
    ),
    "nvidia.persistence-off": (
        "doctor-healthy-cuda",
        _p(("nvidia.persistence_mode", False)),
        None,
        "info",
    ),
    "cuda.mixed-install": (
        "doctor-healthy-cuda",
        _p(installed("cuda-drivers", "570.133.20-1")),
        None,
        "error",
    ),
    "cuda.forward-compat-unsupported": (
        "doctor-healthy-cuda",
        _p(
            ("environment.LD_LIBRARY_PATH", "/usr/local/cuda-12.8/compat"),
            installed("cuda-compat-12-8", "570.172.08-1"),
        ),
        None,
        "error",
    ),
    "cuda.not-on-path": ("doctor-healthy-cuda", _p(("environment", {})), None, "info"),
    "amd.driver-missing": (
        "doctor-healthy-rocm",
        _p(("gpus.0.kernel_driver", None), ("kernel.modules_loaded", [])),
        None,
        "error",
    ),
    "amd.kfd-missing": (
        "doctor-healthy-rocm",
        _p(("amd.kfd", False), ("device_nodes./dev/kfd.exists", False)),
        None,
        "error",
    ),
    "amd.no-device-access": (
        "doctor-healthy-rocm",
        _p(
            ("user.groups", ["alice", "sudo"]),
            ("device_nodes./dev/kfd.accessible", None),
            ("device_nodes./dev/dri/renderD128.accessible", None),
        ),
        None,
        "error",
    ),
    "amd.gpu-unsupported": (
        "doctor-healthy-rocm",
        _p(
            ("gpus.0.pci_id", "1002:73df"),
            ("gpus.0.name", "AMD Radeon RX 6700 XT"),
            ("gpus.0.gfx_target", "gfx1031"),
            ("gpus.0.architecture", "RDNA2"),
        ),
        None,
        "error",
    ),
    "amd.gpu-preview": (
        "doctor-healthy-rocm",
        _p(("os", DEBIAN)),
        None,
        "warning",
    ),
    "amd.hsa-override": (
        "doctor-healthy-rocm",
        _p(("environment.HSA_OVERRIDE_GFX_VERSION", "12.0.1")),
        None,
        "warning",
    ),
    "rocm.driver-mismatch": (
        "doctor-healthy-rocm",
        _p(
            ("apt_sources.1.uri", "https://repo.radeon.com/amdgpu/6.2.4/ubuntu"),
            installed("amdgpu-dkms", "1:6.8.5.60204-2041575.24.04"),  # ROCm 6.2.4's driver
        ),
        None,
        "warning",
    ),
    "rocm.multiple-versions": (
        "doctor-healthy-rocm",
        _p(
            lambda d: d["toolkits"]["rocm"].append(
                {"version": "6.4.1-120", "path": "/opt/rocm-6.4.1", "source": "package"}
            )
        ),
        None,
        "info",
    ),
    "rocm.mixed-streams": (
        "doctor-healthy-rocm",
        _p(
            lambda d: d["toolkits"]["rocm"].append(
                {"version": "7.14.0", "path": "/opt/rocm/core-7.14", "source": "package", "stream": "therock"}
            )
        ),
        None,
        "warning",
    ),
    "apt.source-insecure": ("doctor-healthy-rocm", _p(("apt_sources.2.signed_by", None)), None, "error"),
    "apt.source-mismatch": ("doctor-healthy-rocm", _p(("apt_sources.2.suites", ["jammy"])), None, "error"),
    "dpkg.interrupted": (
        "doctor-healthy-rocm",
        _p(("packages.unconfigured", ["amdgpu-dkms"])),
        None,
        "error",
    ),
    "stack.both-installed": (
        "doctor-healthy-rocm",
        _p(
            installed("cuda-toolkit-12-8", "12.8.1-1"),
            lambda d: d["gpus"].append(base("doctor-healthy-cuda")["gpus"][0]),
        ),
        None,
        "warning",
    ),
    "stack.leftovers": ("doctor-cpu-laptop", _p(installed("cuda-toolkit-12-8", "12.8.1-1")), None, "warning"),
    "torch.cpu-build": (
        "doctor-healthy-cuda",
        _p(("python.torch", {"version": "2.7.0+cpu", "cuda": None, "hip": None, "arch_list": []})),
        None,
        "warning",
    ),
    "torch.wrong-vendor": (
        "doctor-healthy-rocm",
        _p(("python.torch", {"version": "2.7.0+cu128", "cuda": "12.8", "hip": None, "arch_list": None})),
        None,
        "error",
    ),
    "torch.driver-too-old": (
        "doctor-healthy-cuda",
        _p(lambda d: _nvidia_driver(d, "470.256.02")),
        None,
        "error",
    ),
    "torch.arch-missing": (
        "doctor-healthy-cuda",
        _p(
            ("gpus.0.pci_id", "10de:1b06"),
            ("gpus.0.name", "NVIDIA GeForce GTX 1080 Ti"),
            ("gpus.0.compute_capability", "6.1"),
            ("gpus.0.architecture", "Pascal"),
            ("nvidia.kernel_module", "proprietary"),
        ),
        None,
        "error",
    ),
    "torch.rocm-mismatch": (
        "doctor-healthy-rocm",
        _p(
            (
                "python.torch",
                {"version": "2.7.0+rocm6.3", "cuda": None, "hip": "6.3.42131", "arch_list": None},
            )
        ),
        None,
        "warning",
    ),
    "torch.ld-library-path": (
        "doctor-healthy-cuda",
        _p(("environment.LD_LIBRARY_PATH", "/usr/local/cuda-12.4/lib64")),
        None,
        "error",
    ),
    "torch.not-installed": (
        "doctor-healthy-cuda",
        _p(("python.torch", None), ("python.packages", {})),
        None,
        "info",
    ),
    "doctor.probe-failed": (
        "doctor-healthy-rocm",
        _p(("errors", [{"probe": "dpkg", "message": "/var/lib/dpkg/status: permission denied"}])),
        None,
        "warning",
    ),
    "doctor.matrices-stale": (
        "doctor-healthy-rocm",
        # newer than every bundled release (10.1.0 is the newest): a hypothetical 10.2.0, not a release read anywhere
        _p(("toolkits.rocm", [{"version": "10.2.0", "path": "/opt/rocm/core-10.2", "source": "package", "stream": "therock"}])),
        None,
        "info",
    ),
    "matrices.stale": (
        "doctor-healthy-rocm",
        # probed 2027-06-01, 176 days after the bundle (2026-12-07), running a hypothetical 10.2.0 (#42)
        _p(("collected_at", "2027-06-01T10:00:00Z"),
           ("toolkits.rocm", [{"version": "10.2.0", "path": "/opt/rocm/core-10.2", "source": "package", "stream": "therock"}])),
        None,
        "warning",
    ),
    # -- codes gpuenv adds (FINDINGS.md "Codes gpuenv adds") --
    "cuda.library-conflict": (
        "doctor-healthy-cuda",
        _p(
            (
                "libraries",
                [
                    {"name": "cudart", "version": "12.8.90", "source": "ldconfig",
                     "path": "/usr/local/cuda-12.8/targets/x86_64-linux/lib/libcudart.so.12"},
                    {"name": "cudart", "version": "11.8.89", "source": "ldconfig",
                     "path": "/usr/local/cuda-11.8/lib64/libcudart.so.11.0"},
                ],
            )
        ),  # fmt: skip
        None,
        "warning",
    ),
    "rocm.library-conflict": (
        "doctor-healthy-rocm",
        _p(
            (
                "libraries",
                [{"name": "rocblas", "version": "4.4.0", "source": "ldconfig", "path": "/opt/rocm-6.4.0/lib/librocblas.so.4"}],
            )
        ),
        None,
        "warning",
    ),
    "cuda.host-compiler": (
        "doctor-healthy-cuda",
        _p(
            (
                "toolchain",
                [{"name": "g++", "version": "15.2.0", "path": "/usr/bin/g++-15", "source": "package", "package": "g++-15",
                  "default": True}],
            )
        ),  # fmt: skip
        None,
        "warning",
    ),
    "rocm.hipcc-clang-missing": (
        "doctor-healthy-rocm",
        _p(("toolchain", [{"name": "hipcc", "version": "7.2.4", "path": "/opt/rocm-7.2.4/bin/hipcc", "source": "file"}])),
        None,
        "error",
    ),
    "cuda.home-mismatch": (
        "doctor-healthy-cuda",
        _p(
            ("environment.CUDA_HOME", "/usr/local/cuda-12.4"),
            ("path_targets", {"/usr/local/cuda-12.4": None, "/usr/local/cuda-12.8/bin": "/usr/local/cuda-12.8/bin"}),
        ),
        None,
        "warning",
    ),
    "path.order": (
        "doctor-healthy-cuda",
        _p(
            ("environment.PATH", "/usr/local/cuda-12.4/bin:/usr/local/cuda-12.8/bin"),
            lambda d: d["toolkits"]["cuda"].append({"version": "12.4.1", "path": "/usr/local/cuda-12.4", "source": None}),
        ),
        None,
        "warning",
    ),
    "gpu.hidden-by-env": ("doctor-healthy-cuda", _p(("environment.CUDA_VISIBLE_DEVICES", "-1")), None, "warning"),
    "platform.virtual-machine": (
        "doctor-healthy-cuda",
        _p(
            ("platform.virtualization", "kvm"),
            ("platform.cloud", "aws"),
            ("platform.virtualization_evidence", "DMI sys_vendor 'Amazon EC2'"),
        ),
        None,
        "info",
    ),
}


def variant(code: str) -> tuple[dict, str | None, str]:
    """(facts document, target text, expected severity) of the case that fires ``code``."""
    name, patch, target, severity = CASES[code]
    doc = base(name)
    patch(doc)
    return doc, target, severity


def judge(doc: dict, matrices, target: str | None = None):
    """The doctor's report on a facts document (target as --target spells it)."""
    from gpuenv.facts import from_dict
    from gpuenv.resolve.finding import Target
    from gpuenv.resolve.report import diagnose

    return diagnose(from_dict(doc), matrices, Target.parse(target))


def found(report, code: str) -> list:
    return [f for f in report.findings if f.code == code]


def edited(name: str, *edits, gpus=None) -> dict:
    """The corpus box ``name`` with (path, value) edits and callables applied; ``gpus`` replaces
    its GPUs by copies of the first with these field overrides, on PCI buses from the first's on."""
    doc = base(name)
    if gpus is not None:
        first = doc["gpus"][0]
        bus = int(first["pci_slot"].split(":")[1], 16)
        doc["gpus"] = [{**first, "pci_slot": f"0000:{i + bus:02x}:00.0", **g} for i, g in enumerate(gpus)]
    for e in edits:
        e(doc) if callable(e) else setp(doc, *e)
    return doc


def box(stack: str, *edits, gpus=None) -> dict:
    """The healthy ``stack`` box, edited (``edited``): "rocm" is the RX 9070 XT on ROCm 7.2.4
    (tests/facts/doctor-healthy-rocm.json), "cuda" the RTX 4090 on driver 570 and CUDA 12.8."""
    return edited(f"doctor-healthy-{stack}", *edits, gpus=gpus)


def judged(doc: dict, matrices, code: str, target: str | None = None) -> list:
    """The findings ``code`` of the report on ``doc``; no check may have crashed on the way."""
    report = judge(doc, matrices, target)
    crashed = found(report, "doctor.check-crashed")
    assert not crashed, [f.detail for f in crashed]
    return found(report, code)


def judged_one(doc: dict, matrices, code: str, target: str | None = None):
    """The one finding ``code`` of the report on ``doc``."""
    got = judged(doc, matrices, code, target)
    assert len(got) == 1, [h.title for h in got]
    return got[0]


def no_nvidia_packages(doc: dict) -> None:
    """A box whose package list holds no NVIDIA package (driver, libraries, DKMS)."""
    pk = doc["packages"]["installed"]
    for name in [n for n in pk if "nvidia" in n]:
        del pk[name]


def no_rocm(doc: dict) -> None:
    """A box without ROCm: no toolkit, no DKMS entry, no rocm/hip/amdgpu package."""
    doc["toolkits"]["rocm"] = []
    doc["kernel"]["dkms"] = []
    pk = doc["packages"]["installed"]
    for name in [n for n in pk if n.startswith(("rocm", "hip", "amdgpu"))]:
        del pk[name]
