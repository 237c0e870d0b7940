"""What a plan says before it changes anything: the doctor's findings, judged against the
install target. The planner uses nothing else, so a plan and `gpuenv doctor --target` agree.

A blocker is an error the install itself cannot fix: it cannot change the CPU architecture
(platform.arch-unsupported), a GPU the release does not support, or a Secure Boot key that
needs someone at the console. An error the plan does fix is no blocker (nvidia.driver-missing:
it installs the driver; nvidia.nouveau-loaded: it blacklists nouveau before its reboot; an AMD
or CUDA source with the wrong suite or no signed-by: it replaces the vendor's sources). Notes
are the warnings worth reading before an install (an iGPU ROCm may trip over, a point release
the GPU needs, a kernel series the release does not list). ``judge`` is pure.
"""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.record import record
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import run_checks
from gpuenv.resolve.target import effective_target

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.matrices import Matrices

BLOCKING = frozenset(
    {
        "platform.wsl",  # error form: a Linux kernel driver inside WSL
        "platform.container",  # error form: device nodes not mapped in
        "platform.arch-unsupported",
        "os.unsupported",
        "gpu.none",
        "amd.gpu-unsupported",
        "nvidia.gpu-dropped",
        "nvidia.module-flavor",  # error form for a target: the GPUs need both flavours
        "cuda.mixed-install",
        "dpkg.interrupted",
        "kernel.secure-boot",  # error form: a DKMS module refused; needs console access to enrol
    }
)
NOTED = frozenset(
    {
        "amd.igpu-present",
        "amd.gpu-preview",
        "amd.gpu-deprecated",
        "os.unsupported",  # warning form: a newer point release than the release lists
        "os.point-release",
        "kernel.unsupported",
        "kernel.secure-boot",  # warning form: keep the DKMS signing key enrolled
        "kernel.headers-missing",
        "stack.both-installed",
    }
)


_JUDGED = tuple(sorted(BLOCKING | NOTED))


@record(frozen=True)
class Judgement:
    blockers: tuple[Finding, ...]
    notes: tuple[Finding, ...]


def judge(facts: Facts, matrices: Matrices, target: Target) -> Judgement:
    """The blocking errors and the noteworthy warnings for installing ``target`` here."""
    # Only the checks whose codes can block or be noted: each check yields findings of its own
    # code alone (tests/test_checks_catalog.py holds every check to that), so the others could
    # not change the judgement.
    findings = run_checks(facts, matrices, effective_target(facts, matrices, target), only=_JUDGED)
    blocking = tuple(f for f in findings if f.severity is Severity.ERROR and f.code in BLOCKING)
    notes = tuple(f for f in findings if f.severity is not Severity.INFO and f.code in NOTED and f not in blocking)
    return Judgement(blocking, notes)

