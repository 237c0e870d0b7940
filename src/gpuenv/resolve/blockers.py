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
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import blocking_codes, noted_codes, run_checks
from gpuenv.resolve.target import effective_target
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.matrices import Matrices


@record(frozen=True)
class Judgement:
    blockers: tuple[Finding, ...]
    notes: tuple[Finding, ...]


def judge(facts: Facts, matrices: Matrices, target: Target) -> Judgement:
    """The blocking errors and the noteworthy warnings for installing ``target`` here."""
    # Only the checks whose codes can block or be noted: each check yields findings of its own
    # code alone (tests/test_checks_catalog.py holds every check to that), so the others could
    # not change the judgement.
    # Which codes block and which are noted is declared on each check (@check(blocking=, noted=)).
    blocks, noted = blocking_codes(), noted_codes()
    judged = tuple(sorted(blocks | noted))
    findings = run_checks(facts, matrices, effective_target(facts, matrices, target), only=judged)
    blocking = tuple(f for f in findings if f.severity is Severity.ERROR and f.code in blocks)
    notes = tuple(f for f in findings if f.severity is not Severity.INFO and f.code in noted and f not in blocking)
    return Judgement(blocking, notes)

