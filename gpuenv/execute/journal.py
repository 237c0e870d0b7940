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

DIR = "var/lib/gpuenv"
LOG_DIR = "var/log/gpuenv"


class Busy(RuntimeError):
    """Another gpuenv apply holds the lock."""


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
        self.dir = Path(root) / DIR
        self.path = self.dir / "journal.json"
        self.plan_path = self.dir / "plan.json"
        self.log_path = Path(root) / LOG_DIR / "apply.log"
        self._lock_fd: int | None = None
        self.state = State()

    # -- lock --
    def acquire(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o755)
        fd = os.open(self.dir / "apply.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise Busy(f"another gpuenv apply is running (lock {self.dir / 'apply.lock'})") from None
        self._lock_fd = fd
        self.state = self.read()

    def release(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- state --
    def read(self) -> State:
        try:
            doc = json.loads(self.path.read_text())
        except (OSError, json.JSONDecodeError):
            return State()
        if not isinstance(doc, dict):
            return State()
        known = {k: v for k, v in doc.items() if k in State.__dataclass_fields__}
        return State(**known)

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
        self.log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        with open(self.log_path, "a") as fh:
            fh.write(line + "\n")

    def _write(self) -> None:
        _atomic(self.path, json.dumps(vars(self.state), indent=2) + "\n")


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
