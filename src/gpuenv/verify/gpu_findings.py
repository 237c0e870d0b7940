"""Findings about the GPUs torch sees: the ROCm device nodes, GPUs it does not see, architectures
the build has no code for, and each GPU's matmul."""

from __future__ import annotations

from gpuenv.resolve.finding import Finding, Severity
from gpuenv.verify import codes
from gpuenv.verify.records import int_or_none, str_or_none
from gpuenv.verify.results import TOLERANCE
from gpuenv.verify.script import SIZE

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from gpuenv.verify.machine import Machine, MachineGpu
    from gpuenv.verify.results import GpuResult, Node, TorchBuild

VISIBILITY = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def device_access(bad: list[Node], no_render: bool, user: str | None) -> Finding:
    who = user or "this user"
    seen = [f"{n.path}: {n.error or 'not openable'}" for n in bad]
    if no_render:
        seen.append("no /dev/dri/renderD* node exists")
    return Finding(
        code=codes.DEVICE_ACCESS,
        severity=Severity.ERROR,
        title=f"{who} cannot open the ROCm device nodes read-write",
        detail="; ".join(seen)
        + f" (opened as {who}). ROCm needs /dev/kfd and the GPUs' /dev/dri/renderD* nodes.",
        fix="sudo usermod -aG render,video $USER    # then log out and back in (or: newgrp render)\n"
        "In a container: docker run --device=/dev/kfd --device=/dev/dri --group-add render ...\n"
        f"gpuenv doctor {codes.DOCTOR_NO_DEVICE_ACCESS} {codes.DOCTOR_KFD_MISSING}    # what the machine shows",
    )


def _env_note(env: dict[str, Any], keys: tuple[str, ...]) -> str:
    set_ = [f"{k}={env[k]!r}" for k in keys if isinstance(env.get(k), str)]
    return f" Set in the environment: {', '.join(set_)}." if set_ else ""


def _listed(gpus: Iterable[MachineGpu]) -> str:
    return ", ".join(f"{g.name} ({g.pci_slot or '?'}, driver: {g.driver or 'none'})" for g in gpus)


def no_gpu(
    py: str, build: TorchBuild, dev: dict[str, Any], env: dict[str, Any], access_failed: bool,
    machine: Machine | None,
) -> Finding:
    why = str_or_none(dev.get("warning")) or str_or_none(dev.get("init_error")) or str_or_none(dev.get("error"))
    detail = (
        f"{build.label} in {py} sees no GPU: torch.cuda.device_count() is {int_or_none(dev.get('count')) or 0}"
        + (f"; torch said: {why}" if why else "")
        + "."
    )
    vendor = "amd" if build.stack == "rocm" else "nvidia"
    expected = machine.compute_gpus(vendor) if machine is not None else ()
    if expected:
        detail += f" The machine has {_listed(expected)}."
    if build.stack == "rocm":
        detail += _env_note(env, VISIBILITY)
        if access_failed:
            detail += f" The device nodes cannot be opened ({codes.DEVICE_ACCESS}): that is the likely cause."
        fix = (
            "gpuenv doctor    # driver bound? /dev/kfd present? user in render?\n"
            "rocminfo | grep -i gfx    # ROCm must list the GPU as an agent\n"
            "Unset HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES if they hide the GPUs."
        )
    else:
        detail += _env_note(env, ("CUDA_VISIBLE_DEVICES",))
        fix = (
            "nvidia-smi    # must list the GPU; if it fails, the driver is not working\n"
            f"gpuenv doctor    # what is wrong with the driver (e.g. {codes.DOCTOR_DRIVER_TOO_OLD}), and the fix\n"
            "Unset CUDA_VISIBLE_DEVICES if it is empty or names no GPU."
        )
    return Finding(
        code=codes.NO_GPU_VISIBLE,
        severity=Severity.ERROR,
        title=f"PyTorch sees no GPU ({'ROCm' if build.stack == 'rocm' else 'CUDA'} build)",
        detail=detail,
        fix=fix,
        gpus=tuple(g.pci_slot for g in expected if g.pci_slot),
    )


def not_all_visible(
    py: str, build: TorchBuild, count: int, expected: tuple[MachineGpu, ...], env: dict[str, Any]
) -> Finding:
    hidden = [k for k in VISIBILITY if isinstance(env.get(k), str)]
    # A visibility variable is how a user gives a job some of the GPUs: then fewer is a choice,
    # worth a warning (verify did not check the others), not a failure.
    severity = Severity.WARNING if hidden else Severity.ERROR
    return Finding(
        code=codes.GPU_NOT_VISIBLE,
        severity=severity,
        title=f"PyTorch sees {count} of the machine's {len(expected)} GPUs",
        detail=f"{build.label} in {py} counts {count} GPU(s); the PCI bus has {len(expected)}: "
        f"{_listed(expected)}." + _env_note(env, VISIBILITY),
        fix=(
            "Unset " + " / ".join(hidden) + f" to verify every GPU (gpuenv doctor {codes.DOCTOR_HIDDEN_BY_ENV}).\n"
            if hidden
            else ""
        )
        + (
            "rocm-smi ; rocminfo | grep -i gfx    # which GPUs ROCm lists"
            if build.stack == "rocm"
            else "nvidia-smi -L    # which GPUs the driver lists; a missing one: sudo dmesg | grep -i -e xid -e nvrm"
        )
        + "\ngpuenv doctor    # a GPU without its driver, or fallen off the bus",
        gpus=tuple(g.pci_slot for g in expected if g.pci_slot),
    )



def arch_findings(py: str, build: TorchBuild | None, gpus: list[GpuResult], env: dict[str, Any]) -> list[Finding]:
    if build is None or build.stack is None:
        return []
    out = []
    missing = [g for g in gpus if g.in_build is False]
    if missing:
        archs = sorted({g.arch for g in missing if g.arch})
        built = ", ".join(build.arch_list or ()) or "none"
        detail = (
            f"{build.label} in {py} has no code for "
            + "; ".join(g.label for g in missing)
            + (f". It was built for: {built}.")
        )
        if build.stack == "rocm":
            detail += _env_note(env, ("HSA_OVERRIDE_GFX_VERSION",))
        out.append(
            Finding(
                code=codes.ARCH_MISSING,
                severity=Severity.ERROR,
                title=f"This PyTorch build has no code for {', '.join(archs)}",
                detail=detail,
                fix="gpuenv torch    # prints a build with code for this GPU, with its --index-url\n"
                f"{py} -m pip install --force-reinstall torch==VERSION --index-url URL    # the command it printed",
            )
        )
    unknown = [g for g in gpus if g.in_build is None]
    if unknown:
        why = (
            "the build's architecture list (torch.cuda.get_arch_list()) is empty or unreadable"
            if not build.arch_list
            else "the GPU's architecture could not be read"
        )
        out.append(
            Finding(
                code=codes.ARCH_UNKNOWN,
                severity=Severity.WARNING,
                title="Whether the build has code for "
                + ("these GPUs" if len(unknown) > 1 else f"GPU {unknown[0].index}")
                + " could not be told",
                detail=f"{'; '.join(g.label for g in unknown)}: {why}. The matmul result still shows "
                "whether the GPU works.",
                fix=f"gpuenv doctor {codes.DOCTOR_ARCH_MISSING}    # judges the installed wheel from its metadata",
            )
        )
    return out


def matmul_findings(gpus: list[GpuResult], stack: str | None, env: dict[str, Any]) -> list[Finding]:
    out = []
    for g in gpus:
        if g.matmul is None or g.matmul.error is None:
            continue
        hint = (
            f" The build has no code for {g.arch} ({codes.ARCH_MISSING}): that is the cause."
            if g.in_build is False
            else ""
        )
        out.append(
            Finding(
                code=codes.MATMUL_FAILED,
                severity=Severity.ERROR,
                title=f"A matmul on {g.label} failed",
                detail=f"{g.matmul.error}.{hint}",
                fix="gpuenv doctor    # the driver, the stack and the torch build\n"
                "For details, rerun with CUDA_LAUNCH_BLOCKING=1"
                + (" AMD_LOG_LEVEL=3" if stack == "rocm" else "")
                + " gpuenv verify",
            )
        )
    for g in gpus:
        if g.matmul is None or g.matmul.error is not None or g.matmul.ok:
            continue
        err = g.matmul.max_abs_err
        seen = (
            "NaN or infinite entries"
            if err is None
            else f"a largest difference of {err:.3g}"
            if err > TOLERANCE
            else "a result of the wrong shape"
        )
        out.append(
            Finding(
                code=codes.MATMUL_WRONG,
                severity=Severity.ERROR,
                title=f"{g.label} computes a wrong matmul",
                detail=f"A {SIZE}x{SIZE} float32 matmul on {g.label} differs from the CPU's with {seen}; "
                f"at most {TOLERANCE:g} is right."
                + _env_note(env, ("HSA_OVERRIDE_GFX_VERSION", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")),
                fix="Unset HSA_OVERRIDE_GFX_VERSION if set (it runs code built for another GPU) and "
                "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE (it forces TF32).\n"
                "gpuenv doctor    # a driver or library mismatch\n"
                + (
                    "rocm-smi --showerrors ; sudo dmesg | grep -i amdgpu    # hardware errors"
                    if stack == "rocm"
                    else "nvidia-smi -q -d ECC ; sudo dmesg | grep -i xid    # hardware errors"
                ),
            )
        )
    return out
