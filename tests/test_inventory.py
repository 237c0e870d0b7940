"""The inventory's answers at their boundaries: which packages are a stack, which version a machine
runs, what a GPU is, where a path leads. The checks and the planner (what it purges) share these
answers (bench/mutate.py runs this file against gpuenv/resolve/inventory.py)."""

from __future__ import annotations

import pytest

from gpuenv.facts import Gpu, Tool, Torch, from_dict
from gpuenv.matrices import load
from gpuenv.resolve import gpuinfo, toolkitpaths
from gpuenv.resolve import inventory as inv
from gpuenv.standins.record import replace
from tests.doctor_cases import base, setp

NVIDIA_4090 = "10de:2684"  # in nvidia_gpus.json: Ada, 8.9
RAPHAEL = "1002:164e"  # Ryzen 7000 desktop iGPU (gfx1036): no ROCm release or wheel lists it
STRIX_HALO = "1002:1586"  # gfx1151, integrated: bundled ROCm PyTorch wheels are built for it


@pytest.fixture(scope="module")
def matrices():
    return load()


def facts_with(**paths):
    """The CPU laptop's facts with dotted paths set ("packages.installed": {...})."""
    doc = base("doctor-cpu-laptop")
    for path, value in paths.items():
        setp(doc, path.replace("__", "."), value)
    return from_dict(doc)


def packages(installed: dict[str, str], unconfigured=()) -> dict:
    return {"manager": "dpkg", "installed": installed, "unconfigured": list(unconfigured)}


# -- packages ------------------------------------------------------------------------------------


def test_package_answers_are_kept_for_the_same_facts_and_not_for_others():
    f = facts_with(packages=packages({"nvidia-driver-570": "570.133.07-0ubuntu1"}))
    assert inv.nvidia_driver_packages(f) is inv.nvidia_driver_packages(f)
    other = facts_with(packages=packages({"nvidia-driver-580": "580.65.06-0ubuntu1"}))
    assert inv.nvidia_driver_packages(other) == {"nvidia-driver-580": "580.65.06-0ubuntu1"}


def test_cuda_compat_packages_are_their_own_family():
    f = facts_with(packages=packages({"cuda-compat-12-8": "570.124.06-1", "cuda-toolkit-12-8": "12.8.1-1"}))
    assert inv.cuda_compat_packages(f) == {"cuda-compat-12-8": "570.124.06-1"}
    assert inv.cuda_toolkit_packages(f) == {"cuda-toolkit-12-8": "12.8.1-1"}


def test_kernel_driver_packages_leave_out_the_user_space_compute_library():
    f = facts_with(packages=packages({"libnvidia-compute-570": "570.1", "nvidia-dkms-570": "570.1", "amdgpu-dkms": "6.16"}))
    assert inv.kernel_driver_packages(f) == {"nvidia-dkms-570": "570.1", "amdgpu-dkms": "6.16"}


# -- torch ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "torch, build",
    [
        (Torch(version="2.7.0+cu128"), "cuda"),
        (Torch(version="2.7.0+rocm6.3"), "rocm"),
        (Torch(version="2.7.0+CPU"), "cpu"),
        (Torch(version="2.7.0", arch_list=("sm_90", "compute_90")), "cuda"),
        (Torch(version="2.7.0", arch_list=("gfx942",)), "rocm"),
        (Torch(version="2.7.0", hip="6.3.42131"), "rocm"),
        (Torch(version="2.7.0", cuda="12.8"), "cuda"),
        (Torch(version="2.7.0", cuda_unknown=True), None),
        (Torch(version="2.7.0", hip_unknown=True), None),
        (Torch(version="2.7.0"), "cpu"),
    ],
)
def test_torch_build(torch, build):
    assert inv.torch_build(torch) == build


# -- stack versions ------------------------------------------------------------------------------


def test_installed_rocm_is_the_tree_opt_rocm_points_at_even_beside_a_newer_one():
    tks = [{"version": "7.2.4-70204", "path": "/opt/rocm-7.2.4"}, {"version": "6.4.1.60401", "path": "/opt/rocm/"}]
    assert inv.installed_rocm(facts_with(toolkits__rocm=tks)) == "6.4.1"
    assert inv.installed_rocm(facts_with(toolkits__rocm=tks[:1])) == "7.2.4"
    f = facts_with(toolkits__rocm=[], packages=packages({"rocm-core": "7.2.4.70204-1~24.04"}))
    assert inv.installed_rocm(f) == "7.2.4"


def test_nvidia_driver_version_falls_back_to_the_package():
    nv = {"driver_version": None, "module_version": None}
    f = facts_with(nvidia=nv, packages=packages({"nvidia-driver-570": "1:570.133.07-0ubuntu1"}))
    assert inv.nvidia_driver_version(f) == "570.133.07"
    assert inv.nvidia_driver_version(facts_with(nvidia={**nv, "module_version": "570.86.10"})) == "570.86.10"


def test_a_package_version_of_one_number_is_no_driver_version_but_names_the_branch():
    f = facts_with(nvidia={"driver_version": None}, packages=packages({"nvidia-driver-570": "570"}))
    assert inv.nvidia_package_version(f) is None
    assert inv.nvidia_branch(f) == 570
    two = facts_with(nvidia={"driver_version": None}, packages=packages({"nvidia-driver-570": "570.133"}))
    assert inv.nvidia_package_version(two) == "570.133"


# -- GPUs ----------------------------------------------------------------------------------------


def test_what_a_gpu_says_of_itself_wins_over_the_tables(matrices):
    assert gpuinfo.is_integrated(Gpu(vendor="amd", pci_id=RAPHAEL, integrated=False), matrices) is False
    assert gpuinfo.is_integrated(Gpu(vendor="amd", pci_id=RAPHAEL), matrices) is True
    assert gpuinfo.is_integrated(Gpu(vendor="amd", pci_id=RAPHAEL), None) is False  # unknown without tables
    assert gpuinfo.is_integrated(Gpu(vendor="nvidia", pci_id=RAPHAEL), matrices) is False  # AMD's table only
    g = Gpu(vendor="nvidia", pci_id=NVIDIA_4090, architecture="Hopper", compute_capability="9.0")
    assert (gpuinfo.nvidia_architecture(g, matrices), gpuinfo.compute_capability(g, matrices)) == ("Hopper", "9.0")


def test_a_gfx_target_from_the_gpu_itself_else_the_table(matrices):
    # KFD's word for a GPU the tables do not list is kept; a GPU that says nothing is looked up.
    assert gpuinfo.gfx_target(Gpu(vendor="amd", pci_id="1002:fff0", gfx_target="gfx1201"), matrices) == "gfx1201"
    assert gpuinfo.gfx_target(Gpu(vendor="amd", pci_id="1002:fff0"), matrices) is None
    assert gpuinfo.gfx_target(Gpu(vendor="amd", pci_id=RAPHAEL), matrices) == "gfx1036"
    assert gpuinfo.gfx_target(Gpu(vendor="amd", pci_id=RAPHAEL), None) is None


def test_nvidia_architecture_and_capability_from_the_table_or_unknown(matrices):
    g = Gpu(vendor="nvidia", pci_id=NVIDIA_4090)
    known = matrices.nvidia_gpu(NVIDIA_4090)
    assert gpuinfo.nvidia_architecture(g, matrices) == known.architecture
    assert gpuinfo.compute_capability(g, matrices) == known.compute_capability
    assert gpuinfo.nvidia_architecture(g, None) is None and gpuinfo.compute_capability(g, None) is None
    odd = Gpu(vendor="nvidia", pci_id="10de:0001")
    assert gpuinfo.nvidia_architecture(odd, matrices) is None and gpuinfo.compute_capability(odd, matrices) is None


def test_amd_compute_counts_an_igpu_a_wheel_is_built_for_not_a_desktop_one(matrices):
    gpus = [{"vendor": "amd", "pci_id": RAPHAEL, "pci_slot": "0000:10:00.0"},
            {"vendor": "amd", "pci_id": STRIX_HALO, "pci_slot": "0000:c5:00.0"}]  # fmt: skip
    f = facts_with(gpus=gpus)
    assert gpuinfo.slots(gpuinfo.amd_integrated(f, matrices)) == ("0000:10:00.0", "0000:c5:00.0")
    assert gpuinfo.slots(gpuinfo.amd_compute(f, matrices)) == ("0000:c5:00.0",)
    # Without tables neither is known to be integrated: both count. One that says so is left
    # out (no table to say a wheel is built for it).
    assert gpuinfo.slots(gpuinfo.amd_compute(f, None)) == ("0000:10:00.0", "0000:c5:00.0")
    said = facts_with(gpus=[{**gpus[1], "integrated": True}])
    assert gpuinfo.amd_compute(said, None) == ()


@pytest.mark.parametrize(
    "cc, flavour",
    [("6.1", "proprietary"), ("7.2", "proprietary"), ("7.5", "either"), ("9.9", "either"), ("10.0", "open"),
     ("12.0", "open"), (None, "either")],
)  # fmt: skip
def test_module_flavour_of_a_gpu_the_tables_do_not_know_goes_by_compute_capability(matrices, cc, flavour):
    assert gpuinfo.module_flavour(Gpu(vendor="nvidia", pci_id="10de:0001", compute_capability=cc), matrices) == flavour


def test_module_flavour_of_a_known_architecture_is_the_tables(matrices):
    # Turing's compute capability alone says "either"; the table's Blackwell entry says open.
    g = Gpu(vendor="nvidia", pci_id="10de:0001", architecture="Blackwell", compute_capability="7.5")
    assert gpuinfo.module_flavour(g, matrices) == matrices.nvidia_arch("Blackwell").module == "open"


def test_gpu_names(matrices):
    assert gpuinfo.gpu_name(Gpu(vendor="nvidia", pci_id=NVIDIA_4090), matrices) == matrices.nvidia_gpu(NVIDIA_4090).name
    assert gpuinfo.gpu_name(Gpu(vendor="amd", pci_id=RAPHAEL), matrices) == matrices.amd_gpu(RAPHAEL).name
    assert gpuinfo.gpu_name(Gpu(vendor="amd", pci_id=RAPHAEL), None) == "AMD GPU 1002:164e"
    assert gpuinfo.gpu_name(Gpu(vendor="nvidia", pci_id="10de:0001"), matrices) == "NVIDIA GPU 10de:0001"
    assert gpuinfo.gpu_name(Gpu(vendor="nvidia", pci_id=NVIDIA_4090, name="given"), matrices) == "given"


def test_toolkit_for_a_series_is_its_first_release_and_is_kept_per_tables(matrices):
    from gpuenv.matrices import bundled_dir, parse_dir

    other = parse_dir(bundled_dir(), "bundled")  # the tables read again: answers kept apart
    assert other is not matrices
    assert toolkitpaths.toolkit_for(other, "12.8") is other.cuda_toolkit("12.8")
    assert toolkitpaths.toolkit_for(matrices, "12.8") is matrices.cuda_toolkit("12.8")
    assert toolkitpaths.toolkit_for(matrices, "12.8.1") is (matrices.cuda_toolkit("12.8.1") or matrices.cuda_toolkit("12.8"))
    assert toolkitpaths.toolkit_for(matrices, "99.1") is None


def test_toolkit_for_a_release_the_tables_do_not_list_is_its_series(matrices):
    assert matrices.cuda_toolkit("12.8.93") is None  # the version nvcc itself prints: V12.8.93
    assert toolkitpaths.toolkit_for(matrices, "12.8.93") is matrices.cuda_toolkit("12.8")


# -- paths ---------------------------------------------------------------------------------------


def test_path_entries_of_a_variable_set_unset_or_not_read():
    assert toolkitpaths.path_entries(facts_with(environment={"PATH": "/usr/local/cuda/bin/::/usr/bin"}), "PATH") == [
        "/usr/local/cuda/bin", "/usr/bin"]  # fmt: skip
    assert toolkitpaths.path_entries(facts_with(environment={}), "PATH") == []
    assert toolkitpaths.path_entries(facts_with(environment=None), "PATH") is None  # the probe did not read it
    assert toolkitpaths.nvcc_on_path(facts_with(environment=None)) is None


def test_real_path_follows_the_longest_recorded_prefix():
    f = facts_with(path_targets={"/usr/local/cuda": "/usr/local/cuda-12.8", "/usr/local": "/opt/local"})
    assert toolkitpaths.real_path(f, "/usr/local/cuda/bin/") == "/usr/local/cuda-12.8/bin"
    assert toolkitpaths.real_path(f, "/usr/local/lib") == "/opt/local/lib"
    assert toolkitpaths.real_path(f, "/usr/bin") == "/usr/bin"
    assert toolkitpaths.real_path(f, "bin") == "bin"


def test_path_exists_from_the_probe_or_a_toolkit_tree_else_unknown():
    tks = [{"version": "12.8.1", "path": "/usr/local/cuda-12.8"}]
    f = facts_with(path_targets={"/usr/local/cuda": "/usr/local/cuda-12.8", "/opt/gone": None}, toolkits__cuda=tks)
    assert toolkitpaths.path_exists(f, "/opt/gone") is False
    assert toolkitpaths.path_exists(f, "/usr/local/cuda/") is True
    assert toolkitpaths.path_exists(f, "/usr/local/cuda-12.8") is True
    assert toolkitpaths.path_exists(f, "/usr/local/cuda-12.9") is None


def test_toolkit_of_path():
    tks = [{"version": "12.8.1", "path": "/usr/local/cuda-12.8"}]
    f = facts_with(path_targets={"/usr/local/cuda": "/usr/local/cuda-12.8"}, toolkits__cuda=tks)
    assert toolkitpaths.toolkit_of_path(f, "/usr/local/cuda/lib64") == ("cuda", "12.8.1")
    assert toolkitpaths.toolkit_of_path(f, "/usr/local/cuda-12.80/lib64") == ("cuda", "12.80")  # not the 12.8 tree
    assert toolkitpaths.toolkit_of_path(f, "/opt/rocm-7.2.4/lib") == ("rocm", "7.2.4")
    assert toolkitpaths.toolkit_of_path(f, "/usr/lib") is None
    # /usr/local/cuda unresolved (a facts file without path targets): the one toolkit, if one.
    unresolved = facts_with(toolkits__cuda=tks)
    assert toolkitpaths.toolkit_of_path(unresolved, "/usr/local/cuda/bin") == ("cuda", "12.8.1")
    two = facts_with(toolkits__cuda=[*tks, {"version": "13.0.2", "path": "/usr/local/cuda-13.0"}])
    assert toolkitpaths.toolkit_of_path(two, "/usr/local/cuda/bin") is None


def test_nvcc_on_path_prefers_what_nvcc_said():
    path = {"PATH": "/usr/local/cuda-13.0/bin:/usr/bin"}
    said = Tool(name="nvcc", version="12.8.93", path="/usr/local/cuda/bin/nvcc", source="command")
    assert toolkitpaths.nvcc_on_path(replace(facts_with(environment=path), toolchain=(said,))) == (
        "12.8.93", "/usr/local/cuda/bin/nvcc")  # fmt: skip
    # A command whose version is not known, or a packaged nvcc: the first CUDA tree on PATH.
    for tool in (replace(said, version=None), replace(said, source="package")):
        assert toolkitpaths.nvcc_on_path(replace(facts_with(environment=path), toolchain=(tool,))) == (
            "13.0", "/usr/local/cuda-13.0/bin/nvcc")  # fmt: skip
    assert toolkitpaths.nvcc_on_path(facts_with(environment={"PATH": "/usr/bin"})) is None
