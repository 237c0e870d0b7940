"""Styled lines on a terminal, for the outputs that are lines of text (doctor, verify, torch).

rich stays for what needs layout (tables: probe, matrix, report; plans and their progress), but
importing it costs more than the whole of a doctor run (about 40 ms here), and a line needs
only a colour. Colour only on a terminal, never with NO_COLOR (https://no-color.org) or
TERM=dumb. On a terminal a long line is wrapped at spaces (the terminal itself would cut words
in two); piped, a line stays whole. Text is never read as markup, and control
characters in it are shown escaped (``\\x1b``): a facts file or a sysroot is untrusted, and a
GPU name holding an escape sequence must not drive the terminal that shows it.
"""

from __future__ import annotations

import os
import sys

from gpuenv.startup import columns

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import TextIO

# C0 controls but tab and newline, DEL and the C1 controls (which terminals also obey).
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}


def inert(text: str) -> str:
    """``text`` with its control characters shown escaped (ESC as ``\\x1b``): what every renderer
    does to text from a file, a host or a user before it reaches a terminal. Tab and newline stay."""
    return text.translate(_CONTROLS)


def markup_safe(text: object) -> str:
    """The one escape for text from facts, a host's files, a plan or a bundle where rich reads
    markup (a table cell, a printed string): controls shown escaped (``inert``) and every ``[``
    that could open a tag made literal (``rich.markup.escape``), so that ``[/bold]`` cannot crash
    the output and ``[link=...]`` cannot make a hyperlink: hyperlinks come only from gpuenv's own
    markup. Markdown and HTML renderers take ``inert`` with their own escaping."""
    from rich.markup import escape

    return escape(inert("" if text is None else str(text)))


_SGR = {"bold": "1", "dim": "2", "underline": "4", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


class Term:
    """Lines for one stream; ``color`` None decides as above (on only for a terminal)."""

    def __init__(self, stream: TextIO | None = None, color: bool | None = None, width: int | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        isatty = getattr(self.stream, "isatty", None)
        tty = bool(isatty and isatty())
        if color is None:
            color = tty and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
        self.color = color
        self.width = (columns(self.stream) if tty else 0) if width is None else width  # 0: no wrapping

    def style(self, text: str, style: str) -> str:
        """``text`` in ``style`` (words of _SGR: "bold red"); the text itself when colour is off."""
        text = text.translate(_CONTROLS)
        if not self.color or not style or not text:
            return text
        codes = ";".join(_SGR[word] for word in style.split())
        return f"\x1b[{codes}m{text}\x1b[0m"

    def line(self, *parts: str | tuple[str, str]) -> None:
        """One line of parts: plain strings, or (text, style) pairs; wrapped to ``width``."""
        pieces = [((p, "") if isinstance(p, str) else p) for p in parts]
        pieces = [(text.translate(_CONTROLS), style) for text, style in pieces]
        for row in wrap(pieces, self.width) if self.width else [pieces]:
            self.stream.write("".join(self.style(text, style) for text, style in row) + "\n")


Pieces = list[tuple[str, str]]  # (text, style)


def wrap(pieces: Pieces, width: int) -> list[Pieces]:
    """The line as rows of at most ``width`` characters, broken only at spaces; a row after the
    first is indented two more than the line. A word longer than a row is left whole (a command
    or URL cut in two is worse than one the terminal folds)."""
    words = _words(pieces)
    if sum(len(gap) + sum(len(t) for t, _ in word) for gap, word in words) <= width:
        return [pieces]
    indent = len(words[0][0]) if words else 0
    hang = " " * min(indent + 2, width // 2)
    rows: list[Pieces] = []
    row: Pieces = []
    used = 0
    for gap, word in words:
        size = sum(len(text) for text, _ in word)
        if row and used + len(gap) + size > width:
            rows.append(row)
            row, used, gap = [], len(hang), hang
        row += [(gap, ""), *word] if gap else word
        used += len(gap) + size
    rows.append(row)
    return rows


def _words(pieces: Pieces) -> list[tuple[str, Pieces]]:
    """(the spaces before it, its styled parts) for each word: a word may span pieces of
    different styles, and a row breaks only at spaces."""
    from itertools import groupby

    words: list[tuple[str, Pieces]] = []
    gap, word = "", []
    for text, style in pieces:
        for is_space, run in groupby(text, key=lambda c: c == " "):
            chunk = "".join(run)
            if not is_space:
                word.append((chunk, style))
                continue
            if word:
                words.append((gap, word))
                gap, word = "", []
            gap += chunk
    if word:
        words.append((gap, word))
    return words
