"""What the AMD doctor checks (gpuenv/resolve/checks/amd.py) say, at their boundaries: the amdgpu
driver and why it is missing, /dev/kfd from either fact, who may open the device nodes, GPUs a ROCm
release does not list or lists on Radeon terms, and HSA_OVERRIDE_GFX_VERSION. Each machine is the
healthy RX 9070 XT box (tests/facts/doctor-healthy-rocm.json) with a few facts changed, judged by
the doctor."""

from __future__ import annotations

import pytest

from gpuenv.matrices import load
from gpuenv.resolve.finding import Severity
from tests.doctor_cases import DEBIAN, MI300X, RX6700XT, amd_gpu, base, box, judged, judged_one, no_rocm

RX6800 = amd_gpu("1002:73bf", "AMD Radeon RX 6800 XT", "gfx1030", "RDNA2")
VEGA = amd_gpu("1002:687f", "AMD Radeon RX Vega 64", "gfx900", "GCN5")
PHOENIX = amd_gpu("1002:15bf", "AMD Radeon 780M", "gfx1103", "RDNA3", integrated=True)
RAPHAEL = amd_gpu("1002:164e", "AMD Radeon 610M", "gfx1036", "RDNA2", integrated=True)
STRIX = amd_gpu("1002:1586", "AMD Radeon 8060S", "gfx1151", "RDNA3.5", integrated=True)
# A GPU neither the facts nor the bundled tables give a gfx target for.
NAMELESS = {"pci_id": "1002:fff0", "name": "AMD Prototype", "gfx_target": None, "architecture": None}


@pytest.fixture(scope="module")
def matrices():
    return load()


def _driver_left_out(doc):
    for g in doc["gpus"]:
        del g["kernel_driver"]


def _nodes(**nodes):
    """device_nodes from kfd=(mode, group, accessible), renderD128=(...)."""
    path = {"kfd": "/dev/kfd", "renderD128": "/dev/dri/renderD128", "card1": "/dev/dri/card1"}
    return (
        "device_nodes",
        {path[k]: {"exists": True, "mode": m, "group": g, "accessible": a} for k, (m, g, a) in nodes.items()},
    )


def _user(name="alice", groups=("alice",), uid=1000):
    return ("user", {"name": name, "uid": uid, "groups": list(groups)})


AMD_CODES = [
    "amd.driver-missing",
    "amd.kfd-missing",
    "amd.no-device-access",
    "amd.gpu-unsupported",
    "amd.gpu-preview",
    "amd.hsa-override",
]


@pytest.mark.parametrize("code", AMD_CODES)
@pytest.mark.parametrize("target", [None, "rocm@7.2.4"])
def test_the_healthy_box_has_no_amd_finding(matrices, code, target):
    assert not judged(box("rocm"), matrices, code, target)


# -- amd.driver-missing


def _unbound(*edits, gpus=None):
    return box("rocm", ("gpus.0.kernel_driver", None), ("kernel.modules_loaded", []), *edits, gpus=gpus)


def test_no_amdgpu_bound_points_at_modprobe_and_the_rocm_driver(matrices):
    f = judged_one(_unbound(), matrices, "amd.driver-missing")
    assert f.severity.value == "error"
    assert f.detail == "AMD Radeon RX 9070 XT (0000:03:00.0): no driver bound"
    assert f.fix.startswith("sudo modprobe amdgpu && sudo dmesg | grep -i amdgpu")
    assert "gpuenv install rocm --dry-run" in f.fix
    assert f.gpus == ("0000:03:00.0",)


def test_a_gpu_reserved_for_a_virtual_machine_names_vfio_pci(matrices):
    f = judged_one(_unbound(("gpus.0.kernel_driver", "vfio-pci")), matrices, "amd.driver-missing")
    assert f.detail == "AMD Radeon RX 9070 XT (0000:03:00.0): bound to vfio-pci"
    assert f.fix.startswith("The GPU is reserved for a virtual machine (vfio-pci).")
    assert "vfio-pci.ids" in f.fix


def test_a_blacklisted_amdgpu_is_named_with_its_fix(matrices):
    f = judged_one(_unbound(("kernel.modules_blacklisted", ["amdgpu"])), matrices, "amd.driver-missing")
    assert (
        f.detail
        == "AMD Radeon RX 9070 XT (0000:03:00.0): no driver bound; amdgpu is blacklisted in /etc/modprobe.d"
    )
    assert f.fix.startswith("Remove the amdgpu blacklist entry from /etc/modprobe.d")
    assert f.fix.endswith("then: sudo update-initramfs -u && sudo reboot")  # the healthy box is Ubuntu 24.04


def test_the_initramfs_is_rebuilt_with_the_distributions_tool(matrices):
    fedora = {"id": "fedora", "version_id": "42", "pretty_name": "Fedora Linux 42"}
    f = judged_one(_unbound(("os", fedora), ("kernel.modules_blacklisted", ["amdgpu"])), matrices, "amd.driver-missing")
    assert f.fix.endswith("then: sudo dracut --force && sudo reboot")
    arch = {"id": "arch", "version_id": None}
    f = judged_one(_unbound(("os", arch), ("gpus.0.kernel_driver", "vfio-pci")), matrices, "amd.driver-missing")
    assert f.fix.endswith("then: sudo mkinitcpio -P && sudo reboot")


def test_vfio_pci_is_the_fix_even_when_amdgpu_is_also_blacklisted(matrices):
    doc = _unbound(("kernel.modules_blacklisted", ["amdgpu"]), ("gpus.0.kernel_driver", "vfio-pci"))
    f = judged_one(doc, matrices, "amd.driver-missing")
    assert f.detail.endswith("bound to vfio-pci; amdgpu is blacklisted in /etc/modprobe.d")
    assert f.fix.startswith("The GPU is reserved for a virtual machine")


@pytest.mark.parametrize("driver", [None, "vfio-pci"])
def test_in_a_container_the_fix_is_on_the_host(matrices, driver):
    doc = _unbound(("platform.container", "docker"), ("gpus.0.kernel_driver", driver))
    f = judged_one(doc, matrices, "amd.driver-missing")
    assert f.fix == "Load amdgpu on the host (the container shares the host's kernel)."


def test_every_other_driver_bound_is_named_once_sorted(matrices):
    doc = _unbound(
        gpus=[{"kernel_driver": "vfio-pci"}, {"kernel_driver": "pci-stub"}, {"kernel_driver": "vfio-pci"}]
    )
    f = judged_one(doc, matrices, "amd.driver-missing")
    assert f.detail.endswith(": bound to pci-stub, vfio-pci")
    assert f.gpus == ("0000:03:00.0", "0000:04:00.0", "0000:05:00.0")


@pytest.mark.parametrize("blacklist", [None, ["nouveau"]])
def test_an_unknown_or_other_blacklist_is_not_named(matrices, blacklist):
    f = judged_one(_unbound(("kernel.modules_blacklisted", blacklist)), matrices, "amd.driver-missing")
    assert "blacklisted" not in f.detail and "blacklist" not in f.fix


@pytest.mark.parametrize(
    "loaded, fires",
    [([], True), (["amdgpu"], False), (None, False)],
)
def test_a_driver_the_facts_leave_out_is_judged_only_by_proc_modules(matrices, loaded, fires):
    doc = box("rocm", _driver_left_out, ("kernel.modules_loaded", loaded))
    hits = judged(doc, matrices, "amd.driver-missing")
    assert bool(hits) is fires
    if fires:
        assert hits[0].detail.endswith(": no driver bound")


def test_a_gpu_bound_to_amdgpu_is_not_missing_it_whatever_proc_modules_says(matrices):
    assert not judged(box("rocm", ("kernel.modules_loaded", [])), matrices, "amd.driver-missing")


def _cuda_box_with_a_radeon(driver):
    doc = base("doctor-healthy-cuda")
    radeon = {**box("rocm")["gpus"][0], **RX6800, "pci_slot": "0000:04:00.0", "kernel_driver": driver}
    doc["gpus"].append(radeon)
    return doc


@pytest.mark.parametrize(
    "target, fires",
    [(None, False), ("rocm", True)],
)
def test_an_old_radeon_on_the_radeon_driver_matters_only_for_rocm(matrices, target, fires):
    hits = judged(_cuda_box_with_a_radeon("radeon"), matrices, "amd.driver-missing", target)
    assert bool(hits) is fires
    if fires:
        assert hits[0].detail == "AMD Radeon RX 6800 XT (0000:04:00.0): bound to radeon"


def test_a_radeon_with_no_driver_on_a_cuda_box_is_still_missing_amdgpu(matrices):
    f = judged_one(_cuda_box_with_a_radeon(None), matrices, "amd.driver-missing")
    assert f.detail == "AMD Radeon RX 6800 XT (0000:04:00.0): no driver bound"


# -- amd.kfd-missing


def _no_kfd(*edits, gpus=None):
    return box("rocm", ("amd.kfd", False), ("device_nodes./dev/kfd.exists", False), *edits, gpus=gpus)


def test_kfd_missing_says_why_rocm_needs_it(matrices):
    f = judged_one(_no_kfd(), matrices, "amd.kfd-missing")
    assert f.severity.value == "error"
    assert f.title == "amdgpu is loaded but /dev/kfd is missing"
    assert f.detail.endswith(
        "The kernel was built without HSA_AMD/KFD, or amdgpu failed to initialise compute."
    )
    assert f.fix.startswith("sudo dmesg | grep -i kfd\n") and "CONFIG_HSA_AMD=y" in f.fix
    assert f.gpus == ("0000:03:00.0",)


def test_kfd_missing_in_a_container_asks_the_host_to_map_it(matrices):
    doc = _no_kfd(
        ("platform.container", "docker"), ("kernel.modules_loaded", None), ("gpus.0.kernel_driver", None)
    )
    f = judged_one(doc, matrices, "amd.kfd-missing")
    assert f.title == "amdgpu is loaded but /dev/kfd is missing in this container"
    assert f.detail.endswith(" Inside a docker container the host must map it in.")
    assert f.fix.startswith("docker run --device /dev/kfd --device /dev/dri")


@pytest.mark.parametrize(
    "amd_kfd, node, fires",
    [
        (False, True, True),  # the amd fact wins over the node
        (True, False, False),
        (None, False, True),  # no amd fact: the node decides
        (None, True, False),
        (None, None, False),  # neither is known
    ],
)
def test_kfd_is_the_amd_fact_else_the_device_node(matrices, amd_kfd, node, fires):
    nodes = (
        {}
        if node is None
        else {"/dev/kfd": {"exists": node, "mode": None, "group": None, "accessible": None}}
    )
    doc = box("rocm", ("amd.kfd", amd_kfd), ("device_nodes", nodes))
    assert bool(judged(doc, matrices, "amd.kfd-missing")) is fires


def test_kfd_falls_back_to_the_device_node_without_amd_facts(matrices):
    assert judged_one(_no_kfd(("amd", None)), matrices, "amd.kfd-missing").gpus == ("0000:03:00.0",)
    assert not judged(box("rocm", ("amd", None)), matrices, "amd.kfd-missing")


def test_kfd_from_the_amd_fact_without_device_nodes(matrices):
    assert judged(_no_kfd(("device_nodes", None)), matrices, "amd.kfd-missing")
    assert not judged(box("rocm", ("amd.kfd", None), ("device_nodes", None)), matrices, "amd.kfd-missing")


def test_amdgpu_bound_to_the_gpu_counts_as_loaded_when_proc_modules_is_not_known(matrices):
    assert judged(_no_kfd(("kernel.modules_loaded", None)), matrices, "amd.kfd-missing")


@pytest.mark.parametrize(
    "edits",
    [
        [("kernel.modules_loaded", []), ("gpus.0.kernel_driver", None)],  # amdgpu not loaded: driver-missing
        [("platform.wsl", True)],
    ],
)
def test_no_kfd_missing_without_amdgpu_or_under_wsl(matrices, edits):
    assert not judged(_no_kfd(*edits), matrices, "amd.kfd-missing")


def test_a_discrete_gpu_makes_kfd_matter_whatever_the_target(matrices):
    assert judged(_no_kfd(), matrices, "amd.kfd-missing", "cuda")


@pytest.mark.parametrize(
    "target, fires",
    [(None, False), ("rocm", True)],
)
def test_an_integrated_gpu_alone_makes_kfd_matter_only_for_rocm(matrices, target, fires):
    doc = _no_kfd(no_rocm, ("gpus.0.kernel_driver", "amdgpu"), gpus=[RAPHAEL])
    hits = judged(doc, matrices, "amd.kfd-missing", target)
    assert bool(hits) is fires
    if fires:
        assert hits[0].gpus == ("0000:03:00.0",)


def test_the_kfd_finding_names_the_discrete_gpus_not_the_integrated_one(matrices):
    doc = _no_kfd(gpus=[{"kernel_driver": "amdgpu"}, {**RAPHAEL, "kernel_driver": "amdgpu"}])
    assert judged_one(doc, matrices, "amd.kfd-missing").gpus == ("0000:03:00.0",)


# -- amd.no-device-access


def test_nodes_the_user_cannot_open_are_named_with_their_group_and_mode(matrices):
    doc = box(
        "rocm",
        _user(groups=["alice", "video"]),
        _nodes(kfd=("0660", "render", None), renderD128=("0660", "render", None)),
    )
    f = judged_one(doc, matrices, "amd.no-device-access")
    assert f.severity.value == "error"
    assert f.title == "User alice cannot open the AMD GPU device nodes"
    assert f.detail == (
        "cannot open /dev/dri/renderD128 (group render, mode 0660), /dev/kfd (group render, mode 0660); "
        "alice is in groups: alice, video."
    )
    assert f.fix.startswith("sudo usermod -aG render alice\n")


def test_a_user_in_no_group_is_told_to_join_both(matrices):
    doc = box("rocm", _user(name="bob", groups=[]), _nodes(kfd=("0660", "render", None)))
    f = judged_one(doc, matrices, "amd.no-device-access")
    assert f.detail.endswith("; bob is in groups: none.")
    assert f.fix.startswith("sudo usermod -aG render,video bob\n")


@pytest.mark.parametrize(
    "node, groups, denied",
    [
        (("0660", "render", None), ["render"], False),  # the group may open it
        (("0660", "render", None), ["video"], True),
        (("0666", "root", None), ["alice"], False),  # anyone may open it
        (("0667", "root", None), ["alice"], False),
        (("0664", "render", None), ["alice"], True),  # others may only read
        (("0600", "render", None), ["render"], True),  # the owner (root) alone
        (("0670", "render", None), ["render"], False),
        (("0660", None, None), ["alice"], False),  # the group is not known
        ((None, "render", None), ["alice"], False),  # the mode is not known
        (("0600", "root", True), ["alice"], False),  # the probe opened it
        (("0666", "root", False), ["render"], True),  # the probe could not open it
    ],
)
def test_who_may_open_a_node_by_its_mode_group_and_the_probes_word(matrices, node, groups, denied):
    doc = box("rocm", _user(groups=groups), _nodes(kfd=node))
    assert bool(judged(doc, matrices, "amd.no-device-access")) is denied


def test_a_node_the_probe_could_not_open_shows_what_is_not_known(matrices):
    doc = box("rocm", _nodes(kfd=(None, None, False), renderD128=("0660", "render", True)))
    f = judged_one(doc, matrices, "amd.no-device-access")
    assert f.detail.startswith("cannot open /dev/kfd (group ?, mode ?); alice is in groups:")
    assert f.fix.startswith("sudo usermod -aG render,video alice\n")  # in both already: the fallback


def test_only_the_compute_nodes_that_exist_are_judged(matrices):
    nodes = {
        "/dev/kfd": {"exists": False, "mode": "0600", "group": "root", "accessible": False},
        "/dev/dri/card1": {"exists": True, "mode": "0600", "group": "root", "accessible": False},
        "/dev/nvidiactl": {"exists": True, "mode": "0600", "group": "root", "accessible": False},
        "/dev/dri/renderD128": {"exists": True, "mode": "0660", "group": "render", "accessible": True},
    }
    assert not judged(box("rocm", ("device_nodes", nodes)), matrices, "amd.no-device-access")


@pytest.mark.parametrize(
    "user, title",
    [
        (None, "The AMD GPU device nodes can be opened by their owner (root) only"),
        (
            {"name": None, "uid": 1000, "groups": []},
            "The AMD GPU device nodes can be opened by their owner (root) only",
        ),
    ],
)
def test_an_unknown_user_is_denied_only_a_node_its_owner_alone_may_open(matrices, user, title):
    doc = box("rocm", ("user", user), _nodes(kfd=("0600", "root", None), renderD128=("0660", "render", None)))
    f = judged_one(doc, matrices, "amd.no-device-access")
    assert f.title == title
    assert f.detail == "cannot open /dev/kfd (group root, mode 0600); the user is not known."
    assert f.fix.startswith("sudo usermod -aG render,video $USER\n")
    assert not judged(
        box("rocm", ("user", user), _nodes(kfd=("0660", "render", None))), matrices, "amd.no-device-access"
    )


def test_a_user_known_by_name_alone_is_in_no_group(matrices):
    doc = box("rocm", ("user", {"name": "bob", "uid": 1001, "groups": []}), _nodes(kfd=("0660", "render", None)))
    assert (
        judged_one(doc, matrices, "amd.no-device-access").title == "User bob cannot open the AMD GPU device nodes"
    )


def test_root_may_open_everything(matrices):
    doc = box("rocm", _user(name="root", groups=["root"], uid=0), _nodes(kfd=("0600", "render", None)))
    assert not judged(doc, matrices, "amd.no-device-access")


@pytest.mark.parametrize("uid", [1, 1000])
def test_any_other_uid_is_judged(matrices, uid):
    doc = box("rocm", _user(name="svc", groups=["svc"], uid=uid), _nodes(kfd=("0660", "render", None)))
    assert judged(doc, matrices, "amd.no-device-access")


def test_without_device_nodes_the_standard_rules_decide_for_a_known_user(matrices):
    f = judged_one(box("rocm", ("device_nodes", {}), _user(groups=["alice", "sudo"])), matrices, "amd.no-device-access")
    assert f.detail == (
        "the device nodes are not in the facts; with the standard udev rules /dev/kfd and /dev/dri/renderD* "
        "are 0660, group render; alice is in groups: alice, sudo."
    )
    assert f.fix.startswith("sudo usermod -aG render,video alice\n")


@pytest.mark.parametrize(
    "edits",
    [
        [_user(groups=["alice", "video"])],  # either group will do
        [_user(groups=["render"])],
        [("user", None)],  # who the user is is not known
        [_user(groups=["alice"]), ("kernel.modules_loaded", []), ("gpus.0.kernel_driver", None)],  # no amdgpu
        [_user(groups=["alice"]), ("platform.wsl", True)],
    ],
)
def test_without_device_nodes_no_finding_when_a_group_fits_or_nothing_is_known(matrices, edits):
    for nodes in ({}, None):
        assert not judged(box("rocm", ("device_nodes", nodes), *edits), matrices, "amd.no-device-access")


# -- amd.gpu-unsupported


def test_a_gpu_the_target_release_does_not_list_is_named_with_what_it_lists(matrices):
    f = judged_one(box("rocm", gpus=[RX6700XT]), matrices, "amd.gpu-unsupported", "rocm@7.2.4")
    assert f.title == "ROCm 7.2.4 does not support gfx1031"
    assert f.detail.startswith(
        "AMD Radeon RX 6700 XT (0000:03:00.0); ROCm 7.2.4 (explicit target) supports gfx1030, "
    )
    assert "HSA_OVERRIDE_GFX_VERSION is an unsupported same-family workaround" in f.fix
    assert f.gpus == ("0000:03:00.0",)


def test_a_gpu_of_unknown_gfx_target_is_not_judged_unsupported(matrices):
    assert not judged(box("rocm", gpus=[NAMELESS]), matrices, "amd.gpu-unsupported", "rocm@7.2.4")


@pytest.mark.parametrize("gpu, wheel", [(RAPHAEL, "")])
def test_an_only_gpu_no_release_lists_says_so_and_names_the_first_wheel(matrices, gpu, wheel):
    f = judged_one(box("rocm", no_rocm, gpus=[gpu]), matrices, "amd.gpu-unsupported")
    assert f.title == f"No ROCm release lists {gpu['gfx_target']}, this machine's only GPU"
    assert f.detail == (
        f"{gpu['name']} (0000:03:00.0): no bundled ROCm release (up to 7.2.4, the default) lists it, so ROCm "
        "applications built for the listed targets (ollama, llama.cpp's HIP build) do not use it and run on the CPU."
        + wheel
    )


def test_an_only_apu_a_release_lists_is_judged_against_what_install_auto_plans(matrices):
    """#29: AMD's 7.14 / 10.0 Ryzen tables (carried into 10.1) list gfx1103 and gfx1151, so such an APU alone is no
    longer 'no release lists it'. #42: it is judged against the release `install auto` plans, the newest whose key
    gpuenv may pin (7.2.4, which lists gfx1151 but not gfx1103); the fix names the newer release with the flag its
    unconfirmed key needs."""
    assert matrices.newest_rocm_for(STRIX["gfx_target"]).version == "10.1.0"
    [doubt] = judged(box("rocm", no_rocm, gpus=[STRIX]), matrices, "amd.gpu-unsupported")  # listed, unconfirmed
    assert (doubt.severity.value, doubt.title) == ("info", "ROCm 7.2.4's support for gfx1151 is not confirmed by AMD")
    [f] = judged(box("rocm", no_rocm, gpus=[PHOENIX]), matrices, "amd.gpu-unsupported")
    assert f.severity.value == "warning"
    assert f.title == "ROCm 7.2.4 does not support gfx1103 (from AMD's repository, what `gpuenv install auto` would pick)"
    assert "gfx1103: the newest ROCm release that lists it is 10.1.0" in f.detail
    key = matrices.rocm_release("10.1.0").repository.fingerprint
    assert f.fix.startswith(
        f"Install a release that lists it: gpuenv install rocm --version 10.1.0 --trust-unconfirmed-key {key} --dry-run "
        "(its repository key's fingerprint is not confirmed by AMD: check it first). "
    )


@pytest.mark.parametrize(
    "other",
    [
        {"vendor": "nvidia", "pci_id": "10de:2684", "name": "NVIDIA GeForce RTX 4090", "gfx_target": None},
        {**RX6800, "integrated": False},
    ],
)
def test_an_integrated_gpu_beside_another_gpu_is_not_the_only_one(matrices, other):
    assert not judged(box("rocm", no_rocm, gpus=[PHOENIX, other]), matrices, "amd.gpu-unsupported")


def test_an_apu_beside_an_intel_gpu_is_the_only_amd_gpu(matrices):
    """An Intel GPU is nothing ROCm serves: the APU is judged as alone (against install auto's 7.2.4)."""
    intel = {"vendor": "intel", "pci_id": "8086:56a0", "name": "Intel Arc A770", "gfx_target": None}
    [f] = judged(box("rocm", no_rocm, gpus=[PHOENIX, intel]), matrices, "amd.gpu-unsupported")
    assert f.title.startswith("ROCm 7.2.4 does not support gfx1103")


def test_an_only_integrated_gpu_is_not_judged_for_a_cuda_target(matrices):
    assert not judged(box("rocm", no_rocm, gpus=[PHOENIX]), matrices, "amd.gpu-unsupported", "cuda")


def test_an_only_integrated_gpu_of_unknown_gfx_target_is_not_judged(matrices):
    assert not judged(box("rocm", no_rocm, gpus=[{**NAMELESS, "integrated": True}]), matrices, "amd.gpu-unsupported")


# -- amd.gpu-preview


def test_a_radeon_on_a_distribution_off_its_terms_is_a_warning(matrices):
    f = judged_one(box("rocm", ("os", DEBIAN)), matrices, "amd.gpu-preview")
    assert f.severity.value == "warning"
    assert f.title == "ROCm 7.2.4 supports gfx1201 only on Radeon terms"
    assert f.detail == (
        "AMD Radeon RX 9070 XT (0000:03:00.0) (gfx1201): supported on Radeon terms: Ubuntu and RHEL only, "
        "not Debian GNU/Linux 12 (bookworm). Expect gaps and less testing."
    )
    assert f.fix == "Run it on a distribution the release lists for this GPU (Ubuntu 24.04 / 22.04)."
    assert f.gpus == ("0000:03:00.0",)


def test_the_distribution_is_named_by_its_id_without_a_pretty_name(matrices):
    f = judged_one(box("rocm", ("os", {**DEBIAN, "pretty_name": None})), matrices, "amd.gpu-preview")
    assert "Ubuntu and RHEL only, not debian 12." in f.detail  # the id and release, as every finding names an OS


@pytest.mark.parametrize("os_id", ["ubuntu", "rhel", "", "unknown"])
def test_no_radeon_terms_warning_on_ubuntu_rhel_or_an_unknown_distribution(matrices, os_id):
    assert not judged(box("rocm", ("os.id", os_id)), matrices, "amd.gpu-preview")


def test_an_instinct_gpu_is_not_held_to_radeon_terms(matrices):
    assert not judged(box("rocm", ("os", DEBIAN), gpus=[MI300X]), matrices, "amd.gpu-preview")


@pytest.mark.parametrize(
    "release, fires",
    [("5.7.1", False), ("6.0.0", True), ("7.2.4", True)],
)
def test_radeon_terms_apply_from_exactly_rocm_6(matrices, release, fires):
    hits = judged(box("rocm", ("os", DEBIAN), gpus=[RX6800]), matrices, "amd.gpu-preview", f"rocm@{release}")
    assert bool(hits) is fires
    if fires:
        assert hits[0].title == f"ROCm {release} supports gfx1030 only on Radeon terms"


def test_no_radeon_terms_warning_without_a_rocm_target(matrices):
    assert not judged(box("rocm", ("os", DEBIAN)), matrices, "amd.gpu-preview", "cuda")


# -- amd.hsa-override


def _override(value, *edits, gpus=None):
    return box("rocm", ("environment.HSA_OVERRIDE_GFX_VERSION", value), *edits, gpus=gpus)


@pytest.mark.parametrize(
    "value, posing",
    [
        ("10.3.0", "gfx1030"),
        (" 11.0.0 ", "gfx1100"),
        ("9.0.10", "gfx90a"),
        ("9.15.0", "gfx9f0"),  # minor and stepping are one hex digit: up to 15
        ("9.0.15", "gfx90f"),
        ("9.16.0", None),
        ("9.0.16", None),
        ("10.3", None),
        ("10.3.0.0", None),
        ("10.x.0", None),
    ],
)
def test_the_override_is_read_as_the_gfx_target_it_poses_as(matrices, value, posing):
    f = judged_one(_override(value), matrices, "amd.hsa-override")
    assert f.detail.startswith(
        f"HSA_OVERRIDE_GFX_VERSION={value} makes ROCm treat every GPU as {posing or 'another ISA'};"
    )


def test_an_override_on_a_supported_gpu_can_only_break_it(matrices):
    f = judged_one(_override("12.0.1"), matrices, "amd.hsa-override")
    assert f.severity.value == "warning"
    assert f.detail == (
        "HSA_OVERRIDE_GFX_VERSION=12.0.1 makes ROCm treat every GPU as gfx1201; AMD Radeon RX 9070 XT (0000:03:00.0) "
        "is supported natively by ROCm 7.2.4: the override can only break it."
    )
    assert f.fix.startswith("unset HSA_OVERRIDE_GFX_VERSION") and "\n" not in f.fix
    assert f.gpus == ("0000:03:00.0",)


def test_a_same_family_override_is_the_known_workaround(matrices):
    f = judged_one(_override("10.3.0", gpus=[RX6700XT]), matrices, "amd.hsa-override")
    assert f.detail.endswith(
        "; gfx1031 is not supported by ROCm 7.2.4, and gfx1030 is the same family: this is the known unofficial "
        "workaround (unsupported, results are yours to verify)."
    )
    assert f.fix.startswith("Keep it only for experiments with the GPU ROCm 7.2.4 does not list")


@pytest.mark.parametrize(
    "value, gpus, said",
    [
        ("10.1.0", [RX6700XT], "gfx1031 is not supported by ROCm 7.2.4 and gfx1010 is not its family"),
        ("10.3", [RX6700XT], "gfx1031 is not supported by ROCm 7.2.4 and 10.3 is not its family"),
        (
            "10.3.0",
            [RX6700XT, VEGA],
            "gfx1031, gfx900 is not supported by ROCm 7.2.4 and gfx1030 is not its family",
        ),
    ],
)
def test_another_familys_override_runs_the_wrong_machine_code(matrices, value, gpus, said):
    f = judged_one(_override(value, gpus=gpus), matrices, "amd.hsa-override")
    assert f"; {said}: kernels of another ISA crash or compute wrong results." in f.detail
    assert f.fix.startswith("unset HSA_OVERRIDE_GFX_VERSION") and "\n" not in f.fix


@pytest.mark.parametrize(
    "gpus, target",
    [(None, "cuda"), ([NAMELESS], None)],
)
def test_without_a_known_rocm_release_or_gfx_target_support_is_not_judged(matrices, gpus, target):
    f = judged_one(_override("10.3.0", gpus=gpus), matrices, "amd.hsa-override", target)
    assert f.detail.endswith("; which GPUs the installed ROCm supports is not known here.")
    assert f.fix.endswith(
        "Use it only as a same-family workaround for a GPU ROCm does not list, never for a supported one."
    )


@pytest.mark.parametrize(
    "env",
    [None, {}, {"HSA_OVERRIDE_GFX_VERSION": ""}],
)
def test_no_override_finding_when_it_is_not_set_or_not_known(matrices, env):
    assert not judged(box("rocm", ("environment", env)), matrices, "amd.hsa-override")


# -- Strix Point / Strix Halo on the legacy stream (#29)


def _installed(version: str, build: str):
    """The box with another legacy ROCm installed: the toolkit and its rocm-* packages."""

    def apply(doc):
        doc["toolkits"]["rocm"] = [{"version": f"{version}-{build}", "path": f"/opt/rocm-{version}", "source": "package"}]
        pk = doc["packages"]["installed"]
        for name in ("rocm", "rocm-core", "rocm-hip-runtime"):
            pk[name] = f"{version}.{build}-1~24.04"

    return apply


@pytest.mark.parametrize("version,build", [("7.2.4", "70204"), ("7.2.1", "70201"), ("7.1.1", "70101")])
def test_a_ryzen_ai_max_395_under_a_release_whose_ryzen_pages_list_it(matrices, version, build):
    """A Ryzen AI MAX+ 395 (Strix Halo, gfx1151) alone with ROCm 7.1.1-7.2.x installed: AMD's Ryzen pages
    list it (unconfirmed, the release's notes say so), so the doctor judges it against the installed
    release, which supports it on Radeon terms: no error, only the warning that AMD does not confirm
    the listing (rocm.json gpus_unconfirmed, #42), and Ubuntu is within the terms."""
    rel = matrices.rocm_release(version)
    assert rel.support("gfx1151") == "radeon" and rel.support("gfx1150") == "radeon"
    assert any("UNCONFIRMED" in n and "gfx1151" in n for n in rel.notes)
    doc = box("rocm", _installed(version, build), gpus=[STRIX])
    doubt = judged_one(doc, matrices, "amd.gpu-unsupported")
    assert (doubt.severity, doubt.title) == (Severity.WARNING, f"ROCm {version}'s support for gfx1151 is not confirmed by AMD")
    assert not judged(doc, matrices, "amd.gpu-preview")
    off_terms = judged_one(box("rocm", _installed(version, build), ("os", DEBIAN), gpus=[STRIX]), matrices, "amd.gpu-preview")
    assert off_terms.title == f"ROCm {version} supports gfx1151 only on Radeon terms"


def test_a_ryzen_ai_max_395_under_710_is_unsupported(matrices):
    """7.1.0: no source read names a Ryzen APU for it, so the installed release does not list gfx1151."""
    assert matrices.rocm_release("7.1.0").support("gfx1151") is None
    f = judged_one(box("rocm", _installed("7.1.0", "70100"), gpus=[STRIX]), matrices, "amd.gpu-unsupported")
    assert f.title == "ROCm 7.1.0 does not support gfx1151"


# -- the second audit's gfx targets (AMD's device table, GPUOpen-Tools/device_info @ a44c00c0): a GPU whose
# facts carry no target (no KFD node yet) is judged by the bundled table's


def test_a_granite_ridge_igpu_alone_is_judged_as_gfx1036(matrices):
    granite = {"pci_id": "1002:13c0", "name": "Granite Ridge", "gfx_target": None, "architecture": None, "integrated": None}
    f = judged_one(box("rocm", no_rocm, gpus=[granite]), matrices, "amd.gpu-unsupported")
    assert f.title == "No ROCm release lists gfx1036, this machine's only GPU"


def test_an_rx_5700b_is_judged_as_gfx1010(matrices):
    rx5700b = {"pci_id": "1002:731e", "name": "AMD Radeon RX 5700B", "gfx_target": None, "architecture": None}
    f = judged_one(box("rocm", gpus=[rx5700b]), matrices, "amd.gpu-unsupported", "rocm@7.2.4")
    assert f.title == "ROCm 7.2.4 does not support gfx1010"


def _navi23(revision):
    """1002:73ff, one PCI id of two targets (AMD's device table: revision DF, the RX 6750 GRE 10GB, is gfx1031;
    the others gfx1032), with no KFD target in the facts and ``revision`` as sysfs gave it (None: not known)."""
    gpu = {"pci_id": "1002:73ff", "name": "AMD Radeon RX 6600", "gfx_target": None, "architecture": None}
    return {**gpu, "revision": revision} if revision else gpu


@pytest.mark.parametrize("revision, gfx", [("df", "gfx1031"), ("DF", "gfx1031"), ("c1", "gfx1032"), ("cf", "gfx1032")])
def test_a_navi23_id_is_judged_by_its_pci_revision(matrices, revision, gfx):
    f = judged_one(box("rocm", gpus=[_navi23(revision)]), matrices, "amd.gpu-unsupported", "rocm@7.2.4")
    assert f.title == f"ROCm 7.2.4 does not support {gfx}"
    assert "depends on its PCI revision" not in f.detail


def test_a_navi23_id_without_its_revision_is_taken_as_gfx1032_and_says_so(matrices):
    f = judged_one(box("rocm", gpus=[_navi23(None)]), matrices, "amd.gpu-unsupported", "rocm@7.2.4")
    assert f.title == "ROCm 7.2.4 does not support gfx1032"
    assert f.detail.endswith(
        " The facts lack the revision: 1002:73ff is taken to be gfx1032, but depends on its PCI revision (DF gfx1031)."
    )
