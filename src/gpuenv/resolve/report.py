"""The doctor's result: findings about one machine against one target (contract gpuenv.report/1).

``exit_code()`` is the one place where severities become an exit status.
"""

from __future__ import annotations

from gpuenv.exitcodes import Exit
from gpuenv.facts import Facts
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.resolve.registry import CRASHED, not_judged_codes, run_checks, sort_findings
from gpuenv.resolve.target import TargetError, basis, effective_target
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from gpuenv.matrices import Matrices

SCHEMA = "gpuenv.report/1"



@record(frozen=True)
class Report:
    facts_digest: str
    target: Target
    findings: tuple[Finding, ...]
    matrices: dict[str, str] | None = None  # {"version", "origin", "path"} of the bundle used
    source: str | None = None  # facts file, sysroot or "live" (set for multi-file runs)

    def summary(self) -> dict[str, int]:
        """Findings by severity; one that follows from another (``cause``) is counted apart, under
        "consequences" (left out when none): one cause, one error."""
        counts = {s.value: 0 for s in Severity}
        consequences = 0
        for f in self.findings:
            if f.cause:
                consequences += 1
            else:
                counts[f.severity.value] += 1
        if consequences:
            counts["consequences"] = consequences
        return counts

    def unjudged(self) -> tuple[Finding, ...]:
        """The findings that say what could not be judged: a stack release, an OS or a GPU the
        matrices do not know, or facts that do not say (the checks declared not_judged). Nothing
        wrong was found there, and nothing is known to be fine either: while one stands the report
        is no all-clear and does not exit 0 (Exit.NOT_JUDGED)."""
        unknown = not_judged_codes()
        return tuple(f for f in self.findings if f.code in unknown and f.severity is not Severity.INFO)

    def exit_code(self) -> Exit:
        if any(f.severity is Severity.ERROR for f in self.findings):
            return Exit.PROBLEMS
        return Exit.NOT_JUDGED if self.unjudged() else Exit.OK

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "schema": SCHEMA,
            "facts_digest": self.facts_digest,
            "target": target_dict(self.target),
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
        }
        if self.matrices is not None:
            out["matrices"] = self.matrices
        if self.source is not None:
            out["source"] = self.source
        return out


def target_dict(target: Target) -> dict[str, str | None]:
    out = {"stack": target.stack, "version": target.version, "torch": target.torch, "basis": basis(target)}
    installed = target.extra.get("installed")
    if installed and installed != target.version:
        # A release the matrices lack (6.4.4): what is installed, beside the release it was judged
        # as (version; null when it could not be judged at all).
        out["installed"] = installed
    # install auto's release behind an unconfirmed key, or a newer one that fits behind one (#42).
    for said in ("key", "newer"):
        if target.extra.get(said):
            out[said] = target.extra[said]
    return out


def error_dict(source: str, message: str) -> dict[str, str]:
    """The report line of a facts file that could not be read (multi-file runs)."""
    return {"schema": SCHEMA, "source": source, "error": message}


def diagnose(
    facts: Facts,
    matrices: Matrices | None,
    target: Target,
    only: Sequence[str] = (),
    ignore: Sequence[str] = (),
    source: str | None = None,
) -> Report:
    """Judge one machine: resolve the target, run the checks, wrap the result.
    Raises ValueError for an unknown target version or check code (usage errors)."""
    crashed: list[Finding] = []
    try:
        effective = effective_target(facts, matrices, target) if matrices is not None else target
    except TargetError:
        raise
    except Exception as exc:  # odd facts must not crash doctor: judge without a stack instead
        effective = Target(torch=target.torch, extra={"basis": "none"})
        crashed.append(
            Finding(
                code=CRASHED,
                severity=Severity.WARNING,
                title="Choosing the target to judge against did not complete",
                detail=f"effective_target raised {type(exc).__name__}: {exc}; stack checks judged without a target.",
                fix="This is a bug in gpuenv: please report it with `gpuenv probe --json` attached.",
            )
        )
    findings = sort_findings([*run_checks(facts, matrices, effective, only=only, ignore=ignore), *crashed])
    bundle = None
    if matrices is not None:
        b = matrices.bundle
        bundle = {"version": b.version, "origin": b.origin, "path": b.path}
    return Report(
        facts_digest=facts.digest(),
        target=effective,
        findings=tuple(findings),
        matrices=bundle,
        source=source,
    )
