"""The CPython interpreters >= 3.10 on this machine, for the checks that must hold on every
supported Python, and a way to run gpuenv's sources under one of them.

Found where users' interpreters are: this one, the distribution's ``/usr/bin/python3``,
``python3.X`` on PATH, and pyenv's versions (``$PYENV_ROOT``, else ``~/.pyenv``). The sources run
from the checkout's ``src/`` (the other interpreters have no gpuenv installed), with ``-E -s -B``:
no environment variables, no user site, and no bytecode written into the checkout.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
OLDEST = (3, 10)

_VERSION = "import platform, sys; print(platform.python_implementation(), *sys.version_info[:3])"


def _candidates() -> list[str]:
    found = [sys.executable, "/usr/bin/python3"]
    found += [p for minor in range(OLDEST[1], 30) if (p := shutil.which(f"python3.{minor}"))]
    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found += sorted(glob.glob(os.path.join(pyenv, "versions", "3.*", "bin", "python3")))
    return found


@functools.cache
def pythons() -> dict[tuple[int, int, int], str]:
    """(major, minor, micro) -> an interpreter of that version, one per version."""
    out: dict[tuple[int, int, int], str] = {}
    for path in _candidates():
        if not os.access(path, os.X_OK):
            continue
        try:
            done = subprocess.run([path, "-E", "-s", "-c", _VERSION], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        words = done.stdout.split()
        if done.returncode != 0 or len(words) != 4 or words[0] != "CPython":
            continue
        version = (int(words[1]), int(words[2]), int(words[3]))
        if version >= (*OLDEST, 0):
            out.setdefault(version, path)
    return dict(sorted(out.items()))


def oldest() -> tuple[tuple[int, int, int], str] | None:
    """The oldest supported minor's interpreter, or None when the machine has none of it."""
    found = [(v, p) for v, p in pythons().items() if v[:2] == OLDEST]
    return found[0] if found else None


def run_source(python: str, code: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
    """``code`` run by ``python`` with the checkout's src/ first on sys.path."""
    prelude = f"import sys; sys.path.insert(0, {str(SRC)!r})\n"
    return subprocess.run(
        [python, "-E", "-s", "-B", "-c", prelude + code], input=stdin, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


def label(version: tuple[int, int, int], path: str) -> str:
    return f"{'.'.join(map(str, version))} ({path})"
