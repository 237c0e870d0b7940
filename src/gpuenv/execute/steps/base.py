"""The shape every step kind's handler has: ``done`` (read-only: is the machine already in the
step's end state?) and ``act`` (make it so), side by side."""

from __future__ import annotations

from gpuenv.execute.context import Context
from gpuenv.plan.plan import Kind, Plan, Step


class Handler:
    """A kind without a handler of its own: never done, and acting on it does nothing."""

    kinds: tuple[Kind, ...] = ()

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        return False, "runs"

    def act(self, ctx: Context, step: Step) -> str:
        return ""
