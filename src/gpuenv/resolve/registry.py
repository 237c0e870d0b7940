"""The doctor checks, registered in one place, and the loop that runs them.

A check is a pure function ``(facts, matrices, target) -> iterable of Finding`` decorated with
``@check(code=..., area=..., needs=...)`` beside its condition in ``gpuenv/resolve/checks/<area>.py``.
``CHECK_MODULES`` below is the one explicit list of those modules (no discovery by name).
``needs`` names what the check cannot judge without: ``"matrices"``, or a facts field
(``"packages"``, ``"kernel.dkms"``, ...) that the probe may have left ``None`` (unknown); a check whose
needs are unknown is skipped rather than guessing.

The code is written once, in ``@check``: a check yields findings without one and ``run_checks``
stamps its code on them, so a check's findings all carry the code it is registered under (what
``--only``, ``--ignore`` and the planner's blocker judgement rely on). What a code means to the
rest of gpuenv is declared there too: ``blocking`` (its error form stops an install),
``noted`` (its warning form is worth reading before one), ``not_judged`` (its warning says what
could not be judged: exit 5).
"""

from __future__ import annotations

from gpuenv import import_module
from gpuenv.facts import Facts
from gpuenv.resolve.finding import Finding, Severity, Target
from gpuenv.standins.record import record, replace

TYPE_CHECKING = False  # typing's flag without importing typing or collections.abc (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from gpuenv.matrices import Matrices

    # The matrices are None when none could be read: only checks that declare needs=("matrices",)
    # may type them as Matrices, and run_checks skips those then.
    CheckFunc = Callable[[Facts, Any, Target], Iterable[Finding]]

CHECK_MODULES = (
    "platform",
    "kernel",
    "gpus",
    "nvidia",
    "cuda",
    "amd",
    "rocm",
    "rock",
    "stack",
    "apt",
    "torch",
    "torch_rocm",
    "doctor",
    "loader",
    "toolchain",
    "envpaths",
    "virtualization",
)

# Areas in the order the report shows them (findings.md sections).
AREAS = ("platform", "gpus", "nvidia", "amd", "stacks", "torch", "doctor")

CRASHED = "doctor.check-crashed"


@record(frozen=True)
class Check:
    code: str
    area: str
    func: CheckFunc
    needs: tuple[str, ...] = ()
    blocking: bool = False
    noted: bool = False
    not_judged: bool = False
    # The checks (by name, "nvidia.gpu_dropped") whose error, where it stands in the same report,
    # is the cause of this check's finding: it is then nested under it (Finding.cause).
    follows: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.func.__module__.rsplit('.', 1)[-1]}.{self.func.__name__}"


_REGISTERED: list[Check] = []
_loaded = False


def check(
    *,
    code: str,
    area: str,
    needs: Sequence[str] = (),
    blocking: bool = False,
    noted: bool = False,
    not_judged: bool = False,
    follows: Sequence[str] = (),
) -> Callable[[CheckFunc], CheckFunc]:
    """Register a check function under its public code (and what that code means: module doc)."""
    if area not in AREAS:
        raise ValueError(f"check {code}: unknown area {area!r}")

    def register(func: CheckFunc) -> CheckFunc:
        _REGISTERED.append(
            Check(
                code=code,
                area=area,
                func=func,
                needs=tuple(needs),
                blocking=blocking,
                noted=noted,
                not_judged=not_judged,
                follows=tuple(follows),
            )
        )
        return func

    return register


def all_checks() -> tuple[Check, ...]:
    global _loaded
    if not _loaded:
        for name in CHECK_MODULES:
            import_module(f"gpuenv.resolve.checks.{name}")
        # In CHECK_MODULES' order whichever module was imported first (the planner imports the
        # checks it cites): the report lists findings of one severity in this order.
        rank = {f"gpuenv.resolve.checks.{name}": i for i, name in enumerate(CHECK_MODULES)}
        _REGISTERED.sort(key=lambda c: rank.get(c.func.__module__, len(rank)))
        _loaded = True
    return tuple(_REGISTERED)


def code_of(func: CheckFunc) -> str:
    """The code the check ``func`` is registered under: how another layer names the finding it
    answers (a plan step's reason) without writing the code a second time."""
    for c in _REGISTERED:
        if c.func is func:
            return c.code
    raise LookupError(f"{func.__module__}.{func.__name__} is not a registered check")


def code_named(name: str) -> str:
    """The code of the check named ``name`` (``Check.name``: "torch.rocm_mismatch", its module and
    function): how a check names another module's finding, which it may not import."""
    for c in all_checks():
        if c.name == name:
            return c.code
    raise LookupError(f"{name} is not a registered check")


def cite(func: CheckFunc, text: str = "") -> str:
    """'code: text', citing the finding of the check ``func`` (the code alone without text)."""
    return f"{code_of(func)}: {text}" if text else code_of(func)


def known_codes() -> tuple[str, ...]:
    codes = dict.fromkeys(c.code for c in all_checks())
    codes[CRASHED] = None
    return tuple(codes)


def blocking_codes() -> frozenset[str]:
    """Codes whose error form blocks an install (gpuenv.resolve.blockers)."""
    return frozenset(c.code for c in all_checks() if c.blocking)


def noted_codes() -> frozenset[str]:
    """Codes whose warning form a plan notes before an install (gpuenv.resolve.blockers)."""
    return frozenset(c.code for c in all_checks() if c.noted)


def not_judged_codes() -> frozenset[str]:
    """Codes that say what could not be judged: a release, OS or GPU the matrices do not know, or
    facts that do not say (gpuenv.resolve.report: no all-clear, exit 5)."""
    return frozenset(c.code for c in all_checks() if c.not_judged)


def area_of(code: str) -> str:
    for c in all_checks():
        if c.code == code:
            return c.area
    return "doctor"


def unknown_codes(codes: Iterable[str]) -> list[str]:
    known = set(known_codes())
    return [c for c in codes if c not in known]


def _unknown_need(facts: Facts, matrices: object, needs: tuple[str, ...]) -> str | None:
    for need in needs:
        if need == "matrices":
            if matrices is None:
                return need
            continue
        value: object = facts
        for part in need.split("."):
            value = getattr(value, part, None)
            if value is None:
                return need
    return None


def run_checks(
    facts: Facts,
    matrices: Matrices | None,
    target: Target,
    only: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> list[Finding]:
    """Run every registered check (or only the named codes) and return the findings, errors
    first. A check that raises becomes a ``doctor.check-crashed`` warning; the others still run.
    Unknown codes in ``only``/``ignore`` raise ValueError (a usage error for the CLI)."""
    bad = unknown_codes([*only, *ignore])
    if bad:
        raise ValueError(f"unknown check code(s): {', '.join(bad)} (see `gpuenv doctor --list`)")
    wanted = set(only)
    skip = set(ignore)
    findings: list[Finding] = []
    for c in all_checks():
        if wanted and c.code not in wanted:
            continue
        if c.code in skip or _unknown_need(facts, matrices, c.needs):
            continue
        try:
            for f in c.func(facts, matrices, target):
                findings.append(_stamped(f, c))
        except Exception as exc:  # a bug in one check must not hide the others' results
            if CRASHED in skip:
                continue
            findings.append(
                Finding(
                    code=CRASHED,
                    severity=Severity.WARNING,
                    title=f"The {c.code} check did not complete",
                    detail=f"check {c.name} raised {type(exc).__name__}: {exc}",
                    fix="This is a bug in gpuenv: please report it with `gpuenv probe --json` attached. "
                    f"Other checks ran; rerun without it with `--ignore {c.code}`.",
                )
            )
    return sort_findings(nest(findings))


def nest(findings: list[Finding]) -> list[Finding]:
    """Each finding whose check follows another check whose error stands here, marked as that
    error's consequence (``cause``: its code), or its root's where the cause is itself one. Where
    both name GPUs, they must share one: a driver-less GPU is not the consequence of another GPU's
    trouble."""
    checks = all_checks()
    code_of_name = {c.name: c.code for c in checks}
    follows = {c.code: c.follows for c in checks if c.follows}
    if not follows:
        return findings
    errors: dict[str, list[Finding]] = {}
    for f in findings:
        if f.severity is Severity.ERROR:
            errors.setdefault(f.code, []).append(f)
    cause: dict[int, Finding] = {}
    for i, f in enumerate(findings):
        for name in follows.get(f.code, ()):
            code = code_of_name.get(name)
            if code is None:
                raise LookupError(f"{f.code} follows {name}, which is not a registered check")
            found = [c for c in errors.get(code, ()) if c is not f and _share_gpus(f, c)]
            if found:
                cause[i] = found[0]
                break
    index = {id(f): i for i, f in enumerate(findings)}
    out = []
    for i, f in enumerate(findings):
        root, seen = cause.get(i), {i}
        while root is not None and index[id(root)] in cause and index[id(root)] not in seen:
            seen.add(index[id(root)])
            root = cause[index[id(root)]]
        if root is not None and index[id(root)] in cause:
            root = None  # causes that follow each other round: none is the root, none is nested
        out.append(replace(f, cause=root.code) if root is not None else f)
    return out


def _share_gpus(f: Finding, c: Finding) -> bool:
    return not f.gpus or not c.gpus or bool(set(f.gpus) & set(c.gpus))


def _stamped(finding: Finding, c: Check) -> Finding:
    """The finding under its check's code; a check that yields another code is a bug (it would
    escape --only/--ignore and the blocker judgement), reported as doctor.check-crashed."""
    if not finding.code:
        return replace(finding, code=c.code)
    if finding.code != c.code:
        raise ValueError(f"check {c.name} yielded a finding coded {finding.code!r}, not its own {c.code!r}")
    return finding


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: f.severity.rank)  # stable: registration order within a rank
