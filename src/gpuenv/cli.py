"""The command line: one definition of every command and option (argparse), built lazily.

``gpuenv NAME ...`` imports only the module of NAME and builds only its parser: start-up is
Python's own plus what the command needs (``bench/bench_all.py``). ``gpuenv --help`` lists the
commands from their modules' one-line summaries. Every usage error is one line on stderr and
exit status 2 (``gpuenv.exitcodes``).
"""

from __future__ import annotations

# First: the start-up settings (garbage collector, argparse's words) apply before anything else.
from gpuenv import startup

# isort: split
import argparse
import sys

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any, NoReturn, TextIO

    from gpuenv.commands import Command


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
# interpreter's teardown (startup.leave).
READ_ONLY = frozenset({"probe", "doctor", "torch", "verify", "report", "advise"})


class Parser(argparse.ArgumentParser):
    """argparse with gpuenv's usage errors (one line, exit status 2) and gpuenv's formatter, also
    for the parsers of subcommands (``matrix show``), which argparse makes without one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", startup.Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # noqa: D401 - argparse's API
        sys.stderr.write(f"{self.prog}: {message} (see {self.prog} --help)\n")
        sys.exit(USAGE_EXIT)

    def _print_message(self, message: str, file: TextIO | None = None) -> None:  # type: ignore[override]
        # (override: argparse's stub says any writer; argparse passes only sys.stdout or sys.stderr)
        # argparse swallows a failed write of --help; a closed pipe is exit status 141 here.
        if message:
            (file or sys.stderr).write(message)
            (file or sys.stderr).flush()


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
        formatter_class=startup.Formatter,
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
        "5 no error found but part of the machine (or tree) could not be judged,",
        "120 the output could not be written, 141 the reader closed the pipe.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    startup.forget_width()
    prog = _prog(args)
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        return 130
    except BrokenPipeError:
        return startup.pipe_closed()
    except OSError as exc:
        if not startup.output_failed(exc):
            raise
        return startup.write_failed(prog, exc)


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
    """The console script."""
    code = main()
    args = sys.argv[1:]
    read_only = not args or args[0] in READ_ONLY or args[0].startswith("-")
    startup.leave(code, _prog(args), read_only)
