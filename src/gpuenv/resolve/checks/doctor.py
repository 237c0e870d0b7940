"""The doctor about itself: what the probe could not see, and whether its matrices are stale.
(doctor.check-crashed is emitted by the registry's loop, not by a check.)"""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import check

# What each probe's failure leaves unknown (probe name prefix -> consequence).
_UNKNOWN = {
    "pci": "the GPU list may be incomplete",
    "nvml": "the NVIDIA driver version and GPU state are unknown",
    "amdsmi": "AMD driver details are unknown",
    "kfd": "AMD gfx targets come from the bundled tables only",
    "dpkg": "installed packages are unknown: driver, DKMS and leftover checks are skipped",
    "dkms": "DKMS build state is unknown",
    "apt": "APT sources are unknown: source checks are skipped",
    "kernel": "kernel state (modules, headers, Secure Boot) is partly unknown",
    "toolkits": "installed CUDA/ROCm toolkits may be missing from the report",
    "python": "the Python environment (PyTorch) is unknown",
    "devices": "device node permissions are unknown",
    "users": "the user's groups are unknown",
}


@check(code="doctor.probe-failed", area="doctor")
def probe_failed(facts: Facts, matrices, target: Target):
    for err in facts.errors:
        consequence = next(
            (v for k, v in _UNKNOWN.items() if err.probe.startswith(k)), "some checks had less to go on"
        )
        yield Finding(
            code="doctor.probe-failed",
            severity=Severity.WARNING,
            title=f"The {err.probe} probe could not read everything",
            detail=f"{err.message}; therefore {consequence}.",
            fix="Run gpuenv as root (sudo) for a complete picture, or check the path named above.",
        )


_newest_memo: list = [None, None]


def _newest(matrices) -> tuple[str | None, str | None, str | None, str | None]:
    """(ROCm, CUDA toolkit, torch, driver branch number) newest in the bundle, worked out once
    per matrices object (fleet runs ask it for every facts file)."""
    if _newest_memo[0] is not matrices:
        rocm = [r.version for r in matrices.rocm_releases()]
        cuda = [t.version for t in matrices.cuda_toolkits()]
        torch = matrices.torch_versions()
        branches = [b.branch.lstrip("R") for b in matrices.driver_branches()]
        _newest_memo[0] = matrices
        _newest_memo[1] = (
            max(rocm, key=inv.version_tuple, default=None),
            max(cuda, key=inv.version_tuple, default=None),
            max(torch, key=inv.version_tuple, default=None),
            max(branches, key=inv.version_tuple, default=None),
        )
    return _newest_memo[1]


@check(code="doctor.matrices-stale", area="doctor", needs=("matrices",))
def matrices_stale(facts: Facts, matrices, target: Target):
    newest_rocm, newest_cuda, newest_torch, newest_branch = _newest(matrices)
    newer = []
    rocm = inv.installed_rocm(facts)
    if rocm and newest_rocm and inv.older(newest_rocm, rocm):
        newer.append(f"ROCm {rocm} (newest bundled {newest_rocm})")
    for version in inv.installed_cuda(facts)[:1]:
        if newest_cuda and inv.older(inv.series(newest_cuda), inv.series(version)):
            newer.append(f"CUDA {version} (newest bundled {newest_cuda})")
    torch = facts.python.torch if facts.python else None
    if torch and newest_torch and inv.older(newest_torch, torch.version.split("+")[0]):
        newer.append(f"PyTorch {torch.version} (newest bundled {newest_torch})")
    driver = inv.nvidia_driver_version(facts)
    branch = inv.version_tuple(driver)[:1]
    if branch and newest_branch and inv.older(newest_branch, str(branch[0])):
        newer.append(f"NVIDIA driver {driver} (newest bundled branch R{newest_branch})")
    if not newer:
        return
    yield Finding(
        code="doctor.matrices-stale",
        severity=Severity.INFO,
        title="The machine runs releases newer than gpuenv's matrices know",
        detail=f"{'; '.join(newer)}; matrices bundle {matrices.bundle.version} ({matrices.bundle.origin}).",
        fix="gpuenv matrix update --from URL  # judgements about these releases are best-effort until then",
    )
