"""`gpuenv torch`: which official PyTorch wheel this machine needs, and the command to get it."""

from __future__ import annotations

import argparse
import sys

from gpuenv.commands import Command, Usage, add_facts, add_json, add_root, probe_facts, read_facts


def configure(p: argparse.ArgumentParser) -> None:
    add_facts(p)
    add_root(p)
    p.add_argument(
        "--version", metavar="VER", help="a variant of this torch release (2.7.0, or 2.7 for its newest)"
    )
    p.add_argument(
        "--vendor", choices=("nvidia", "amd"), help="which GPUs to build for when both vendors are present"
    )
    add_json(p, "the choice")


def run(args: argparse.Namespace) -> int:
    from gpuenv.matrices import MatrixError, load
    from gpuenv.resolve.torchpick import PickError, pick
    from gpuenv.standins import jsonout

    if args.facts_file is not None and args.root is not None:
        raise Usage("--facts and --root cannot be used together")
    facts = read_facts(args.facts_file) if args.facts_file is not None else probe_facts(args.root)
    try:
        choice = pick(facts, load(), version=args.version, vendor=args.vendor)
    except PickError as exc:
        raise Usage(str(exc)) from None
    except MatrixError as exc:
        raise Usage(f"matrices: {exc}") from None
    if args.json_out:
        sys.stdout.write(jsonout.dumps(choice.to_dict()) + "\n")
    else:
        from gpuenv.render.term import Term
        from gpuenv.render.torch import render_choice

        render_choice(choice, Term())
    return int(choice.exit)


COMMANDS = {
    "torch": Command(
        "torch",
        "the PyTorch wheel this machine needs (pip/uv command with --index-url), and why",
        configure,
        run,
        "Exit status: 0 when a wheel fits; 1 when no official wheel fits; 2 for bad input, or\n"
        "when both NVIDIA and AMD GPUs are present and --vendor does not say which to use.",
    )
}
