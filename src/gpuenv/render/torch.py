"""Human rendering of the torch wheel choice (``gpuenv torch``)."""

from __future__ import annotations

from gpuenv.exitcodes import Exit
from gpuenv.resolve.torchpick import Choice

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.render.term import Term


def lines(choice: Choice) -> list[tuple[str, str]]:
    """(style, text) lines; pure, so it is tested without a terminal."""
    out: list[tuple[str, str]] = []
    if choice.exit == Exit.USAGE:
        out.append(("bold yellow", "Say which GPUs PyTorch is for."))
    elif choice.variant is None:
        out.append(("bold red", "No official PyTorch wheel fits this machine."))
    else:
        out.append(("bold", f"PyTorch {choice.torch} ({choice.variant})"))
        out.append(("", ""))
        out.append(("green", f"  {choice.pip}"))
        out.append(("green", f"  {choice.uv}"))
        if choice.alternatives:
            out.append(("dim", f"  also fits: {', '.join(choice.alternatives)}"))
    if choice.amd is not None:
        a = choice.amd
        out.append(("", ""))
        out.append(
            (
                "bold",
                f"AMD's own wheels for the installed ROCm {a.rocm} (no PyTorch index is built for it)"
                + ("" if a.confirmed else ", unconfirmed")
                + ":",
            )
        )
        out.append(("green", f"  {a.pip}"))
        if a.also:
            out.append(("dim", f"  AMD also lists torch {', '.join(a.also)}"))
        out.append(("dim", f"  source: {a.source}"))
    if choice.unofficial is not None:
        u = choice.unofficial
        out.append(("", ""))
        out.append(
            ("bold yellow", f"Unofficial route for {u.gfx} (not supported by AMD; use at your own risk):")
        )
        if u.pip:
            out.append(("yellow", f"  {u.pip}"))
            out.append(("yellow", f"  export {u.env}   # then run Python: the GPU runs {u.runs_as} code"))
        else:
            out.append(("yellow", f"  export {u.env}   # no bundled wheel is built for {u.runs_as} either"))
        out.append(("dim", f"  risk: {u.risk}"))
        out.append(("dim", f"  source: {u.source}"))
    out.append(("", ""))
    out.append(("bold", "Why:"))
    out.extend(("", f"  - {r}") for r in choice.reasons)
    return out


def render_choice(choice: Choice, term: Term) -> None:
    """On a ``gpuenv.render.term.Term``."""
    for style, text in lines(choice):
        term.line((text, style))
