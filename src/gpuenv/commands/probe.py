"""`gpuenv probe`: read this machine (or a sysroot) into facts and print them."""

from __future__ import annotations

import argparse
import sys

from gpuenv.commands import Command, add_json, add_python, add_root, add_user, probe_facts
from gpuenv.commands.output import add_output, output_format, wants_redaction


def configure(p: argparse.ArgumentParser) -> None:
    add_json(p, "the facts document (gpuenv.facts/1)")
    add_root(p, "read every file of")
    add_user(p, "judge groups and device access for NAME (from the machine's /etc/passwd)")
    add_python(p)
    add_output(p)


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args)
    facts = probe_facts(args.root, args.user, args.python)
    redactor = None
    if wants_redaction(args, fmt):
        from gpuenv import facts as facts_mod
        from gpuenv.redact import Redactor

        redactor = Redactor.for_facts(facts.to_dict())
        facts = facts_mod.from_dict(redactor.apply(facts.to_dict()))
    if fmt == "json":
        sys.stdout.write(facts.to_json() + "\n")
        return 0
    if fmt == "markdown":
        from gpuenv.commands.output import notice
        from gpuenv.render.facts import facts_markdown

        sys.stdout.write(facts_markdown(facts, notice(redactor)))
        return 0
    from gpuenv.render.console import make_console
    from gpuenv.render.facts import render_facts

    render_facts(facts, make_console())
    if redactor is not None:
        from gpuenv.commands.output import notice

        sys.stdout.write(notice(redactor) + "\n")
    return 0


COMMANDS = {
    "probe": Command(
        "probe",
        "what is on this machine: OS, kernel, GPUs, drivers, stacks, Python packages (facts)",
        configure,
        run,
        "Exit status: 0, or 2 for a --root or --python that cannot be used.",
    )
}
