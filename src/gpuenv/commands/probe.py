"""`gpuenv probe`: read this machine (or a sysroot) into facts and print them.

The work is in ``gpuenv.fastpath.probe``, shared with the typer-free entry point."""

from __future__ import annotations

from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("probe")(probe)


def probe(
    json_out: bool = typer.Option(False, "--json", help="Print the facts document (gpuenv.facts/1)."),
    root: Optional[str] = typer.Option(  # noqa: UP045 - typer on Python 3.10 needs Optional
        None,
        "--root",
        metavar="DIR",
        help="Read every file under DIR (an image or chroot); live sources off.",
    ),
    user: Optional[str] = typer.Option(  # noqa: UP045
        None,
        "--user",
        metavar="NAME",
        help="Judge groups and device access for NAME (from the machine's /etc/passwd).",
    ),
    python: Optional[str] = typer.Option(  # noqa: UP045
        None, "--python", metavar="PATH", help="Probe this interpreter's environment instead of gpuenv's own."
    ),
) -> None:
    """Print the machine's facts: OS, kernel, GPUs, drivers, stacks, Python packages."""
    from gpuenv import fastpath

    code = fastpath.probe(json_out, root, user, python)
    if code:
        raise typer.Exit(code)
