"""`gpuenv probe`: read this machine (or a sysroot) into facts and print them."""

from __future__ import annotations

import argparse
import sys

from gpuenv.commands import Command, add_json, add_python, add_root, add_user, probe_facts


def configure(p: argparse.ArgumentParser) -> None:
    add_json(p, "the facts document (gpuenv.facts/1)")
    add_root(p, "read every file of")
    add_user(p, "judge groups and device access for NAME (from the machine's /etc/passwd)")
    add_python(p)


def run(args: argparse.Namespace) -> int:
    facts = probe_facts(args.root, args.user, args.python)
    if args.json_out:
        sys.stdout.write(facts.to_json() + "\n")
        return 0
    from gpuenv.render.console import make_console
    from gpuenv.render.facts import render_facts

    render_facts(facts, make_console())
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
