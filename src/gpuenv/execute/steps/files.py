"""File steps: an apt source, an apt pin or another file written from the plan's content, and a
file removed (a symlink itself, never its target)."""

from __future__ import annotations

from gpuenv.execute.context import Context, path_of
from gpuenv.execute.steps.base import Handler
from gpuenv.plan.plan import FILE_KINDS, Kind, Plan, Step


class WriteFile(Handler):
    kinds = FILE_KINDS

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        path = path_of(step)
        same = ctx.files.read(path) == (step.content or "").encode() and ctx.files.mode(path) == step.mode
        return (same, "up to date" if same else ("differs" if ctx.files.exists(path) else "absent"))

    def act(self, ctx: Context, step: Step) -> str:
        ctx.files.write(path_of(step), (step.content or "").encode(), step.mode or "0644")
        return f"wrote {step.path}"


class RemoveFile(Handler):
    kinds = (Kind.REMOVE_FILE,)

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        gone = not ctx.files.exists(path_of(step))
        return (gone, "absent" if gone else "present")

    def act(self, ctx: Context, step: Step) -> str:
        ctx.files.remove(path_of(step))
        return f"removed {step.path}"
