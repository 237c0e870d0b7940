"""Runs the verify script in the target interpreter: verify's only use of ``subprocess``.

``python - NODE...`` with the script on standard input, started by ``gpuenv.interpreter``: in
``/`` (nothing from the caller's current directory can be imported; the script drops that entry
of ``sys.path`` too). As the invoking user, the caller's environment is kept as it is:
PYTHONPATH, the user site directory, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES and
HIP_VISIBLE_DEVICES decide which torch imports and which GPUs it sees for the user's own
programs, so verify must see them too. As root, it runs isolated with a fixed environment and
only the GPU choices of ``KEEP``, and as root only when no other account could have written what
it imports (else as that account). It runs in its own process group: on timeout the whole group
is killed, and a process stuck in the GPU driver (uninterruptible) is left behind after a short
grace rather than hanging verify.

The device nodes the script opens are listed here, from the root the rest of gpuenv reads
(``--root``: ``/`` on a real run), and passed as arguments: the script holds no path of its own,
and a test points them at a tree of its own through the same option a user has.
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import time

from gpuenv.verify.results import Outcome
from gpuenv.verify.script import SCRIPT

TIMEOUT = 120.0  # seconds: a first CUDA/ROCm initialisation takes seconds, a hung GPU forever
_GRACE = 5.0  # after SIGKILL, how long to wait for the pipes to close
_KEEP = 64 * 1024  # stderr kept (the tail)
# What a root verify passes on of its environment: which GPUs to use and how, values and never
# paths (an interpreter root starts gets no PYTHONPATH or LD_LIBRARY_PATH a user could set).
KEEP = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION",
        "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")  # fmt: skip


def device_nodes(root: str | None = None) -> list[str]:
    """/dev/kfd and every /dev/dri/renderD* (under ``root``), as paths to open."""
    base = os.path.abspath(root) if root else ""
    base = "" if base == "/" else base
    return [f"{base}/dev/kfd", *sorted(glob.glob(f"{glob.escape(base)}/dev/dri/renderD*"))]


def run_script(python: str, nodes: list[str], timeout: float = TIMEOUT) -> Outcome:
    """Run the script with ``python``; what came back, never an exception for a failed run."""
    from gpuenv.interpreter import start as start_interpreter

    start = time.monotonic()
    try:
        proc = start_interpreter(python, ["-", *nodes], keep=KEEP)
    except (OSError, RuntimeError) as exc:  # RuntimeError: not to be run as root, and no setpriv
        return Outcome(python=python, stdout="", stderr="", returncode=None, timeout=timeout, nodes=tuple(nodes),
                       start_error=(exc.strerror if isinstance(exc, OSError) else None) or str(exc))  # fmt: skip
    timed_out = False
    try:
        out, err = proc.communicate(SCRIPT.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        try:
            out, err = proc.communicate(timeout=_GRACE)
        except subprocess.TimeoutExpired as exc:  # stuck in the driver, or a grandchild kept the pipes
            out, err = exc.output or b"", exc.stderr or b""
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
    return Outcome(
        python=python,
        stdout=(out or b"").decode("utf-8", "replace"),
        stderr=(err or b"")[-_KEEP:].decode("utf-8", "replace"),
        returncode=proc.returncode,
        timeout=timeout,
        timed_out=timed_out,
        seconds=round(time.monotonic() - start, 3),
        nodes=tuple(nodes),
    )


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
