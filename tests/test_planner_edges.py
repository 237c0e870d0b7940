"""What a plan holds, step by step, and the notes it shows, at each rule's edge: every trace of the
other stack that brings its purge (packages, sources, a toolkit, a runfile toolkit or driver, a
driver running), the files and sources a purge or an install removes and the ones it leaves, kernel
headers, the ROCm and CUDA steps and their reboots, the notes for what gpuenv does not know (CPU
architecture, distribution, suite, a vendor pairing), the NVIDIA driver package for each GPU and
toolkit (branch boundaries, the compute-capability fallback), and torch wheels at the exact version
boundaries."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gpuenv import facts as facts_mod
from gpuenv.plan import planner, repos
from gpuenv.plan.plan import Action, Kind, PlanError
from tests.test_plan import load, matrices

NVIDIA_URI = "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/"
AMD_URI = "https://repo.radeon.com/rocm/apt/6.4"


def _source(uri: str, file: str | None, suite: str = "/") -> dict:
    return {"uri": uri, "file": file, "suites": [suite], "components": [], "signed_by": None}


UBUNTU_SOURCE = _source("http://archive.ubuntu.com/ubuntu", "/etc/apt/sources.list.d/ubuntu.sources", "noble")


def amd_box() -> dict:
    """Ubuntu 24.04 with an RX 9070 XT and no trace of CUDA."""
    doc = copy.deepcopy(load("plan-ubuntu2404-rx9070-cuda-leftovers"))
    doc["packages"]["installed"] = {"bash": "5.2"}
    doc["apt_sources"] = [UBUNTU_SOURCE]
    return doc


def pascal() -> dict:
    """Ubuntu 22.04 with a GTX 1080 (proprietary modules only), kernel headers present."""
    doc = copy.deepcopy(load("plan-ubuntu2204-gtx1080-container"))
    doc["platform"]["container"] = None
    return doc


def hopper() -> dict:
    """Debian 12 with an H100 and no trace of ROCm; nouveau loaded."""
    doc = copy.deepcopy(load("plan-debian12-h100-rocm-leftovers"))
    doc["packages"]["installed"] = {"bash": "5.2"}
    doc["apt_sources"] = []
    return doc


def ids(plan) -> list[str]:
    return [s.id for s in plan.steps]


def purge_ids(plan, stack: str) -> list[str]:
    return [i for i in ids(plan) if i.startswith(f"purge-{stack}") or i.startswith("purge-nvidia")]


def removed(plan) -> list[str]:
    return [s.path for s in plan.steps if s.kind is Kind.REMOVE_FILE]


def with_repos(tmp_path, change):
    doc = json.loads(Path(repos.default_path()).read_text())
    change(doc)
    path = tmp_path / "repos.json"
    path.write_text(json.dumps(doc))
    return repos.load(path)


def make(doc: dict, stack: str, repo=None, **kw):
    req = planner.Request(
        action=kw.pop("action", Action.INSTALL), stack=stack, user=kw.pop("user", "alice"), **kw
    )
    return planner.make_plan(facts_mod.from_dict(doc), matrices(), repo or repos.load(), req)


CUDA_LEFTOVERS = [
    "/etc/apt/sources.list.d/cuda.list",
    "/etc/apt/preferences.d/cuda-repository-pin-600",
    "/etc/apt/keyrings/cuda-archive-keyring.gpg",
    "/etc/modprobe.d/gpuenv-blacklist-nouveau.conf",
    "/etc/profile.d/gpuenv-cuda.sh",
]
CUDA_PURGE_TAIL = [f"purge-cuda-file-{i}" for i in range(5)] + [
    "purge-cuda-initramfs",
    "purge-cuda-autoremove",
]


# --------------------------------------------------------------------------------------------
# `install auto`


@pytest.mark.parametrize(
    "name, stack",
    [
        ("plan-ubuntu2404-rx9070-cuda-leftovers", "rocm"),
        ("plan-debian12-h100-rocm-leftovers", "cuda"),
        ("plan-ubuntu2404-arm64-nogpu", None),
    ],
)
def test_install_auto_chooses_the_gpus_stack_and_none_without_a_gpu(name, stack):
    assert planner.choose_stack(facts_mod.from_dict(load(name)), matrices()) == stack


# --------------------------------------------------------------------------------------------
# The other stack's purge: only where a trace of it is left, and the right steps for each trace


def _nvidia(doc, **fields):
    doc["nvidia"] = {"nvml": "ok", **fields}


@pytest.mark.parametrize(
    "edit, purge",
    [
        (lambda d: None, []),
        (lambda d: _nvidia(d, nvml="not_installed"), []),  # NVML facts, but no driver: no trace
        (lambda d: _nvidia(d, driver_version="570.133.07"), ["purge-nvidia-runfile-driver", *CUDA_PURGE_TAIL]),
        (lambda d: d["kernel"].update(modules_loaded=["nvidia"]), ["purge-nvidia-runfile-driver", *CUDA_PURGE_TAIL]),
        (lambda d: d["kernel"].update(modules_loaded=["amdgpu"]), []),
        (lambda d: d["toolkits"].update(cuda=[{"version": "12.4", "path": "/usr/local/cuda-12.4/", "source": "runfile"}]),
         ["purge-cuda-runfile-12.4", *CUDA_PURGE_TAIL]),
        (lambda d: d["toolkits"].update(cuda=[{"version": "12.4", "path": None, "source": "runfile"}]), CUDA_PURGE_TAIL),
        (lambda d: d["toolkits"].update(cuda=[{"version": "12.8", "path": "/usr/local/cuda-12.8", "source": "package"}]),
         CUDA_PURGE_TAIL),
        (lambda d: d["apt_sources"].append(_source(NVIDIA_URI, "/etc/apt/sources.list.d/cuda-ubuntu2404-x86_64.list")),
         [*CUDA_PURGE_TAIL[:5], "purge-cuda-file-5", *CUDA_PURGE_TAIL[5:]]),
        (lambda d: d["packages"]["installed"].update({"cuda-toolkit-12-8": "12.8.1-1"}),
         ["purge-cuda-packages", *CUDA_PURGE_TAIL]),
        # a driver running that a package owns: apt removes it, not the runfile's uninstaller
        (lambda d: (_nvidia(d, driver_version="570.133.07"), d["packages"]["installed"].update({"nvidia-driver-570": "570.133.07-0ubuntu1"})),
         ["purge-cuda-packages", *CUDA_PURGE_TAIL]),
        (lambda d: (_nvidia(d, driver_version="570.133.07"), d["packages"]["installed"].update({"cuda-drivers-570": "570.133.07-1"})),
         ["purge-cuda-packages", *CUDA_PURGE_TAIL]),
        # only the toolkit is packaged: the driver running is a runfile's
        (lambda d: (_nvidia(d, driver_version="570.133.07"), d["packages"]["installed"].update({"cuda-toolkit-12-8": "12.8.1-1"})),
         ["purge-nvidia-runfile-driver", "purge-cuda-packages", *CUDA_PURGE_TAIL]),
    ],
    ids=["clean", "nvml-without-driver", "driver-running", "module-loaded", "amdgpu-loaded", "runfile-toolkit",
         "runfile-toolkit-no-path", "packaged-toolkit", "nvidia-source", "cuda-package", "packaged-driver",
         "cuda-drivers-package", "runfile-driver-beside-packages"],
)  # fmt: skip
def test_a_rocm_install_purges_cuda_only_where_a_trace_of_it_is_left(edit, purge):
    doc = amd_box()
    edit(doc)
    plan = make(doc, "rocm")
    assert purge_ids(plan, "cuda") == purge
    assert ids(plan)[len(purge)] == "key"  # the purge comes first, then the ROCm install


def test_the_runfile_uninstallers_are_run_only_where_they_exist():
    doc = amd_box()
    _nvidia(doc, driver_version="570.133.07")
    doc["toolkits"]["cuda"] = [{"version": "12.4", "path": "/usr/local/cuda-12.4/", "source": "runfile"}]
    plan = make(doc, "rocm")
    toolkit, driver = plan.step("purge-cuda-runfile-12.4"), plan.step("purge-nvidia-runfile-driver")
    assert (toolkit.kind, toolkit.argv, toolkit.only_if_exists) == (
        Kind.COMMAND, ("/usr/local/cuda-12.4/bin/cuda-uninstaller",), "/usr/local/cuda-12.4/bin/cuda-uninstaller"
    )  # fmt: skip
    assert toolkit.title == "Remove the runfile CUDA 12.4 with its own uninstaller"
    assert (driver.kind, driver.argv, driver.only_if_exists) == (
        Kind.COMMAND, ("/usr/bin/nvidia-uninstall", "--silent"), "/usr/bin/nvidia-uninstall"
    )  # fmt: skip
    assert all(s.why.startswith("cuda.mixed-install: ") for s in (toolkit, driver))


@pytest.mark.parametrize(
    "edit, purged",
    [
        (lambda d: None, False),
        (lambda d: _nvidia(d, driver_version="570.133.07"), False),  # CUDA's own driver is not ROCm's
        (lambda d: d["apt_sources"].append(_source(AMD_URI, "/etc/apt/sources.list.d/rocm.list", "noble")), True),
        (lambda d: d["toolkits"].update(rocm=[{"version": "6.4.0", "path": "/opt/rocm-6.4.0", "source": "package"}]), True),
        (lambda d: d["packages"]["installed"].update({"rocm-core": "6.4.0"}), True),
    ],
    ids=["clean", "nvidia-driver-running", "amd-source", "rocm-toolkit", "rocm-package"],
)  # fmt: skip
def test_a_cuda_install_purges_rocm_only_where_a_trace_of_it_is_left(edit, purged):
    doc = hopper()
    edit(doc)
    plan = make(doc, "cuda", version="12.8")
    assert bool([i for i in ids(plan) if i.startswith("purge-rocm")]) is purged
    assert not [i for i in ids(plan) if i.startswith("purge-cuda") or i.startswith("purge-nvidia")]


@pytest.mark.parametrize(
    "packages, purged, reboot",
    [
        ({"cuda-toolkit-12-8": "1", "libcublas-12-8": "1", "bash": "1"}, ["cuda-toolkit-12-8", "libcublas-12-8"], False),
        ({"cuda-toolkit-12-8": "1", "nvidia-dkms-570": "1"}, ["cuda-toolkit-12-8", "nvidia-dkms-570"], True),
        ({"nvidia-open": "1"}, ["nvidia-open"], True),
        ({"cuda-drivers": "1"}, ["cuda-drivers"], True),
        ({"libnvidia-compute-570:i386": "1", "cuda-toolkit-12-8": "1"}, ["cuda-toolkit-12-8", "libnvidia-compute-570:i386"], False),
    ],
    ids=["user-space", "dkms", "nvidia-open", "cuda-drivers", "multiarch"],
)  # fmt: skip
def test_a_purge_names_the_installed_packages_and_reboots_only_for_a_kernel_driver(packages, purged, reboot):
    doc = amd_box()
    doc["packages"]["installed"] = packages
    plan = make(doc, "cuda", action=Action.UNINSTALL)
    step = plan.step("purge-cuda-packages")
    assert step.packages == tuple(purged) and step.argv == ("apt-get", "purge", "-y", *purged)
    assert step.title == f"Purge the {len(purged)} installed CUDA packages"
    assert step.reboot_after is reboot and plan.reboot_required is reboot


def test_an_uninstall_without_package_facts_still_sweeps_the_files():
    doc = amd_box()
    doc["packages"] = None
    plan = make(doc, "cuda", action=Action.UNINSTALL)
    assert ids(plan) == CUDA_PURGE_TAIL and removed(plan) == CUDA_LEFTOVERS


def test_an_uninstall_removes_the_vendors_own_source_files_and_leaves_shared_ones():
    doc = amd_box()
    doc["apt_sources"] += [
        _source(NVIDIA_URI, "/etc/apt/sources.list.d/cuda-ubuntu2404-x86_64.list"),
        _source(NVIDIA_URI, "/etc/apt/sources.list.d/cuda.list"),  # already one of the leftovers
        _source(NVIDIA_URI, "/etc/apt/sources.list.d/mixed.list"),  # also lists another repository
        _source("https://ppa.launchpadcontent.net/x/y/ubuntu", "/etc/apt/sources.list.d/mixed.list", "noble"),
        _source(NVIDIA_URI, None),  # where the facts do not say
    ]
    plan = make(doc, "cuda", action=Action.UNINSTALL)
    assert removed(plan) == [*CUDA_LEFTOVERS, "/etc/apt/sources.list.d/cuda-ubuntu2404-x86_64.list"]
    assert all(s.why == "stack.leftovers: cuda sources, pins, keyrings and gpuenv's own files"
               for s in plan.steps if s.kind is Kind.REMOVE_FILE)  # fmt: skip


def test_after_a_purge_the_loader_cache_and_the_initramfs_follow_what_changed():
    rocm = make(load("plan-debian12-h100-rocm-leftovers"), "rocm", action=Action.UNINSTALL)
    files = [f"purge-rocm-file-{i}" for i in range(6)]
    assert ids(rocm) == ["purge-rocm-packages", *files, "purge-rocm-ldconfig", "purge-rocm-autoremove"]
    ldconfig = rocm.step("purge-rocm-ldconfig")
    assert (ldconfig.argv, ldconfig.after) == (("ldconfig",), ("purge-rocm-packages", *files))
    assert removed(rocm)[:2] == ["/etc/apt/sources.list.d/amdgpu.list", "/etc/apt/sources.list.d/rocm.list"]
    cuda = make(amd_box(), "cuda", action=Action.UNINSTALL)
    initramfs = cuda.step("purge-cuda-initramfs")
    assert initramfs.after == ("purge-cuda-file-3",) and cuda.step("purge-cuda-file-3").path.endswith(
        "nouveau.conf"
    )
    assert initramfs.reboot_after is False and initramfs.only_if_exists == "/usr/sbin/update-initramfs"
    auto = cuda.step("purge-cuda-autoremove")
    assert auto.kind is Kind.APT_PURGE and auto.autoremove is True and not auto.packages
    assert "^cuda(-[a-z0-9.+-]+)?$" in auto.allow and "!^nvidia-container-toolkit(-base)?$" in auto.allow
    assert auto.title == "Autoremove what the CUDA purge orphaned (simulated first; only cuda packages)"


# --------------------------------------------------------------------------------------------
# Other vendor sources an install replaces


def test_a_cuda_install_drops_the_other_cuda_sources_only():
    doc = pascal()
    written = "/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list"
    doc["apt_sources"] = [
        _source(NVIDIA_URI.replace("2404", "2204"), written),  # rewritten in place, not removed
        _source(NVIDIA_URI.replace("2404", "2004"), "/etc/apt/sources.list.d/cuda.list"),
        _source(NVIDIA_URI, "/etc/apt/sources.list.d/nvidia-old.list"),
        _source(NVIDIA_URI, "/etc/apt/sources.list.d/mixed.list"),
        _source("https://ppa.launchpadcontent.net/x/y/ubuntu", "/etc/apt/sources.list.d/mixed.list", "jammy"),
        _source("http://archive.ubuntu.com/ubuntu", "/etc/apt/sources.list.d/ubuntu.sources", "jammy"),
        _source(NVIDIA_URI, None),
    ]
    plan = make(doc, "cuda", version="12.8")
    drops = [s for s in plan.steps if s.id.startswith("drop-")]
    assert [(s.id, s.path) for s in drops] == [
        ("drop-nvidia-source-0", "/etc/apt/sources.list.d/cuda.list"),
        ("drop-nvidia-source-1", "/etc/apt/sources.list.d/nvidia-old.list"),
    ]
    assert drops[0].title == "Remove the other CUDA source /etc/apt/sources.list.d/cuda.list"
    assert drops[0].why == "apt.source-mismatch: one CUDA repository, with signed-by and this release's suite"
    assert ids(plan).index("drop-nvidia-source-1") < ids(plan).index("key")
    assert plan.step("source-0").path == written


def test_a_rocm_install_drops_an_older_amd_source():
    doc = amd_box()
    doc["apt_sources"].append(
        _source(
            "https://repo.radeon.com/amdgpu/6.0/ubuntu", "/etc/apt/sources.list.d/amdgpu-6.0.list", "noble"
        )
    )
    doc["apt_sources"].append(
        _source("https://repo.radeon.com/rocm/apt/7.2.4", "/etc/apt/sources.list.d/rocm.list", "noble")
    )
    plan = make(doc, "rocm", version="7.2.4")  # the legacy stream's sources
    drops = [s for s in plan.steps if s.id.startswith("drop-")]
    assert [(s.id, s.path, s.title) for s in drops] == [
        ("drop-amd-source-0", "/etc/apt/sources.list.d/amdgpu-6.0.list",
         "Remove the other AMD source /etc/apt/sources.list.d/amdgpu-6.0.list"),
    ]  # fmt: skip
    assert drops[0].why == "apt.source-mismatch: one AMD repository, with signed-by and this release's suite"


# --------------------------------------------------------------------------------------------
# Kernel headers


@pytest.mark.parametrize(
    "name, headers, installed, expected",
    [
        ("ubuntu", True, {"linux-modules-extra-6.8.0-60-generic": "1"}, None),
        ("ubuntu", True, {}, ("linux-headers-6.8.0-60-generic", "linux-modules-extra-6.8.0-60-generic")),
        ("ubuntu", False, {"linux-modules-extra-6.8.0-60-generic": "1"},
         ("linux-headers-6.8.0-60-generic", "linux-modules-extra-6.8.0-60-generic")),
        ("ubuntu", None, {"linux-modules-extra-6.8.0-60-generic": "1"},
         ("linux-headers-6.8.0-60-generic", "linux-modules-extra-6.8.0-60-generic")),
        ("debian", True, {}, None),
        ("debian", None, {}, ("linux-headers-6.8.0-60-generic",)),
    ],
)  # fmt: skip
def test_headers_are_installed_unless_known_to_be_there(name, headers, installed, expected):
    doc = amd_box()
    doc["os"]["id"] = name
    doc["kernel"]["headers_installed"] = headers
    doc["packages"]["installed"].update(installed)  # the headers' own package need not be listed
    plan = make(doc, "rocm", version="7.2.4")  # the legacy stream builds a DKMS driver
    step = plan.step("headers") if "headers" in ids(plan) else None
    assert (step.packages if step else None) == expected
    if step:
        assert (
            step.reboot_after is False
            and step.why == "kernel.headers-missing: DKMS builds the driver against them"
        )


def test_a_self_built_kernel_has_no_headers_package_and_the_plan_says_so():
    doc = amd_box()
    doc["kernel"]["release"] = "6.9.0_Custom"
    plan = make(doc, "rocm", version="7.2.4")
    assert "headers" not in ids(plan) and "driver" in ids(plan)
    assert (
        "kernel.headers-missing: the running kernel 6.9.0_Custom is not a distribution kernel (no "
        "linux-image-6.9.0_Custom package is installed), so no package carries its headers: DKMS can build "
        "a GPU driver for it only against the kernel's own build tree at /lib/modules/6.9.0_Custom/build"
        in plan.notes
    )


# --------------------------------------------------------------------------------------------
# ROCm


def test_a_legacy_rocm_plan_on_a_clean_box_is_the_installers_sequence():
    plan = make(amd_box(), "rocm", version="7.2.4")
    assert ids(plan) == ["key", "source-0", "source-1", "pin", "apt-update", "headers", "driver", "groups",
                         "toolkit", "ld-so-conf", "ldconfig"]  # fmt: skip
    pin = plan.step("pin")
    assert (pin.kind, pin.path, pin.mode) == (Kind.APT_PIN, "/etc/apt/preferences.d/rocm-pin-600", "0644")
    assert pin.content == "Package: *\nPin: release o=repo.radeon.com\nPin-Priority: 600\n"
    assert pin.title == "Write /etc/apt/preferences.d/rocm-pin-600 (prefer repo.radeon.com)"
    assert (plan.step("driver").packages, plan.step("driver").reboot_after) == (("amdgpu-dkms",), True)
    assert (plan.step("toolkit").packages, plan.step("toolkit").reboot_after) == (("rocm",), False)
    assert plan.step("ldconfig").after == ("ld-so-conf", "toolkit")
    assert (
        plan.target.stack == "rocm" and plan.target.version == "7.2.4" and plan.target.driver == "amdgpu-dkms"
    )
    assert plan.step("groups").argv == ("usermod", "-a", "-G", "render,video", "alice")


@pytest.mark.parametrize("user", [None, "root"])
def test_without_a_gpu_user_the_plan_says_how_to_add_one(user):
    plan = make(amd_box(), "rocm", user=user)
    assert "groups" not in ids(plan)
    assert (
        "no --user given (and no SUDO_USER): add the GPU user with usermod -a -G render,video NAME"
        in plan.notes
    )


def test_an_inferred_rocm_amdgpu_pairing_is_noted_and_a_confirmed_one_is_not(tmp_path):
    note = "ROCm 7.2.4 pairs with amdgpu 30.30.4: inferred, not stated by AMD"
    assert note in make(amd_box(), "rocm", version="7.2.4").notes  # the bundled pairing is inferred

    def confirm(doc):
        doc["amd"]["releases"][0]["confirmed"] = True

    assert note not in make(amd_box(), "rocm", repo=with_repos(tmp_path, confirm), version="7.2.4").notes


def test_a_rocm_release_without_amd_repository_data_is_a_clear_error(tmp_path):
    def other(doc):
        doc["amd"]["releases"][0]["rocm"] = "7.1.1"
        doc["amd_therock"]["releases"] = []  # no new-stream release to prefer

    with pytest.raises(PlanError, match=r"^no AMD repository data for ROCm 7\.2\.4 \(known: 7\.1\.1, 6\.3\.3\)$"):
        make(amd_box(), "rocm", repo=with_repos(tmp_path, other), version="7.2.4")
    # Unnamed, the release is the newest one that fits the machine and has repository data.
    assert make(amd_box(), "rocm", repo=with_repos(tmp_path, other)).target.version == "7.1.1"


def test_an_os_without_an_amd_suite_is_shown_for_jammy_and_noted():
    plan = make(load("plan-fedora41-rx7900"), "rocm")
    assert "gpuenv has no AMD apt suite for fedora 41" in plan.notes
    assert all(" jammy main" in s.content for s in plan.steps if s.kind is Kind.APT_SOURCE)
    assert "gpuenv has no AMD apt suite for ubuntu 24.04" not in make(amd_box(), "rocm").notes


def test_the_doctors_amd_suites_are_the_planners():
    from gpuenv.resolve.checks.apt import _AMD_SUITE

    planned = {(e["os"], e["version"]): e["suite"] for e in repos.load().section("amd")["suites"]}
    assert planned == _AMD_SUITE


@pytest.mark.parametrize("os_id, version, suite", [("debian", "13", "noble"), ("debian", "12", "jammy"),
                                                   ("ubuntu", "24.04", "noble"), ("ubuntu", "22.04", "jammy")])
def test_amds_legacy_repositories_are_written_for_the_suite_amds_docs_give_each_os(os_id, version, suite):
    """AMD's docs (conf.py debian_version_numbers): Debian 13 installs from the noble suite, Debian
    12 from jammy; before, Debian 13 fell back to jammy with a note."""
    doc = amd_box()
    doc["os"] = {"id": os_id, "version_id": version, "pretty_name": f"{os_id} {version}"}
    plan = make(doc, "rocm", version="7.2.4")
    lines = [s.content for s in plan.steps if s.kind is Kind.APT_SOURCE]
    assert lines and all(f" {suite} main" in c for c in lines), lines
    assert not any("no AMD apt suite" in n for n in plan.notes), plan.notes


@pytest.mark.parametrize(
    "where, note",
    [
        ({"container": "docker"}, "inside docker no kernel driver can load: this plan installs user space only; "
                                  "the host needs amdgpu-dkms (and --device /dev/kfd --device /dev/dri)"),
        ({"wsl": True}, "under WSL 2 the GPU driver comes from Windows: this plan installs user space only, "
                        "never a Linux driver"),
    ],
    ids=["container", "wsl"],
)  # fmt: skip
def test_rocm_where_the_kernel_is_someone_elses_is_user_space_only(where, note):
    doc = amd_box()
    doc["platform"].update(where)
    plan = make(doc, "rocm")
    assert note in plan.notes
    assert not {"headers", "driver"} & set(ids(plan)) and plan.target.driver is None
    assert "toolkit" in ids(plan)


# --------------------------------------------------------------------------------------------
# CUDA: the steps, the notes for what gpuenv does not know


def test_a_cuda_plan_on_a_clean_box_is_the_installers_sequence():
    plan = make(pascal(), "cuda", version="12.8")
    assert ids(plan) == ["key", "source-0", "apt-update", "headers", "nouveau-blacklist", "initramfs", "driver",
                         "toolkit", "profile"]  # fmt: skip
    blacklist, initramfs = plan.step("nouveau-blacklist"), plan.step("initramfs")
    assert blacklist.why == "keep nouveau from claiming the GPU at boot"  # nouveau is not loaded here
    assert (initramfs.after, initramfs.reboot_after) == (("nouveau-blacklist",), True)
    assert (plan.step("toolkit").packages, plan.step("toolkit").reboot_after) == (
        ("cuda-toolkit-12-8",),
        False,
    )
    assert plan.step("driver").reboot_after is True
    profile = plan.step("profile")
    assert profile.path == "/etc/profile.d/gpuenv-cuda.sh" and "/usr/local/cuda-12.8/bin" in profile.content
    assert "{series}" not in profile.content and profile.title == (
        "Put /usr/local/cuda-12.8/bin on PATH (/etc/profile.d/gpuenv-cuda.sh)"
    )
    assert plan.step("source-0").path == "/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list"
    assert plan.notes == () and plan.blockers == ()


@pytest.mark.parametrize(
    "where, note",
    [
        ({"container": "docker"}, "inside docker no kernel driver can load: this plan installs user space only; the "
                                  "host needs the NVIDIA driver and nvidia-container-toolkit (nvidia-ctk runtime configure)"),
        ({"wsl": True}, "under WSL 2 the GPU driver comes from Windows: this plan installs user space only, never a "
                        "Linux driver (cuda-toolkit-X-Y has no driver: NVIDIA's WSL guide, option 2)"),
    ],
    ids=["container", "wsl"],
)  # fmt: skip
def test_cuda_where_the_kernel_is_someone_elses_is_user_space_only(where, note):
    doc = pascal()
    doc["platform"].update(where)
    plan = make(doc, "cuda", version="12.8")
    assert note in plan.notes
    assert ids(plan) == ["key", "source-0", "apt-update", "toolkit", "profile"] and plan.target.driver is None


@pytest.mark.parametrize(
    "arch, note",
    [
        ("x86_64", None),
        ("amd64", None),
        ("unknown", "the CPU architecture is not known: the plan is shown for x86_64"),
        ("aarch64", "gpuenv has no CUDA repository for the aarch64 architecture"),
    ],
)
def test_the_cpu_architecture_gpuenv_has_no_cuda_repository_for_is_noted(arch, note):
    doc = pascal()
    doc["host"]["arch"] = arch
    plan = make(doc, "cuda", version="12.8")
    notes = [n for n in plan.notes if "architecture" in n and not n.startswith("platform.")]
    assert notes == ([note] if note else [])
    assert plan.step("source-0").path == "/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list"


def test_an_os_without_a_cuda_repository_is_shown_for_ubuntu_24_04_and_noted():
    doc = copy.deepcopy(load("plan-fedora41-rx7900"))
    doc["gpus"] = pascal()["gpus"]
    plan = make(doc, "cuda", version="12.8")
    assert "gpuenv has no NVIDIA CUDA apt repository for fedora 41" in plan.notes
    assert plan.step("source-0").path == "/etc/apt/sources.list.d/cuda-ubuntu2404-x86_64.list"
    assert "os.unsupported" in plan.blockers


CONTRIB = (
    "NVIDIA's Debian repository expects Debian's contrib component enabled (CUDA installation guide 4.8); "
    "gpuenv does not edit the distribution's own sources"
)


@pytest.mark.parametrize("os_id, container, noted", [("debian", None, True), ("debian", "docker", False),
                                                     ("ubuntu", None, False)])  # fmt: skip
def test_debians_contrib_component_is_noted_where_the_plan_installs_the_driver(os_id, container, noted):
    doc = hopper()
    doc["os"]["id"] = os_id
    doc["platform"]["container"] = container
    assert (CONTRIB in make(doc, "cuda", version="12.8").notes) is noted


def test_nouveau_loaded_is_why_the_blacklist_is_written():
    plan = make(hopper(), "cuda", version="12.8")
    assert plan.step("nouveau-blacklist").why == "nvidia.nouveau-loaded"


@pytest.mark.parametrize("version", ["99.1", "12.99"])
def test_a_cuda_release_the_matrices_do_not_know_is_a_clear_error(version):
    with pytest.raises(
        PlanError, match=rf"^CUDA {version} is not in the bundled matrices \(gpuenv matrix show cuda\)$"
    ):
        make(pascal(), "cuda", version=version)


def test_a_cuda_plan_is_blocked_where_the_doctor_would_refuse_the_target():
    assert make(pascal(), "cuda", version="12.8").blockers == ()
    assert make(pascal(), "cuda", version="13.0").blockers == (
        "nvidia.gpu-dropped",
    )  # CUDA 13 dropped Pascal
    assert make(amd_box(), "cuda", version="12.8").blockers == ("gpu.none",)  # no NVIDIA GPU to run on


# --------------------------------------------------------------------------------------------
# The NVIDIA driver: module flavour, branch, pinning


def _gpu(doc, **gpu):
    doc["gpus"] = [{"vendor": "nvidia", "pci_id": "10de:ffff", "pci_slot": "0000:01:00.0", **gpu}]
    return doc


@pytest.mark.parametrize(
    "doc, version, packages, title, why",
    [
        (pascal(), "12.8", ["cuda-drivers-580"], "proprietary modules (cuda-drivers-580)", ": CUDA 12.8 needs >= 570.26"),
        # CUDA 13.0 needs 580.65: R580, the last branch for these GPUs, is exactly at the minimum
        (pascal(), "13.0", ["cuda-drivers-580"], "proprietary modules (cuda-drivers-580)", ": CUDA 13.0 needs >= 580.65.06"),
        # CUDA 13.1 needs 590.44: above every branch that still supports them
        (pascal(), "13.1", ["cuda-drivers"], "proprietary modules (cuda-drivers)", ": CUDA 13.1 needs >= 590.44.01"),
        # no minimum known for 12.3.2: the newest branch for these GPUs
        (pascal(), "12.3.2", ["cuda-drivers-580"], "proprietary modules (cuda-drivers-580)", ""),
        (hopper(), "12.8", ["nvidia-open"], "open modules (nvidia-open, >= 570.26)", ": CUDA 12.8 needs >= 570.26"),
        (hopper(), "13.4", ["nvidia-open"], "open modules (nvidia-open)", ""),
    ],
    ids=["pascal-12.8", "pascal-13.0", "pascal-13.1", "pascal-no-minimum", "hopper-12.8", "hopper-no-minimum"],
)  # fmt: skip
def test_the_driver_package_follows_the_gpu_and_the_toolkits_minimum(doc, version, packages, title, why):
    plan = make(doc, "cuda", version=version)
    driver = plan.step("driver")
    assert list(driver.packages) == packages and plan.target.driver == " ".join(packages)
    assert driver.title == f"Install the NVIDIA driver, {title}"
    assert driver.why == "nvidia.driver-missing" + why
    not_pinned = "driver branch not pinned: the matrices gave no branch that still supports these GPUs"
    assert (not_pinned in plan.notes) is (packages == ["cuda-drivers"])


@pytest.mark.parametrize(
    "gpu, packages",
    [
        ({"compute_capability": "7.2"}, ["cuda-drivers-580"]),  # Volta/Xavier and older: proprietary only
        ({"compute_capability": "7.5"}, ["nvidia-open"]),  # Turing: either, the open ones
        ({"compute_capability": "10.0"}, ["nvidia-open"]),  # Blackwell: open only
        ({}, ["nvidia-open"]),  # not known: not judged proprietary
        ({"architecture": "Pascal"}, ["cuda-drivers-580"]),  # the architecture table decides first
        ({"architecture": "Pascal", "compute_capability": "12.0"}, ["cuda-drivers-580"]),
    ],
    ids=["cc-7.2", "cc-7.5", "cc-10.0", "cc-unknown", "pascal", "arch-over-cc"],
)
def test_a_gpu_the_tables_do_not_name_is_judged_by_compute_capability(gpu, packages):
    plan = make(_gpu(pascal(), **gpu), "cuda", version="12.8")
    assert list(plan.step("driver").packages) == packages


def test_one_proprietary_gpu_makes_the_driver_proprietary_beside_an_either_one():
    doc = pascal()
    doc["gpus"] = pascal()["gpus"] + _gpu(pascal(), compute_capability="7.5", pci_slot="0000:02:00.0")["gpus"]
    assert list(make(doc, "cuda", version="12.8").step("driver").packages) == ["cuda-drivers-580"]


@pytest.mark.parametrize(
    "from_branch, packages",
    [(580, ["nvidia-driver-pinning-580", "cuda-drivers"]), (581, ["cuda-drivers-580"])],
)
def test_from_the_pinning_branch_the_driver_is_pinned_rather_than_a_branch_package(
    tmp_path, from_branch, packages
):
    def pin_from(doc):
        doc["nvidia"]["packages"]["pinning_from_branch"] = from_branch

    plan = make(pascal(), "cuda", version="12.8", repo=with_repos(tmp_path, pin_from))
    assert list(plan.step("driver").packages) == packages


# --------------------------------------------------------------------------------------------
# torch


@pytest.mark.parametrize(
    "doc, stack, version, torch, variant",
    [
        (pascal(), "cuda", "12.8", "2.7", "cu128"),  # a wheel exactly for the toolkit
        (pascal(), "cuda", "12.6", "2.7", "cu126"),
        (pascal(), "cuda", "12.5", "2.7", "cu118"),  # the newest below it
        (amd_box(), "rocm", None, "2.10", "rocm7.1"),  # ROCm 7.2.4: never a CUDA wheel
        (amd_box(), "rocm", None, "2.9", "rocm6.4"),
    ],
)  # fmt: skip
def test_the_torch_wheel_is_the_newest_for_the_stack_not_above_its_version(
    doc, stack, version, torch, variant
):
    plan = make(doc, stack, version=version, torch=torch, venv="/home/alice/venv")
    assert plan.target.torch.variant == variant
    wanted = next(v for v in matrices().torch_variants(torch) if v.variant == variant)
    assert plan.step("torch").argv == ("/home/alice/venv/bin/python", "-I", "-m", "pip", "install",
                                       f"torch=={wanted.torch}", "--index-url", wanted.index_url)  # fmt: skip


def test_no_torch_wheel_for_the_toolkit_is_a_clear_error():
    with pytest.raises(PlanError, match=r"^no official torch 2\.7 wheel for cuda 11\.4 in the matrices$"):
        make(pascal(), "cuda", version="11.4", torch="2.7", venv="/home/alice/venv")


@pytest.mark.parametrize("user, owner", [("alice", "alice"), ("root", None), (None, None)])
def test_the_torch_steps_run_as_the_user_never_as_root(user, owner):
    plan = make(pascal(), "cuda", version="12.8", torch="2.7", venv="/home/alice/venv/", user=user)
    venv, torch = plan.step("torch-venv"), plan.step("torch")
    assert (venv.user, torch.user) == (owner, owner)
    suffix = f" as {owner}" if owner else ""
    assert venv.title == "Create the virtualenv /home/alice/venv/" + suffix
    assert torch.title.endswith(suffix) and torch.title.startswith("pip install torch==")
    assert venv.creates == "/home/alice/venv/bin/python" and torch.argv[0] == "/home/alice/venv/bin/python"
    assert "torch" not in ids(make(pascal(), "cuda", version="12.8", user=user))
