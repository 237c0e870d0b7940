"""The group-add step: the plan's user in the GPU groups (render, video), made when missing."""

from __future__ import annotations

from gpuenv.execute.context import Context
from gpuenv.execute.steps.base import Handler
from gpuenv.plan.plan import Kind, Plan, Step


def group_members(text: bytes) -> dict[str, tuple[str, ...]]:
    """/etc/group's members by group name."""
    out: dict[str, tuple[str, ...]] = {}
    for line in text.decode("utf-8", "replace").splitlines():
        parts = line.split(":")
        if len(parts) >= 4:
            out[parts[0]] = tuple(u for u in parts[3].split(",") if u)
    return out


class GroupAdd(Handler):
    kinds = (Kind.GROUP_ADD,)

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        members = group_members(ctx.files.read("/etc/group") or b"")
        missing = [g for g in step.groups or () if step.user not in members.get(g, ())]
        return (not missing, "member already" if not missing else "not yet in " + ",".join(missing))

    def act(self, ctx: Context, step: Step) -> str:
        members = group_members(ctx.files.read("/etc/group") or b"")
        for g in step.groups or ():
            if g not in members:
                ctx.runner.run(["groupadd", "--system", g])
        ctx.runner.run(["usermod", "-a", "-G", ",".join(step.groups or ()), step.user or ""])
        return f"{step.user} added to {','.join(step.groups or ())}"
