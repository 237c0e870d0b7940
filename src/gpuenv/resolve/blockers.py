"""Which findings stop an install before it starts: the planner refuses a plan while any remains.

A blocker is an error the install itself cannot fix (it would install a driver over a missing
one, so nvidia.driver-missing is no blocker; it cannot change the CPU architecture, so
platform.arch-unsupported is). ``blockers()`` is pure: facts, matrices and target in, findings out.
"""

from __future__ import annotations

from gpuenv.facts import Facts
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import run_checks
from gpuenv.resolve.target import effective_target

BLOCKING = frozenset(
    {
        "platform.wsl",  # error form: a Linux kernel driver inside WSL
        "platform.container",  # error form: device nodes not mapped in
        "platform.arch-unsupported",
        "os.unsupported",
        "gpu.none",
        "amd.gpu-unsupported",
        "nvidia.gpu-dropped",
        "nvidia.nouveau-loaded",  # the plan blacklists it, but only a reboot unloads it
        "cuda.mixed-install",
        "apt.source-mismatch",
        "apt.source-insecure",
        "dpkg.interrupted",
        "kernel.secure-boot",  # error form: a DKMS module refused; needs console access to enrol
    }
)


def blockers(facts: Facts, matrices, target: Target) -> list[Finding]:
    """Errors among BLOCKING codes for installing ``target`` here (target resolved as doctor does)."""
    effective = effective_target(facts, matrices, target)
    return [
        f
        for f in run_checks(facts, matrices, effective)
        if f.severity is Severity.ERROR and f.code in BLOCKING
    ]
