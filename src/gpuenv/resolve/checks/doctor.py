"""The doctor about itself: what the probe could not see, and whether its matrices are stale.
(doctor.check-crashed is emitted by the registry's loop, not by a check.)"""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.memo import LastAsked
from gpuenv.resolve.registry import check
from gpuenv.standins import pep440

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from gpuenv.matrices import Matrices

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
def probe_failed(facts: Facts, matrices: Matrices | None, target: Target) -> Iterator[Finding]:
    for err in facts.errors:
        consequence = next(
            (v for k, v in _UNKNOWN.items() if err.probe.startswith(k)), "some checks had less to go on"
        )
        yield Finding(
            severity=Severity.WARNING,
            title=f"The {err.probe} probe could not read everything",
            detail=f"{err.message}; therefore {consequence}.",
            fix="Run gpuenv as root (sudo) for a complete picture, or check the path named above.",
        )


_newest_bundled = LastAsked()  # per matrices: {kind: the newest version of that kind}


def _newest(matrices: Matrices, kind: str) -> str | None:
    """The newest ROCm release, CUDA toolkit, torch release or driver branch number in the
    bundle, worked out once per matrices object and only when the machine has one to compare
    (a CUDA box never reads rocm.json for it)."""
    memo: dict[str, str | None] = _newest_bundled.answers(matrices)
    if kind not in memo:
        listers: dict[str, Callable[[], list[str]]] = {
            "rocm": lambda: [r.version for r in matrices.rocm_releases()],
            "cuda": matrices.cuda_versions,
            "torch": lambda: list(matrices.torch_versions()),
            "branch": lambda: [b.branch.lstrip("R") for b in matrices.driver_branches()],
        }
        versions = listers[kind]()
        memo[kind] = max(versions, key=inv.version_tuple, default=None)
    return memo[kind]


@check(code="doctor.matrices-stale", area="doctor", needs=("matrices",))
def matrices_stale(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    newer = []
    rocm = inv.installed_rocm(facts)
    if rocm and (newest := _newest(matrices, "rocm")) and inv.older(newest, rocm):
        newer.append(f"ROCm {rocm} (newest bundled {newest})")
    for version in inv.installed_cuda(facts)[:1]:
        newest = _newest(matrices, "cuda")
        if newest and inv.older(inv.series(newest), inv.series(version)):
            newer.append(f"CUDA {version} (newest bundled {newest})")
    torch = facts.python.torch if facts.python else None
    if torch and torch.version and (newest := _newest(matrices, "torch")):
        if pep440.older(newest, torch.version.split("+")[0]):  # 2.9.0.dev1 is older than 2.9.0
            newer.append(f"PyTorch {torch.version} (newest bundled {newest})")
    driver = inv.nvidia_driver_version(facts)
    branch = inv.version_tuple(driver)[:1]
    if branch and (newest := _newest(matrices, "branch")) and inv.older(newest, str(branch[0])):
        newer.append(f"NVIDIA driver {driver} (newest bundled branch R{newest})")
    if not newer:
        return
    yield Finding(
        severity=Severity.INFO,
        title="The machine runs releases newer than gpuenv's matrices know",
        detail=f"{'; '.join(newer)}; matrices bundle {matrices.bundle.version} ({matrices.bundle.origin}).",
        fix="gpuenv matrix update --from URL  # judgements about these releases are best-effort until then",
    )
