"""The output options `probe` and `doctor` share: --format human|json|markdown and --redact.

One rule for both: --json is --format json; markdown is redacted unless --no-redact, JSON and
human output are not unless --redact. Markdown, the output made for sharing, says which way it
went in the document, and human output says what --redact replaced; JSON says nothing on
standard error (a line on every scripted run is noise, and whoever asked for --redact knows).
"""

from __future__ import annotations

import argparse

from gpuenv.commands import Usage

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.redact import Redactor

FORMATS = ("human", "json", "markdown")
CHECKED = "hostname, user names, home paths, UUIDs, kernel command line secrets, IP and MAC addresses"
NOT_REDACTED = f"not redacted: {CHECKED} are shown as probed; pass --redact to hide them"


def add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        dest="output_format",
        choices=FORMATS,
        help="human (default), json (the same as --json) or markdown (a report to paste into an issue)",
    )
    p.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="replace hostname, user names, home paths, UUIDs, command-line secrets and addresses with "
        "placeholders (default: on for markdown, off otherwise)",
    )


def output_format(args: argparse.Namespace) -> str:
    chosen = getattr(args, "output_format", None)
    if getattr(args, "json_out", False):
        if chosen not in (None, "json"):
            raise Usage(f"--json and --format {chosen} are alternatives: give one")
        return "json"
    return chosen or "human"


def wants_redaction(args: argparse.Namespace, fmt: str) -> bool:
    choice = getattr(args, "redact", None)
    return fmt == "markdown" if choice is None else bool(choice)


def notice(redactor: Redactor | None) -> str:
    """The one line every redactable output carries (here, not in gpuenv.redact: unredacted
    JSON, the fleets' fast path, never imports the redactor's patterns)."""
    if redactor is None:
        return NOT_REDACTED
    return f"redacted: {redactor.summary()} — pass --no-redact to keep them"
