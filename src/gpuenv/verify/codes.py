"""Every code gpuenv verify reports, each written here once (FINDINGS.md catalogs them under
"Verify"), and the doctor codes verify's fixes send the user to, named by their checks.

``CODES`` is the order findings are listed in within a severity.
"""

from __future__ import annotations

from gpuenv.resolve.checks import amd as amd_checks
from gpuenv.resolve.checks import envpaths as envpaths_checks
from gpuenv.resolve.checks import torch as torch_checks
from gpuenv.resolve.registry import code_of

CRASHED = "verify.crashed"
TIMEOUT = "verify.timeout"
TORCH_MISSING = "verify.torch-missing"
TORCH_IMPORT_FAILED = "verify.torch-import-failed"
CPU_BUILD = "verify.cpu-build"
WRONG_VENDOR = "verify.wrong-vendor"
DEVICE_ACCESS = "verify.device-access"
NO_GPU_VISIBLE = "verify.no-gpu-visible"
GPU_NOT_VISIBLE = "verify.gpu-not-visible"
ARCH_MISSING = "verify.arch-missing"
MATMUL_FAILED = "verify.matmul-failed"
MATMUL_WRONG = "verify.matmul-wrong"
ARCH_UNKNOWN = "verify.arch-unknown"
UNCLEAN_EXIT = "verify.unclean-exit"

CODES = (
    CRASHED,
    TIMEOUT,
    TORCH_MISSING,
    TORCH_IMPORT_FAILED,
    CPU_BUILD,
    WRONG_VENDOR,
    DEVICE_ACCESS,
    NO_GPU_VISIBLE,
    GPU_NOT_VISIBLE,
    ARCH_MISSING,
    MATMUL_FAILED,
    MATMUL_WRONG,
    ARCH_UNKNOWN,
    UNCLEAN_EXIT,
)

# The doctor's findings a verify fix names (`gpuenv doctor CODE` shows what the machine has).
DOCTOR_NO_DEVICE_ACCESS = code_of(amd_checks.no_device_access)
DOCTOR_KFD_MISSING = code_of(amd_checks.kfd_missing)
DOCTOR_HIDDEN_BY_ENV = code_of(envpaths_checks.hidden_by_env)
DOCTOR_DRIVER_TOO_OLD = code_of(torch_checks.driver_too_old)
DOCTOR_ARCH_MISSING = code_of(torch_checks.arch_missing)
DOCTOR_LD_LIBRARY_PATH = code_of(torch_checks.ld_library_path)
