"""The command line: one definition of every command and option (argparse), built lazily.

``gpuenv NAME ...`` imports only the module of NAME and builds only its parser: start-up is
Python's own plus what the command needs (``bench/bench_all.py``). ``gpuenv --help`` lists the
commands from their modules' one-line summaries. Every usage error is one line on stderr and
exit status 2 (``gpuenv.exitcodes``).
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
import sys  # noqa: E402

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import NoReturn, TextIO

    from gpuenv.commands import Command


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

# Command name -> the module under gpuenv.commands that defines it (the one registration place).
COMMANDS = {
    "probe": "probe",
    "doctor": "doctor",
    "torch": "torch",
    "matrix": "matrix",
    "install": "install",
    "uninstall": "install",
    "plan": "install",
    "apply": "install",
    "verify": "verify",
    "report": "report",
    "advise": "advise",
    "completion": "completion",
    "provision": "provision",
}
USAGE_EXIT = 2  # gpuenv.exitcodes.Exit.USAGE, without importing enum on this path
# Commands that change nothing on the machine: the console script ends them without the
# interpreter's teardown (see ``run``).
READ_ONLY = frozenset({"probe", "doctor", "torch", "verify", "report", "advise"})
# gpuenv.exitcodes.Exit.PIPE_CLOSED and WRITE_FAILED, as USAGE_EXIT is:
PIPE_CLOSED_EXIT = 141  # 128 + SIGPIPE, what a shell reports for a writer killed by the pipe
WRITE_FAILED_EXIT = 120  # what Python itself exits with when it cannot flush its output


class Parser(argparse.ArgumentParser):
    """argparse with gpuenv's usage errors: one line, exit status 2."""

    def error(self, message: str) -> NoReturn:  # noqa: D401 - argparse's API
        sys.stderr.write(f"{self.prog}: {message} (see {self.prog} --help)\n")
        sys.exit(USAGE_EXIT)

    def _print_message(self, message: str, file: TextIO | None = None) -> None:  # type: ignore[override]
        # (override: argparse's stub says any writer; argparse passes only sys.stdout or sys.stderr)
        # argparse swallows a failed write of --help; a closed pipe is exit status 141 here.
        if message:
            (file or sys.stderr).write(message)
            (file or sys.stderr).flush()


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


_WIDTH: list[int] = []  # found once per run: argparse builds a formatter for every add_argument


def _columns() -> int:
    if not _WIDTH:
        _WIDTH.append(_terminal_columns())
    return _WIDTH[0]


def _terminal_columns() -> int:
    from gpuenv.render.term import columns

    return columns(sys.__stdout__)


def command(name: str) -> Command:
    """The Command object of ``name`` (imports its module only)."""
    from gpuenv import import_module

    module = import_module(f"gpuenv.commands.{COMMANDS[name]}")
    found: Command = module.COMMANDS[name]
    return found


def parser_for(name: str) -> Parser:
    cmd = command(name)
    p = Parser(
        prog=f"gpuenv {name}",
        description=cmd.summary + (f"\n\n{cmd.description}" if cmd.description else ""),
        formatter_class=Formatter,
    )
    cmd.configure(p)
    return p


def _top_help() -> str:
    from gpuenv import __version__

    width = max(len(n) for n in COMMANDS)
    lines = [
        "usage: gpuenv COMMAND [OPTIONS]",
        "",
        f"GPU environment doctor and installer for Linux (NVIDIA CUDA and AMD ROCm), version {__version__}.",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {command(name).summary}" for name in COMMANDS]
    lines += [
        "",
        "gpuenv COMMAND --help describes a command's options.",
        "Exit status: 0 fine, 1 problems found, 2 usage error or unreadable input,",
        "3 plan refused before any change, 4 another apply or dpkg holds the lock,",
        "120 the output could not be written, 141 the reader closed the pipe.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    _WIDTH.clear()
    prog = _prog(args)
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        return 130
    except BrokenPipeError:
        return _pipe_closed()
    except OSError as exc:
        if not _output_failed(exc):
            raise
        return _write_failed(prog, exc)


def _prog(args: list[str]) -> str:
    return f"gpuenv {args[0]}" if args and args[0] in COMMANDS else "gpuenv"


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(_top_help())
        return 0 if args else USAGE_EXIT
    if args[0] == "--version":
        from gpuenv import __version__

        sys.stdout.write(f"gpuenv {__version__}\n")
        return 0
    name = args[0]
    if name not in COMMANDS:
        import difflib

        close = difflib.get_close_matches(name, COMMANDS, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        sys.stderr.write(f"gpuenv: {name!r} is not a command{hint} (see gpuenv --help)\n")
        return USAGE_EXIT
    options = parser_for(name).parse_args(args[1:])
    from gpuenv.commands import Usage

    try:
        return int(command(name).run(options))
    except Usage as exc:
        sys.stderr.write(f"gpuenv {name}: {exc}\n")
        return USAGE_EXIT


def run() -> None:
    """The console script.

    A read-only command (and help) leaves with ``os._exit`` once its output is flushed: the
    interpreter's teardown (freeing every module and object one by one) costs about a tenth of a
    doctor run and does nothing for a process that wrote no file and holds no lock. The commands
    that change the machine exit normally.
    """
    code = main()
    args = sys.argv[1:]
    try:  # here, not in the interpreter's exit, which would say 120 with a traceback
        sys.stdout.flush()
    except BrokenPipeError:
        code = _pipe_closed()
    except OSError as exc:
        code = _write_failed(_prog(args), exc)
    if args and args[0] not in READ_ONLY and not args[0].startswith("-"):
        sys.exit(code)
    import os

    try:
        sys.stderr.flush()
    except OSError:
        pass  # nowhere left to say so
    os._exit(code)


def _output_failed(exc: OSError) -> bool:
    """A full disk or quota under the output (one line then, not a traceback). Only errors a
    write alone raises: an EIO could come from a file being read, and must not be called a
    failure to write."""
    import errno

    return exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def _pipe_closed() -> int:
    """The reader went away (`gpuenv doctor | head`): stop quietly, as cat does, and keep the
    interpreter's final flush from raising again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return PIPE_CLOSED_EXIT


def _write_failed(prog: str, exc: OSError) -> int:
    import os

    sys.stderr.write(f"{prog}: cannot write the output: {exc.strerror or exc}\n")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere, quietly
    return WRITE_FAILED_EXIT
