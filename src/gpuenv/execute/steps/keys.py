"""The apt-key step: the vendor's keyring, verified against the pinned fingerprint (the fetching
and verifying are gpuenv.execute.keys')."""

from __future__ import annotations

from gpuenv.execute import keys
from gpuenv.execute.context import Context, path_of
from gpuenv.execute.steps.base import Handler
from gpuenv.plan.plan import Kind, Plan, Step


class AptKey(Handler):
    kinds = (Kind.APT_KEY,)

    def done(self, ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
        return keys.keyring_state(ctx, plan, step)

    def act(self, ctx: Context, step: Step) -> str:
        data = ctx.keys.get(step.id)
        if data is None:  # --resume after the preflight: fetch and verify again
            data = ctx.keys[step.id] = keys.fetch_key(ctx, step, ctx.fetch)
        ctx.files.write(path_of(step), data, step.mode or "0644")
        return f"wrote {step.path} ({step.fingerprint})"
