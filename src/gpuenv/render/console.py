"""The rich Console every human output uses: colour only on a terminal, never with NO_COLOR."""

from __future__ import annotations

import os
import sys


def make_console(stderr: bool = False):
    """A rich Console for stdout (or stderr), honouring NO_COLOR and non-terminal output."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    no_color = "NO_COLOR" in os.environ
    is_tty = hasattr(stream, "isatty") and stream.isatty()
    return Console(
        file=stream,
        no_color=no_color,
        color_system=None if (no_color or not is_tty) else "auto",
        highlight=False,
        soft_wrap=not is_tty,
    )
