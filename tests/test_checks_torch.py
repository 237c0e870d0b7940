"""What the doctor's torch checks (gpuenv/resolve/checks/torch.py) say, at each rule's boundary: the
build's arch list against the GPUs, its CUDA against the driver, CPU builds on GPU boxes, builds of
the other vendor, HIP/ROCm builds against the machine's ROCm, LD_LIBRARY_PATH, and no torch at all.
An unknown is never judged a failure."""

from __future__ import annotations

import copy

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import GTX1080TI, RTX5090, RX6700XT, amd_gpu, base, box, nvidia_gpu

TORCH_CODES = (
    "torch.cpu-build",
    "torch.wrong-vendor",
    "torch.driver-too-old",
    "torch.arch-missing",
    "torch.rocm-mismatch",
    "torch.ld-library-path",
    "torch.not-installed",
)

RTX3090 = nvidia_gpu("10de:2204", "NVIDIA GeForce RTX 3090", "8.6", "Ampere")
GTX780 = nvidia_gpu("10de:1004", "NVIDIA GeForce GTX 780", "3.5", "Kepler")
GB10 = nvidia_gpu("10de:2e12", "NVIDIA GB10", "12.1", "Blackwell")
UNKNOWN_NV = nvidia_gpu("10de:fff0", None, None, None)
RAPHAEL = {"pci_id": "1002:164e", "name": "Raphael", "gfx_target": "gfx1036", "integrated": True}
PHOENIX = {"pci_id": "1002:15bf", "name": "Phoenix1", "gfx_target": "gfx1103", "integrated": True}


@pytest.fixture(scope="module")
def matrices():
    return load()


def _healthy(stack: str, torch: dict | None, gpu: dict | None) -> dict:
    """The healthy ``stack`` box (doctor_cases.box) with this torch (unless "keep") on this GPU."""
    edits = [] if torch == "keep" else [("python.torch", torch)]
    return box(stack, *edits, gpus=[gpu] if gpu else None)


def cuda_box(torch: dict | None = "keep", gpu: dict | None = None) -> dict:
    """doctor-healthy-cuda (RTX 4090, driver 570.133.07, torch 2.7.0+cu128), edited."""
    return _healthy("cuda", torch, gpu)


def rocm_box(torch: dict | None = "keep", gpu: dict | None = None) -> dict:
    """doctor-healthy-rocm (RX 9070 XT gfx1201, amdgpu 30.30.4, ROCm 7.2.4, torch 2.11.0+rocm7.2), edited."""
    return _healthy("rocm", torch, gpu)


def add_gpu(doc: dict, like: str, slot: str, **kw) -> None:
    g = copy.deepcopy(base(like)["gpus"][0])
    g.update(pci_slot=slot, **kw)
    doc["gpus"].append(g)


def tv(version, cuda=None, hip=None, arch_list=None) -> dict:
    return {"version": version, "cuda": cuda, "hip": hip, "arch_list": arch_list}


def judged(doc: dict, matrices, torch: str | None = None) -> dict[str, list]:
    """The torch findings by code; no torch check may crash."""
    report = diagnose(from_dict(doc), matrices, Target(torch=torch), only=TORCH_CODES)
    crashed = [f.detail for f in report.findings if f.code == "doctor.check-crashed"]
    assert not crashed, crashed
    out: dict[str, list] = {}
    for f in report.findings:
        out.setdefault(f.code, []).append(f)
    return out


def one(findings: dict[str, list], code: str):
    assert code in findings, sorted(findings)
    (f,) = findings[code]
    return f


def variant(matrices, torch: str, name: str):
    return next(v for v in matrices.torch_variants(torch) if v.variant == name)


def arch_lists(matrices, release: str, stack: str, ptx: bool = False) -> str:
    return "; ".join(
        f"{v.variant}: {', '.join(v.archs + (v.ptx if ptx else ()))}"
        for v in matrices.torch_variants(release)
        if v.stack == stack
    )


# -- torch.cpu-build --------------------------------------------------------------------------


def test_a_cpu_build_on_an_nvidia_box(matrices):
    f = one(judged(cuda_box(tv("2.7.0+cpu", arch_list=[])), matrices), "torch.cpu-build")
    assert f.severity is Severity.WARNING
    assert f.title == "PyTorch 2.7.0+cpu is a CPU-only build on a machine with a GPU"
    assert f.detail == (
        "/home/alice/venv/bin/python: torch 2.7.0+cpu (no CUDA, no HIP); GPUs: NVIDIA GeForce RTX 4090 (0000:01:00.0)."
    )
    assert f.fix.startswith("gpuenv torch") and f.gpus == ("0000:01:00.0",)


def test_a_cpu_build_names_the_discrete_amd_card_not_the_igpu_beside_it(matrices):
    doc = rocm_box(tv("2.13.0+cpu", arch_list=[]))
    add_gpu(doc, "doctor-healthy-rocm", "0000:10:00.0", **PHOENIX)  # gfx1103: 2.13's ROCm wheels have it
    f = one(judged(doc, matrices), "torch.cpu-build")
    assert f.gpus == ("0000:03:00.0",) and "Phoenix1" not in f.detail
    doc["gpus"] = doc["gpus"][1:]  # the APU alone: the iGPU is the GPU torch could use
    f = one(judged(doc, matrices), "torch.cpu-build")
    assert f.gpus == ("0000:10:00.0",) and "Phoenix1 (0000:10:00.0)" in f.detail


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(lambda: cuda_box(), id="cuda-build"),
        pytest.param(lambda: {**base("doctor-cpu-laptop")}, id="no-gpu"),
    ],
)
def test_no_cpu_build_finding(matrices, doc):
    d = doc()
    if d["python"]["torch"] is None:
        d["python"]["torch"] = tv("2.7.0+cpu", arch_list=[])
    assert "torch.cpu-build" not in judged(d, matrices)


# -- torch.wrong-vendor -----------------------------------------------------------------------


def test_a_cuda_build_on_an_amd_only_box(matrices):
    f = one(judged(rocm_box(tv("2.7.0+cu128", cuda="12.8")), matrices), "torch.wrong-vendor")
    assert f.severity is Severity.ERROR
    assert f.title == "PyTorch is a CUDA build on an AMD-only machine"
    assert f.detail == (
        "torch 2.7.0+cu128 (CUDA 12.8); GPUs: AMD Radeon RX 9070 XT (0000:03:00.0). "
        "torch.cuda.is_available() is False here."
    )
    assert f.fix == "gpuenv torch  # the matching build and its pip install command"
    assert f.gpus == ("0000:03:00.0",)


def test_a_rocm_build_on_an_nvidia_only_box(matrices):
    f = one(judged(cuda_box(tv("2.7.0+rocm6.3", hip="6.3.42131")), matrices), "torch.wrong-vendor")
    assert f.severity is Severity.ERROR
    assert f.title == "PyTorch is a ROCm build on an NVIDIA-only machine"
    assert f.detail.startswith(
        "torch 2.7.0+rocm6.3 (HIP 6.3.42131); GPUs: NVIDIA GeForce RTX 4090 (0000:01:00.0)."
    )
    assert f.fix == "gpuenv torch  # the matching build and its pip install command"
    assert f.gpus == ("0000:01:00.0",)


def test_a_rocm_build_beside_an_igpu_no_wheel_supports_is_still_wrong(matrices):
    doc = cuda_box(tv("2.7.0+rocm6.3", hip="6.3.42131"))
    add_gpu(doc, "doctor-healthy-rocm", "0000:10:00.0", **RAPHAEL)
    f = one(judged(doc, matrices), "torch.wrong-vendor")
    assert f.severity is Severity.ERROR and f.gpus == ("0000:01:00.0",)


@pytest.mark.parametrize(
    "torch",
    [tv("2.7.0+cu128", cuda="12.8"), tv("2.7.0+rocm6.3", hip="6.3.42131"), {"version": "1.7.1"}],
    ids=["cuda", "rocm", "bare-1.7.1"],
)
def test_no_wrong_vendor_on_a_box_with_both_vendors(matrices, torch):
    doc = cuda_box(torch)
    add_gpu(doc, "doctor-healthy-rocm", "0000:03:00.0")
    assert "torch.wrong-vendor" not in judged(doc, matrices)


def test_a_cuda_build_on_an_apu_laptop_is_a_warning_with_nothing_to_fix(matrices):
    f = one(judged(rocm_box(tv("2.7.0+cu128", cuda="12.8"), gpu=RAPHAEL), matrices), "torch.wrong-vendor")
    assert f.severity is Severity.WARNING
    assert f.detail.endswith(
        "torch.cuda.is_available() is False here. No official ROCm build of PyTorch supports these integrated "
        "GPUs either: torch runs on the CPU."
    )
    assert f.fix.startswith("Nothing to fix for CPU work; for GPU work use a supported GPU")


def test_an_unnamed_build_of_a_release_before_any_rocm_build_is_not_rocm(matrices):
    f = one(judged(rocm_box({"version": "1.7.1"}), matrices), "torch.wrong-vendor")
    assert f.severity is Severity.ERROR
    assert f.title == "PyTorch is a CUDA (or CPU) build on an AMD-only machine"
    assert f.detail == (
        "torch 1.7.1 (build not named); GPUs: AMD Radeon RX 9070 XT (0000:03:00.0). PyTorch 1.7.1 had no official "
        "ROCm build, so this is not one. torch.cuda.is_available() is False here."
    )


@pytest.mark.parametrize(
    "version",
    ["1.8.0", "2.7.0", "2.99.0", "2.10.0.dev20250929"],
    ids=["first-rocm-release", "with-rocm", "not-bundled", "nightly"],
)
def test_an_unnamed_build_is_not_called_wrong_unless_its_release_had_no_rocm_build(matrices, version):
    assert "torch.wrong-vendor" not in judged(rocm_box({"version": version}), matrices)


# -- torch.driver-too-old (the installed torch) -----------------------------------------------


def with_driver(doc: dict, version: str) -> dict:
    doc["nvidia"]["driver_version"] = doc["nvidia"]["module_version"] = version
    return doc


def test_a_driver_below_the_minor_version_floor_is_too_old(matrices):
    f = one(judged(with_driver(cuda_box(), "525.60.12"), matrices), "torch.driver-too-old")
    assert f.severity is Severity.ERROR
    assert f.title == "NVIDIA driver 525.60.12 is too old for PyTorch 2.7.0+cu128 (CUDA 12.8)"
    assert f.detail == (
        "torch 2.7.0+cu128 was built with CUDA 12.8: CUDA 12.8 needs driver >= 570.26 "
        "(or >= 525.60.13 with minor-version compatibility); this one is 525.60.12."
    )
    assert f.fix == (
        "Upgrade the driver (gpuenv install cuda --dry-run), or install a wheel built for an older CUDA: "
        "gpuenv torch --version 2.7.0"
    )
    assert f.gpus == ("0000:01:00.0",)


@pytest.mark.parametrize(
    ("driver", "said"),
    [
        ("515.105.01", "cu121: CUDA 12.1 needs driver >= 530.30.02 (or >= 525.60.13 with minor-version compatibility)"),
        ("440.33.01", "cu118: CUDA 11.8 needs driver >= 520.61.05 (or >= 450.80.02 with minor-version compatibility)"),
    ],
)  # fmt: skip
def test_an_unnamed_build_on_a_driver_that_runs_only_some_of_its_wheels_is_a_warning(matrices, driver, said):
    # GPT-SoVITS#1048 (held out): torch 2.1.1 from a pip list, no torch.version.cuda, driver 515:
    # pip's cu121 wheel fails there ("CUDA driver version is insufficient"), cu118 would run.
    f = one(judged(with_driver(cuda_box({"version": "2.1.1"}), driver), matrices), "torch.driver-too-old")
    assert f.severity is Severity.WARNING
    assert f.title == f"NVIDIA driver {driver} may be too old for this PyTorch 2.1.1: it depends on its CUDA build"
    assert said in f.detail
    assert ("cu118 runs on this driver" in f.detail) is (driver == "515.105.01")
    assert ("none of its CUDA builds runs on this driver" in f.detail) is (driver == "440.33.01")
    assert "torch.version.cuda" in f.detail


def test_an_unnamed_build_on_a_driver_that_runs_all_its_wheels_says_nothing(matrices):
    assert "torch.driver-too-old" not in judged(with_driver(cuda_box({"version": "2.1.1"}), "530.30.02"), matrices)


def test_a_driver_at_the_minor_version_floor_is_not_too_old(matrices):
    assert "torch.driver-too-old" not in judged(with_driver(cuda_box(), "525.60.13"), matrices)


def test_ptx_needs_the_full_minimum_driver_and_no_more(matrices):
    doc = cuda_box(tv("2.7.0+cu128", cuda="12.8", arch_list=["sm_80", "sm_90", "compute_120"]), gpu=GB10)
    f = one(judged(with_driver(doc, "570.25"), matrices), "torch.driver-too-old")
    assert (
        "sm_121 would run through CUDA 12.8 PTX, which needs driver >= 570.26; this one is 570.25" in f.detail
    )
    assert "torch.driver-too-old" not in judged(with_driver(doc, "570.26"), matrices)


def test_a_cubin_needs_no_full_minimum(matrices):
    doc = cuda_box(
        tv("2.7.0+cu128", cuda="12.8", arch_list=["sm_80", "sm_90", "sm_120", "compute_120"]), gpu=GB10
    )
    assert "torch.driver-too-old" not in judged(with_driver(doc, "550.163.01"), matrices)


def test_a_cuda_version_gpuenv_does_not_know_is_not_judged(matrices):
    doc = with_driver(cuda_box(tv("2.99.0+cu999", cuda="99.9")), "470.256.02")
    assert "torch.driver-too-old" not in judged(doc, matrices)


def test_no_driver_version_is_not_a_driver_too_old(matrices):
    doc = cuda_box()
    doc["nvidia"] = None
    doc["packages"]["installed"] = {
        k: v for k, v in doc["packages"]["installed"].items() if "nvidia" not in k and "570" not in k
    }
    assert "torch.driver-too-old" not in judged(doc, matrices)
    assert "torch.driver-too-old" not in judged(doc, matrices, torch="2.8")


def test_a_driver_without_an_nvidia_gpu_is_not_judged(matrices):
    doc = with_driver(cuda_box(), "470.256.02")
    doc["gpus"] = base("doctor-healthy-rocm")["gpus"]
    assert "torch.driver-too-old" not in judged(doc, matrices)


# -- torch.driver-too-old (--torch VERSION) ---------------------------------------------------


def test_a_driver_too_old_for_every_wheel_of_a_release(matrices):
    f = one(judged(with_driver(cuda_box(), "470.256.02"), matrices, torch="2.8"), "torch.driver-too-old")
    assert f.severity is Severity.ERROR
    assert f.title == "NVIDIA driver 470.256.02 is too old for every PyTorch 2.8 CUDA wheel this GPU can use"
    wheels = [v for v in matrices.torch_variants("2.8") if v.stack == "cuda"]
    assert f.detail.split("; ")[0].startswith(
        f"{wheels[0].variant}: CUDA {wheels[0].stack_version} needs driver"
    )
    assert [part.split(":")[0] for part in f.detail.rstrip(".").split("; ") if part[:2] == "cu"] == [
        v.variant for v in wheels
    ]
    assert f.fix == "Upgrade the driver: gpuenv install cuda --dry-run"


def test_one_wheel_the_driver_runs_is_enough(matrices):
    doc = with_driver(cuda_box(), "470.256.02")
    assert "torch.driver-too-old" not in judged(doc, matrices, torch="2.7.0")  # cu118 runs on 470
    assert "torch.driver-too-old" not in judged(with_driver(doc, "570.133.07"), matrices, torch="2.8")


def test_no_wheel_of_the_release_for_the_gpu_is_for_arch_missing_to_say(matrices):
    doc = with_driver(cuda_box(gpu=RTX5090), "470.256.02")
    found = judged(doc, matrices, torch="2.6")
    assert "torch.driver-too-old" not in found and "torch.arch-missing" in found


# -- torch.arch-missing (the installed torch) -------------------------------------------------


def test_the_arch_list_torch_reports_decides(matrices):
    doc = cuda_box(tv("2.7.0+cu128", cuda="12.8", arch_list=["sm_90", "sm_120"]))
    f = one(judged(doc, matrices), "torch.arch-missing")
    assert f.severity is Severity.ERROR
    assert f.title == "PyTorch 2.7.0+cu128 has no kernels for sm_89"
    assert f.detail == (
        "GPUs: NVIDIA GeForce RTX 4090 (0000:01:00.0) need sm_89; the arch list torch reports: sm_90, sm_120. "
        "Kernels fail with 'no kernel image is available' / 'invalid device function'."
    )
    assert f.gpus == ("0000:01:00.0",)
    doc["python"]["torch"]["arch_list"] = ["sm_86"]  # the sm_86 cubin runs on sm_89
    assert "torch.arch-missing" not in judged(doc, matrices)


def test_without_a_reported_list_the_official_wheels_list_decides_ptx_included(matrices):
    doc = cuda_box(tv("2.9.0+cu130", cuda="13.0"), gpu=GTX1080TI)
    f = one(judged(doc, matrices), "torch.arch-missing")
    cu130 = variant(matrices, "2.9.0", "cu130")
    assert cu130.ptx  # the wheel ships PTX, and the detail names it
    assert f"need sm_61; the official wheel's arch list: {', '.join(cu130.archs + cu130.ptx)}. " in f.detail


def test_a_gpu_of_unknown_capability_is_not_missing_its_arch(matrices):
    doc = cuda_box(tv("2.7.0+cu128", cuda="12.8", arch_list=["sm_120"]), gpu=UNKNOWN_NV)
    assert "torch.arch-missing" not in judged(doc, matrices)
    doc = cuda_box({"version": "2.7.0"}, gpu=UNKNOWN_NV)
    assert "torch.arch-missing" not in judged(doc, matrices)


def test_judged_without_matrices_only_the_reported_list_counts(matrices):
    doc = cuda_box(tv("2.7.0+cu128", cuda="12.8", arch_list=["sm_90"]))
    f = one(judged(doc, None), "torch.arch-missing")
    assert "the arch list torch reports: sm_90" in f.detail
    doc["python"]["torch"]["arch_list"] = None
    assert "torch.arch-missing" not in judged(doc, None)


def test_what_the_cuda_of_an_unbundled_build_compiles_for(matrices):
    # torch 1.0.1 built with CUDA 8.0 (compute capability 2.0 .. 6.1): no kernels for an RTX 3090
    doc = cuda_box(tv("1.0.1+cu80", cuda="8.0"), gpu=RTX3090)
    f = one(judged(doc, matrices), "torch.arch-missing")
    ccs = matrices.cuda_toolkit("8.0").compute_capabilities
    assert (
        f"need sm_86; built with CUDA 8.0, which compiles for compute capability {ccs[0]} to {ccs[-1]} only."
        in f.detail
    )
    doc = cuda_box(tv("1.7.1+cu101", cuda="10.1"), gpu=RTX3090)
    assert (
        "which compiles for compute capability 3.0 to 7.5 only"
        in one(judged(doc, matrices), "torch.arch-missing").detail
    )
    doc["gpus"][0].update(GTX1080TI)  # sm_61 is among CUDA 10.1's targets
    assert "torch.arch-missing" not in judged(doc, matrices)


def test_an_unbundled_build_of_an_unknown_cuda_is_not_judged(matrices):
    doc = cuda_box(tv("2.99.0+cu999", cuda="99.9"), gpu=GTX780)
    assert "torch.arch-missing" not in judged(doc, matrices)


def test_an_unnamed_build_is_judged_by_the_official_wheels_of_its_release(matrices):
    f = one(judged(cuda_box({"version": "2.7.0"}, gpu=GTX780), matrices), "torch.arch-missing")
    # The build is presumed official, not known: a warning that says so, never an error.
    assert f.title == "PyTorch 2.7.0 has no kernels for sm_35 if it is an official wheel"
    assert f.severity is Severity.WARNING
    assert "a build compiled from source for this GPU would have them" in f.detail
    assert (
        f"need sm_35; no official 2.7.0 CUDA wheel has them: {arch_lists(matrices, '2.7.0', 'cuda')}. "
        in f.detail
    )
    assert "torch.arch-missing" not in judged(cuda_box({"version": "2.7.0"}), matrices)


def test_an_unnamed_build_on_amd_is_judged_by_the_official_rocm_wheels(matrices):
    f = one(judged(rocm_box({"version": "2.7.0"}, gpu=RX6700XT), matrices), "torch.arch-missing")
    assert f.title == "PyTorch 2.7.0 has no kernels for gfx1031 if it is an official wheel"
    assert f.severity is Severity.WARNING
    assert (
        f"need gfx1031; no official 2.7.0 ROCm wheel has them: {arch_lists(matrices, '2.7.0', 'rocm')}. "
        in f.detail
    )
    assert "torch.arch-missing" not in judged(rocm_box({"version": "2.7.0"}), matrices)


@pytest.mark.parametrize(
    "torch",
    [tv("2.99.0+rocm9.0", hip="9.0.10000"), {"version": "2.99.0"}],
    ids=["rocm-build", "unnamed-build"],
)
def test_a_target_no_official_rocm_wheel_ever_had(matrices, torch):
    f = one(judged(rocm_box(torch, gpu=RX6700XT), matrices), "torch.arch-missing")
    named = "+" in torch["version"]
    assert f.title.endswith("has no kernels for gfx1031" + ("" if named else " if it is an official wheel"))
    assert f.severity is (Severity.ERROR if named else Severity.WARNING)
    assert "need gfx1031; no official PyTorch ROCm wheel has ever been built for them. " in f.detail
    assert "torch.arch-missing" not in judged(rocm_box(torch), matrices)  # gfx1201 has had wheels


def test_the_arch_list_of_a_rocm_build(matrices):
    doc = rocm_box(tv("2.7.0+rocm6.3", hip="6.3.42131", arch_list=["gfx90a", "gfx1100"]))
    f = one(judged(doc, matrices), "torch.arch-missing")
    assert f.title == "PyTorch 2.7.0+rocm6.3 has no kernels for gfx1201"
    assert "need gfx1201; the arch list torch reports: gfx90a, gfx1100. " in f.detail
    doc["python"]["torch"]["arch_list"] = ["gfx1100", "gfx1201"]
    assert "torch.arch-missing" not in judged(doc, matrices)


RADEON_VII = amd_gpu("1002:66af", "AMD Radeon VII", "gfx906", "GCN5.1")
HOLLOW = "; the official rocm6.4 wheel lists gfx900, gfx906 but its bundled rocBLAS has no kernels for them (the first matmul aborts). "


@pytest.mark.parametrize("arch_list", [None, ["gfx900", "gfx906", "gfx90a", "gfx1100"]], ids=["official", "reported"])
def test_a_wheel_that_lists_a_target_without_its_kernels(matrices, arch_list):
    # torch 2.9.0+rocm6.4 lists gfx906 (and torch reports it), but its rocBLAS has no gfx906
    # kernels (ROCm/ROCm#4625): `gpuenv torch` refuses that wheel, and so does the doctor.
    doc = rocm_box(tv("2.9.0+rocm6.4", hip="6.4.43482", arch_list=arch_list), gpu=RADEON_VII)
    f = one(judged(doc, matrices), "torch.arch-missing")
    assert f.title == "PyTorch 2.9.0+rocm6.4 has no kernels for gfx906"
    assert HOLLOW in f.detail
    assert f.gpus == (doc["gpus"][0]["pci_slot"],)
    # gfx1201 on the same wheel: nothing hollow to say (gfx1201 is not in its list at all).
    doc = rocm_box(tv("2.9.0+rocm6.4", hip="6.4.43482", arch_list=arch_list))
    findings = judged(doc, matrices).get("torch.arch-missing", [])
    assert all(HOLLOW not in f.detail for f in findings)


def test_an_unnamed_build_is_not_fitted_by_a_wheel_without_the_kernels(matrices):
    # 2.10.0 of unknown build on gfx906: both official ROCm wheels (rocm7.0, rocm7.1) list gfx906
    # without its kernels.
    f = one(judged(rocm_box({"version": "2.10.0"}, gpu=RADEON_VII), matrices), "torch.arch-missing")
    assert f.title == "PyTorch 2.10.0 has no kernels for gfx906 if it is an official wheel"
    assert "no official 2.10.0 ROCm wheel has them" in f.detail
    # 2.9.0 still has a rocm6.3 wheel with gfx906 kernels: no finding there.
    assert "torch.arch-missing" not in judged(rocm_box({"version": "2.9.0"}, gpu=RADEON_VII), matrices)


def test_a_cpu_build_is_missing_no_arch(matrices):
    assert "torch.arch-missing" not in judged(cuda_box(tv("2.7.0+cpu", arch_list=[]), gpu=GTX780), matrices)


def test_an_unnamed_build_on_a_box_with_both_vendors_is_not_judged(matrices):
    doc = cuda_box({"version": "2.7.0"}, gpu=GTX780)
    add_gpu(doc, "doctor-healthy-rocm", "0000:03:00.0", **RX6700XT)
    assert "torch.arch-missing" not in judged(doc, matrices)
    doc["python"]["torch"] = tv("2.7.0+cu128", cuda="12.8")  # a CUDA build: judged on the NVIDIA GPU
    f = one(judged(doc, matrices), "torch.arch-missing")
    assert f.title == "PyTorch 2.7.0+cu128 has no kernels for sm_35" and f.gpus == ("0000:01:00.0",)
    doc["python"]["torch"] = tv("2.7.0+rocm6.3", hip="6.3.42131")  # a ROCm build: on the AMD GPU
    f = one(judged(doc, matrices), "torch.arch-missing")
    assert f.title == "PyTorch 2.7.0+rocm6.3 has no kernels for gfx1031" and f.gpus == ("0000:03:00.0",)


# -- torch.arch-missing (--torch VERSION) -----------------------------------------------------


def test_no_wheel_of_the_release_has_the_gpus_arch(matrices):
    f = one(judged(cuda_box(gpu=RTX5090), matrices, torch="2.6"), "torch.arch-missing")
    assert f.severity is Severity.ERROR
    assert f.title == "No official PyTorch 2.6 wheel has kernels for sm_120"
    assert f.detail == (
        f"GPUs: NVIDIA GeForce RTX 5090 (0000:01:00.0); 2.6 wheels: {arch_lists(matrices, '2.6', 'cuda', ptx=True)}"
    )
    assert f.gpus == ("0000:01:00.0",)


def test_an_igpu_is_set_aside_for_the_release_as_gpuenv_torch_does(matrices):
    doc = rocm_box(gpu={"pci_id": "1002:744c", "name": "AMD Radeon RX 7900 XTX", "gfx_target": "gfx1100"})
    add_gpu(doc, "doctor-healthy-rocm", "0000:10:00.0", **RAPHAEL)
    assert "torch.arch-missing" not in judged(doc, matrices, torch="2.7.0")


def test_an_apu_alone_is_judged_on_its_igpu(matrices):
    doc = rocm_box(gpu=PHOENIX)
    f = one(judged(doc, matrices, torch="2.7.0"), "torch.arch-missing")
    assert f.title == "No official PyTorch 2.7.0 wheel has kernels for gfx1103"
    assert "torch.arch-missing" not in judged(doc, matrices, torch="2.13")


def test_a_gpu_of_unknown_capability_is_not_judged_for_a_release(matrices):
    assert "torch.arch-missing" not in judged(cuda_box(gpu=UNKNOWN_NV), matrices, torch="2.7.0")


# -- torch.rocm-mismatch ----------------------------------------------------------------------


def test_a_wheels_rocm_that_does_not_support_the_amdgpu_driver(matrices):
    f = one(judged(rocm_box(tv("2.7.0+rocm6.3", hip="6.3.42131")), matrices), "torch.rocm-mismatch")
    assert f.severity is Severity.WARNING
    assert f.title == "PyTorch's ROCm 6.3 does not support the machine's amdgpu driver 30.30.4"
    supported = ", ".join(matrices.rocm_release("6.3").amdgpu_driver_compat)
    assert f.detail == (
        f"torch 2.7.0+rocm6.3 (HIP 6.3.42131) bundles ROCm 6.3 user space, which AMD supports on amdgpu "
        f"{supported}; this machine's amdgpu-dkms is 30.30.4."
    )
    assert f.fix.startswith("gpuenv torch  # a wheel built for a ROCm release that supports this driver")


def test_the_wheels_own_rocm_on_its_driver_is_fine(matrices):
    assert "torch.rocm-mismatch" not in judged(rocm_box(), matrices)


def no_amdgpu_driver(doc: dict) -> dict:
    """The amdgpu release is not known: no amdgpu-dkms package, no amdgpu repository."""
    for name in ("amdgpu-dkms", "amdgpu-dkms-firmware"):
        doc["packages"]["installed"].pop(name)
    doc["apt_sources"] = [s for s in doc["apt_sources"] if "/amdgpu/" not in s["uri"]]
    return doc


@pytest.mark.parametrize(
    "hip, far",
    [
        ("6.3.42131", True),  # another major than ROCm 7.2.4
        ("7.1.25424", False),  # older, same major
        ("7.2.53211", False),  # exactly the machine's series
        ("7.3.10000", True),  # newer than the machine's ROCm
    ],
)
def test_without_the_driver_release_the_machines_rocm_stands_in(matrices, hip, far):
    series = ".".join(hip.split(".")[:2])
    doc = no_amdgpu_driver(rocm_box(tv(f"2.99.0+rocm{series}", hip=hip)))
    found = judged(doc, matrices)
    if not far:
        assert "torch.rocm-mismatch" not in found
        return
    f = one(found, "torch.rocm-mismatch")
    assert f.title == f"PyTorch's ROCm {series} and the machine's ROCm 7.2.4 are too far apart"
    assert f.detail.startswith(f"torch 2.99.0+rocm{series} (HIP {hip}); installed ROCm 7.2.4.")


def test_a_hip_version_of_one_number_is_judged_against_the_machines_rocm(matrices):
    f = one(judged(rocm_box(tv("2.99.0+rocm6", hip="6")), matrices), "torch.rocm-mismatch")
    assert f.title == "PyTorch's ROCm 6 and the machine's ROCm 7.2.4 are too far apart"


def test_no_machine_rocm_and_no_driver_release_is_not_judged(matrices):
    doc = no_amdgpu_driver(rocm_box(tv("2.7.0+rocm6.3", hip="6.3.42131")))
    doc["toolkits"]["rocm"] = []
    doc["packages"]["installed"].pop("rocm-core")
    assert "torch.rocm-mismatch" not in judged(doc, matrices)


# -- torch.ld-library-path --------------------------------------------------------------------


@pytest.mark.parametrize(
    "toolkits, clash",
    [
        (["12.4.1"], "/usr/local/cuda/lib64 (CUDA 12.4)"),  # the one toolkit the link can lead to
        (["12.8.1"], None),  # ... at the wheel's own version
        (["12.4.1", "12.8.1"], None),  # which one it is is not known
    ],
)
def test_an_unversioned_cuda_directory_is_judged_by_the_one_toolkit_installed(matrices, toolkits, clash):
    doc = cuda_box()
    doc["toolkits"]["cuda"] = [
        {"version": v, "path": f"/usr/local/cuda-{v[:4]}", "source": "package"} for v in toolkits
    ]
    doc["environment"]["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64"
    found = judged(doc, matrices)
    if clash is None:
        assert "torch.ld-library-path" not in found
        return
    f = one(found, "torch.ld-library-path")
    assert f.severity is Severity.ERROR
    assert f.title == "LD_LIBRARY_PATH puts system GPU libraries ahead of the ones PyTorch bundles"
    assert f.detail.startswith(f"LD_LIBRARY_PATH: {clash}; torch 2.7.0+cu128 was built with CUDA 12.8. ")
    assert f.fix.startswith("Remove those directories from LD_LIBRARY_PATH")


def test_a_rocm_directory_of_another_release(matrices):
    doc = rocm_box()
    doc["environment"]["LD_LIBRARY_PATH"] = "/opt/rocm-6.3.0/lib:/opt/custom/lib"
    f = one(judged(doc, matrices), "torch.ld-library-path")
    assert f.detail.startswith(
        "LD_LIBRARY_PATH: /opt/rocm-6.3.0/lib (ROCm 6.3); torch 2.11.0+rocm7.2 was built with ROCm 7.2. "
    )
    doc["environment"]["LD_LIBRARY_PATH"] = "/opt/rocm-7.2.4/lib"
    assert "torch.ld-library-path" not in judged(doc, matrices)


def shadowing(doc: dict) -> dict:
    doc["environment"]["LD_LIBRARY_PATH"] = "/opt/custom/lib"
    doc["python"]["packages"]["nvidia-cuda-runtime-cu12"] = "12.8.57"
    doc["libraries"] = [
        {
            "name": "cudart",
            "version": "12.4.127",
            "source": "ld_library_path",
            "path": "/opt/custom/lib/libcudart.so.12",
        }
    ]
    return doc


def test_a_library_that_shadows_the_wheels_own_is_named_for_a_cuda_build(matrices):
    f = one(judged(shadowing(cuda_box()), matrices), "torch.ld-library-path")
    assert f.detail.startswith(
        "LD_LIBRARY_PATH: /opt/custom/lib/libcudart.so.12 (CUDA runtime 12.4.127) shadows the CUDA runtime 12.8.57 "
        "that torch takes from nvidia-cuda-runtime-cu12; "
    )
    assert "torch.ld-library-path" not in judged(shadowing(rocm_box()), matrices)


def test_a_cpu_build_has_no_library_path_to_judge(matrices):
    doc = cuda_box(tv("2.7.0+cpu", arch_list=[]))
    doc["environment"]["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.4/lib64"
    assert "torch.ld-library-path" not in judged(doc, matrices)


# -- torch.not-installed ----------------------------------------------------------------------


def no_torch(doc: dict) -> dict:
    doc["python"]["torch"] = None
    doc["python"]["packages"] = {}
    return doc


def test_no_torch_on_a_gpu_box_is_worth_knowing(matrices):
    f = one(judged(no_torch(cuda_box()), matrices), "torch.not-installed")
    assert f.severity is Severity.INFO
    assert f.title == "PyTorch is not installed in the probed Python"
    assert f.detail == "/home/alice/venv/bin/python (3.12.3) has no torch."
    assert f.fix.startswith("gpuenv torch")
    assert "torch.not-installed" in judged(no_torch(rocm_box()), matrices)


def test_no_torch_finding_without_a_gpu_or_with_torch_there(matrices):
    assert "torch.not-installed" not in judged(base("doctor-cpu-laptop"), matrices)
    doc = no_torch(cuda_box())
    doc["python"]["packages"] = {"torch": "2.7.0+cu128"}  # installed, though torch's import was not read
    assert "torch.not-installed" not in judged(doc, matrices)
    assert "torch.not-installed" not in judged(cuda_box(), matrices)


def test_a_driver_the_wheels_rocm_release_lists_is_fine_whatever_newer_releases_say(matrices):
    # ROCm 5.1 supports the 5.3.x amdgpu driver (its compat list), though ROCm 5.3's own list does
    # not name 5.1 user space: the wheel's release decides.
    doc = no_amdgpu_driver(rocm_box(tv("1.12.1+rocm5.1.1", hip="5.1.20531")))
    assert "5.3.x" in matrices.rocm_release("5.1").amdgpu_driver_compat
    doc["apt_sources"].append({**doc["apt_sources"][0], "uri": "https://repo.radeon.com/amdgpu/5.3.3/ubuntu"})
    assert "torch.rocm-mismatch" not in judged(doc, matrices)
    doc["apt_sources"][-1]["uri"] = "https://repo.radeon.com/amdgpu/5.5.1/ubuntu"  # not in 5.1's list
    f = one(judged(doc, matrices), "torch.rocm-mismatch")
    assert f.title == "PyTorch's ROCm 5.1 does not support the machine's amdgpu driver 5.5.1"
