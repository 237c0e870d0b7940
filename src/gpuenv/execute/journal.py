"""The apply journal under ROOT/var/lib/gpuenv/: one apply at a time (flock), which plan is being
applied, which steps are done, which one was running when the process died. --resume continues
from the first unfinished step. Writes are atomic (tmp, fsync, rename) so a kill -9 at any
instant leaves either the old or the new journal, never a torn one.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuenv.rootpath import in_root

DIR = "var/lib/gpuenv"
LOG_DIR = "var/log/gpuenv"


class Busy(RuntimeError):
    """Another gpuenv apply holds the lock."""


class JournalError(RuntimeError):
    """The journal cannot be read (truncated, edited): which steps ran is unknown."""


@dataclass
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
        # Resolved inside the root: a symlinked var/ in a chroot never sends the journal to the host.
        self.dir = in_root(root, DIR)
        self.path = self.dir / "journal.json"
        self.plan_path = self.dir / "plan.json"
        self.log_path = in_root(root, LOG_DIR) / "apply.log"
        self._lock_fd: int | None = None
        self.state = State()

    # -- lock --
    def acquire(self) -> None:
        """Take the lock, then read the state; JournalError (lock released) when it is unreadable."""
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o755)
        # O_NOFOLLOW here and below: a symlink planted in a chroot never redirects our writes.
        fd = os.open(self.dir / "apply.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise Busy(f"another gpuenv apply is running (lock {self.dir / 'apply.lock'})") from None
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

    # -- state --
    def read(self) -> State:
        """No journal: a fresh State. A journal that does not parse is an error, never a fresh
        start: treating it as empty would re-run (or skip) steps of a half-applied plan."""
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return State()
        except (OSError, UnicodeDecodeError) as exc:
            raise JournalError(f"cannot read the journal {self.path}: {exc}") from exc
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._corrupt(f"not valid JSON ({exc})") from exc
        if not isinstance(doc, dict):
            raise self._corrupt("not a JSON object")
        known = {k: v for k, v in doc.items() if k in State.__dataclass_fields__}
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

    def _corrupt(self, why: str) -> JournalError:
        return JournalError(
            f"the journal {self.path} is damaged: {why}. Nothing was changed. Which steps of the last "
            f"apply ran is unknown: check {self.log_path}, then move the journal aside and make a new plan."
        )

    def begin(self, plan_digest: str, plan_doc: dict[str, Any]) -> None:
        self.state = State(plan_digest=plan_digest, started_at=_now())
        _atomic(self.plan_path, json.dumps(plan_doc, indent=2) + "\n")
        self._write()

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
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "a") as fh:
                fh.write(line + "\n")
        except OSError:
            pass

    def _write(self) -> None:
        _atomic(self.path, json.dumps(vars(self.state), indent=2) + "\n")


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)  # a leftover of a kill -9, or a planted symlink: never written through
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644), "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
