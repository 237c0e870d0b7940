"""The planner: facts + matrices + repository data + a request -> Plan. Pure: no I/O, no clock.

Plans follow the vendors' install order (AMD's ROCm and NVIDIA's CUDA installation guides):
purge the other stack by exact package names
taken from what is installed (never vendor globs), then key (verified against a pinned
fingerprint), sources with signed-by and the right suite, pin, one apt-get update, headers,
driver, groups, toolkit, post-install files. Blockers (container, WSL, unsupported GPU/OS/arch)
are finding codes on the plan; the steps are still there so that the user sees what would run.
The purge rules live in ``purge``, the plain steps both stacks share in ``builders``.
"""

from __future__ import annotations

import re

from gpuenv.facts import Facts
from gpuenv.matrices import Matrices
from gpuenv.plan import therock
from gpuenv.plan.builders import (
    GROUPS_WHY,
    apt_install,
    apt_update,
    gpu_groups,
    initramfs,
    key_and_sources,
    ldconfig,
    pin_key,
    remove_file,
    write_file,
)
from gpuenv.plan.plan import Action, Kind, Plan, PlanError, PlanTarget, Request, Step, TorchPick
from gpuenv.plan.purge import purge_steps, stack_present
from gpuenv.plan.repos import Repos
from gpuenv.plan.staleness import facts_digest
from gpuenv.resolve import gpuinfo, toolkitpaths
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.blockers import judge
from gpuenv.resolve.checks import amd as amd_checks
from gpuenv.resolve.checks import apt as apt_checks
from gpuenv.resolve.checks import cuda as cuda_checks
from gpuenv.resolve.checks import kernel as kernel_checks
from gpuenv.resolve.checks import nvidia as nvidia_checks
from gpuenv.resolve.checks import stack as stack_checks
from gpuenv.resolve.finding import Target
from gpuenv.resolve.registry import cite
from gpuenv.resolve.target import auto_rocm, choose_auto, newest_cuda_for

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    pass

_DEB_NAME = re.compile(r"[a-z0-9][a-z0-9.+-]+")


def choose_stack(facts: Facts, matrices: Matrices) -> str | None:
    """`install auto`: the stack the doctor judges a bare box against (resolve.target)."""
    target = choose_auto(facts, matrices)
    return target.stack if target is not None else None


def make_plan(facts: Facts, matrices: Matrices, repos: Repos, req: Request) -> Plan:
    if req.stack not in ("rocm", "cuda"):
        raise PlanError(f"stack must be rocm or cuda, not {req.stack!r}")
    notes: list[str] = []
    other = "cuda" if req.stack == "rocm" else "rocm"
    blockers: list[str] = []
    if req.action is Action.UNINSTALL:
        steps = purge_steps(facts, repos, req.stack, why="uninstall requested")
        target = PlanTarget(stack=req.stack, version=None)
    else:
        # The other stack's purge only where the facts show a trace of it: on a clean box a list of
        # "remove X (already done)" steps is noise. `gpuenv uninstall` still sweeps every known path.
        steps = (
            purge_steps(facts, repos, other, why=cite(stack_checks.both_installed, f"{req.stack} replaces {other}"))
            if stack_present(facts, repos, other)
            else []
        )
        if req.stack == "rocm":
            target, more = _rocm(facts, matrices, repos, req, notes)
        else:
            target, more = _cuda(facts, matrices, repos, req, notes)
        steps += more
        # What stops the install, and what is worth knowing before it: the doctor's own checks,
        # judged against this target, so that a plan and `gpuenv doctor --target` never disagree.
        judged = judge(facts, matrices, Target(stack=target.stack, version=target.version, explicit=True))
        blockers = list(dict.fromkeys(f.code for f in judged.blockers))
        notes = [f"{f.code}: {f.title}. {f.detail}" for f in (*judged.blockers, *judged.notes)] + notes
    return Plan(
        action=req.action,
        target=target,
        facts_digest=facts_digest(facts),
        steps=tuple(steps),
        created_at=req.created_at,
        gpuenv_version=req.gpuenv_version,
        blockers=tuple(blockers),
        notes=tuple(dict.fromkeys(notes)),
        user=req.user,
        request=req,
    )


# --------------------------------------------------------------------------------------------
# Install: the parts shared by both stacks


def _kernel_ok(facts: Facts, stack: str, notes: list[str]) -> bool:
    """True when the plan may include kernel drivers: not in a container or WSL, whose kernel
    belongs to someone else (the doctor's platform.* findings say the rest)."""
    if facts.platform.container:
        host = (
            "amdgpu-dkms (and --device /dev/kfd --device /dev/dri)"
            if stack == "rocm"
            else "the NVIDIA driver and nvidia-container-toolkit (nvidia-ctk runtime configure)"
        )
        notes.append(
            f"inside {facts.platform.container} no kernel driver can load: this plan installs user space "
            f"only; the host needs {host}"
        )
        return False
    if facts.platform.wsl:
        notes.append(
            "under WSL 2 the GPU driver comes from Windows: this plan installs user space only, never a "
            "Linux driver"
            + (" (cuda-toolkit-X-Y has no driver: NVIDIA's WSL guide, option 2)" if stack == "cuda" else "")
        )
        return False
    return True


def _drop_other_sources(facts: Facts, repos: Repos, vendor: str, keep: tuple[str, ...]) -> list[Step]:
    """Remove the vendor's source files the plan does not write, where a file lists nothing else."""
    label = "CUDA" if vendor == "nvidia" else "AMD"
    steps: list[Step] = []
    files = dict.fromkeys(s.file for s in facts.apt_sources or () if s.file and s.file not in keep)
    for file in files:
        entries = [s for s in facts.apt_sources or () if s.file == file]
        if not all(repos.is_vendor_uri(vendor, s.uri) for s in entries):
            continue  # a file that also lists other repositories is left alone
        steps.append(
            remove_file(
                f"drop-{vendor}-source-{len(steps)}",
                f"Remove the other {label} source {file}",
                cite(apt_checks.source_mismatch, f"one {label} repository, with signed-by and this release's suite"),
                file,
            )
        )
    return steps


def _headers(facts: Facts, kernel_ok: bool, notes: list[str]) -> list[Step]:
    if not kernel_ok:
        return []
    rel = facts.kernel.release
    if inv.kernel_release(facts) is None:
        # The probe could not read uname -r: no package name can be formed (never
        # linux-headers-unknown); the doctor's kernel.headers-missing stays an error and says so.
        if facts.kernel.headers_installed is not True:
            notes.append(cite(kernel_checks.headers_missing, "the running kernel's release is not known: install "
                              "its headers (linux-headers-$(uname -r)) before the driver is built"))  # fmt: skip
        return []
    if not _DEB_NAME.fullmatch(f"linux-headers-{rel}") or inv.distribution_kernel(facts) is False:
        # A self-built or vendor kernel: no distribution package carries its headers, and apt
        # would only say it cannot find linux-headers-RELEASE.
        if facts.kernel.headers_installed is not True:
            notes.append(cite(kernel_checks.headers_missing, inv.custom_kernel_words(rel)))
        return []
    pkgs = [f"linux-headers-{rel}"]
    if inv.repo_os(facts)[0] == "ubuntu":
        pkgs.append(f"linux-modules-extra-{rel}")
    installed = facts.kernel.headers_installed is True and all(facts.installed(p) for p in pkgs[1:])
    if installed:
        return []
    return [
        Step(
            id="headers",
            kind=Kind.APT_INSTALL,
            title=f"Install kernel headers for the running kernel {rel}",
            why=cite(kernel_checks.headers_missing, "DKMS builds the driver against them"),
            packages=tuple(pkgs),
            argv=("apt-get", "install", "-y", *pkgs),
            skip_if="installed",
        )
    ]


def _torch_steps(
    matrices: Matrices, req: Request, stack: str, version: str
) -> tuple[TorchPick | None, list[Step]]:
    if not req.torch:
        return None, []
    if not req.venv:
        raise PlanError("--torch needs --venv DIR: gpuenv installs PyTorch into a named virtualenv only")
    variants = matrices.torch_variants(req.torch)
    fits = [v for v in variants if v.stack == stack and v.stack_version and inv.version_tuple(v.stack_version) <= inv.version_tuple(version)]
    if not fits:
        raise PlanError(f"no official torch {req.torch} wheel for {stack} {version} in the matrices")
    best = max(fits, key=lambda v: inv.version_tuple(v.stack_version))
    pick = TorchPick(version=best.torch, index_url=best.index_url, variant=best.variant, venv=req.venv)
    py = f"{req.venv.rstrip('/')}/bin/python"
    # The venv belongs to the user it is for, and pip runs as that user: never run as root an
    # interpreter that another account can write. Without a user, the executor runs them as root
    # only where root alone can write the venv.
    owner = req.user if req.user and req.user != "root" else None
    # -I (#40): every Python gpuenv starts is isolated (no PYTHON* variables, no user site, no
    # working directory on sys.path), whoever it runs as.
    return pick, [
        Step(
            id="torch-venv",
            kind=Kind.COMMAND,
            title=f"Create the virtualenv {req.venv}" + (f" as {owner}" if owner else ""),
            why="torch goes into a named virtualenv, never the system Python",
            argv=("python3", "-I", "-m", "venv", req.venv),
            creates=py,
            user=owner,
        ),
        Step(
            id="torch",
            kind=Kind.PIP_INSTALL,
            title=f"pip install torch=={best.torch} from {best.index_url}" + (f" as {owner}" if owner else ""),
            why=f"torch {best.variant} wheel matches {stack} {version}",
            argv=(py, "-I", "-m", "pip", "install", f"torch=={best.torch}", "--index-url", best.index_url),
            user=owner,
        ),
    ]


# --------------------------------------------------------------------------------------------
# ROCm (B1-B3)


def _rocm(
    facts: Facts, matrices: Matrices, repos: Repos, req: Request, notes: list[str]
) -> tuple[PlanTarget, list[Step]]:
    # The doctor judges a bare box against the same choice (resolve.target.auto_rocm, #42).
    version = req.version or auto_rocm(facts, matrices, repos.rocm_routes(), req.trust_key).version
    known = matrices.rocm_release(version)
    if known is None:
        raise PlanError(f"ROCm {version} is not in the bundled matrices (gpuenv matrix show rocm)")
    version = known.version  # "7.2" means its newest bundled patch release
    if not req.version:
        therock.newer_release_note(facts, matrices, repos, version, notes, req.trust_key)
    if known.stream == "therock":
        kernel_ok = _kernel_ok(facts, "rocm", notes)
        steps = therock.install_steps(facts, matrices, repos, version, req.user, notes, kernel_ok, req.trust_key)
        torch, more = _torch_steps(matrices, req, "rocm", version)
        return PlanTarget(stack="rocm", version=version, driver=None, torch=torch), steps + more
    rel = repos.amd_release(version)
    if rel is None:
        listed = ", ".join(r["rocm"] for r in repos.section("amd")["releases"])
        raise PlanError(f"no AMD repository data for ROCm {version} (known: {listed})")
    if not rel["confirmed"]:
        notes.append(f"ROCm {version} pairs with amdgpu {rel['amdgpu']}: inferred, not stated by AMD")
    kernel_ok = _kernel_ok(facts, "rocm", notes)
    suite = repos.amd_suite(*inv.repo_os(facts))
    if suite is None:
        # gpuenv installs through apt from AMD's repositories: another distribution gets a plan that
        # is shown (for the jammy suite) and refused (os.unsupported, judged by the doctor too).
        notes.append(f"gpuenv has no AMD apt suite for {inv.os_label(facts)}")
        suite = "jammy"
    # The legacy stream's key, as the new stream's: pinned only where a first-party source confirms
    # its fingerprint or --trust-unconfirmed-key repeats it (#42).
    pin_key(repos.section("amd")["key"], version, req.trust_key, notes)
    key = repos.amd_key()
    lists = repos.amd_lists(version, rel["amdgpu"], suite)
    pin = repos.section("amd")["pin"]
    pkgs = repos.section("amd")["packages"]
    why_repo = f"AMD's repositories for ROCm {version} ({suite} suite)"
    # Other AMD source files (an older release's, one without signed-by or for another suite) go:
    # this plan's two files are the AMD sources afterwards.
    steps = _drop_other_sources(facts, repos, "amd", tuple(path for path, _ in lists))
    steps += key_and_sources(key, lists, why_repo)
    steps.append(
        write_file(
            "pin",
            f"Write {pin['path']} (prefer repo.radeon.com)",
            "AMD's packages must win over the distribution's ROCm packages",
            pin["path"],
            pin["content"],
            kind=Kind.APT_PIN,
        )
    )
    steps.append(apt_update())
    steps += _headers(facts, kernel_ok, notes)
    if kernel_ok:
        steps.append(
            apt_install(
                "driver",
                f"Install the amdgpu kernel driver ({pkgs['driver']} from amdgpu {rel['amdgpu']})",
                cite(amd_checks.driver_missing, "ROCm needs AMD's amdgpu driver"),
                [pkgs["driver"]],
                reboot=True,
            )
        )
    steps += gpu_groups(facts, req.user, notes, why=cite(amd_checks.no_device_access, GROUPS_WHY))
    steps.append(
        apt_install(
            "toolkit",
            f"Install ROCm {version} ({pkgs['toolkit']})",
            f"target rocm {version}",
            [pkgs["toolkit"]],
        )
    )
    conf = repos.section("amd")["ld_so_conf"]
    steps.append(
        write_file(
            "ld-so-conf",
            f"Write {conf['path']}",
            "the loader finds ROCm's libraries in /opt/rocm/lib and lib64",
            conf["path"],
            conf["content"],
        )
    )
    steps.append(ldconfig("ldconfig", "load rocm.conf into the loader cache", ("ld-so-conf", "toolkit")))
    torch, more = _torch_steps(matrices, req, "rocm", version)
    steps += more
    driver = pkgs["driver"] if kernel_ok else None
    return PlanTarget(stack="rocm", version=version, driver=driver, torch=torch), steps


# --------------------------------------------------------------------------------------------
# CUDA (B4)


def _cuda(
    facts: Facts, matrices: Matrices, repos: Repos, req: Request, notes: list[str]
) -> tuple[PlanTarget, list[Step]]:
    kernel_ok = _kernel_ok(facts, "cuda", notes)
    machine = inv.cpu_arch(facts)
    arch = repos.nvidia_arch(machine or "x86_64")
    if machine is None:
        notes.append("the CPU architecture is not known: the plan is shown for x86_64")
        arch = "x86_64"
    elif arch is None:
        notes.append(f"gpuenv has no CUDA repository for the {machine} architecture")
        arch = "x86_64"  # shown, never applied: platform.arch-unsupported stops it
    distro = repos.nvidia_distro(*inv.repo_os(facts))
    if distro is None:
        notes.append(f"gpuenv has no NVIDIA CUDA apt repository for {inv.os_label(facts)}")
        distro = "ubuntu2404"  # shown, never applied: os.unsupported stops it
    if inv.repo_os(facts)[0] == "debian" and kernel_ok:
        notes.append(
            "NVIDIA's Debian repository expects Debian's contrib component enabled "
            "(CUDA installation guide 4.8); gpuenv does not edit the distribution's own sources"
        )
    gpus = facts.gpus_of("nvidia")
    flavours = {gpuinfo.module_flavour(g, matrices) for g in gpus}
    # Both flavours needed is nvidia.module-flavor (a blocker, judged by the doctor's check).
    chosen_flavour = "proprietary" if "proprietary" in flavours else "open"
    if req.version:
        chosen = toolkitpaths.toolkit_for(matrices, req.version)
        if chosen is None:
            raise PlanError(f"CUDA {req.version} is not in the bundled matrices (gpuenv matrix show cuda)")
    else:
        series = newest_cuda_for(facts, matrices)
        chosen = toolkitpaths.toolkit_for(matrices, series) if series else None
        if chosen is None:
            raise PlanError("cannot choose a CUDA release: the bundled matrices hold no toolkit; give --version")
    series = chosen.series
    major, minor = series.split(".")[:2]
    min_driver = chosen.min_driver

    pk = repos.section("nvidia")["packages"]
    driver_pkgs: list[str]
    if chosen_flavour == "proprietary":
        branch = _legacy_branch(matrices, min_driver)
        if branch is None:
            driver_pkgs = [pk["driver_proprietary"]]
            notes.append(
                "driver branch not pinned: the matrices gave no branch that still supports these GPUs"
            )
        elif branch >= pk["pinning_from_branch"]:
            driver_pkgs = [pk["driver_pinning"].format(branch=branch), pk["driver_proprietary"]]
        else:
            driver_pkgs = [pk["driver_branch_proprietary"].format(branch=branch)]
        driver_label = f"proprietary modules ({' '.join(driver_pkgs)})"
    else:
        driver_pkgs = [pk["driver_open"]]
        driver_label = (
            f"open modules ({pk['driver_open']}" + (f", >= {min_driver}" if min_driver else "") + ")"
        )

    key = repos.nvidia_key(distro, arch)
    list_path, list_content = repos.nvidia_list(distro, arch)
    # A second CUDA source (cuda-keyring's, a legacy cuda.list) goes: one repository, one signed-by.
    steps = _drop_other_sources(facts, repos, "nvidia", (list_path,))
    steps += key_and_sources(
        key, [(list_path, list_content)], f"NVIDIA's CUDA repository for {distro}/{arch}"
    )
    steps.append(apt_update())
    steps += _headers(facts, kernel_ok, notes)
    if kernel_ok:
        bl = repos.section("nvidia")["nouveau_blacklist"]
        nouveau = facts.module_loaded("nouveau")
        steps.append(
            write_file(
                "nouveau-blacklist",
                f"Blacklist nouveau ({bl['path']})",
                cite(nvidia_checks.nouveau_loaded) if nouveau else "keep nouveau from claiming the GPU at boot",
                bl["path"],
                bl["content"],
            )
        )
        steps.append(
            initramfs(
                "initramfs", "the blacklist must be in the initramfs", ("nouveau-blacklist",), reboot=True
            )
        )
        steps.append(
            apt_install(
                "driver",
                f"Install the NVIDIA driver, {driver_label}",
                cite(nvidia_checks.driver_missing, f"CUDA {series} needs >= {min_driver}" if min_driver else ""),
                driver_pkgs,
                reboot=True,
            )
        )
    toolkit = pk["toolkit"].format(major=major, minor=minor)
    steps.append(
        apt_install("toolkit", f"Install CUDA {series} ({toolkit})", f"target cuda {series}", [toolkit])
    )
    prof = repos.section("nvidia")["profile"]
    steps.append(
        write_file(
            "profile",
            f"Put /usr/local/cuda-{series}/bin on PATH ({prof['path']})",
            cite(cuda_checks.not_on_path),
            prof["path"],
            prof["content"].replace("{series}", series),
        )
    )
    torch, more = _torch_steps(matrices, req, "cuda", series)
    steps += more
    return PlanTarget(
        stack="cuda", version=series, driver=" ".join(driver_pkgs) if kernel_ok else None, torch=torch
    ), steps


def _driver_major(version: str | None) -> int | None:
    head = (version or "").lstrip(">= ").split(".")[0]
    return int(head) if head.isdigit() else None


def _legacy_branch(matrices: Matrices, min_driver: str | None) -> int | None:
    """Newest driver branch that still supports Maxwell-Volta and meets the toolkit's minimum."""
    branches = matrices.driver_branches()
    need = _driver_major(min_driver) or 0
    nums = [
        int(b.branch.lstrip("Rr"))
        for b in branches
        if b.legacy_gpus and b.branch.lstrip("Rr").isdigit() and int(b.branch.lstrip("Rr")) >= need
    ]
    return max(nums) if nums else None
