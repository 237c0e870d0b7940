"""The GPUs on the PCI bus: none, unknown, without a driver, two vendors, an AMD iGPU beside a dGPU."""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import gpuinfo
from gpuenv.resolve.facts_view import nvidia_driver_absent, nvidia_driver_unloaded
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check
from gpuenv.resolve.target import basis, rocm_release

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.facts import Gpu
    from gpuenv.matrices import Matrices


@check(code="gpu.none", area="gpus", blocking=True)
def none(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    asked = basis(target) == "explicit"
    if asked and target.stack:
        # An explicit target needs its own vendor's GPU: CUDA on an AMD-only box has nothing to run on.
        vendor = "nvidia" if target.stack == "cuda" else "amd"
        if facts.gpus_of(vendor) or facts.platform.wsl or _driver_answered(facts, vendor) or not facts.bus_read:
            return
        label = "NVIDIA" if vendor == "nvidia" else "AMD"
        seen = ", ".join(f"{gpuinfo.gpu_name(g, matrices)} ({g.vendor})" for g in facts.gpus) or "no GPU at all"
        yield Finding(
            severity=Severity.ERROR,
            title=f"No {label} GPU for the {target.stack} target",
            detail=f"found: {seen}. {target.stack} {target.version or ''} has nothing to run on here.".replace(
                "  ", " "
            ),
            fix=(
                f"Target the stack of the GPUs present (gpuenv doctor --target {'rocm' if vendor == 'nvidia' else 'cuda'}), "
                if facts.gpus_of("amd" if vendor == "nvidia" else "nvidia")
                else "No NVIDIA or AMD GPU is present, so neither target has anything to run on: --target rocm needs an "
                "AMD GPU a ROCm release lists (`gpuenv matrix show rocm`), --target cuda an NVIDIA GPU of an "
                "architecture the toolkit supports (`gpuenv matrix show cuda`). "
            )
            + "Check the GPU is seated, enabled in the firmware setup and passed through to this VM.",
        )
        return
    if facts.gpus_of("nvidia") or facts.gpus_of("amd"):
        return
    if facts.platform.wsl or not facts.bus_read:
        # WSL shows no PCI GPU: the GPU is reached through /dev/dxg (platform.wsl says so); an
        # unread bus is doctor.probe-failed's to say.
        return
    others = (
        ", ".join(f"{g.name or g.pci_id} ({g.vendor})" for g in facts.gpus)
        or "no display or accelerator device"
    )
    yield Finding(
        severity=Severity.INFO,
        title="No NVIDIA or AMD GPU on the PCI bus",
        detail=f"found: {others}. PyTorch and friends run on the CPU here.",
        fix="Nothing to install for a GPU stack here.",
    )


@check(code="gpu.unknown", area="gpus", needs=("matrices",), not_judged=True)
def unknown(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    for g in facts.gpus:
        if g.vendor == "nvidia" and matrices.nvidia_gpu(g.pci_id) is None:
            pass
        elif g.vendor == "amd" and matrices.amd_gpu(g.pci_id) is None:
            pass
        else:
            continue
        yield Finding(
            severity=Severity.WARNING,
            title=f"GPU {g.pci_id} is in no bundled table",
            detail=f"{gpuinfo.gpu_name(g, matrices)} at {g.pci_slot or '?'} (PCI id {g.pci_id}"
            + (f", {g.gfx_target}" if g.gfx_target else "")
            + (f", compute capability {g.compute_capability}" if g.compute_capability else "")
            + f"); matrices bundle {matrices.bundle.version}. Support checks cannot judge it.",
            fix="gpuenv matrix update --from URL  # a newer matrices bundle may know it",
            gpus=gpuinfo.slots([g]),
        )


@check(
    code="gpu.no-driver",
    area="gpus",
    # The driver refused the GPU, or never loaded: its cause is the error, this its consequence.
    follows=("nvidia.gpu_dropped", "nvidia.module_flavor", "kernel.dkms_not_built", "kernel.secure_boot"),
)
def no_driver(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    # The vendor checks say more where they apply (nvidia.driver-missing / -not-loaded,
    # amd.driver-missing); this one covers the rest: an NVIDIA GPU the loaded driver did not take,
    # an AMD integrated GPU, a GPU whose vendor driver state is unknown.
    bare = []
    for g in facts.gpus:
        if g.driver_bound is not False or g.vendor not in ("nvidia", "amd"):
            continue  # bound, or the facts do not say (left out): nothing to judge
        if g.vendor == "nvidia" and (nvidia_driver_absent(facts) or nvidia_driver_unloaded(facts)):
            continue
        if g.vendor == "amd" and not gpuinfo.is_integrated(g, matrices):
            continue
        if g.vendor == "amd" and _has_discrete(facts, matrices):
            continue  # an unbound iGPU beside a discrete GPU (any vendor) is out of the way: nothing fails
        bare.append(g)
    if not bare:
        return
    loaded = facts.kernel.modules_loaded or ()
    yield Finding(
        severity=Severity.ERROR,
        title="A GPU has no kernel driver bound",
        detail=f"{gpuinfo.describe(bare, matrices)}: no driver in /sys/bus/pci/devices/*/driver"
        + (
            "; the nvidia module is loaded but did not take it (GPU too new or too old for this driver branch?)"
            if "nvidia" in loaded and any(g.vendor == "nvidia" for g in bare)
            else ""
        ),
        fix="sudo dmesg | grep -iE 'nvidia|amdgpu'  # why the driver refused the device\n"
        "Install a driver branch that supports the GPU (`gpuenv install auto --dry-run` shows which).",
        gpus=gpuinfo.slots(bare),
    )


@check(code="gpu.mixed-vendors", area="gpus")
def mixed_vendors(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    # A Ryzen desktop's iGPU beside an RTX card is no second vendor to choose: only AMD GPUs
    # that ROCm or a ROCm PyTorch build could use count.
    nvidia, amd = facts.gpus_of("nvidia"), gpuinfo.amd_compute(facts, matrices)
    if not (nvidia and amd):
        return
    yield Finding(
        severity=Severity.INFO,
        title="NVIDIA and AMD GPUs in one machine",
        detail=f"NVIDIA: {gpuinfo.describe(nvidia, matrices)}; AMD: {gpuinfo.describe(amd, matrices)}.",
        fix="Say which stack to install: gpuenv install rocm | gpuenv install cuda; "
        "pick the PyTorch build with gpuenv torch --vendor nvidia|amd.",
        gpus=gpuinfo.slots(nvidia + amd),
    )


def _driver_answered(facts: Facts, vendor: str) -> bool:
    """The vendor's driver reported a version (nvidia-smi, NVML, AMD SMI): it runs a GPU, so a GPU
    list without one was not read from the bus (a report's facts): unknown, not "no GPU"."""
    if vendor == "nvidia":
        nv = facts.nvidia
        return nv is not None and bool(nv.driver_version or nv.cuda_driver_version)
    return facts.amd is not None and bool(facts.amd.driver_version)


def _has_discrete(facts: Facts, matrices: Matrices | None) -> bool:
    return bool(facts.gpus_of("nvidia")) or bool(gpuinfo.amd_discrete(facts, matrices))


def _rocm_sees(gpu: Gpu) -> bool:
    """Whether ROCm can reach an AMD GPU: bound to amdgpu, or listed by KFD. One bound to another
    driver (vfio-pci for a VM) or to none is invisible to it."""
    return gpu.kernel_driver == "amdgpu" or "kfd" in gpu.sources or (
        gpu.kernel_driver is None and "sysfs" not in gpu.sources
    )


@check(code="amd.igpu-present", area="gpus", noted=True)
def igpu_present(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    discrete = gpuinfo.amd_discrete(facts, matrices)
    # ROCm sees the iGPU now, or will once the planned install binds amdgpu to it (a fresh box).
    installing = target.stack == "rocm" and basis(target) in ("explicit", "auto")
    integrated = tuple(
        g
        for g in gpuinfo.amd_integrated(facts, matrices)
        if _rocm_sees(g) or (installing and g.kernel_driver is None and not g.driver_unknown)
    )
    if not (discrete and integrated):
        return
    release = rocm_release(matrices, target)
    unsupported = [
        f"{gpuinfo.gpu_name(g, matrices)} ({gfx})"
        for g in integrated
        if release is not None and (gfx := gpuinfo.gfx_target(g, matrices)) and not release.support(gfx)
    ]
    env = facts.environment or {}
    visible = env.get("HIP_VISIBLE_DEVICES") or env.get("ROCR_VISIBLE_DEVICES")
    yield Finding(
        severity=Severity.WARNING,
        title="An AMD integrated GPU sits beside the AMD discrete GPU",
        detail=f"integrated: {gpuinfo.describe(integrated, matrices)}; discrete: {gpuinfo.describe(discrete, matrices)}. "
        + (f"ROCm {release.version} does not support {', '.join(unsupported)}; " if release and unsupported else "")
        + "ROCm may enumerate the iGPU first, pick it, or crash on it"
        + (
            f" (HIP/ROCR_VISIBLE_DEVICES={visible} is set, which does not always prevent the crash)."
            if visible
            else "."
        ),
        fix="Disable the integrated GPU in the firmware setup (most reliable), or hide it from ROCm:\n"
        "export HIP_VISIBLE_DEVICES=<index of the discrete GPU>  # rocm-smi lists the indices\n"
        "(ROCR_VISIBLE_DEVICES does the same one level lower; neither always prevents the crash)",
        gpus=gpuinfo.slots(integrated),
        refs=("https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html",),
    )


# -- a batch job without GPUs ------------------------------------------------------------------

SLURM_GRES_REF = "https://slurm.schedmd.com/gres.html"
CGROUP_DEVICES_REF = "https://docs.kernel.org/admin-guide/cgroup-v1/devices.html"
# Set by SLURM for a job or step that was allocated GPUs (gres.html, "Environment variables").
SLURM_GPU_VARS = ("SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE")
# Values with which SLURM (and users) leave no GPU to CUDA: envpaths.HIDING's meaning.
_NO_DEVICES = ("", "-1", "NoDevFiles")


def _vendor_node(path: str, vendor: str) -> bool:
    if vendor == "nvidia":
        return path.startswith("/dev/nvidia") and not path.startswith("/dev/nvidia-caps")
    return path == "/dev/kfd" or path.startswith("/dev/dri/renderD")


def _gpu_unreachable(facts: Facts, vendor: str) -> str | None:
    """What says this process can reach none of the vendor's GPUs, or None when nothing does
    (or the facts do not say)."""
    nodes = {p: n for p, n in (facts.device_nodes or {}).items() if _vendor_node(p, vendor)}
    per_gpu = [p for p in nodes if p.startswith("/dev/dri/renderD") or p[len("/dev/nvidia"):].isdigit()]
    if per_gpu and all(
        nodes[p].exists is False or nodes[p].cgroup_allowed is False or nodes[p].accessible is False for p in per_gpu
    ):
        return f"none of {', '.join(sorted(per_gpu))} can be opened"
    if vendor == "nvidia" and facts.nvidia is not None and facts.nvidia.nvml == "ok":
        gpus = facts.gpus_of("nvidia")
        if gpus and not any("nvml" in g.sources for g in gpus):
            return "NVML answers but lists none of the GPUs on the PCI bus"
    return None


@check(code="gpu.not-allocated", area="gpus")
def not_allocated(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    gpus = [g for g in facts.gpus if g.vendor in ("nvidia", "amd")]
    if not gpus:
        return  # nothing on the bus to be allocated (gpu.none)
    vendors = sorted({g.vendor for g in gpus})
    denied = sorted(
        p
        for p, n in (facts.device_nodes or {}).items()
        if n.exists and n.cgroup_allowed is False and any(_vendor_node(p, v) for v in vendors)
    )
    env = facts.environment or {}
    job = env.get("SLURM_JOB_ID")
    seen: list[str] = []
    certain = bool(denied)
    if denied:
        seen.append(f"the device cgroup of this process denies {', '.join(denied)}")
    if job is not None:
        given = {k: env[k] for k in SLURM_GPU_VARS if k in env}
        cvd = env.get("CUDA_VISIBLE_DEVICES")
        if cvd is not None and cvd.strip() in _NO_DEVICES:
            seen.append(f"SLURM job {job} runs with CUDA_VISIBLE_DEVICES={cvd!r}")
            certain = True
        elif not given and cvd is None:
            unreachable = [w for v in vendors if (w := _gpu_unreachable(facts, v))]
            seen.append(
                f"SLURM job {job} has none of {', '.join(SLURM_GPU_VARS)} set (SLURM sets them for a job given GPUs)"
                + (f"; {'; '.join(unreachable)}" if unreachable else "")
            )
            certain = certain or bool(unreachable)
    if not seen:
        return
    yield Finding(
        severity=Severity.ERROR if certain else Severity.WARNING,
        title="This job was not allocated the machine's GPUs",
        detail=f"GPUs on the PCI bus: {gpuinfo.describe(gpus, matrices)}; but {'; '.join(seen)}. "
        + (
            "CUDA and ROCm programs here see no GPU."
            if certain
            else "Where the cluster confines jobs to their allocated devices, programs here see no GPU; where "
            "it does not, they use GPUs the scheduler may have given to another job."
        ),
        fix="Ask the scheduler for GPUs: srun --gres=gpu:1 ... (or --gpus=1 / #SBATCH --gres=gpu:1 in the batch "
        "script), then run gpuenv doctor inside that job step."
        + (
            "\nIn a container, pass the GPU devices in (docker run --gpus all / --device /dev/kfd --device /dev/dri)."
            if denied and job is None
            else ""
        ),
        gpus=gpuinfo.slots(gpus),
        refs=(SLURM_GRES_REF, CGROUP_DEVICES_REF),
    )
