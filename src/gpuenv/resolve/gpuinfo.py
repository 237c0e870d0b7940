"""What each GPU is: its facts first, the bundled GPU tables (``Matrices``) where the facts are
silent (pure functions, no I/O).

A check, the target choice and the planner name a GPU, its gfx target or compute capability and
the NVIDIA module flavour it needs the same way: from here.
"""

from __future__ import annotations

from gpuenv.facts import Facts, Gpu
from gpuenv.resolve.memo import LastAsked

TYPE_CHECKING = False  # typing's flag without importing typing or collections.abc (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TypeVar

    from gpuenv.matrices import AmdGpu, Matrices

    _T = TypeVar("_T")


# What a facts document's GPUs are, read once per facts document and matrices bundle (#43): a
# doctor run or a plan asks it of the same GPUs from a dozen checks, the target choice and the
# planner. Per (facts, matrices): {"split": (discrete, integrated), "compute": ..., id(gpu): gpu,
# (rule, id(gpu)): what ``rule`` says of that GPU}. A GPU that is not one of the facts
# document's last read (a test's own Gpu) is judged afresh: one rule either way.
_read = LastAsked()


def _once(rule: Callable[[Gpu, Matrices | None], _T], gpu: Gpu, matrices: Matrices | None) -> _T:
    memo = _read.kept(matrices)
    if memo is None or memo.get(id(gpu)) is not gpu:
        return rule(gpu, matrices)
    key = (rule, id(gpu))
    if key not in memo:
        memo[key] = rule(gpu, matrices)
    found: _T = memo[key]
    return found


def _split(facts: Facts, matrices: Matrices | None) -> tuple[tuple[Gpu, ...], tuple[Gpu, ...]]:
    """(discrete, integrated) AMD GPUs of the facts, read in one pass."""
    memo = _read.answers(facts, matrices)
    split: tuple[tuple[Gpu, ...], tuple[Gpu, ...]] | None = memo.get("split")
    if split is None:
        amd = facts.gpus_of("amd")
        memo.update((id(g), g) for g in facts.gpus)  # the GPUs _once keeps answers for
        flags = [is_integrated(g, matrices) for g in amd]
        split = memo["split"] = (
            tuple(g for g, apu in zip(amd, flags, strict=True) if not apu),
            tuple(g for g, apu in zip(amd, flags, strict=True) if apu),
        )
    return split


def gfx_target(gpu: Gpu, matrices: Matrices | None) -> str | None:
    if gpu.gfx_target:
        return gpu.gfx_target
    return _once(_gfx_by_pci_id, gpu, matrices)


def _gfx_by_pci_id(gpu: Gpu, matrices: Matrices | None) -> str | None:
    known = matrices.amd_gpu(gpu.pci_id) if matrices is not None else None
    return known.target(gpu.revision) if known else None


def unconfirmed_targets(gpus: list[Gpu], matrices: Matrices | None) -> str:
    """Words for a finding that a GPU's gfx target decides, where the target is the matrices' (not
    the driver's) and no AMD source confirms it (#42), or depends on a PCI revision the facts lack;
    "" otherwise."""
    out, by_revision = [], []
    for g in gpus:
        known = matrices.amd_gpu(g.pci_id) if matrices is not None and not g.gfx_target else None
        if known is None or not known.gfx_target:
            continue
        if not known.confirmed:
            out.append(f"{g.pci_id} -> {known.target(g.revision)}")
        elif known.gfx_by_revision and not g.revision:
            others = ", ".join(f"{rev} {gfx}" for rev, gfx in sorted(known.gfx_by_revision.items()))
            by_revision.append(f"{g.pci_id} is taken to be {known.gfx_target}, but depends on its PCI revision ({others})")
    words = f" The gfx target of {', '.join(out)} (from its PCI id) is not confirmed by AMD." if out else ""
    if by_revision:
        words += f" The facts lack the revision: {'; '.join(by_revision)}."
    return words


def is_integrated(gpu: Gpu, matrices: Matrices | None) -> bool:
    if gpu.integrated is not None:
        return gpu.integrated
    if matrices is None or gpu.vendor != "amd":
        return False
    return _once(_integrated_by_pci_id, gpu, matrices)


def _integrated_by_pci_id(gpu: Gpu, matrices: Matrices | None) -> bool:
    known = matrices.amd_gpu(gpu.pci_id) if matrices is not None else None
    return bool(known and known.integrated)


def amd_discrete(facts: Facts, matrices: Matrices | None) -> tuple[Gpu, ...]:
    return _split(facts, matrices)[0]


def amd_integrated(facts: Facts, matrices: Matrices | None) -> tuple[Gpu, ...]:
    return _split(facts, matrices)[1]


def amd_compute(facts: Facts, matrices: Matrices | None) -> tuple[Gpu, ...]:
    """AMD GPUs that GPU computing could use: the discrete ones, and integrated ones that the
    default ROCm release supports or a bundled ROCm PyTorch wheel is built for (Strix Halo). The
    Raphael iGPU of a Ryzen desktop is none of these: it makes no machine "two-vendor"."""
    discrete, integrated = _split(facts, matrices)
    if not integrated or matrices is None:
        return discrete
    read = _read.answers(facts, matrices)
    found: tuple[Gpu, ...] | None = read.get("compute")
    if found is None:
        served = _served.answers(matrices)
        if "gfx" not in served:
            known = set(matrices.default_rocm().gpus)
            for version in matrices.torch_versions():
                known.update(a for v in matrices.torch_variants(version) if v.stack == "rocm" for a in v.archs)
            served["gfx"] = frozenset(known)
        found = read["compute"] = discrete + tuple(g for g in integrated if gfx_target(g, matrices) in served["gfx"])
    return found


_served = LastAsked()  # per matrices: {"gfx": the gfx targets ROCm or a ROCm wheel serves}


def gpu_class(gpu: Gpu, matrices: Matrices | None) -> str | None:
    """The class AMD's per-GPU OS limits name: "instinct", "radeon" (Radeon and Radeon PRO) or
    "ryzen" (an APU); None when the tables do not say. A PCI id they lack is judged by its gfx
    target when every GPU they list with that target is of one class (gfx942: Instinct), and is a
    Ryzen APU where the facts call it integrated and its gfx target does not make it an Instinct."""
    if matrices is None or gpu.vendor != "amd":
        return None
    return _once(_class_by_tables, gpu, matrices)


def _class_by_tables(gpu: Gpu, matrices: Matrices | None) -> str | None:
    if matrices is None:
        return None
    known = matrices.amd_gpu(gpu.pci_id)
    if known is not None:
        return _class_of(known)
    gfx = gfx_target(gpu, matrices)
    classes = {_class_of(g) for g in matrices.amd_gpus() if g.gfx_target == gfx} if gfx else set()
    if gpu.integrated is True and classes != {"instinct"}:
        # An APU newer than the tables: AMD's OS limits class every AMD APU with the Ryzen APUs but
        # the MI300A, an integrated Instinct, which its gfx target (gfx942: Instinct only) tells.
        return "ryzen"
    return classes.pop() if len(classes) == 1 else None


def _class_of(gpu: AmdGpu) -> str | None:
    instinct = "Instinct" in gpu.name or (gpu.architecture or "").startswith("CDNA")
    if gpu.integrated and not instinct:  # the MI300A is an APU and an Instinct GPU
        return "ryzen"
    radeon = "Radeon" in gpu.name
    if instinct == radeon:  # neither, or one PCI id sold as both (Vega 20: MI50 and Radeon PRO VII)
        return None
    return "instinct" if instinct else "radeon"


def instinct_models(gpu: Gpu, matrices: Matrices | None) -> frozenset[str]:
    """AMD's model names for an Instinct GPU ("MI300X"; a PCI id sold as two models gives both),
    empty when its name carries none."""
    from gpuenv.matrices.records import instinct_models as models_in

    known = matrices.amd_gpu(gpu.pci_id) if matrices is not None and gpu.vendor == "amd" else None
    return models_in(known.name if known is not None else gpu.name or "")


def nvidia_architecture(gpu: Gpu, matrices: Matrices | None) -> str | None:
    if gpu.architecture:
        return gpu.architecture
    known = matrices.nvidia_gpu(gpu.pci_id) if matrices is not None else None
    return known.architecture if known else None


def compute_capability(gpu: Gpu, matrices: Matrices | None) -> str | None:
    if gpu.compute_capability:
        return gpu.compute_capability
    known = matrices.nvidia_gpu(gpu.pci_id) if matrices is not None else None
    return known.compute_capability if known else None


_LEGACY_CC_MAX = (7, 2)  # Maxwell, Pascal, Volta (and Xavier 7.2): proprietary modules only
_OPEN_ONLY_CC_MIN = (10, 0)  # Blackwell and newer: open modules only


def module_flavour(gpu: Gpu, matrices: Matrices | None) -> str:
    """The NVIDIA kernel-module flavour a GPU needs: 'open', 'proprietary' or 'either'. The
    architecture table decides; a GPU it does not know is judged by compute capability (the
    open modules support Turing and newer; Blackwell and newer have only them)."""
    arch_name = nvidia_architecture(gpu, matrices)
    arch = matrices.nvidia_arch(arch_name) if arch_name and matrices is not None else None
    if arch is not None:
        return arch.module
    # Imported here: the wheel choice (gpuenv torch) reads GPUs through this module and needs
    # none of inventory's package tables (start-up, bench/bench_all.py).
    from gpuenv.resolve.inventory import version_tuple

    cc = version_tuple(compute_capability(gpu, matrices))
    if not cc:
        return "either"
    if cc <= _LEGACY_CC_MAX:
        return "proprietary"
    if cc >= _OPEN_ONLY_CC_MIN:
        return "open"
    return "either"


def gpu_name(gpu: Gpu, matrices: Matrices | None) -> str:
    if gpu.name:
        return gpu.name
    known = None
    if matrices is not None:
        known = matrices.nvidia_gpu(gpu.pci_id) if gpu.vendor == "nvidia" else matrices.amd_gpu(gpu.pci_id)
    return known.name if known else f"{gpu.vendor.upper()} GPU {gpu.pci_id}"


def describe(gpus: Iterable[Gpu], matrices: Matrices | None) -> str:
    """'AMD Radeon RX 9070 XT (0000:03:00.0), ...' for a finding's detail."""
    return ", ".join(f"{gpu_name(g, matrices)} ({g.pci_slot or g.pci_id})" for g in gpus)


def slots(gpus: Iterable[Gpu]) -> tuple[str, ...]:
    return tuple(g.pci_slot or g.pci_id for g in gpus)


def sm(cc: str) -> str:
    """'12.0' -> 'sm_120'."""
    major, _, minor = cc.partition(".")
    return f"sm_{major}{minor or '0'}"
