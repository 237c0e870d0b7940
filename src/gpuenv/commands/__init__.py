"""The commands: one module per command (or family), each holding its options and its run.

A ``Command`` declares its options (``configure``, on an argparse parser) and runs with the
parsed options (``run``, returning the exit status); ``gpuenv.cli`` builds the parser of the one
command asked for, so that no command pays for the others. A run parses, calls one core
function, renders and returns: no logic lives here.
"""

from __future__ import annotations

import argparse

from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing or collections.abc (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable

    from gpuenv.facts import Facts


@record(frozen=True)
class Command:
    name: str
    summary: str  # one line, for `gpuenv --help`
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    description: str = ""  # the rest of `gpuenv NAME --help` (exit statuses, examples)


class Usage(Exception):
    """A usage error or unreadable input: one line for stderr, exit status 2."""


# -- options several commands share (one wording, one metavar) ---------------------------------


def add_json(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", dest="json_out", action="store_true", help=f"print {what} as JSON")


def add_root(p: argparse.ArgumentParser, what: str = "probe") -> None:
    p.add_argument(
        "--root",
        metavar="DIR",
        help=f"{what} the sysroot DIR (an image, a chroot) instead of this machine; live sources off",
    )


def add_facts(p: argparse.ArgumentParser, many: bool = False) -> None:
    if many:
        p.add_argument(
            "--facts",
            dest="facts_paths",
            metavar="FILE_OR_DIR",
            action="append",
            default=[],
            help="judge facts files (gpuenv probe --json; '-' reads standard input) instead of "
            "this machine; repeatable, a directory means its *.json files",
        )
    else:
        p.add_argument(
            "--facts",
            dest="facts_file",
            metavar="FILE",
            help="judge this facts file (gpuenv probe --json) instead of probing the machine",
        )


def add_user(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--user", metavar="NAME", help=what)


def add_python(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--python",
        metavar="PATH",
        help="probe this interpreter's environment (its PyTorch) instead of gpuenv's own",
    )


def read_facts(path: str) -> Facts:
    """Facts from a file for a command; Usage (exit 2) with one line when unreadable."""
    from gpuenv.facts import FactsError, read

    try:
        return read(path)
    except FactsError as exc:
        raise Usage(str(exc)) from None


def probe_facts(root: str | None, user: str | None = None, python: str | None = None) -> Facts:
    """Facts of this machine or a sysroot; Usage for a --root or --python that cannot be used."""
    import os

    from gpuenv.probe import RootError, collect

    if python is not None and root is None and "/" not in python:
        from gpuenv.probe.host import which

        python = which(python) or python  # `--python python3.11`: looked up on PATH
    if python is not None and root is None and not os.access(python, os.X_OK):
        raise Usage(f"--python {python}: not an executable file")
    try:
        return collect(root=root, user=user, python=python)
    except RootError as exc:
        raise Usage(str(exc)) from None
