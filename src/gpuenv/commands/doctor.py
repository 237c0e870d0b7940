"""`gpuenv doctor`: judge this machine (or facts files, or a sysroot) and say what to fix.

Several facts files (or a directory of them) are judged in one process; with --json each gets one
line (JSON Lines), a report or, for an unreadable file, {"schema", "source", "error"}.
Exit status: 0 no errors, 1 errors found, 2 usage error or unreadable input (gpuenv.exitcodes).
"""

from __future__ import annotations

import json
import os
import sys
from typing import List, Optional  # noqa: F401, UP035 - the typer command's annotations (Python 3.10)

from gpuenv.exitcodes import Exit


class _Usage(Exception):
    """A usage error or unreadable input: message for stderr, exit status 2."""


def register(app) -> None:
    """Add this module's commands to the app (typer is imported here only: the fast path in
    gpuenv.fastpath runs ``run`` without it)."""
    import typer

    def doctor(
        codes: Optional[List[str]] = typer.Argument(  # noqa: B008, UP006, UP045
            None, metavar="[CODE]...", help="Run only these checks (e.g. nvidia.nouveau-loaded)."
        ),
        facts_paths: Optional[List[str]] = typer.Option(  # noqa: B008, UP006, UP045
            None,
            "--facts",
            metavar="FILE_OR_DIR",
            help="Judge facts files (gpuenv probe --json) instead of this machine.",
        ),
        root: Optional[str] = typer.Option(  # noqa: B008, UP045
            None, "--root", metavar="DIR", help="Probe a sysroot (image, chroot)."
        ),
        user: Optional[str] = typer.Option(  # noqa: B008, UP045
            None, "--user", metavar="NAME", help="Judge device access for NAME."
        ),
        python: Optional[str] = typer.Option(  # noqa: B008, UP045
            None,
            "--python",
            metavar="PATH",
            help="Probe this interpreter's environment (PyTorch) instead of gpuenv's own.",
        ),
        json_out: bool = typer.Option(False, "--json", help="Print the report as JSON (gpuenv.report/1)."),  # noqa: B008
        target: Optional[str] = typer.Option(  # noqa: B008, UP045
            None, "--target", metavar="rocm[@VER]|cuda[@VER]", help="Judge against an install target."
        ),
        torch: Optional[str] = typer.Option(  # noqa: B008, UP045
            None, "--torch", metavar="VER", help="Judge a PyTorch release's wheels."
        ),
        ignore: Optional[List[str]] = typer.Option(  # noqa: B008, UP006, UP045
            None, "--ignore", metavar="CODE", help="Leave out this check (repeatable)."
        ),
        list_codes: bool = typer.Option(False, "--list", help="List the check codes and exit."),  # noqa: B008
    ) -> None:
        """Say what is wrong with this machine's GPU stack and how to fix it."""
        raise typer.Exit(
            run(
                codes=codes or [], facts_paths=facts_paths or [], root=root, user=user, python=python,
                json_out=json_out, target=target, torch=torch, ignore=ignore or [], list_codes=list_codes,
            )
        )  # fmt: skip

    app.command("doctor")(doctor)


_FLAGS = {"--json": "json_out", "--list": "list_codes"}
_VALUED = {"--facts": "facts_paths", "--ignore": "ignore", "--root": "root", "--user": "user",
           "--python": "python", "--target": "target", "--torch": "torch"}  # fmt: skip
_REPEATED = ("facts_paths", "ignore")


def parse_argv(argv: list[str]) -> dict | None:
    """Options of a plain `doctor` invocation (argv after "doctor") for the typer-free fast path,
    or None when typer should handle it (--help, unknown options, anything unusual)."""
    opts: dict = {"codes": [], "facts_paths": [], "ignore": [], "root": None, "user": None, "python": None,
                  "target": None, "torch": None, "json_out": False, "list_codes": False}  # fmt: skip
    i = 0
    while i < len(argv):
        arg = argv[i]
        key, eq, value = arg.partition("=")
        if arg in _FLAGS:
            opts[_FLAGS[arg]] = True
        elif key in _VALUED:
            if not eq:
                if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                    return None
                value = argv[i + 1]
                i += 1
            name = _VALUED[key]
            if name in _REPEATED:
                opts[name].append(value)
            else:
                opts[name] = value
        elif arg.startswith("-"):
            return None
        else:
            opts["codes"].append(arg)
        i += 1
    return opts


def run(
    codes: list[str],
    facts_paths: list[str],
    root: str | None,
    user: str | None,
    python: str | None,
    json_out: bool,
    target: str | None,
    torch: str | None,
    ignore: list[str],
    list_codes: bool,
) -> int:
    """`gpuenv doctor`; returns the exit status."""
    try:
        return int(_run(codes, facts_paths, root, user, python, json_out, target, torch, ignore, list_codes))
    except _Usage as exc:
        sys.stderr.write(f"gpuenv doctor: {exc}\n")
        return int(Exit.USAGE)


def _run(codes, facts_paths, root, user, python, json_out, target, torch, ignore, list_codes) -> Exit:
    from gpuenv.resolve.finding import Target
    from gpuenv.resolve.registry import all_checks, unknown_codes

    if list_codes:
        for c in all_checks():
            sys.stdout.write(f"{c.code}\t{c.area}\n")
        return Exit.OK
    only, skip = tuple(codes), tuple(ignore)
    bad = unknown_codes([*only, *skip])
    if bad:
        raise _Usage(f"unknown check code(s): {', '.join(bad)} (gpuenv doctor --list shows them)")
    try:
        wanted = Target.parse(target, torch=torch)
    except ValueError as exc:
        raise _Usage(f"--target: {exc}") from None
    if facts_paths and root:
        raise _Usage("--facts and --root are alternatives: give one")

    from gpuenv.matrices import MatrixError, load

    try:
        matrices = load()
    except MatrixError as exc:
        raise _Usage(f"cannot read the matrices: {exc}") from None
    if torch and not matrices.torch_variants(torch):
        raise _Usage(f"--torch: no PyTorch {torch} in the matrices (gpuenv matrix show torch)")

    if facts_paths:
        files, many = _expand(facts_paths)
        if many:
            return _many(files, matrices, wanted, only, skip, json_out)
        facts = _read_one(files[0])
    else:
        facts = _probe(root, user, python)
    report = _diagnose(facts, matrices, wanted, only, skip)
    if json_out:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        from gpuenv.render.console import make_console
        from gpuenv.render.report import render_report

        render_report(report, facts, make_console(), only=only)
    return report.exit_code()


def _diagnose(facts, matrices, wanted, only, skip, source=None):
    from gpuenv.resolve.report import diagnose
    from gpuenv.resolve.target import TargetError

    try:
        return diagnose(facts, matrices, wanted, only=only, ignore=skip, source=source)
    except TargetError as exc:
        raise _Usage(f"--target: {exc}") from None


def _expand(paths: list[str]) -> tuple[list[str], bool]:
    """Files to read, and whether this is a many-files run (a directory or several files)."""
    files: list[str] = []
    many = len(paths) > 1
    for p in paths:
        if os.path.isdir(p):
            many = True
            with os.scandir(p) as it:
                files.extend(sorted(e.path for e in it if e.name.endswith(".json") and e.is_file()))
        elif os.path.exists(p) or p == "-":
            files.append(p)
        else:
            raise _Usage(f"--facts {p}: no such file or directory")
    if not files:
        raise _Usage(f"--facts {' '.join(paths)}: no .json files found")
    return files, many


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _read_one(path: str):
    from gpuenv.facts import FactsError, loads

    try:
        return loads(_read_text(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise _Usage(f"--facts {path}: cannot read: {exc}") from None
    except FactsError as exc:
        raise _Usage(f"--facts {path}: {exc}") from None
    except RecursionError:
        raise _Usage(f"--facts {path}: nested too deeply to be facts") from None


def _probe(root: str | None, user: str | None, python: str | None):
    from gpuenv.probe import RootError, collect

    if python is not None and root is None and not os.access(python, os.X_OK):
        raise _Usage(f"--python {python}: not an executable file")
    try:
        return collect(root=root, user=user, python=python)
    except RootError as exc:
        raise _Usage(str(exc)) from None


def _many(files, matrices, wanted, only, skip, json_out: bool) -> Exit:
    """Judge every file in one process; stream one line per file. Returns the run's exit status."""
    from gpuenv.facts import FactsError, loads
    from gpuenv.resolve.report import error_dict

    out = sys.stdout
    status = Exit.OK
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    for path in files:
        try:
            facts = loads(_read_text(path))
        except (OSError, UnicodeDecodeError, FactsError, RecursionError) as exc:
            status = Exit.USAGE
            message = str(exc) if not isinstance(exc, RecursionError) else "nested too deeply to be facts"
            if json_out:
                out.write(dumps(error_dict(path, message)) + "\n")
            else:
                out.write(f"{path}: unreadable: {message}\n")
            continue
        report = _diagnose(facts, matrices, wanted, only, skip, source=path)
        if report.exit_code() > status and status != Exit.USAGE:
            status = report.exit_code()
        if json_out:
            out.write(dumps(report.to_dict()) + "\n")
        else:
            s = report.summary()
            codes = ", ".join(dict.fromkeys(f.code for f in report.findings if f.severity.value != "info"))
            state = "ok" if not codes else codes
            out.write(f"{path}: {s['error']} error(s), {s['warning']} warning(s): {state}\n")
    return status
