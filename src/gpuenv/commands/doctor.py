"""`gpuenv doctor`: judge this machine (or facts files, or a sysroot) and say what to fix.

Several facts files (or a directory of them) are judged in one process; with --json each gets one
line (JSON Lines), a report or, for an unreadable file, {"schema", "source", "error"}.
Exit status: 0 no errors and everything judged, 1 errors found, 2 usage error or unreadable input,
5 no errors but something could not be judged (gpuenv.exitcodes.Exit.NOT_JUDGED).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from gpuenv.commands import (
    Command,
    Usage,
    add_facts,
    add_json,
    add_python,
    add_root,
    add_user,
    probe_facts,
    read_facts,
)
from gpuenv.commands.output import add_output, output_format, wants_redaction
from gpuenv.exitcodes import Exit
from gpuenv.standins import jsonout

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from gpuenv.facts import Facts
    from gpuenv.matrices import Matrices
    from gpuenv.redact import Redactor
    from gpuenv.resolve.finding import Target
    from gpuenv.resolve.report import Report


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("codes", nargs="*", metavar="CODE", help="run only these checks (their codes: gpuenv doctor --list)")
    add_facts(p, many=True)
    add_root(p)
    add_user(p, "judge device access for NAME")
    add_python(p)
    add_json(p, "the report (gpuenv.report/1)")
    p.add_argument(
        "--target", metavar="rocm[@VER]|cuda[@VER]", help="judge against an install target instead of what is installed"
    )
    p.add_argument("--torch", metavar="VER", help="judge a PyTorch release's official wheels")
    p.add_argument(
        "--ignore", metavar="CODE", action="append", default=[], help="leave out this check (repeatable)"
    )
    p.add_argument("--list", dest="list_codes", action="store_true", help="list the check codes and exit")
    add_output(p)


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args)
    return int(
        _run(args.codes, args.facts_paths, args.root, args.user, args.python, fmt == "json", args.target,
             args.torch, args.ignore, args.list_codes, fmt, wants_redaction(args, fmt))
    )  # fmt: skip


def _run(codes: list[str], facts_paths: list[str] | None, root: str | None, user: str | None,
         python: str | None, json_out: bool, target: str | None, torch: str | None, ignore: list[str],
         list_codes: bool, fmt: str = "human", redact: bool = False) -> Exit:  # fmt: skip
    from gpuenv.resolve.finding import Target
    from gpuenv.resolve.registry import all_checks, unknown_codes

    if list_codes:
        for c in all_checks():
            sys.stdout.write(f"{c.code}\t{c.area}\n")
        return Exit.OK
    only, skip = tuple(codes), tuple(ignore)
    bad = unknown_codes([*only, *skip])
    if bad:
        raise Usage(f"unknown check code(s): {', '.join(bad)} (gpuenv doctor --list shows them)")
    try:
        wanted = Target.parse(target, torch=torch)
    except ValueError as exc:
        raise Usage(f"--target: {exc}") from None
    if facts_paths and root:
        raise Usage("--facts and --root are alternatives: give one")

    from gpuenv.matrices import MatrixError, load

    try:
        matrices = load()
    except MatrixError as exc:
        raise Usage(f"cannot read the matrices: {exc}") from None
    if torch and not matrices.torch_variants(torch):
        raise Usage(f"--torch: no PyTorch {torch} in the matrices (gpuenv matrix show torch)")

    if facts_paths:
        files, many = _expand(facts_paths)
        if many:
            if fmt == "markdown":
                raise Usage("--format markdown reports one machine: give one --facts file")
            return _many(files, matrices, wanted, only, skip, json_out, redact)
        facts = read_facts(files[0])
    else:
        facts = probe_facts(root, user, python)
    report = _diagnose(facts, matrices, wanted, only, skip)
    redactor = _redactor(facts) if redact else None
    if json_out:
        sys.stdout.write(jsonout.dumps(_report_doc(report, redactor)) + "\n")
    elif fmt == "markdown":
        from gpuenv.commands.output import notice
        from gpuenv.render.report import report_markdown

        shown = _redacted_facts(facts, redactor)
        text = redactor.text if redactor is not None else (lambda t: t)
        sys.stdout.write(report_markdown(report, shown, notice(redactor), text=text, only=only))
    else:
        from gpuenv.render.report import render_report
        from gpuenv.render.term import Term

        if redactor is not None:
            report = _redacted(report, redactor)
        render_report(report, _redacted_facts(facts, redactor), Term(), only=only)
        if redactor is not None:
            from gpuenv.commands.output import notice

            sys.stdout.write(notice(redactor) + "\n")
    return report.exit_code()


def _redactor(facts: Facts) -> Redactor:
    from gpuenv.redact import Redactor

    return Redactor.for_facts(facts.to_dict())


def _redacted_facts(facts: Facts, redactor: Redactor | None) -> Facts:
    if redactor is None:
        return facts
    from gpuenv import facts as facts_mod

    return facts_mod.from_dict(redactor.apply(facts.to_dict()))


def _redacted(report: Report, redactor: Redactor) -> Report:
    from gpuenv.standins import record as records

    findings = tuple(
        records.replace(
            f,
            title=redactor.text(f.title),
            detail=redactor.text(f.detail),
            fix=redactor.text(f.fix),
            commands=tuple(redactor.text(c) for c in f.commands),
        )
        for f in report.findings
    )
    return records.replace(report, findings=findings)


def _report_doc(report: Report, redactor: Redactor | None) -> dict[str, Any]:
    if redactor is None:
        return report.to_dict()
    doc: dict[str, Any] = redactor.apply(report.to_dict())
    return doc


def _diagnose(
    facts: Facts, matrices: Matrices, wanted: Target, only: tuple[str, ...], skip: tuple[str, ...],
    source: str | None = None,
) -> Report:
    from gpuenv.resolve.report import diagnose
    from gpuenv.resolve.target import TargetError

    try:
        return diagnose(facts, matrices, wanted, only=only, ignore=skip, source=source)
    except TargetError as exc:
        raise Usage(f"--target: {exc}") from None


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
            raise Usage(f"--facts {p}: no such file or directory")
    if not files:
        raise Usage(f"--facts {' '.join(paths)}: no .json files found")
    return files, many


# The status a many-files run keeps: an unreadable file, else errors, else something not judged.
_RANK = {Exit.OK: 0, Exit.NOT_JUDGED: 1, Exit.PROBLEMS: 2, Exit.USAGE: 3}


def _many(
    files: list[str], matrices: Matrices, wanted: Target, only: tuple[str, ...], skip: tuple[str, ...],
    json_out: bool, redact: bool = False,
) -> Exit:
    """Judge every file in one process; stream one line per file. Returns the run's exit status."""
    from gpuenv.facts import FactsError, read
    from gpuenv.resolve.report import error_dict

    out = sys.stdout
    status = Exit.OK
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    for path in files:
        try:
            facts = read(path)
        except FactsError as exc:
            status = Exit.USAGE
            message = str(exc)
            if json_out:
                out.write(dumps(error_dict(path, message)) + "\n")
            else:
                out.write(f"{path}: unreadable: {message}\n")
            continue
        report = _diagnose(facts, matrices, wanted, only, skip, source=path)
        status = max(status, report.exit_code(), key=_RANK.__getitem__)
        if json_out:
            out.write(dumps(_report_doc(report, _redactor(facts) if redact else None)) + "\n")
        else:
            s = report.summary()
            codes = ", ".join(dict.fromkeys(f.code for f in report.findings if f.severity.value != "info"))
            state = "ok" if not codes else codes
            out.write(f"{path}: {s['error']} error(s), {s['warning']} warning(s): {state}\n")
    return status


COMMANDS = {
    "doctor": Command(
        "doctor",
        "what is wrong with this machine's GPU stack, and the exact fix",
        configure,
        run,
        "Exit status: 0 no errors and everything judged, 1 errors found, 2 usage error or unreadable input, "
        "5 no errors but something could not be judged (a release, OS or GPU the matrices do not know).",
    )
}
