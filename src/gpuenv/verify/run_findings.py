"""Findings about the run itself: it could not start, timed out, stopped before its end, or failed on exit."""

from __future__ import annotations

import signal

from gpuenv.resolve.finding import Finding, Severity
from gpuenv.verify import codes
from gpuenv.verify.records import str_or_none

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from gpuenv.verify.results import Outcome


def run_findings(
    outcome: Outcome, records: list[dict[str, Any]], other: list[str], by_step: dict[str, list[dict[str, Any]]]
) -> list[Finding]:
    py = outcome.python
    begun = [str_or_none(r.get("what")) for r in by_step.get("begin", [])]
    step = begun[-1] if begun else None
    if outcome.start_error is not None:
        return [_crashed(py, f"{py} could not be started: {outcome.start_error}.", None)]
    if outcome.timed_out:
        where = f"during: {step}" if step else "before the script's first step"
        return [
            Finding(
                code=codes.TIMEOUT,
                severity=Severity.ERROR,
                title=f"The check did not finish within {outcome.timeout:g} s ({step or 'start-up'})",
                detail=f"{py} was stopped after {outcome.timeout:g} s {where}; a hung GPU or driver "
                "initialisation is the usual cause." + _stderr_tail(outcome.stderr),
                fix="Look at the GPU and driver state: `nvidia-smi` or `rocm-smi`, and `sudo dmesg | tail -50` "
                "(Xid, amdgpu or GPU reset messages).\n"
                "A GPU stuck in a bad state usually needs a reboot.\n"
                "If the first run is only slow (a cold disk, PTX JIT compilation), allow more time: "
                "gpuenv verify --timeout 600",
            )
        ]
    if not records:
        said = f"; it printed: {other[0][:200]!r}" if other else "; it printed nothing"
        return [
            _crashed(
                py,
                f"{py} did not run the verify script ({_status(outcome.returncode)}{said})."
                + _stderr_tail(outcome.stderr),
                None,
            )
        ]
    if "done" not in by_step:
        return [
            _crashed(
                py,
                f"{py} ended {_status(outcome.returncode)} during: {step or 'start-up'}; the steps before "
                "it are judged below." + _stderr_tail(outcome.stderr),
                step,
            )
        ]
    if outcome.returncode not in (0, None):
        return [
            Finding(
                code=codes.UNCLEAN_EXIT,
                severity=Severity.WARNING,
                title="The interpreter failed on exit after every check had run",
                detail=f"{py} finished the checks, then exited {_status(outcome.returncode)}."
                + _stderr_tail(outcome.stderr),
                fix=f"Every step completed; run `{py} -c 'import torch; torch.zeros(1).cuda()'` to see the "
                "exit-time failure (often a driver or library teardown problem).",
            )
        ]
    return []


def _status(returncode: int | None) -> str:
    if returncode is None:
        return "without an exit status"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"with exit status {returncode}"


def _stderr_tail(stderr: str, lines: int = 3) -> str:
    tail = [line.strip() for line in stderr.strip().splitlines() if line.strip()][-lines:]
    return (" Its last output on stderr: " + " | ".join(t[:300] for t in tail)) if tail else ""


def _crashed(py: str, detail: str, step: str | None) -> Finding:
    return Finding(
        code=codes.CRASHED,
        severity=Severity.ERROR,
        title="The check did not run to its end" + (f" (it stopped during: {step})" if step else ""),
        detail=detail,
        fix=f"Run the step by hand to see the failure: {py} -c 'import torch; print(torch.cuda.is_available())'\n"
        f"A crash in a matmul on ROCm is often a GPU the build has no kernels for: see {codes.ARCH_MISSING} "
        "and gpuenv torch.\n"
        "gpuenv doctor    # the machine's driver and stack",
    )

