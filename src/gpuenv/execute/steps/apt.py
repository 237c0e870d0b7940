"""apt steps: install, purge (by name, or the stack's orphans by autoremove) and update.

Every change apt would make is simulated first, and one that removes a package the plan does
not name (collateral) is refused unless --allow-removal names it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpuenv.execute.context import Context, Refused, apt_result, collateral_message
from gpuenv.execute.runner import CommandError
from gpuenv.execute.steps.base import Handler
from gpuenv.exitcodes import Exit
from gpuenv.plan.plan import Kind, Plan, Step

# Keep the files dpkg's conffile prompts would ask about: what was there stays, new ones are added.
_APT_OPTS = ["-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"]


def sim_args(step: Step) -> list[str] | None:
    """The apt-get arguments whose simulation shows what the step would do (None: not apt's)."""
    if step.kind is Kind.APT_PURGE:
        return ["autoremove", "--purge"] if step.autoremove else ["purge", *(step.packages or ())]
    if step.kind is Kind.APT_INSTALL:
        return ["install", *(step.packages or ())]
    return None


def allowed_by(step: Step, pkg: str) -> bool:
    """Whether an autoremove step's patterns claim ``pkg`` for this stack ("!PATTERN" excludes)."""
    pats = step.allow or ()
    if any(p.startswith("!") and re.fullmatch(p[1:], pkg) for p in pats):
        return False
    return any(not p.startswith("!") and re.fullmatch(p, pkg) for p in pats)


def _status(ctx: Context, step: Step) -> Callable[[str], None] | None:
    return (lambda line: ctx.emit("apt-status", step, line)) if ctx.on_event else None


def _by_name(ctx: Context, step: Step, verb: str) -> str:
    """apt-get install|purge of the step's packages, after simulating that very command."""
    sim = ctx.simulate(sim_args(step) or [])
    if sim.error or sim.missing:
        raise CommandError(apt_result(sim))
    collateral = sim.collateral(step.packages or (), ctx.allow)
    if collateral:
        raise Refused(Exit.REFUSED, collateral_message(step, collateral))
    ctx.runner.run(["apt-get", verb, "-y", "-q", *_APT_OPTS, *(step.packages or ())], on_status=_status(ctx, step))
    ctx.forget()
    return f"{verb}ed " + " ".join(step.packages or ())


class AptInstall(Handler):
    kinds = (Kind.APT_INSTALL,)

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        missing = [p for p in step.packages or () if p not in ctx.installed()]
        return (not missing, "installed" if not missing else "to install: " + " ".join(missing))

    def act(self, ctx: Context, step: Step) -> str:
        return _by_name(ctx, step, "install")


class AptPurge(Handler):
    kinds = (Kind.APT_PURGE,)

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        if step.autoremove:
            sim = ctx.simulate(["autoremove", "--purge"])
            mine = [p for p in sim.removes if allowed_by(step, p)]
            return (not mine, "no orphan of this stack" if not mine else "orphans: " + " ".join(mine))
        present = [p for p in step.packages or () if p in ctx.installed()]
        return (not present, "none installed" if not present else "to purge: " + " ".join(present))

    def act(self, ctx: Context, step: Step) -> str:
        if not step.autoremove:
            return _by_name(ctx, step, "purge")
        # autoremove, narrowed to this stack's packages
        sim = ctx.simulate(["autoremove", "--purge"])
        mine = [p for p in sim.removes if allowed_by(step, p) or p in ctx.allow]
        kept = [p for p in sim.removes if p not in mine]
        if not mine:
            return "nothing to remove"
        # Purged by exact name, after simulating that very command: purging an orphan can still
        # drag out a package that depends on it (one of those kept), which is collateral.
        check = ctx.simulate(["purge", *mine])
        if check.error or check.missing:
            raise CommandError(apt_result(check))
        collateral = check.collateral(mine, ctx.allow)
        if collateral:
            raise Refused(Exit.REFUSED, collateral_message(step, collateral))
        ctx.runner.run(["apt-get", "purge", "-y", "-q", *_APT_OPTS, *mine], on_status=_status(ctx, step))
        ctx.forget()
        return "removed " + " ".join(mine) + (f"; left for you to review: {' '.join(kept)}" if kept else "")


class AptUpdate(Handler):
    kinds = (Kind.APT_UPDATE,)

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        # Needed only while an install after it still has something to install.
        later = plan.steps[plan.steps.index(step) + 1 :]
        pending = [s for s in later if s.kind is Kind.APT_INSTALL and not AptInstall().done(ctx, plan, s)[0]]
        return (
            not pending,
            "nothing left to install" if not pending else "needed by " + ", ".join(s.id for s in pending),
        )

    def act(self, ctx: Context, step: Step) -> str:
        ctx.runner.run(["apt-get", "update", "-q"])
        return "updated"
