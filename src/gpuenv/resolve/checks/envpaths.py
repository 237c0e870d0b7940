"""The environment against the machine: CUDA_HOME/CUDA_PATH, the order of toolkits on PATH and
LD_LIBRARY_PATH, and the GPU-selection variables (CUDA_/HIP_/ROCR_VISIBLE_DEVICES).

The environment is the one gpuenv ran in (live probe or a facts file's); under --root there is
none and these checks stay silent.
"""

from __future__ import annotations

import re

from gpuenv.facts import Facts, Gpu
from gpuenv.resolve import gpuinfo, toolkitpaths
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.facts_view import HOME_VARS, wanted_toolkit
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpuenv.matrices import Matrices

CPP_EXT_REF = "https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py"
CUDA_ENV_REF = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables"
MPS_UUID_REF = "https://docs.nvidia.com/deploy/topics/topic_5_2_1.html"
ROCM_ENV_REF = "https://rocm.docs.amd.com/projects/HIP/en/latest/reference/env_variables.html"
def _label(stack: str) -> str:
    return "CUDA" if stack == "cuda" else "ROCm"


@check(code="cuda.home-mismatch", area="nvidia", needs=("environment",))
def home_mismatch(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    env = facts.environment
    assert env is not None  # run_checks skips the check while its needs are unknown
    nvcc = toolkitpaths.nvcc_on_path(facts)
    problems, fixes = [], []
    homes = {}
    for var in HOME_VARS:
        value = env.get(var)
        if not value:
            continue
        exists = toolkitpaths.path_exists(facts, value)
        if exists is False:
            problems.append(f"{var}={value} does not exist")
            fixes.append(_export(var, facts, nvcc))
            continue
        tk = toolkitpaths.toolkit_of_path(facts, value)
        if tk is None or tk[0] != "cuda":
            continue
        homes[var] = tk[1]
        if nvcc and inv.series(nvcc[0]) != inv.series(tk[1]):
            problems.append(
                f"{var}={value} is CUDA {tk[1]}, but the nvcc on PATH ({nvcc[1]}) is CUDA {nvcc[0]}: "
                "torch.utils.cpp_extension and CMake build with the CUDA_HOME/CUDA_PATH tree, a shell's nvcc with the other"
            )
            torch = facts.python.torch if facts.python else None
            if torch is not None and torch.cuda and inv.series(torch.cuda) == inv.series(tk[1]):
                # The home is the toolkit the torch wheel needs: PATH is what to change.
                fixes.append(
                    f"export PATH={value.rstrip('/')}/bin${{PATH:+:${{PATH}}}}  # the nvcc of CUDA {inv.series(tk[1])}, "
                    f"as torch {torch.version} needs"
                )
            else:
                fixes.append(_export(var, facts, nvcc))
    if len(homes) == 2 and inv.series(homes["CUDA_HOME"]) != inv.series(homes["CUDA_PATH"]):
        problems.append(f"CUDA_HOME is CUDA {homes['CUDA_HOME']} and CUDA_PATH is CUDA {homes['CUDA_PATH']}")
    if not problems:
        return
    yield Finding(
        severity=Severity.WARNING,
        title="CUDA_HOME/CUDA_PATH does not match the CUDA toolkit in use",
        detail="; ".join(problems) + ".",
        fix="\n".join(dict.fromkeys(f for f in fixes if f))
        or "Point CUDA_HOME and CUDA_PATH at one toolkit tree (shell profile, the job script).",
        refs=(CPP_EXT_REF,),
    )


def _export(var: str, facts: Facts, nvcc: tuple[str, str] | None) -> str:
    tree = None
    if nvcc:
        path = toolkitpaths.real_path(facts, nvcc[1])
        if path.endswith("/bin/nvcc"):
            tree = path[: -len("/bin/nvcc")]
    if tree is None and facts.toolkits.cuda:
        newest = max(facts.toolkits.cuda, key=lambda t: inv.version_tuple(t.version))
        tree = newest.path
    return f"export {var}={tree}  # in the shell profile or job script" if tree else f"unset {var}"


def _same(a: str, b: str, parts: int) -> bool:
    ta, tb = inv.version_tuple(a)[:parts], inv.version_tuple(b)[:parts]
    n = min(len(ta), len(tb))
    return n > 0 and ta[:n] == tb[:n]


@check(code="path.order", area="stacks", needs=("environment",))
def path_order(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    problems, fixes = [], []
    for variable in ("PATH", "LD_LIBRARY_PATH"):
        entries = toolkitpaths.path_entries(facts, variable) or []
        for stack in ("cuda", "rocm"):
            seen: list[tuple[str, str]] = []
            for entry in entries:
                tk = toolkitpaths.toolkit_of_path(facts, entry)
                if tk and tk[0] == stack:
                    seen.append((entry, tk[1]))
            parts = 2 if stack == "cuda" else 3
            versions = list(dict.fromkeys(".".join(map(str, inv.version_tuple(v)[:parts])) for _, v in seen))
            if len(versions) < 2:
                continue
            wanted = wanted_toolkit(facts, target, stack)
            if wanted is None or _same(seen[0][1], wanted[0], parts):
                continue
            right = next((e for e, v in seen if _same(v, wanted[0], parts)), None)
            order = ", ".join(f"{e} ({_label(stack)} {v})" for e, v in seen)
            problems.append(
                f"{variable} lists {order}: the first, {_label(stack)} {seen[0][1]}, wins, but {wanted[1]} is "
                f"{_label(stack)} {wanted[0]}"
            )
            others = [e for e, v in seen if not _same(v, wanted[0], parts)]
            if right:
                fixes.append(
                    f"export {variable}={right}${{{variable}:+:${{{variable}}}}}  # {right} first; and remove "
                    f"{', '.join(others)} from the shell profile"
                )
            else:
                fixes.append(
                    f"remove {', '.join(others)} from {variable} (shell profile, /etc/environment, job script)"
                )
    if not problems:
        return
    yield Finding(
        severity=Severity.WARNING,
        title="PATH or LD_LIBRARY_PATH picks another CUDA/ROCm release first",
        detail="; ".join(problems) + ".",
        fix="\n".join(dict.fromkeys(fixes)),
    )


# -- GPU selection variables -----------------------------------------------------------------

HIDING = ("", "-1", "NoDevFiles")
_PARTITIONABLE = ("gfx942", "gfx950")  # MI300/MI350 compute partitions: more devices than PCI functions


def _judge_list(value: str, gpus: list[Gpu], uuids_known: bool) -> tuple[list[str], str | None] | None:
    """(visible tokens, the first invalid token) for a *_VISIBLE_DEVICES value, the CUDA way:
    entries after the first invalid one are ignored. None when it cannot be judged (MIG UUIDs,
    UUIDs the facts do not carry)."""
    tokens = [t.strip() for t in value.split(",")]
    visible: list[str] = []
    uuids = [g.uuid for g in gpus if g.uuid]
    for token in tokens:
        if re.fullmatch(r"\d+", token):
            if int(token) >= len(gpus):
                return visible, token
            visible.append(token)
            continue
        if token.upper().startswith("MIG-"):
            return None
        if token.upper().startswith("GPU-"):
            if not uuids_known or not uuids:
                return None
            # CUDA takes a unique prefix of a UUID ("GPU-5c1f" is enough).
            matches = [u for u in uuids if u.lower().startswith(token.lower())]
            if len(matches) != 1:
                return visible, token
            visible.append(token)
            continue
        return visible, token
    return visible, None


def _vendor_gpus(facts: Facts, matrices: Matrices | None, vendor: str) -> list[Gpu]:
    if vendor == "nvidia":
        return [g for g in facts.gpus_of("nvidia") if g.kernel_driver == "nvidia"]
    amd = [g for g in facts.gpus_of("amd") if g.kernel_driver == "amdgpu"]
    with_kfd = [g for g in amd if "kfd" in g.sources]
    return with_kfd or [g for g in amd if g in gpuinfo.amd_compute(facts, matrices)]


@check(code="gpu.hidden-by-env", area="gpus", needs=("environment",))
def hidden_by_env(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    env = facts.environment
    assert env is not None  # run_checks skips the check while its needs are unknown
    for var, vendors in (
        ("CUDA_VISIBLE_DEVICES", ("nvidia", "amd")),  # HIP honours it on AMD too
        ("HIP_VISIBLE_DEVICES", ("amd",)),
        ("ROCR_VISIBLE_DEVICES", ("amd",)),
    ):
        if var not in env:
            continue
        value = env[var].strip()
        for vendor in vendors:
            gpus = _vendor_gpus(facts, matrices, vendor)
            if not gpus:
                continue
            name = "NVIDIA" if vendor == "nvidia" else "AMD"
            unset = (
                f"unset {var}  # and remove it from ~/.profile, ~/.bashrc, /etc/environment or the job script"
            )
            if value in HIDING:
                if "SLURM_JOB_ID" in env:
                    continue  # a batch job given no GPUs: gpu.not-allocated names the cause
                yield _hidden(
                    var, env[var], gpus, matrices, name, f"{var}={env[var]!r} hides every {name} GPU", unset
                )
                continue
            partitioned = vendor == "amd" and any(gpuinfo.gfx_target(g, matrices) in _PARTITIONABLE for g in gpus)
            judged = _judge_list(value, gpus, uuids_known=vendor == "nvidia")
            if judged is None:
                continue
            visible, bad = judged
            if bad is None or (partitioned and re.fullmatch(r"\d+", bad)):
                continue
            count = f"{len(gpus)} {name} GPU{'s' if len(gpus) != 1 else ''} " + (
                "(index 0)" if len(gpus) == 1 else f"(indices 0-{len(gpus) - 1})"
            )
            why = f"{var}={env[var]!r} names {bad!r}, which is not one of this machine's {count}"
            if not visible:
                why += ": no GPU is visible"
            else:
                why += f"; CUDA-style parsing stops there, so only {','.join(visible)} {'is' if len(visible) == 1 else 'are'} visible"
            fix = (
                f"export {var}={','.join(str(i) for i in range(len(gpus)))}  # or the indices/UUIDs you mean "
                f"(nvidia-smi -L lists them)\n" if vendor == "nvidia" else
                f"export {var}={','.join(str(i) for i in range(len(gpus)))}  # or the indices you mean (rocm-smi lists them)\n"
            ) + unset  # fmt: skip
            yield _hidden(var, env[var], gpus, matrices, name, why, fix)


def _hidden(
    var: str, value: str, gpus: list[Gpu], matrices: Matrices | None, name: str, why: str, fix: str
) -> Finding:
    return Finding(
        severity=Severity.WARNING,
        title=f"{var} hides {name} GPUs from CUDA/HIP programs",
        detail=f"{why}. GPUs: {gpuinfo.describe(gpus, matrices)}. torch.cuda.device_count() counts only the visible ones.",
        fix=fix,
        gpus=gpuinfo.slots(gpus),
        refs=(CUDA_ENV_REF, MPS_UUID_REF) if name == "NVIDIA" else (ROCM_ENV_REF,),
    )
