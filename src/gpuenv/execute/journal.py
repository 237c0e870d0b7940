"""The apply journal under ROOT/var/lib/gpuenv/: one apply at a time (flock), which plan is being
applied (a copy of it, plan.json), which steps are done, which one was running when the process
died. --resume continues from the first unfinished step. Writes are atomic (a fresh temporary
file, fsync, rename, fsync of the directory) so a kill -9 or a power cut at any instant leaves
either the old or the new journal, never a torn one.

The journal decides what root does next, so it is read like any hostile input: resolved inside the
root (a symlinked var/ in a chroot never reaches the host), its own files never followed when they
are links, FIFOs and devices never opened, a size cap, the one JSON reader, every field checked,
and the directory refused when an account other than root could write it. A refused apply leaves
nothing behind: the directory and the lock file it created for nothing are removed again.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Any

from gpuenv.rootpath import PathEscape, in_root, make_dirs, read_regular
from gpuenv.standins import jsonout
from gpuenv.standins.record import field, fields, record

TYPE_CHECKING = False  # the plan module is imported only where a saved plan is read
if TYPE_CHECKING:
    from gpuenv.plan.plan import Plan

DIR = "var/lib/gpuenv"
LOG_DIR = "var/log/gpuenv"
MAX_BYTES = 4 << 20


class Busy(RuntimeError):
    """Another gpuenv apply holds the lock."""


class JournalError(RuntimeError):
    """The journal cannot be trusted (unreadable, edited, writable by others): which steps ran is
    unknown, so nothing is done."""


@record
class State:
    plan_digest: str | None = None
    done: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # steps that acted (so later ones know)
    started: str | None = None  # the step running when the journal was last written
    finished: bool = False
    started_at: str | None = None
    finished_at: str | None = None


class Journal:
    def __init__(self, root: str) -> None:
        self.root = root
        try:
            self.dir = in_root(root, DIR)
            self.log_path = in_root(root, LOG_DIR) / "apply.log"
        except PathEscape as exc:
            raise JournalError(f"cannot resolve {DIR} under {root}: {exc}") from None
        self.path = self.dir / "journal.json"
        self.plan_path = self.dir / "plan.json"
        self.lock_path = self.dir / "apply.lock"
        self._lock_fd: int | None = None
        self._created: list[Path] = []  # what acquire() made, removed again by discard()
        self.state = State()

    # -- lock --
    def acquire(self) -> None:
        """Take the lock, then read the state; JournalError (lock released) when it is untrusted."""
        self._check_trusted()
        self._mkdirs()
        # O_NOFOLLOW: a symlink planted in a chroot never redirects the lock.
        existed = os.path.lexists(self.lock_path)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        if not existed:
            self._created.append(self.lock_path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise Busy(f"another gpuenv apply is running (lock {self.lock_path})") from None
        # The lock file may have been removed and made anew since we opened it (a refused apply
        # cleaning up): a lock on an unlinked file excludes nobody.
        if os.fstat(fd).st_ino != os.lstat(self.lock_path).st_ino:
            os.close(fd)
            raise Busy(f"another gpuenv apply is starting (lock {self.lock_path}); try again")
        self._lock_fd = fd
        try:
            self.state = self.read()
        except JournalError:
            self.release()
            raise

    def release(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def discard(self) -> None:
        """After a refusal, before any journal was written: remove what acquire() created."""
        if self.path.exists():
            return
        for path in reversed(self._created):
            try:
                path.rmdir() if path.is_dir() else path.unlink()
            except OSError:
                pass  # not empty, or gone: leave it
        self._created = []

    def _mkdirs(self) -> None:
        self._created += make_dirs(self.dir, Path(os.path.abspath(self.root)))

    def _check_trusted(self) -> None:
        from gpuenv.trust import UntrustedDir, open_dir, untrusted

        if os.geteuid() != 0:
            return
        if self.dir.exists():
            why = untrusted("/" + DIR, root=self.root)
            if why:
                raise JournalError(
                    f"the journal directory {self.dir} cannot be trusted: {why}. Nothing was changed. "
                    "It must belong to root and be writable by root alone."
                )
        # The log is written through a descriptor of its directory (``log``): the directories
        # above may include a system group's (Ubuntu's /var/log), never another account's.
        if os.path.lexists(self.log_path.parent):
            try:
                os.close(open_dir("/" + LOG_DIR, self.root))
            except UntrustedDir as exc:
                raise JournalError(
                    f"the log directory {self.log_path.parent} cannot be trusted: {exc}. Nothing was changed."
                ) from None
            except OSError:
                pass  # unreadable or not a directory: the log is best effort (``log``)

    # -- state --
    def read(self) -> State:
        """No journal: a fresh State. A journal that does not parse is an error, never a fresh
        start: treating it as empty would re-run (or skip) steps of a half-applied plan."""
        doc = self._read_json(self.path, "journal")
        if doc is None:
            return State()
        if not isinstance(doc, dict):
            raise self._corrupt("not a JSON object")
        names = {f.name for f in fields(State)}
        known = {k: v for k, v in doc.items() if k in names}
        for key in ("done", "changed"):
            value = known.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise self._corrupt(f"{key} is not a list of step ids")
        for key in ("plan_digest", "started", "started_at", "finished_at"):
            if known.get(key) is not None and not isinstance(known[key], str):
                raise self._corrupt(f"{key} is not a string")
        if not isinstance(known.get("finished", False), bool):
            raise self._corrupt("finished is not true or false")
        return State(**known)

    def saved_plan(self) -> Plan | None:
        """The plan of an unfinished apply (for --resume without a file), or None."""
        from gpuenv.plan.plan import PlanError, from_dict
        from gpuenv.plan.planfile import digest

        self._check_trusted()
        state = self.read()
        if not state.plan_digest or state.finished:
            return None
        doc = self._read_json(self.plan_path, "journal's plan")
        if doc is None:
            raise self._corrupt(f"{self.plan_path} is missing")
        try:
            plan = from_dict(doc)
        except PlanError as exc:
            raise self._corrupt(f"{self.plan_path}: {exc}") from None
        if digest(plan) != state.plan_digest:
            raise self._corrupt(f"{self.plan_path} is not the plan the journal records")
        return plan

    def _read_json(self, path: Path, what: str) -> Any:
        from gpuenv.standins.jsoninput import InputError, parse

        try:
            data = read_regular(path, MAX_BYTES, nofollow=True)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise JournalError(f"cannot read the {what} {path}: {exc.strerror or exc}. Nothing was changed.") from None
        try:
            return parse(data, f"the {what} {path}")
        except InputError as exc:
            raise self._corrupt(str(exc)) from None

    def _corrupt(self, why: str) -> JournalError:
        return JournalError(
            f"the journal {self.path} is damaged: {why}. Nothing was changed. Which steps of the last "
            f"apply ran is unknown: check {self.log_path}, then move the journal aside and make a new plan."
        )

    def begin(self, plan_digest: str, plan_doc: dict[str, Any]) -> None:
        self.state = State(plan_digest=plan_digest, started_at=_now())
        _atomic(self.plan_path, jsonout.dumps(plan_doc) + "\n")
        self._write()
        self._created = []  # the journal is real now: nothing of it is discarded

    def mark_started(self, step_id: str) -> None:
        self.state.started = step_id
        self._write()

    def mark_changed(self, step_id: str) -> None:
        # Written before the step acts: after a crash, the steps that follow it still run.
        if step_id not in self.state.changed:
            self.state.changed.append(step_id)
            self._write()

    def mark_done(self, step_id: str) -> None:
        if step_id not in self.state.done:
            self.state.done.append(step_id)
        self.state.started = None
        self._write()

    def finish(self) -> None:
        self.state.finished = True
        self.state.finished_at = _now()
        self._write()

    def log(self, line: str) -> None:
        """Best effort: a log that cannot be written (full disk, a planted symlink) must not stop
        an apply halfway through dpkg; the journal, written atomically, is what resume trusts."""
        from gpuenv.trust import open_dir

        try:
            # Relative to a descriptor of the directory, opened and judged from / down
            # (``open_dir``): a rename in /var/log (root:syslog 0775 on Ubuntu) cannot send it
            # elsewhere. The log says what root changed: root's to read alone.
            dfd = open_dir("/" + LOG_DIR, self.root, make=0o755)
            try:
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                fd = os.open("apply.log", flags, 0o600, dir_fd=dfd)
            finally:
                os.close(dfd)
            with os.fdopen(fd, "a") as fh:
                fh.write(line + "\n")
        except OSError:
            pass

    def _write(self) -> None:
        _atomic(self.path, jsonout.dumps(vars(self.state)) + "\n")


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)  # a leftover of a kill -9, or a planted symlink: never written through
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk: the last whole journal stays, no half copy beside it
        raise
    # The rename itself must survive a power cut: fsync the directory that holds it.
    dfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
