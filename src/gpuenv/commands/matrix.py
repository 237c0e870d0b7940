"""`gpuenv matrix`: show, check, update and reset the compatibility matrices."""

from __future__ import annotations

import argparse
import sys

from gpuenv.commands import Command, Usage
from gpuenv.exitcodes import Exit

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

SUBJECTS = ("rocm", "cuda", "torch", "gpus")


class _Fail(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="show|check|update|reset", required=True, help="what to do")
    show = sub.add_parser("show", help="print the matrices in use (an installed bundle, else the shipped one)")
    show.add_argument("subject", nargs="?", choices=SUBJECTS, help="which table; without it, a summary")
    check = sub.add_parser(
        "check", help="validate a bundle directory; prints its version and the sha256 `update` wants"
    )
    check.add_argument("directory", nargs="?", metavar="DIR", help="bundle directory (default: the one in use)")
    update = sub.add_parser("update", help="install a newer bundle without a new gpuenv release")
    update.add_argument(
        "--from", dest="source", metavar="URL|FILE", required=True, help="https:// URL, or a local .tar.gz or directory"
    )
    update.add_argument("--sha256", metavar="HEX", required=True, help="expected sha256 of the bundle")
    sub.add_parser("reset", help="remove the installed bundle; the shipped matrices are used again")
    for sp in sub.choices.values():
        sp.prog = f"gpuenv matrix {sp.prog.split()[-1]}"


def run(args: argparse.Namespace) -> int:
    try:
        return {"show": _show, "check": _check, "update": _update, "reset": _reset}[args.action](args)
    except _Fail as exc:
        sys.stderr.write(f"gpuenv matrix: {exc}\n")
        return exc.code


def _show(args: argparse.Namespace) -> int:
    from gpuenv.matrices import MatrixError, load
    from gpuenv.render.console import make_console
    from gpuenv.render.matrix import render_show

    try:
        render_show(load(), args.subject, make_console(), _keys() if args.subject is None else ())
    except MatrixError as exc:
        raise Usage(str(exc)) from None
    return 0


LABELS = {"amd": "ROCm (repo.radeon.com)", "nvidia": "NVIDIA CUDA"}


def _keys() -> tuple[str, ...]:
    """Each repository signing key the planner may pin, and whether a vendor page confirms its
    fingerprint (#42: the new ROCm stream's does not); nothing where repos.json cannot be read."""
    from gpuenv.plan import repos
    from gpuenv.plan.plan import PlanError

    try:
        r = repos.load()
    except (PlanError, OSError):
        return ()
    keys = {vendor: r.section(vendor)["key"] for vendor in ("amd", "nvidia")}
    out = [f"{LABELS[vendor]} {key['fingerprint']}: {_trust(key)}" for vendor, key in keys.items()]
    therock: dict[str, list[str]] = {}
    for rel in r.section("amd_therock").get("releases", ()):
        therock.setdefault(f"{rel['key']['fingerprint']}: {_trust(rel['key'])}", []).append(rel["rocm"])
    out += [f"ROCm {', '.join(v)} {line}" for line, v in therock.items()]
    return tuple(out)


def _trust(key: dict[str, Any]) -> str:
    """A repository key's trust as the planner applies it; a confirmed key that carries a
    ``review`` (no first-party page prints its fingerprint) says so, as the plan's note does (#42)."""
    if not key.get("confirmed"):
        return "NOT confirmed by the vendor, for review (pinned only with --trust-unconfirmed-key)"
    return "confirmed, for review (no vendor page prints it: repos.json's review)" if key.get("review") else "confirmed"


def _check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpuenv.matrices import load, parse_dir
    from gpuenv.matrixbundle import BundleError, digest
    from gpuenv.matrixbundle import check as check_dir

    path = Path(args.directory) if args.directory else Path(load().bundle.path)
    if not path.is_dir():
        raise Usage(f"check {path}: not a directory")
    problems = check_dir(path)
    if problems:
        sys.stderr.write(f"gpuenv matrix: {path}: {len(problems)} problem(s)\n")
        for p in problems:
            sys.stderr.write(f"  {p}\n")
        return int(Exit.USAGE)
    version = parse_dir(path, "check", lazy=True).bundle.version
    try:
        sha = digest(path)
    except BundleError as exc:  # a file swapped for a link or a FIFO since it was checked
        raise _Fail(str(exc), int(exc.exit)) from None
    sys.stdout.write(f"{path}: bundle {version} is valid\nsha256 {sha}\n")
    return 0


def _update(args: argparse.Namespace) -> int:
    from gpuenv.matrixbundle import BundleError, install

    try:
        done = install(args.source, args.sha256)
    except BundleError as exc:
        raise _Fail(str(exc), int(exc.exit)) from None
    except OSError as exc:
        raise _Fail(f"cannot install the bundle: {exc}", int(Exit.PROBLEMS)) from None
    sys.stdout.write(f"installed matrices bundle {done.version} (was {done.previous}) in {done.path}\n")
    return 0


def _reset(args: argparse.Namespace) -> int:
    from gpuenv.matrices import state_dir
    from gpuenv.matrixbundle import BundleError
    from gpuenv.matrixbundle import reset as reset_dir

    path = state_dir()
    try:
        removed = reset_dir(path)
    except BundleError as exc:
        raise _Fail(str(exc), int(exc.exit)) from None
    except OSError as exc:
        raise _Fail(f"cannot remove {path}: {exc.strerror or exc}", int(Exit.PROBLEMS)) from None
    if removed:
        sys.stdout.write(f"removed the installed matrices bundle ({path}); using the shipped one\n")
    else:
        sys.stdout.write(f"no installed matrices bundle ({path}); using the shipped one\n")
    return 0


COMMANDS = {
    "matrix": Command(
        "matrix",
        "show, check, update or reset the bundled compatibility data",
        configure,
        run,
        "gpuenv matrix show [rocm|cuda|torch|gpus]\n"
        "gpuenv matrix check [DIR]\n"
        "gpuenv matrix update --from URL|FILE --sha256 HEX\n"
        "gpuenv matrix reset\n\n"
        "update is refused (nothing changes) for plain http:// (exit 2), a wrong sha256 (exit 3), an\n"
        "invalid bundle (exit 2), or a bundle not newer than the one in use (exit 3).",
    )
}
