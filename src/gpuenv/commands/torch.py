"""`gpuenv torch`: which official PyTorch wheel this machine needs, and the command to get it."""

from __future__ import annotations

from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("torch")(torch)


def torch(
    facts_file: Optional[str] = typer.Option(  # noqa: UP045 - typer on Python 3.10 needs Optional
        None, "--facts", metavar="FILE", help="Judge this facts document (gpuenv.facts/1) instead of probing."
    ),
    root: Optional[str] = typer.Option(  # noqa: UP045
        None,
        "--root",
        metavar="DIR",
        help="Probe the sysroot DIR (an image or chroot) instead of this machine.",
    ),
    version: Optional[str] = typer.Option(  # noqa: UP045
        None,
        "--version",
        metavar="VER",
        help="Pick a variant of this torch release (2.7.0, or 2.7 for its newest).",
    ),
    vendor: Optional[str] = typer.Option(  # noqa: UP045
        None, "--vendor", metavar="nvidia|amd", help="Which GPUs to build for when both vendors are present."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the choice as JSON."),
) -> None:
    """Print the PyTorch build this machine needs: pip/uv command with --index-url, and why.

    Exit 0 when a wheel fits; 1 when no official wheel fits; 2 for bad input, or when both NVIDIA
    and AMD GPUs are present and --vendor does not say which to use."""
    import json
    import sys

    from gpuenv.exitcodes import Exit
    from gpuenv.matrices import MatrixError, load
    from gpuenv.torchpick import PickError, pick

    def usage(msg: str) -> typer.Exit:
        sys.stderr.write(f"gpuenv torch: {msg}\n")
        return typer.Exit(Exit.USAGE)

    if facts_file is not None and root is not None:
        raise usage("--facts and --root cannot be used together")
    if vendor is not None and vendor not in ("nvidia", "amd"):
        raise usage(f"--vendor {vendor}: expected nvidia or amd")
    facts = _facts(facts_file, root, usage)
    try:
        choice = pick(facts, load(), version=version, vendor=vendor)
    except PickError as exc:
        raise usage(str(exc)) from None
    except MatrixError as exc:
        raise usage(f"matrices: {exc}") from None
    if json_out:
        sys.stdout.write(json.dumps(choice.to_dict(), indent=2) + "\n")
    else:
        from gpuenv.render.console import make_console
        from gpuenv.render.torch import render_choice

        render_choice(choice, make_console())
    raise typer.Exit(int(choice.exit))


def _facts(facts_file, root, usage):
    from gpuenv.facts import FactsError, loads

    if facts_file is not None:
        try:
            with open(facts_file, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise usage(f"--facts {facts_file}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise usage(f"--facts {facts_file}: not a UTF-8 text file") from None
        try:
            return loads(text)
        except FactsError as exc:
            raise usage(f"--facts {facts_file}: {exc}") from None
    from gpuenv.probe import RootError, collect

    try:
        return collect(root=root)
    except RootError as exc:
        raise usage(str(exc)) from None
