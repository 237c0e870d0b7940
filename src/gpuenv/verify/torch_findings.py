"""Findings about torch and its build: missing, not importing, CPU-only, or built for the other vendor."""

from __future__ import annotations

from gpuenv.resolve.finding import Finding, Severity
from gpuenv.verify import codes
from gpuenv.verify.machine import Machine
from gpuenv.verify.records import str_or_none

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from gpuenv.verify.results import TorchBuild


def no_torch(py: str, error: str, missing: object, start: dict[str, Any]) -> Finding:
    version = str_or_none(start.get("version"))
    where = f"{py}" + (f" (Python {version})" if version else "")
    if missing is True:
        return Finding(
            code=codes.TORCH_MISSING,
            severity=Severity.ERROR,
            title="PyTorch is not installed in this interpreter",
            detail=f"{where}: {error}.",
            fix="gpuenv torch    # prints the build this machine needs, with its --index-url\n"
            f"{py} -m pip install torch==VERSION --index-url URL    # the command it printed, with this interpreter\n"
            "Or verify the interpreter that has it: gpuenv verify --python /path/to/venv/bin/python",
        )
    return Finding(
        code=codes.TORCH_IMPORT_FAILED,
        severity=Severity.ERROR,
        title="PyTorch is installed but does not import",
        detail=f"{where}: import torch raised {error}.",
        fix=f"A library torch loads is missing or shadowed: gpuenv doctor {codes.DOCTOR_LD_LIBRARY_PATH}; try again with "
        "LD_LIBRARY_PATH unset.\n"
        f"Reinstall the build gpuenv torch prints: {py} -m pip install --force-reinstall torch==VERSION "
        "--index-url URL",
    )


def cpu_build(py: str, build: TorchBuild, machine: Machine | None) -> Finding:
    gpus = [g for g in (machine.gpus if machine else ()) if g.compute]
    seen = f" The machine has {machine.model}." if machine is not None and gpus else ""
    return Finding(
        code=codes.CPU_BUILD,
        severity=Severity.ERROR,
        title=f"PyTorch {build.version or '(unknown version)'} is a CPU-only build: it uses no GPU",
        detail=f"{py} imports torch {build.version} with torch.version.cuda and torch.version.hip both None."
        + seen,
        fix=f"{py} -m pip uninstall -y torch\n"
        "gpuenv torch    # prints the GPU build this machine needs, with its --index-url\n"
        f"{py} -m pip install torch==VERSION --index-url URL    # the command it printed",
    )


def wrong_vendor(py: str, build: TorchBuild, machine: Machine | None) -> Finding | None:
    """A CUDA build on a machine whose only GPUs are AMD, or a ROCm build on an NVIDIA-only one."""
    if machine is None:
        return None
    nvidia, amd = machine.compute_gpus("nvidia"), machine.compute_gpus("amd")
    if build.stack == "cuda" and not nvidia and amd:
        have, want = amd, "ROCm"
    elif build.stack == "rocm" and not amd and nvidia:
        have, want = nvidia, "CUDA"
    else:
        return None
    return Finding(
        code=codes.WRONG_VENDOR,
        severity=Severity.ERROR,
        title=f"This is a {'ROCm' if build.stack == 'rocm' else 'CUDA'} build of PyTorch; the machine's GPUs "
        f"need {want}",
        detail=f"{build.label} in {py}; the machine has {Machine(gpus=have).model}, which this build cannot use.",
        fix=f"{py} -m pip uninstall -y torch\n"
        "gpuenv torch    # prints the build for these GPUs, with its --index-url\n"
        f"{py} -m pip install torch==VERSION --index-url URL    # the command it printed",
        gpus=tuple(g.pci_slot for g in have if g.pci_slot),
    )

