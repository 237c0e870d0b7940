"""Command steps (a command, a pip install into the plan's venv, run as the step's user when it
names one) and the steps that only say something (a reboot to make, a check to run)."""

from __future__ import annotations

from gpuenv.execute.context import Context
from gpuenv.execute.steps.base import Handler
from gpuenv.plan.plan import Kind, Plan, Step


def _run(ctx: Context, step: Step) -> str:
    ctx.runner.run(list(step.argv or ()), user=step.user)
    return "ran " + " ".join(step.argv or ()) + (f" as {step.user}" if step.user else "")


class Command(Handler):
    kinds = (Kind.COMMAND,)

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        if step.after is not None and not set(step.after) & ctx.changed:
            return True, "nothing it follows changed"
        if step.only_if_exists and not ctx.files.exists(step.only_if_exists):
            return True, f"{step.only_if_exists} is absent"
        if step.creates and ctx.files.exists(step.creates):
            return True, f"{step.creates} exists"
        return False, "runs"

    def act(self, ctx: Context, step: Step) -> str:
        return _run(ctx, step)


class PipInstall(Handler):
    """Always run: pip itself says when the venv has the wheel already."""

    kinds = (Kind.PIP_INSTALL,)

    def act(self, ctx: Context, step: Step) -> str:
        return _run(ctx, step)


class Notice(Handler):
    """A reboot or a check: nothing for apply to do."""

    kinds = (Kind.REBOOT, Kind.CHECK)

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        return True, ""
