"""`gpuenv report PATH...`: the fleet view of many hosts' facts, doctor, verify and status files.

Reading and counting are gpuenv.fleet's; rendering gpuenv.render.fleet's.
Exit status: 0 no host has an error and every file was read and is fresh, 1 otherwise, 2 usage.
"""

from __future__ import annotations

import argparse
import sys

from gpuenv.commands import Command, Usage, add_json
from gpuenv.standins import jsonout

DESCRIPTION = """\
PATH is a file or a directory, walked for *.json: the files the Ansible role fetches
(DIR/HOST.facts.json, HOST.doctor.json, HOST.verify.json), one directory per host
(DIR/HOST/doctor.json, ..., the bootstrap's status.json), or plain files (gpuenv probe --json, gpuenv doctor --json, gpuenv verify --json).
A host is HOST of HOST.KIND.json (KIND: facts, doctor, verify, status), else the directory of a
file named KIND.json (for DIR/HOST/var/lib/gpuenv/status.json, HOST), else the host the document
names, else the file's name. Of each kind, a host's newest document counts.

It prints, for each finding code, how many hosts have it and which; the machines grouped by GPU
model, driver and stack; the hosts whose data is older than --max-age days; and the files that
could not be read (never fatal: the rest is reported).

Exit status: 0 no host has an error finding, no file is unreadable and no host is stale; 1 any of
those; 2 usage error (a PATH that does not exist, no .json file found)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="a file, or a directory walked for *.json files")
    add_json(p, "the fleet report (gpuenv.fleet/1)")
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write the report as one self-contained HTML page (no network), with a chart of the "
        "findings by host count",
    )
    p.add_argument(
        "--max-age",
        metavar="DAYS",
        type=float,
        default=7.0,
        help="a host whose newest data is older than DAYS is stale (default 7)",
    )


def run(args: argparse.Namespace) -> int:
    import math

    if not (args.max_age > 0 and math.isfinite(args.max_age)):
        raise Usage("--max-age: must be a positive number of days")
    from gpuenv.fleet import NotFound, build

    try:
        report = build(args.paths, max_age_days=args.max_age)
    except NotFound as exc:
        raise Usage(str(exc)) from None
    if not report.hosts and not report.unreadable:
        raise Usage(f"{' '.join(args.paths)}: no .json files found")
    if args.html:
        from gpuenv.render.fleet import fleet_html

        _write(args.html, fleet_html(report))
    if args.json_out:
        sys.stdout.write(jsonout.dumps(report.to_dict()) + "\n")
    else:
        from gpuenv.render.console import make_console
        from gpuenv.render.fleet import render_fleet

        render_fleet(report, make_console())
        if args.html:
            sys.stdout.write(f"wrote {args.html}\n")
    return int(report.exit_code())


def _write(path: str, text: str) -> None:
    """The page, replaced whole (a browser open on it never sees half of one), through a new file
    of its own beside it: made with O_EXCL and O_NOFOLLOW under a name no one can guess, so a
    link or a file another account planted there is never written through."""
    import os
    import tempfile

    parent = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{os.path.basename(path)}.", suffix=".tmp")  # O_EXCL
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            os.fchmod(fh.fileno(), 0o644 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise Usage(f"--html {path}: cannot write: {exc.strerror or exc}") from None


def _umask() -> int:
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask


COMMANDS = {
    "report": Command(
        "report",
        "the fleet view: findings by host count, machines by GPU, driver and stack, stale hosts",
        configure,
        run,
        DESCRIPTION,
    )
}
