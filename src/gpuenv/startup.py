"""Start-up: what the console script does differently from a plain Python program, and why.

Every workaround for start-up time or process exit lives here, so that ``cli.py`` reads as the
command line and nothing else. Each one was measured (``bench/bench_all.py``; README "Speed") and
is guarded by ``tests/test_startup_imports.py``:

- the cyclic garbage collector runs a hundred times less often;
- argparse's own words are not looked up through gettext (no locale import);
- argparse's help formatter finds the terminal width without importing shutil, and (Python
  3.14) gives plain help without importing _colorize;
- a read-only command leaves with ``os._exit`` once its output is flushed, skipping the
  interpreter's teardown; a closed pipe is exit 141 and a full disk exit 120, quietly.

``gpuenv.cli`` imports this module first.
"""

from __future__ import annotations

import gc

# A gpuenv process is short, and what it builds (modules, facts, matrices, findings) lives to the
# end: the cyclic collector's passes over those tens of thousands of objects reclaim nothing and
# cost a doctor run about 3% of its instructions. Collections still happen, a hundred times less
# often, so one process judging 10,000 facts files keeps its memory bounded (mypy does the same).
# Set here, before argparse and the rest are imported: that is where most passes would run.
gc.set_threshold(70_000, 20, 20)

import argparse  # noqa: E402
import os  # noqa: E402  (argparse imports it: free)
import sys  # noqa: E402

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import TextIO

# gpuenv.exitcodes.Exit.PIPE_CLOSED and WRITE_FAILED, as ints: no enum class on every command's path
# (tests/test_term_output.py holds them equal to the table).
PIPE_CLOSED_EXIT = 141  # 128 + SIGPIPE, what a shell reports for a writer killed by the pipe
WRITE_FAILED_EXIT = 120  # what Python itself exits with when it cannot flush its output


def _ngettext(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


# argparse looks each of its own words ("usage: ", "options", ...) up through gettext, several
# lookups for every parser built, and the first imports locale (its alias tables, about a
# millisecond) and every one stats a catalog for the user's language. No Python ships one for
# argparse's words, and gpuenv's own words are English: the lookups always give back what they
# were given. argparse reads both names from its module at each call, so setting them is enough
# on every Python (and harmless on one that stopped using them).
# (The ignores: private names, which argparse's type stub does not declare.)
argparse._ = str  # type: ignore[attr-defined]
argparse.ngettext = _ngettext  # type: ignore[attr-defined]


class Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter with the terminal width found as shutil finds it (COLUMNS, else the
    terminal, else 80), without importing shutil: argparse imports it for every parser it builds,
    and with it zlib, bz2, lzma and fnmatch, on the start-up path of every command."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ):
        if width is None:
            width = _columns() - 2  # argparse's own margin
        super().__init__(prog, indent_increment, max_help_position, width)

    def _set_color(self, color: bool) -> None:
        """Python 3.14's argparse colours help, and sets each formatter's colours up when it is
        made: by importing _colorize, which brings dataclasses, inspect and ast (about 12 ms),
        and argparse makes a formatter for the first add_argument of every parser, to check its
        help string. gpuenv's help is plain text, as on 3.10 to 3.13: argparse's theme with no
        colours (every colour the empty string), made without _colorize. Older Pythons never call
        this."""
        self._theme = _PLAIN
        self._decolor = _same


class _Plain:
    """argparse's colour theme (3.14: _colorize.Argparse) with every colour empty."""

    def __getattr__(self, name: str) -> str:
        if name.startswith("__"):
            raise AttributeError(name)
        return ""


_PLAIN = _Plain()


def _same(text: str) -> str:
    return text


_WIDTH: list[int] = []  # found once per run: argparse builds a formatter for every add_argument


def forget_width() -> None:
    """A new run (tests call ``main`` many times in one process) finds the width again."""
    _WIDTH.clear()


def _columns() -> int:
    if not _WIDTH:
        _WIDTH.append(columns(sys.__stdout__))
    return _WIDTH[0]


def columns(stream: TextIO | None) -> int:
    """The terminal's width as shutil finds it (COLUMNS, else the terminal of ``stream``, else
    80), without importing shutil. Here, not in gpuenv.render.term, because every parser's help
    formatter needs it: importing the renderer on every command cost two modules."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0 and stream is not None:  # None: a Python started without that stream
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def leave(code: int, prog: str, read_only: bool) -> None:
    """End the process with ``code`` once the output is flushed.

    A read-only command (and help) leaves with ``os._exit``: the interpreter's teardown (freeing
    every module and object one by one) costs about a tenth of a doctor run and does nothing for a
    process that wrote no file and holds no lock. The commands that change the machine exit
    normally.
    """
    try:  # here, not in the interpreter's exit, which would say 120 with a traceback
        sys.stdout.flush()
    except BrokenPipeError:
        code = pipe_closed()
    except OSError as exc:
        code = write_failed(prog, exc)
    if not read_only:
        sys.exit(code)
    import os

    try:
        sys.stderr.flush()
    except OSError:
        pass  # nowhere left to say so
    os._exit(code)


def output_failed(exc: OSError) -> bool:
    """A full disk or quota under the output (one line then, not a traceback). Only errors a
    write alone raises: an EIO could come from a file being read, and must not be called a
    failure to write."""
    import errno

    return exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def pipe_closed() -> int:
    """The reader went away (`gpuenv doctor | head`): stop quietly, as cat does, and keep the
    interpreter's final flush from raising again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return PIPE_CLOSED_EXIT


def write_failed(prog: str, exc: OSError) -> int:
    import os

    sys.stderr.write(f"{prog}: cannot write the output: {exc.strerror or exc}\n")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere, quietly
    return WRITE_FAILED_EXIT
