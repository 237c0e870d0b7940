"""Styled lines on a terminal, for the outputs that are lines of text (doctor, verify, torch).

rich stays for what needs layout (tables: probe, matrix, report; plans and their progress), but
importing it costs more than the whole of a doctor run (about 40 ms here), and a line needs
only a colour. Colour only on a terminal, never with NO_COLOR (https://no-color.org) or
TERM=dumb; no wrapping (the terminal wraps). Text is never read as markup, and control
characters in it are shown escaped (``\\x1b``): a facts file or a sysroot is untrusted, and a
GPU name holding an escape sequence must not drive the terminal that shows it.
"""

from __future__ import annotations

import os
import sys

# C0 controls but tab and newline, DEL and the C1 controls (which terminals also obey).
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}
_SGR = {"bold": "1", "dim": "2", "underline": "4", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


class Term:
    """Lines for one stream; ``color`` None decides as above (on only for a terminal)."""

    def __init__(self, stream=None, color: bool | None = None):
        self.stream = stream if stream is not None else sys.stdout
        if color is None:
            isatty = getattr(self.stream, "isatty", None)
            color = (
                bool(isatty and isatty())
                and "NO_COLOR" not in os.environ
                and os.environ.get("TERM") != "dumb"
            )
        self.color = color

    def style(self, text: str, style: str) -> str:
        """``text`` in ``style`` (words of _SGR: "bold red"); the text itself when colour is off."""
        text = text.translate(_CONTROLS)
        if not self.color or not style or not text:
            return text
        codes = ";".join(_SGR[word] for word in style.split())
        return f"\x1b[{codes}m{text}\x1b[0m"

    def line(self, *parts: str | tuple[str, str]) -> None:
        """One line of parts: plain strings, or (text, style) pairs."""
        text = "".join(p.translate(_CONTROLS) if isinstance(p, str) else self.style(*p) for p in parts)
        self.stream.write(text + "\n")
