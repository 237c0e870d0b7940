"""The rich Console every human output uses: colour only on a terminal, never with NO_COLOR.

Whatever it prints, control characters in the text are shown escaped (``gpuenv.render.term.inert``):
strings before layout, and every rendered segment but rich's own control codes after it (text
that reached a table or a ``Text`` some other way). Reports, facts and plans come from files and
other hosts: a finding title holding ``\x1b]0;...\x07`` or ``\x1b[2J`` must not drive the
terminal that shows it, and rich itself drops only a few C0 characters."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    # Console re-exported (as Console) for the type hints of commands/, which never import rich.
    from rich.console import Console as Console
    from rich.console import ConsoleOptions, RenderableType
    from rich.text import Text


def make_console(stderr: bool = False) -> Console:
    """A rich Console for stdout (or stderr), honouring NO_COLOR and non-terminal output."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    no_color = "NO_COLOR" in os.environ
    is_tty = hasattr(stream, "isatty") and stream.isatty()
    from rich.segment import Segment

    from gpuenv.render.term import inert

    class _Console(Console):
        def render_str(self, text: str, **kwargs: Any) -> Text:
            return super().render_str(inert(text), **kwargs)

        def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterator[Segment]:
            for segment in super().render(renderable, options):
                yield segment if segment.control else Segment(inert(segment.text), segment.style)

        def on_broken_pipe(self) -> None:
            # rich's own answer is exit status 1 ("problems found"): let the command line give
            # the closed pipe's 141, as for every other output.
            self.quiet = True
            raise BrokenPipeError

    return _Console(
        file=stream,
        no_color=no_color,
        color_system=None if (no_color or not is_tty) else "auto",
        highlight=False,
        soft_wrap=not is_tty,
    )
