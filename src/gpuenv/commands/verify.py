"""`gpuenv verify`: after an install, prove the stack works in the interpreter that will use it.

The checks run in a subprocess of that interpreter (gpuenv.verify.run); the judgement is pure
(gpuenv.verify.judge). Exit status: 0 every check passed, 1 a check failed, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys

from gpuenv.commands import Command, Usage, add_json
from gpuenv.standins import jsonout

DESCRIPTION = """\
In a subprocess of the interpreter (--python PATH; default: the python3 found on PATH, as a user
typing `python3` would get it), started in / as you, with your environment (PYTHONPATH,
LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES are kept; as root it runs isolated,
with only the GPU variables kept, and as another account when one could change what it imports),
it:
  imports torch and reads its build (version, CUDA or HIP, architecture list);
  compares the GPUs torch sees with the machine's GPUs on the PCI bus, and checks that the build
  has code for each (sm_XY or gfx target);
  on ROCm, opens /dev/kfd and /dev/dri/renderD* read-write;
  runs a 64x64 float32 matmul on each GPU (TF32 off) and compares it with the CPU's (1e-3).
A run that hangs is stopped after --timeout seconds; a crash is a finding, not a traceback.
The finding codes (verify.*) are listed in FINDINGS.md.

Exit status: 0 every check passed, 1 a check failed, 2 usage error (e.g. a --python that is not
an executable file)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--python",
        metavar="PATH",
        help="the interpreter to verify (a venv's bin/python; a bare name is looked up on PATH); "
        "default: python3 on PATH",
    )
    add_json(p, "the result (gpuenv.verify/1)")
    p.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        default=None,
        help="stop the check after SECONDS (default 120)",
    )
    p.add_argument(
        "--root",
        metavar="DIR",
        help="the machine's /sys and /dev are under DIR (a container's or a test's tree): its PCI GPUs "
        "are read and its device nodes opened there; the interpreter still runs here",
    )


def run(args: argparse.Namespace) -> int:
    import os

    from gpuenv.probe.host import which

    python = args.python or "python3"
    if "/" not in python:
        found = which(python)
        if found is None:
            raise Usage(
                f"--python {python}: not found on PATH"
                if args.python
                else "no python3 on PATH: give --python PATH"
            )
        python = found
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise Usage(f"--python {python}: not an executable file")
    # The check runs in /: a relative path would name another file there. abspath, not realpath:
    # a venv's bin/python is a symlink whose own path is what makes it the venv.
    python = os.path.abspath(python)
    if args.timeout is not None and not args.timeout > 0:
        raise Usage("--timeout: must be a positive number of seconds")
    if args.root is not None and not os.path.isdir(args.root):
        raise Usage(f"--root {args.root}: not a directory")

    from gpuenv.verify import verify

    result = verify(python, args.timeout, args.root)
    if args.json_out:
        sys.stdout.write(jsonout.dumps(result.to_dict()) + "\n")
    else:
        from gpuenv.render.term import Term
        from gpuenv.render.verify import render_verification

        render_verification(result, Term())
    return int(result.exit_code())


COMMANDS = {
    "verify": Command(
        "verify",
        "after an install, prove PyTorch works: imports, sees each GPU, has its arch, computes right",
        configure,
        run,
        DESCRIPTION,
    )
}
