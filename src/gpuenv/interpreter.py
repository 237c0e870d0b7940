"""The one way gpuenv starts a Python interpreter someone named (``--python``): the probe's
``sys.path`` script and verify's checks both go through ``start``.

Whoever runs gpuenv, the interpreter starts in ``/`` with ``-B``: the caller's current directory
is never searched for modules (a ``json.py`` there would run) and no bytecode is written.

Not as root, it keeps the caller's environment: PYTHONPATH, the user site directory and
LD_LIBRARY_PATH decide what that user's own programs import, and it runs as that user anyway.

As root, nothing a user chose applies. It runs isolated (``-I``, Python 3.4 and later: no
PYTHON* variables, no user site directory, no script directory on ``sys.path``) with a fixed
environment (``ENV``, plus the values of the variables a caller names in ``keep``: which GPUs to
use, never a path), and it runs as root only when no other account could have written anything
it would import: the interpreter itself (``trust.untrusted``), the standard library it starts
from, and every entry of its import path with everything beneath it (``trust.untrusted_tree``).
The import path is learnt by running it as root with ``-I -S`` (no site: no .pth file and no
sitecustomize runs) once its standard library has been checked; the site directories and the
directories their .pth files add are read here. Where another account could have written
something, the interpreter runs as that account (setpriv), or as nobody when a group or everyone
could. Where its import path cannot be learnt (it is no Python, or a broken one), it runs
without site (``-S``): nothing beyond the standard library checked here.
"""

from __future__ import annotations

import glob
import os
import subprocess

from gpuenv import trust

# The whole environment of an interpreter started as root: the system's programs, and UTF-8.
ENV = {"PATH": ":".join(trust.SYSTEM_PATH), "LC_ALL": "C.UTF-8"}
LEARN_TIMEOUT = 20.0
# Python 3.6 syntax: the interpreter may be older than gpuenv's.
_LEARN = (
    "import json, site, sys\n"
    "print(json.dumps({'path': sys.path, 'site': site.getsitepackages() "
    "if hasattr(site, 'getsitepackages') else []}))\n"
)


def start(python: str, args: list[str], keep: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    """``python -B [-I] ARGS`` in ``/``, its standard streams piped, in a session of its own (a
    caller that times out kills the group). As root, the environment is ``ENV`` and the values of
    ``keep`` from this process's environment. RuntimeError (one line) when it must not run at all;
    OSError when it cannot be started."""
    if not _root():
        argv, env = [python, "-B", *args], None
    else:
        prefix, flags = _account(python)
        argv = [*prefix, python, "-I", *flags, "-B", *args]
        env = {**ENV, **{k: os.environ[k] for k in keep if k in os.environ}}
    return subprocess.Popen(  # noqa: S603 - argv list: the interpreter the user named, no shell
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
        env=env,
        start_new_session=True,
    )


def output(python: str, args: list[str], stdin: str, timeout: float) -> str:
    """What ``start`` prints for ``stdin``; RuntimeError (one line) when it fails or hangs."""
    proc = start(python, args)
    try:
        out, err = proc.communicate(stdin.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        raise RuntimeError(f"{python} did not answer within {timeout:g} s") from None
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        raise RuntimeError(f"{python} failed: {tail[0]}")
    return out.decode("utf-8", "replace")


def kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc``'s whole session and reap it."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _account(python: str) -> tuple[list[str], list[str]]:
    """As root: what to put before ``python`` so that it runs as the account that could have
    changed what it imports (nothing: root, when no other account could), and the flags beyond
    ``-I`` (``-S`` when its import path cannot be learnt: then it imports nothing beyond the
    standard library checked here)."""
    prefix = trust.unprivileged(python)
    if prefix:
        return prefix, []
    for path in _stdlib(python):
        found = trust.untrusted_tree(path)
        if found:
            return trust.setpriv_as(*found[1], python, found[0]), []
    dirs = _import_path(python)
    if dirs is None:
        return [], ["-S"]
    for entry in _outermost(dirs):
        found = trust.untrusted_tree(entry)
        if found:
            return trust.setpriv_as(*found[1], python, found[0]), []
    return [], []


def _stdlib(python: str) -> list[str]:
    """Where the interpreter's standard library and libpython can be (what runs before any
    import path could be learnt): ``lib/python3*`` and ``lib/libpython3*`` under the prefix of the
    binary it leads to and of a venv's base interpreter (pyvenv.cfg ``home``)."""
    homes = [os.path.dirname(os.path.realpath(python))]
    for cfg in _venv_cfgs(python):
        home = _cfg(cfg).get("home")
        if home:
            homes.append(os.path.realpath(home))
    out = []
    for home in homes:
        prefix = glob.escape(os.path.dirname(home))
        out += glob.glob(f"{prefix}/lib/python3*") + glob.glob(f"{prefix}/lib/libpython3*")
    return sorted(set(out))


def _import_path(python: str) -> list[str] | None:
    """Every directory the interpreter would import from: its ``sys.path`` without site (learnt
    as root with ``-I -S``), the site directories (its own answer, and a venv's lib/python*/
    site-packages), and what their .pth files add. None when it does not answer."""
    import json

    try:
        done = subprocess.run(  # noqa: S603 - argv list: the interpreter the user named, no shell
            [python, "-I", "-S", "-B", "-c", _LEARN],
            capture_output=True,
            cwd="/",
            env=ENV,
            timeout=LEARN_TIMEOUT,
            check=False,
        )
        doc = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    if not isinstance(doc, dict):
        return None
    dirs = [p for key in ("path", "site") for p in doc.get(key) or [] if isinstance(p, str) and p.startswith("/")]
    for cfg in _venv_cfgs(python):
        dirs += glob.glob(f"{glob.escape(os.path.dirname(cfg))}/lib*/python*/site-packages")
    for site in list(dirs):
        dirs += _pth_dirs(site)
    return dirs


def _pth_dirs(site: str) -> list[str]:
    """The directories a site directory's .pth files add (their ``import`` lines run code that
    lives on the import path, which is checked as a whole)."""
    out = []
    for pth in glob.glob(f"{glob.escape(site)}/*.pth"):
        try:
            with open(pth, encoding="utf-8", errors="replace") as f:
                lines = f.read(1 << 20).splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.rstrip()
            if line and not line.startswith(("#", "import ", "import\t")):
                out.append(os.path.join(site, line))
    return out


def _outermost(paths: list[str]) -> list[str]:
    """The paths that lie under no other one (a walk of the outer covers the inner)."""
    out: list[str] = []
    for path in sorted({os.path.normpath(p) for p in paths}):
        if not any(path == o or path.startswith(o.rstrip("/") + "/") for o in out):
            out.append(path)
    return out


def _venv_cfgs(python: str) -> list[str]:
    """pyvenv.cfg beside the interpreter or one directory up (where Python looks for it)."""
    here = os.path.dirname(os.path.abspath(python))
    return [c for c in (f"{here}/pyvenv.cfg", f"{os.path.dirname(here)}/pyvenv.cfg") if os.path.isfile(c)]


def _cfg(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 16)
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip().lower()] = value.strip()
    return fields
