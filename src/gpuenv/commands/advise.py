"""`gpuenv advise [PATH]`: can this source tree run on ROCm, and what would moving cost?"""

from __future__ import annotations

import argparse
import sys

from gpuenv.commands import Command, Usage, add_json


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help="the source tree to read (default: .)")
    add_json(p, "the verdict and every finding (gpuenv.advise/1)")


def run(args: argparse.Namespace) -> int:
    from gpuenv.advise import AdviseError, advise
    from gpuenv.matrices import MatrixError

    try:
        advice = advise(args.path)
    except AdviseError as exc:
        raise Usage(str(exc)) from None
    except MatrixError as exc:
        raise Usage(f"matrices: {exc}") from None
    if args.json_out:
        from gpuenv.standins import jsonout

        sys.stdout.write(jsonout.dumps(advice.to_dict()) + "\n")
    else:
        from gpuenv.render.advise import render_advice
        from gpuenv.render.console import make_console

        render_advice(advice, make_console())
    return advice.exit


COMMANDS = {
    "advise": Command(
        "advise",
        "can this source tree run on ROCm? its CUDA-only pieces, the work, and the share of code that needs a person",
        configure,
        run,
        "Reads dependency manifests (requirements*.txt, pyproject.toml, setup.cfg, setup.py read\n"
        "statically, environment.yml, Pipfile, lock files), Dockerfiles/Containerfiles, build files\n"
        "(CMakeLists.txt, *.cmake, setup*.py) and sources (.cu .cuh .cpp .h .py .pyx ...); nothing in\n"
        "the tree is executed. Code in the project's own HIP/ROCm branches and rocm/ or hip/ files is\n"
        "its ROCm port, not work; sources only the CUDA build compiles (CMake and setup.py backend\n"
        "switches, #if __CUDA_ARCH__ >= N, kernels compiled at run time only behind a Python\n"
        "platform switch such as `if is_cuda():`) are already handled by the ROCm build. Optional parts\n"
        "(nested packages, contrib/, guarded or lazy imports, extras) are listed apart and do not\n"
        "decide the verdict.\n\n"
        "Exit status: 0 portable; 1 portable-with-work; 6 cuda-only (3 is already gpuenv's 'refused');\n"
        "2 for a path that is not a directory; 5 unknown: nothing to judge (no source, build file or\n"
        "declared dependency, or a stub sdist of an unknown project).\n"
        "Unreadable, binary and oversized files are skipped and counted.",
    )
}
