"""The environment judged against the machine (CUDA_HOME, PATH/LD_LIBRARY_PATH order, the
*_VISIBLE_DEVICES variables) and virtualization (the DMI/hypervisor probe on sysroot fixtures,
platform.virtual-machine)."""

from __future__ import annotations

import json

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.probe import collect
from gpuenv.probe import environment as env_probe
from gpuenv.probe import platform as plat
from gpuenv.probe.host import Sysroot
from gpuenv.resolve.finding import Target
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import base, found, judge
from tests.probe_helpers import ROOTS

FACTS = ROOTS.parent / "facts"


@pytest.fixture(scope="module")
def matrices():
    return load()


def cuda_doc(**env):
    doc = base("doctor-healthy-cuda")
    doc["environment"] = {"PATH": "/usr/local/cuda-12.8/bin", **env}
    return doc


# -- the probe's environment -----------------------------------------------------------------


def test_select_keeps_the_build_variables():
    got = env_probe.select({"CUDA_HOME": "/usr/local/cuda", "NVCC_CCBIN": "g++-13", "HOME": "/home/x", "CC": "gcc-13",
                            "PATH": "/home/x/bin:/usr/local/cuda-12.8/bin:/usr/bin", "HIP_CLANG_PATH": "/x"})  # fmt: skip
    assert got == {"CUDA_HOME": "/usr/local/cuda", "NVCC_CCBIN": "g++-13", "CC": "gcc-13", "HIP_CLANG_PATH": "/x",
                   "PATH": "/usr/local/cuda-12.8/bin"}  # fmt: skip


def test_path_targets_resolve_inside_the_root(tmp_path):
    root = tmp_path / "root"
    (root / "usr/local/cuda-12.8/bin").mkdir(parents=True)
    (root / "usr/local/cuda").symlink_to("/usr/local/cuda-12.8")
    env = {"CUDA_HOME": "/usr/local/cuda", "CUDA_PATH": "/usr/local/cuda-12.4", "PATH": "/usr/local/cuda/bin"}
    got = env_probe.path_targets(Sysroot.at(str(root)), env)
    assert got == {"/usr/local/cuda": "/usr/local/cuda-12.8", "/usr/local/cuda-12.4": None,
                   "/usr/local/cuda/bin": "/usr/local/cuda-12.8/bin"}  # fmt: skip


# -- CUDA_HOME / CUDA_PATH -----------------------------------------------------------------------


def test_cuda_home_pointing_nowhere(matrices):
    doc = cuda_doc(CUDA_HOME="/usr/local/cuda-12.4")
    doc["path_targets"] = {"/usr/local/cuda-12.4": None}
    (f,) = found(judge(doc, matrices), "cuda.home-mismatch")
    assert "CUDA_HOME=/usr/local/cuda-12.4 does not exist" in f.detail
    assert f.fix.startswith("export CUDA_HOME=/usr/local/cuda-12.8")


def test_cuda_home_of_another_release_than_nvcc(matrices):
    doc = json.loads((FACTS / "env-cuda-mixed-paths.json").read_text())
    (f,) = found(judge(doc, matrices), "cuda.home-mismatch")
    assert "CUDA_HOME=/usr/local/cuda-12.8 is CUDA 12.8.1, but the nvcc on PATH" in f.detail
    assert "CUDA 12.4.131" in f.detail
    assert f.fix.startswith("export PATH=/usr/local/cuda-12.8/bin")  # the home is what torch needs


def test_cuda_home_matching_nvcc_is_silent(matrices):
    doc = cuda_doc(CUDA_HOME="/usr/local/cuda-12.8", CUDA_PATH="/usr/local/cuda-12.8/")
    assert not found(judge(doc, matrices), "cuda.home-mismatch")


def test_cuda_home_and_cuda_path_disagree(matrices):
    doc = cuda_doc(CUDA_HOME="/usr/local/cuda-12.8", CUDA_PATH="/usr/local/cuda-12.4")
    doc["toolkits"]["cuda"].append({"version": "12.4.1", "path": "/usr/local/cuda-12.4", "source": "runfile"})
    (f,) = found(judge(doc, matrices), "cuda.home-mismatch")
    assert "CUDA_HOME is CUDA 12.8.1 and CUDA_PATH is CUDA 12.4.1" in f.detail


def test_no_environment_no_judgement(matrices):
    doc = cuda_doc(CUDA_HOME="/nowhere")
    doc["environment"] = None
    doc["path_targets"] = {"/nowhere": None}
    codes = {f.code for f in judge(doc, matrices).findings}
    assert not codes & {"cuda.home-mismatch", "path.order", "gpu.hidden-by-env"}


# -- PATH and LD_LIBRARY_PATH order ---------------------------------------------------------------


def test_path_order_names_the_winner_and_the_wanted(matrices):
    doc = json.loads((FACTS / "env-cuda-mixed-paths.json").read_text())
    (f,) = found(judge(doc, matrices), "path.order")
    assert (
        "PATH lists /usr/local/cuda-12.4/bin (CUDA 12.4.1), /usr/local/cuda-12.8/bin (CUDA 12.8.1)"
        in f.detail
    )
    assert "the first, CUDA 12.4.1, wins, but CUDA_HOME is CUDA 12.8.1" in f.detail
    assert f.fix.startswith("export PATH=/usr/local/cuda-12.8/bin${PATH:+:${PATH}}")


def test_path_order_wanted_first_is_silent(matrices):
    doc = cuda_doc()
    doc["environment"]["PATH"] = "/usr/local/cuda-12.8/bin:/usr/local/cuda-12.4/bin"
    doc["toolkits"]["cuda"].append({"version": "12.4.1", "path": "/usr/local/cuda-12.4", "source": "runfile"})
    assert not found(judge(doc, matrices), "path.order")


def test_ld_library_path_order_and_an_explicit_target(matrices):
    doc = cuda_doc(LD_LIBRARY_PATH="/usr/local/cuda-12.8/lib64:/usr/local/cuda-12.4/lib64")
    doc["toolkits"]["cuda"].append({"version": "12.4.1", "path": "/usr/local/cuda-12.4", "source": "runfile"})
    assert not found(judge(doc, matrices), "path.order")  # torch's 12.8 is first
    (f,) = found(judge(doc, matrices, "cuda@12.4"), "path.order")
    assert f.detail.startswith("LD_LIBRARY_PATH lists") and "the --target is CUDA 12.4" in f.detail


def test_rocm_releases_on_path(matrices):
    doc = base("doctor-healthy-rocm")
    doc["toolkits"]["rocm"].append({"version": "6.4.0-47", "path": "/opt/rocm-6.4.0", "source": "package"})
    doc["environment"]["PATH"] = "/opt/rocm-6.4.0/bin:/opt/rocm-7.2.4/bin"
    doc["path_targets"] = {"/opt/rocm": "/opt/rocm-7.2.4"}
    (f,) = found(judge(doc, matrices), "path.order")
    assert "ROCm 6.4.0-47, wins, but the ROCm /opt/rocm points at is ROCm 7.2.4" in f.detail


# -- GPU selection variables ---------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "-1", "NoDevFiles", "-1,0"])
def test_values_that_hide_every_gpu(value, matrices):
    (f,) = found(judge(cuda_doc(CUDA_VISIBLE_DEVICES=value), matrices), "gpu.hidden-by-env")
    assert f.severity.value == "warning" and "NVIDIA GeForce RTX 4090" in f.detail
    assert "unset CUDA_VISIBLE_DEVICES" in f.fix


@pytest.mark.parametrize(
    "value, fires",
    [
        ("0", False),  # the last valid index
        ("1", True),  # one past it
        ("GPU-5c1f0e2a-0000-4000-8000-000000000001", False),
        ("GPU-5c1f", False),  # a unique prefix is enough for CUDA
        ("GPU-deadbeef", True),
        ("MIG-1e2d3c4b-0000-4000-8000-000000000009", False),  # MIG instances are not in the facts: not judged
        ("0,7", True),
    ],
)
def test_indices_and_uuids_against_the_gpus(value, fires, matrices):
    hits = found(judge(cuda_doc(CUDA_VISIBLE_DEVICES=value), matrices), "gpu.hidden-by-env")
    assert bool(hits) is fires


def test_words_for_an_index_past_the_count(matrices):
    (f,) = found(judge(cuda_doc(CUDA_VISIBLE_DEVICES="0,7"), matrices), "gpu.hidden-by-env")
    assert "names '7', which is not one of this machine's 1 NVIDIA GPU (index 0)" in f.detail
    assert "only 0 is visible" in f.detail and f.fix.startswith("export CUDA_VISIBLE_DEVICES=0")


def test_amd_selection_variables(matrices):
    doc = json.loads((FACTS / "env-amd-visible-devices.json").read_text())
    hits = found(judge(doc, matrices), "gpu.hidden-by-env")
    assert [f.title for f in hits] == [
        "HIP_VISIBLE_DEVICES hides AMD GPUs from CUDA/HIP programs",
        "ROCR_VISIBLE_DEVICES hides AMD GPUs from CUDA/HIP programs",
    ]
    assert "ROCR_VISIBLE_DEVICES='' hides every AMD GPU" in hits[1].detail


def test_hsa_override_on_a_supported_gpu_is_the_existing_check(matrices):
    doc = base("doctor-healthy-rocm")
    doc["environment"]["HSA_OVERRIDE_GFX_VERSION"] = "12.0.1"
    (f,) = found(judge(doc, matrices), "amd.hsa-override")
    assert "supported natively" in f.detail and f.fix.startswith("unset HSA_OVERRIDE_GFX_VERSION")


# -- virtualization --------------------------------------------------------------------------------

VMS = {
    "vm-ec2-g5-debian12": ("kvm", "aws", "DMI sys_vendor 'Amazon EC2'"),
    "vm-ec2-p4d-metal-debian12": (
        None,
        "aws",
        "DMI product_name 'p4d.24xlarge.metal' (an EC2 bare-metal instance)",
    ),
    "vm-azure-hyperv-debian12": (
        "hyperv",
        "azure",
        "DMI sys_vendor 'Microsoft Corporation', product_name 'Virtual Machine'",
    ),
    "vm-vmware-debian12": ("vmware", None, "DMI product_name 'VMware Virtual Platform'"),
    "vm-xen-debian12": ("xen", None, "/sys/hypervisor/type xen"),
    "vm-firecracker-debian12": (
        "firecracker",
        None,
        "virtio_mmio.device= on the kernel command line and no DMI",
    ),
    "debian12-kvm-cuda118-gcc12-loader": ("kvm", None, "DMI sys_vendor 'QEMU'"),
}


@pytest.mark.parametrize("machine", sorted(VMS))
def test_hypervisor_and_cloud_of_each_fixture(machine):
    kind, cloud, evidence = VMS[machine]
    p = collect(root=str(ROOTS / machine)).platform
    assert (p.virtualization, p.cloud) == (kind, cloud)
    assert p.virtualization_evidence.startswith(evidence)


@pytest.mark.parametrize(
    "machine", ["ubuntu2404-rtx5090-driver570", "wsl2-ubuntu2404", "ubuntu2204-8xmi300x-rocm"]
)
def test_bare_metal_and_wsl_fixtures_stay_unvirtualized(machine):
    p = collect(root=str(ROOTS / machine)).platform
    assert p.virtualization is None and p.cloud is None


def _tree(tmp_path, files):
    for rel, data in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return Sysroot.at(str(tmp_path))


def test_firecracker_acpi_oem_id(tmp_path):
    # Firecracker's FADT header: signature, length, revision, checksum, then OEM ID "FIRECK".
    host = _tree(
        tmp_path, {"sys/firmware/acpi/tables/FACP": b"FACP\x14\x01\x00\x00\x06\x66FIRECKFCVMFADT" + b"\0" * 8}
    )
    assert plat.detect(host, "console=ttyS0") == ("firecracker", None, "ACPI OEM ID FIRECK")


def test_device_tree_hypervisors(tmp_path):
    host = _tree(tmp_path, {"proc/device-tree/hypervisor/compatible": "linux,kvm\0"})
    assert plat.detect(host, "")[0] == "kvm"
    host = _tree(tmp_path / "x", {"proc/device-tree/hypervisor/compatible": "xen,xen-4.17\0xen,xen\0"})
    assert plat.detect(host, "")[0] == "xen"


def test_cpu_flag_alone_is_an_unnamed_vm(tmp_path):
    host = _tree(tmp_path, {"proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu sse2 hypervisor\n"})
    assert plat.detect(host, "")[:2] == ("vm", None)
    host = _tree(tmp_path / "bare", {"proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu sse2\n"})
    assert plat.detect(host, "") == (None, None, None)


@pytest.mark.parametrize(
    "dmi, want",
    [
        ({"product_version": "Hyper-V UEFI Release v4.1"}, ("hyperv", None)),
        ({"sys_vendor": "Google", "product_name": "Google Compute Engine"}, ("kvm", "gcp")),
        ({"sys_vendor": "QEMU", "chassis_asset_tag": "OracleCloud.com"}, ("kvm", "oracle")),
        ({"sys_vendor": "Alibaba Cloud", "product_name": "Alibaba Cloud ECS"}, (None, "alibaba")),
        ({"sys_vendor": "DigitalOcean", "product_name": "Droplet"}, (None, "digitalocean")),
        ({"sys_vendor": "Hetzner", "product_name": "vServer"}, (None, "hetzner")),
        ({"sys_vendor": "OpenStack Foundation", "product_name": "OpenStack Nova"}, ("kvm", "openstack")),
        ({"sys_vendor": "innotek GmbH", "product_name": "VirtualBox"}, ("virtualbox", None)),
        ({"sys_vendor": "Dell Inc.", "product_name": "PowerEdge XE9680"}, (None, None)),
    ],
)
def test_dmi_strings(tmp_path, dmi, want):
    host = _tree(tmp_path, {f"sys/class/dmi/id/{k}": v + "\n" for k, v in dmi.items()})
    assert plat.detect(host, "")[:2] == want


def test_virtual_machine_finding_words(matrices):
    f = collect(root=str(ROOTS / "vm-azure-hyperv-debian12"), user="azureuser")
    (hit,) = found(diagnose(f, matrices, Target()), "platform.virtual-machine")
    assert hit.severity.value == "info" and hit.title == "Running in a Hyper-V virtual machine on Azure"
    assert "none is passed through" in hit.detail and "vfio-pci" in hit.detail and "vGPU" in hit.detail
    assert "7783-7084-3265-9085-8269-3286-77" in hit.detail


def test_bare_metal_cloud_instance_is_no_virtual_machine(matrices):
    f = collect(root=str(ROOTS / "vm-ec2-p4d-metal-debian12"), user="admin")
    assert not found(diagnose(f, matrices, Target()), "platform.virtual-machine")


@pytest.mark.timeout(10)
@pytest.mark.parametrize("entry", ["bin", ".", "cuda/bin", "", "//", "usr/local/cuda-12.8/bin"])
def test_relative_and_odd_path_entries_are_judged_not_looped_on(entry, matrices):
    """PATH may hold relative entries; the link walk must end on them (it once spun forever)."""
    from gpuenv.resolve import toolkitpaths

    doc = base("doctor-healthy-cuda")
    doc["environment"] = {"PATH": f"{entry}:/usr/local/cuda-12.8/bin:/usr/bin"}
    facts = from_dict(doc)
    assert toolkitpaths.real_path(facts, entry) == (entry.rstrip("/") or "/")
    diagnose(facts, matrices, Target())
