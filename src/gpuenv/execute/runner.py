"""The only place in execute/ that starts processes. Commands are argument vectors, never shell
strings (shell=False always). With a root other than "/", commands run inside it through
``chroot ROOT argv`` (how images are built and how the install tests run).

``Runner`` runs anything the executor asks for. ``SimulatingRunner`` is what a dry run gets: it
runs only read-only commands (``apt-get -s install|purge|remove|autoremove``, ``dpkg-query``) and raises
``DryRunViolation`` for everything else, so a dry run cannot change the machine even through a
bug elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Sequence

from gpuenv.standins.record import record
from gpuenv.trust import SYSTEM_PATH, untrusted_program

# Locale and frontend fixed so that apt's output parses the same everywhere and nothing prompts;
# programs found where untrusted_program judges them.
_ENV = {
    "PATH": ":".join(SYSTEM_PATH),
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
    "DEBIAN_FRONTEND": "noninteractive",
    "APT_LISTCHANGES_FRONTEND": "none",
}


class DryRunViolation(RuntimeError):
    """A dry run tried to run something that could change the machine."""


class Untrusted(RuntimeError):
    """A program root was asked to run that another account could have written."""


class CommandError(RuntimeError):
    def __init__(self, result: Result) -> None:
        tail = (result.output.strip().splitlines() or ["(no output)"])[-12:]
        super().__init__(f"{' '.join(result.argv)} exited {result.returncode}:\n" + "\n".join(tail))
        self.result = result


@record(frozen=True)
class Result:
    argv: tuple[str, ...]
    returncode: int
    output: str  # stdout and stderr, interleaved as the command wrote them

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class Runner:
    def __init__(self, root: str = "/", log: Callable[[str], None] | None = None) -> None:
        self.root = os.path.abspath(root)
        self._log = log

    def argv_for(self, argv: Sequence[str]) -> list[str]:
        return list(argv) if self.root == "/" else ["chroot", self.root, *argv]

    def run(
        self,
        argv: Sequence[str],
        *,
        check: bool = True,
        on_status: Callable[[str], None] | None = None,
        host: bool = False,
        env: dict[str, str] | None = None,
        user: str | None = None,
    ) -> Result:
        """Run argv (inside the root unless host=True). on_status receives apt's status lines,
        read from the pipe given to apt as APT::Status-Fd. ``user``: run it as that account of the
        root (setpriv, with its groups and a clean environment), never as root.

        As root, every program started runs only when no other account could have written it
        or a directory above it (``untrusted_program``): Untrusted otherwise. That is the program
        root starts (setpriv for a ``user``'s command), and chroot for one inside the root."""
        self._guard(argv, host)
        if user is not None:
            argv = [*self._as_user(user), "--", *argv]
        if os.geteuid() == 0:
            started = [(argv[0], "/" if host else self.root)]
            if not host and self.root != "/":
                started.append(("chroot", "/"))
            for program, root in started:
                why = untrusted_program(program, root)
                if why:
                    raise Untrusted(
                        f"refusing to run {program} as root: {why}. Nothing a non-root account can write is run as root."
                    )
        full = list(argv) if host else self.argv_for(argv)
        status_r = status_w = None
        if on_status is not None:
            status_r, status_w = os.pipe()
            at = full.index("apt-get") + 1
            full[at:at] = ["-o", f"APT::Status-Fd={status_w}"]
        if self._log:
            self._log("$ " + " ".join(full))
        reader = None
        if status_r is not None:
            reader = threading.Thread(target=_pump, args=(status_r, on_status), daemon=True)
            reader.start()
        try:
            proc = subprocess.run(  # noqa: S603 - argv list, shell=False, by design
                full,
                shell=False,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env={**_ENV, **(env or {})},
                # Started in /, never in the caller's directory: `python3 -m venv` and
                # `python -m pip` put the working directory first on sys.path (another account's
                # venv.py would run as root, or as the venv's user).
                cwd="/",
                pass_fds=(status_w,) if status_w is not None else (),
                check=False,
            )
        except FileNotFoundError as exc:
            proc = subprocess.CompletedProcess(full, 127, f"{exc.filename}: not found".encode())
        finally:
            if status_w is not None:
                os.close(status_w)
            if reader is not None:
                reader.join(timeout=5)
        output = proc.stdout.decode("utf-8", "replace") if proc.stdout else ""
        result = Result(tuple(full), proc.returncode, output)
        if self._log and output:
            self._log(output.rstrip("\n"))
        if check and not result.ok:
            raise CommandError(result)
        return result

    def _guard(self, argv: Sequence[str], host: bool) -> None:
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError(f"argv must be a non-empty list of strings, got {argv!r}")

    def _as_user(self, name: str) -> list[str]:
        """setpriv's argv to drop to ``name`` of the root's /etc/passwd (numeric ids: nothing is
        looked up by a name the plan chose)."""
        from gpuenv.probe.users import parse_passwd
        from gpuenv.rootpath import read_file

        try:
            passwd = read_file(self.root, "/etc/passwd", 4 << 20).decode("utf-8", "replace")
        except OSError as exc:
            raise CommandError(Result(("setpriv",), 1, f"cannot read /etc/passwd: {exc}")) from None
        entry = next((e for e in parse_passwd(passwd) if e.name == name), None)
        if entry is None or entry.uid is None or entry.gid is None:
            raise CommandError(Result(("setpriv",), 1, f"no account {name!r} in {self.root}/etc/passwd"))
        if entry.uid == 0:
            raise CommandError(Result(("setpriv",), 1, f"{name!r} is root: refusing to run a user's step as root"))
        return ["setpriv", f"--reuid={entry.uid}", f"--regid={entry.gid}", "--init-groups", "--reset-env"]


class SimulatingRunner(Runner):
    """A dry run's runner: read-only commands only."""

    def _guard(self, argv: Sequence[str], host: bool) -> None:
        super()._guard(argv, host)
        if not (_read_only_host(argv) if host else _read_only(argv)):
            raise DryRunViolation(f"dry run refused to run: {' '.join(argv)}")


# What a simulation may be told: apt's simulation verbs, its quiet/purge flags, and the -o
# settings that keep apt from writing its caches and planner log. Anything else (another verb,
# "-o Dir=/", "-o APT::Get::Simulate=false", "-o DPkg::Pre-Invoke::=...") is refused.
_SIM_FLAGS = ("-s", "--simulate", "--just-print", "--dry-run", "--no-act", "--recon")
_SIM_VERBS = ("install", "purge", "remove", "autoremove")
_SIM_OPTIONS = ("-q", "-qq", "--quiet", "--purge")
_SIM_SETTINGS = ("Dir::Cache::pkgcache=", "Dir::Cache::srcpkgcache=", "Dir::Log::Planner=/dev/null")


def _read_only(argv: Sequence[str]) -> bool:
    name = os.path.basename(argv[0])
    if name == "apt-get":
        return _apt_simulation(argv[1:])
    if name == "dpkg-query":
        return True
    if name == "sqv":  # a signature check, but for --output (an inline message's text, written)
        return not any(a in ("-o", "--output") or a.startswith("--output=") for a in argv[1:])
    if name == "dpkg":
        return list(argv[1:]) in (["--audit"], ["--print-architecture"])
    return False


def _apt_simulation(args: Sequence[str]) -> bool:
    simulate, verb, i = False, None, 0
    while i < len(args):
        arg = args[i]
        if arg in _SIM_FLAGS:
            simulate = True
        elif arg == "-o":
            if i + 1 >= len(args) or args[i + 1] not in _SIM_SETTINGS:
                return False
            i += 1
        elif arg.startswith("-"):
            if arg not in _SIM_OPTIONS:
                return False
        elif verb is None:
            verb = arg
        i += 1
    return simulate and verb in _SIM_VERBS


def _read_only_host(argv: Sequence[str]) -> bool:
    # Reading a key's fingerprints, or checking a signature with it, in a throwaway GNUPGHOME:
    # nothing on the machine changes.
    name = os.path.basename(argv[0])
    if name == "gpgv":
        return "--homedir" in argv and not {"--output", "-o"} & set(argv)
    return (
        name == "gpg"
        and "--show-keys" in argv
        and not {"--dearmor", "--output", "--import", "--recv-keys"} & set(argv)
    )


def _pump(fd: int, sink: Callable[[str], None]) -> None:
    with os.fdopen(fd, "r", errors="replace") as fh:
        for line in fh:
            sink(line.rstrip("\n"))
