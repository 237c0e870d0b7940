"""Whether a saved plan may be applied to this machine now: the one admission `apply` and
`apply --dry-run` share.

A saved plan is untrusted input: reviewed, then applied later, maybe by a script. Nothing the
file says is taken on its word:

- as root, a file that an account other than root (and the sudo user) could write is refused;
- the machine now must be the machine the plan was made from (``stale``);
- the plan gpuenv makes now, from the facts probed now and the request the file records, must
  be the file's plan to the byte (``edited``): a step, path, content, key or command changed
  after planning is refused, and --force does not override it;
- with --yes, --expect must name the request the file records (``expected``).

Each refusal is a ``Refusal`` carrying its exit code and one line that says nothing was changed.
"""

from __future__ import annotations

import os

from gpuenv.exitcodes import Exit

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:

    from gpuenv.facts import Facts
    from gpuenv.matrices import Matrices
    from gpuenv.plan.plan import Plan
    from gpuenv.plan.repos import Repos


class Refusal(Exception):
    """A plan not admitted (or a command stopped), with the exit code to leave with."""

    def __init__(self, code: Exit, message: str) -> None:
        super().__init__(message)
        self.code = code


def trusted_uids() -> frozenset[int]:
    """root, and the account that ran sudo (it could become root anyway)."""
    uids = {0}
    sudo_uid = os.environ.get("SUDO_UID", "")
    if sudo_uid.isdigit():
        uids.add(int(sudo_uid))
    return frozenset(uids)


def load(path: str) -> Plan:
    """The saved plan at ``path``; as root, only one that no other account could have changed.
    A file that is not a plan is a usage error (exit 2), one line."""
    from gpuenv.plan import planfile
    from gpuenv.plan.plan import PlanError

    if os.geteuid() == 0:
        from gpuenv.trust import untrusted

        why = untrusted(path, trusted_uids=trusted_uids())
        if why:
            raise Refusal(
                Exit.REFUSED,
                f"refusing the plan {path}: {why}. As root, gpuenv applies only a plan that no other account "
                "could have changed (move it somewhere only root, or you, can write). Nothing was changed.",
            )
    try:
        return planfile.load(path)
    except PlanError as exc:
        raise Refusal(Exit.USAGE, str(exc)) from None


def already_applied(plan: Plan, finished: bool, journal_digest: str | None) -> bool:
    """The journal (its state: finished, and the digest of its plan) says this very plan ran to
    its end: a second apply changes nothing."""
    from gpuenv.plan import planfile

    return finished and journal_digest == planfile.digest(plan)


def stale(plan: Plan, facts_now: Facts) -> None:
    """Refused when this machine is not the one the plan was made from."""
    from gpuenv.plan.staleness import facts_digest

    now = facts_digest(facts_now)
    if now != plan.facts_digest:
        raise Refusal(
            Exit.REFUSED,
            "stale plan: this machine changed since the plan was made "
            f"(facts now {now[:19]}…, plan {plan.facts_digest[:19]}…). Nothing was changed. "
            "Make a new plan: gpuenv plan ... --out FILE",
        )


def edited(plan: Plan, facts_now: Facts, matrices: Matrices, repos: Repos) -> None:
    """Refused unless the plan gpuenv makes now, from the facts probed now and the request the
    file records, is the file's plan to the byte (its creation time aside)."""
    from gpuenv import __version__
    from gpuenv.plan import planfile, planner
    from gpuenv.plan.plan import PlanError
    from gpuenv.standins.record import replace

    if plan.request is None:
        raise Refusal(
            Exit.REFUSED,
            "this plan records no request (made by gpuenv 0.1.0): make a new plan with gpuenv plan ... --out FILE",
        )
    req = replace(plan.request, created_at=plan.created_at, gpuenv_version=__version__)
    try:
        fresh = planner.make_plan(facts_now, matrices, repos, req)
    except PlanError:
        fresh = None
    if fresh is None or planfile.digest(fresh) != planfile.digest(plan):
        raise Refusal(
            Exit.REFUSED,
            "this plan is not the one gpuenv makes from this machine and the request it records: the file "
            "was edited after it was made, or gpuenv or its matrices changed since. "
            "Nothing was changed. Make a new plan (gpuenv plan ... --out FILE) and review it.",
        )


def admit(plan: Plan, facts_now: Facts, matrices: Matrices, repos: Repos) -> None:
    """The machine checks of a saved plan, in the order they are said: stale, then edited."""
    stale(plan, facts_now)
    edited(plan, facts_now, matrices, repos)


def request_line(plan: Plan) -> str:
    """What the plan was asked to do, as `gpuenv plan` prints it for --expect."""
    return plan.request.line() if plan.request else f"{plan.action.value} {plan.target.stack}"


def expected(plan: Plan, expect: str) -> bool:
    """Whether --expect names what the saved plan was asked to do, word for word."""
    if plan.request:
        return plan.request.named_by(expect)
    return " ".join(expect.split()) == request_line(plan)
