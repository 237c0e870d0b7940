"""One handler per step kind, each holding its ``done`` and its ``act``.

A new step kind is a Kind in gpuenv.plan.plan and a Handler here, listed in HANDLERS.
"""

from __future__ import annotations

from gpuenv.execute.context import Context
from gpuenv.execute.steps.apt import AptInstall, AptPurge, AptUpdate, allowed_by, sim_args
from gpuenv.execute.steps.base import Handler
from gpuenv.execute.steps.commands import Command, Notice, PipInstall
from gpuenv.execute.steps.files import RemoveFile, WriteFile
from gpuenv.execute.steps.groups import GroupAdd
from gpuenv.execute.steps.keys import AptKey
from gpuenv.plan.plan import Kind, Plan, Step

_ALL: tuple[Handler, ...] = (
    AptInstall(), AptPurge(), AptUpdate(), WriteFile(), RemoveFile(), AptKey(), GroupAdd(),
    Command(), PipInstall(), Notice(),
)  # fmt: skip
HANDLERS: dict[Kind, Handler] = {kind: h for h in _ALL for kind in h.kinds}
_NONE = Handler()

__all__ = ["HANDLERS", "Handler", "act", "allowed_by", "done", "sim_args"]


def done(ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
    """Read-only: whether the machine is in the step's end state already, and what was seen."""
    return HANDLERS.get(step.kind, _NONE).done(ctx, plan, step)


def act(ctx: Context, step: Step) -> str:
    """Make it so; what was done, in a few words."""
    return HANDLERS.get(step.kind, _NONE).act(ctx, step)
