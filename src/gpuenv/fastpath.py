"""The console entry point, with a typer-free path for `gpuenv probe`.

`gpuenv probe --json` is what fleets and scripts run most, and typer costs more than the probe
itself (its import, and on every call it builds pydantic adapters: several times Python's own
start-up). So a plain `gpuenv probe [--json] [--root DIR] [--user NAME] [--python PATH]` runs
here, with the same behaviour as the typer command (which calls ``probe`` below); anything else
(``--help``, an unknown option, other commands) goes to the typer app unchanged.
"""

from __future__ import annotations

import sys

_VALUED = ("--root", "--user", "--python")


def parse_probe_argv(argv: list[str]) -> dict | None:
    """Options of a plain `probe` invocation, or None when typer should handle argv."""
    if not argv or argv[0] != "probe":
        return None
    opts: dict = {"json_out": False, "root": None, "user": None, "python": None}
    rest = argv[1:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--json":
            opts["json_out"] = True
        elif arg in _VALUED:
            if i + 1 >= len(rest) or rest[i + 1].startswith("--"):
                return None
            opts[arg[2:]] = rest[i + 1]
            i += 1
        elif arg.split("=", 1)[0] in _VALUED and "=" in arg:
            key, value = arg.split("=", 1)
            opts[key[2:]] = value
        else:
            return None
        i += 1
    return opts


def probe(json_out: bool, root: str | None, user: str | None, python: str | None) -> int:
    """Run `gpuenv probe`; returns the exit status."""
    import os

    from gpuenv.exitcodes import Exit
    from gpuenv.probe import RootError, collect

    if python is not None and root is None and "/" not in python:
        import shutil

        python = shutil.which(python) or python  # `--python python3.11`: looked up on PATH
    if python is not None and root is None and not os.access(python, os.X_OK):
        sys.stderr.write(f"gpuenv probe: --python {python}: not an executable file\n")
        return int(Exit.USAGE)
    try:
        facts = collect(root=root, user=user, python=python)
    except RootError as exc:
        sys.stderr.write(f"gpuenv probe: {exc}\n")
        return int(Exit.USAGE)
    if json_out:
        sys.stdout.write(facts.to_json() + "\n")
        return int(Exit.OK)
    from gpuenv.render.console import make_console
    from gpuenv.render.facts import render_facts

    render_facts(facts, make_console())
    return int(Exit.OK)


def main() -> None:
    opts = parse_probe_argv(sys.argv[1:])
    if opts is not None:
        sys.exit(probe(**opts))
    if sys.argv[1:2] == ["doctor"]:
        # Same reason for `gpuenv doctor` (its options parsed in gpuenv.commands.doctor).
        from gpuenv.commands.doctor import parse_argv, run

        doctor_opts = parse_argv(sys.argv[2:])
        if doctor_opts is not None:
            sys.exit(run(**doctor_opts))
    from gpuenv.cli import main as typer_main

    typer_main()
