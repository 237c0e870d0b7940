"""What apply checks before it changes anything, and clears before it resumes.

Before any change: no other package manager holds dpkg's lock, dpkg was not left half-done, and
a program a step runs as root (when it is there already) is root's alone. Before a resume: the
lock files a killed usermod or groupadd left in /etc are cleared, so the step can run again.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from gpuenv.execute.runner import Untrusted
from gpuenv.plan.plan import Step
from gpuenv.rootpath import in_root, read_regular
from gpuenv.trust import untrusted_program


def check_program(root: str, step: Step) -> None:
    """Before any change: a step's program, when it is there already, must be root's alone."""
    program = (step.argv or ("",))[0]
    if os.geteuid() != 0:
        return
    why = untrusted_program(program, root)
    if why:
        raise Untrusted(
            f"step {step.id}: refusing to run {program} as root: {why}. Nothing was changed; "
            "nothing a non-root account can write is run as root."
        )


def dpkg_locked(root: str) -> bool:
    import fcntl

    # apt takes lock-frontend then lock; dpkg run by hand (or an old apt) takes only lock.
    for name in ("lock-frontend", "lock"):
        path = in_root(root, f"/var/lib/dpkg/{name}")
        if not path.is_file():
            continue
        fd = os.open(path, os.O_RDONLY)  # lockf needs write access; F_SETLK with a read lock does not
        try:
            # apt and dpkg hold write locks (fcntl F_SETLK), which conflict with this read lock.
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        else:
            fcntl.lockf(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    return False


def dpkg_interrupted(root: str) -> bool:
    updates = in_root(root, "/var/lib/dpkg/updates")
    return updates.is_dir() and any(p.name.isdigit() for p in updates.iterdir())


_SHADOW_DBS = ("passwd", "shadow", "group", "gshadow", "subuid", "subgid")


def clear_shadow_leftovers(root: str, log: Callable[[str], None]) -> None:
    """Remove what a killed usermod or groupadd (ours, or a maintainer script's) left in /etc.

    shadow locks /etc/group by writing its pid to /etc/group.PID, linking that to /etc/group.lock
    and unlinking it; a kill -9 or power cut in between leaves /etc/group.PID for good (a stale
    .lock shadow itself clears on its next run). Called only when resuming our own interrupted
    run. Removed: a regular root-owned file of one link named DB.PID, holding exactly PID, whose
    process is gone. Anything else of such a name (a live process's lock, other content, a
    symlink, a FIFO) is left alone."""
    etc = in_root(root, "/etc")
    try:
        names = os.listdir(etc)
    except OSError:
        return
    for name in names:
        db, _, pid = name.rpartition(".")
        if db not in _SHADOW_DBS or not (pid.isascii() and pid.isdigit()):
            continue
        path = os.path.join(etc, name)
        if not _lock_left(path, pid) or _alive(int(pid)):
            continue
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue  # removed meanwhile (by whom, not ours to say)
        log(f"removed /etc/{name}: the lock file of a user-database command the interrupted run started (pid {pid}, gone)")


def _lock_left(path: str, pid: str) -> bool:
    """Whether ``path`` is a lock file as shadow writes it: root's, of one link, a regular file
    holding the pid alone (no newline)."""
    try:
        st = os.lstat(path)
        # The safe reader refuses a link, a FIFO, a device, and anything longer than the pid.
        return st.st_uid == 0 and st.st_nlink == 1 and read_regular(path, len(pid), nofollow=True) == pid.encode()
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        pass  # another account's process is alive; a pid beyond any is not ours to judge
    # 0 names our own process group: never a lock shadow made, and kept.
    return True
