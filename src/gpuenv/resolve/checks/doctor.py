"""The doctor about itself: what the probe could not see, and whether its matrices are stale.
(doctor.check-crashed is emitted by the registry's loop, not by a check.)"""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve import inventory as inv
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.memo import LastAsked
from gpuenv.resolve.registry import check

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
            "rocm": matrices.rocm_versions,
            "cuda": matrices.cuda_versions,
            "torch": lambda: list(matrices.torch_versions()),
            "branch": lambda: [b.branch.lstrip("R") for b in matrices.driver_branches()],
        }
        versions = listers[kind]()
        memo[kind] = max(versions, key=inv.version_tuple, default=None)
    return memo[kind]


def _newer_than_bundle(facts: Facts, matrices: Matrices) -> list[str]:
    """What the machine runs that is newer than every release of its kind the bundle knows, in
    words ("ROCm 10.2.0 (newest bundled 10.1.0)"); shared by doctor.matrices-stale and
    matrices.stale."""
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
        from gpuenv.standins import pep440  # only a machine with torch compares its version

        if pep440.older(newest, torch.version.split("+")[0]):  # 2.9.0.dev1 is older than 2.9.0
            newer.append(f"PyTorch {torch.version} (newest bundled {newest})")
    driver = inv.nvidia_driver_version(facts)
    branch = inv.version_tuple(driver)[:1]
    if branch and (newest := _newest(matrices, "branch")) and inv.older(newest, str(branch[0])):
        newer.append(f"NVIDIA driver {driver} (newest bundled branch R{newest})")
    return newer


@check(code="doctor.matrices-stale", area="doctor", needs=("matrices",))
def matrices_stale(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    newer = _newer_than_bundle(facts, matrices)
    if not newer:
        return
    yield Finding(
        severity=Severity.INFO,
        title="The machine runs releases newer than gpuenv's matrices know",
        detail=f"{'; '.join(newer)}; matrices bundle {matrices.bundle.version} ({matrices.bundle.origin}).",
        fix="gpuenv matrix update --from URL  # judgements about these releases are best-effort until then",
    )


# A bundle this many days older than the probe, on a machine that runs something newer than it knows,
# is a warning (#42): vendors ship a ROCm, CUDA or PyTorch release every few months, so by then the
# newer release is likely one whose data the bundle lacks, and the judgement rests on guesses.
STALE_DAYS = 120


@check(code="matrices.stale", area="doctor", needs=("matrices",))
def bundle_stale(facts: Facts, matrices: Matrices, target: Target) -> Iterator[Finding]:
    """The bundle is older than STALE_DAYS at the time of the probe (facts.collected_at: a facts
    file is judged as of its own day) and the machine runs something newer than it knows. A probe
    without a date leaves the age unknown: then doctor.matrices-stale alone speaks."""
    newer = _newer_than_bundle(facts, matrices)
    if not newer:
        return  # the usual case, asked first: the age needs datetime (~0.7 ms of imports)
    day = (facts.collected_at or "")[:10]
    age = matrices.bundle.age_days(day)
    if age is None or age <= STALE_DAYS:
        return
    yield Finding(
        severity=Severity.WARNING,
        title=f"gpuenv's matrices are {age} days old and this machine runs releases they do not know",
        detail=f"matrices bundle {matrices.bundle.version} ({matrices.bundle.origin}), dated "
        f"{matrices.bundle.dated()}, {age} days before this probe ({day}); newer here: {'; '.join(newer)}. "
        "Findings about these releases rest on older data.",
        fix="gpuenv matrix update --from URL --sha256 SUM (a newer bundle), or a newer gpuenv; "
        "gpuenv matrix show says what the bundle knows",
    )
