"""`gpuenv matrix`: show, check, update and reset the compatibility matrices."""

from __future__ import annotations

from typing import Optional

import typer

matrix_app = typer.Typer(
    name="matrix", help="Show, check, update or reset the compatibility matrices.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.add_typer(matrix_app, name="matrix")


def _fail(msg: str, code: int) -> typer.Exit:
    import sys

    sys.stderr.write(f"gpuenv matrix: {msg}\n")
    return typer.Exit(code)


@matrix_app.command("show")
def show(
    subject: Optional[str] = typer.Argument(  # noqa: UP045 - typer on Python 3.10 needs Optional
        None,
        metavar="[rocm|cuda|torch|gpus]",
        help="Which table; without it, a summary of the bundle in use.",
    ),
) -> None:
    """Print the matrices in use (installed bundle if any, else the shipped one)."""
    from gpuenv.exitcodes import Exit
    from gpuenv.matrices import MatrixError, load
    from gpuenv.render.console import make_console
    from gpuenv.render.matrix import SUBJECTS, render_show

    if subject is not None and subject not in SUBJECTS:
        raise _fail(f"show {subject}: expected one of {', '.join(SUBJECTS)}", Exit.USAGE)
    try:
        render_show(load(), subject, make_console())
    except MatrixError as exc:
        raise _fail(str(exc), Exit.USAGE) from None


@matrix_app.command("check")
def check(
    directory: Optional[str] = typer.Argument(  # noqa: UP045
        None, metavar="[DIR]", help="Bundle directory to validate (default: the bundle in use)."
    ),
) -> None:
    """Validate a bundle directory: exit 0 when good, 2 with the problems when not.

    Prints the bundle's version and its sha256 (the value `matrix update --sha256` wants for
    this directory)."""
    import sys
    from pathlib import Path

    from gpuenv.exitcodes import Exit
    from gpuenv.matrices import load
    from gpuenv.matrixbundle import check as check_dir
    from gpuenv.matrixbundle import digest

    path = Path(directory) if directory else Path(load().bundle.path)
    if not path.is_dir():
        raise _fail(f"check {path}: not a directory", Exit.USAGE)
    problems = check_dir(path)
    if problems:
        sys.stderr.write(f"gpuenv matrix: {path}: {len(problems)} problem(s)\n")
        for p in problems:
            sys.stderr.write(f"  {p}\n")
        raise typer.Exit(Exit.USAGE)
    import json

    version = json.loads((path / "bundle.json").read_text())["version"]
    sys.stdout.write(f"{path}: bundle {version} is valid\nsha256 {digest(path)}\n")


@matrix_app.command("update")
def update(
    source: str = typer.Option(
        ..., "--from", metavar="URL|FILE", help="https:// URL or local .tar.gz or directory."
    ),
    sha256: Optional[str] = typer.Option(  # noqa: UP045
        None, "--sha256", metavar="HEX", help="Expected sha256 of the bundle (required)."
    ),
) -> None:
    """Install a newer matrices bundle without a new gpuenv release.

    Refused (nothing changes) for plain http://, a missing or wrong sha256 (exit 2 / 3), an
    invalid bundle (exit 2), or a bundle not newer than the one in use (exit 3)."""
    import sys

    from gpuenv.exitcodes import Exit
    from gpuenv.matrixbundle import BundleError, install

    if not sha256:
        raise _fail(
            "update needs --sha256 HEX (sha256sum of the .tar.gz, or `gpuenv matrix check DIR`)", Exit.USAGE
        )
    try:
        done = install(source, sha256)
    except BundleError as exc:
        raise _fail(str(exc), exc.exit) from None
    except OSError as exc:
        raise _fail(f"cannot install the bundle: {exc}", Exit.PROBLEMS) from None
    sys.stdout.write(f"installed matrices bundle {done.version} (was {done.previous}) in {done.path}\n")


@matrix_app.command("reset")
def reset() -> None:
    """Remove the installed bundle; the shipped matrices are used again."""
    import sys

    from gpuenv.matrices import state_dir
    from gpuenv.matrixbundle import reset as reset_dir

    path = state_dir()
    if reset_dir(path):
        sys.stdout.write(f"removed the installed matrices bundle ({path}); using the shipped one\n")
    else:
        sys.stdout.write(f"no installed matrices bundle ({path}); using the shipped one\n")
