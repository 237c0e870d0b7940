"""Paths under the root, resolved the way a process chrooted into it would see them.

``Path(root) / path`` is not enough: a symlink inside the root (``etc/apt/sources.list.d ->
/etc``, absolute, or ``-> ../../../../etc`` relative) would send a write under ``--root`` to the
host's own files. ``in_root`` walks the path one component at a time and resolves every
symlink *relative to the root* (an absolute target starts again at the root, ``..`` stops at
the root), so the result always lies under the root. The last component is followed only
when asked: a write replaces a symlink and a remove unlinks it, never its target.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (the probe's start-up)
if TYPE_CHECKING:
    from pathlib import Path

_MAX_LINKS = 40  # as the kernel's ELOOP limit


class PathEscape(OSError):
    """A path that cannot be resolved inside the root (a symlink loop)."""


def in_root(root: str, path: str, *, follow_last: bool = True) -> Path:
    """``resolve`` as a Path (for the executor and the journal)."""
    from pathlib import Path

    return Path(resolve(root, path, follow_last=follow_last))


def resolve(root: str, path: str, *, follow_last: bool = True) -> str:
    """The host path of ``path`` under ``root``, every symlink resolved inside the root."""
    root = os.path.abspath(root)
    todo = [p for p in path.split("/") if p not in ("", ".")]
    done: list[str] = []
    links = 0
    while todo:
        name = todo.pop(0)
        if name == "..":
            if done:
                done.pop()
            continue
        here = os.path.join(root, *done, name)
        if (todo or follow_last) and os.path.islink(here):
            links += 1
            if links > _MAX_LINKS:
                raise PathEscape(f"too many symbolic links under {root} resolving {path}")
            target = os.readlink(here)
            if target.startswith("/"):
                done = []
            todo = [p for p in target.split("/") if p not in ("", ".")] + todo
            continue
        done.append(name)
    return os.path.join(root, *done)


class NotRegular(OSError):
    """A FIFO, socket, device node or directory where a file was expected: never opened."""


class TooLarge(OSError):
    """A file over the size its reader accepts."""


def read_regular(path: str | os.PathLike[str], limit: int, *, truncate: bool = False, nofollow: bool = False) -> bytes:
    """The bytes of a regular file (a host path, already resolved), at most ``limit`` of them.

    The one safe file read of gpuenv, shared by the probe, the executor, the journal and the
    JSON inputs: every file may be hostile. The type is checked before opening (a FIFO would
    block, opening a device node can act on the device) and again on the open descriptor
    (O_NONBLOCK: a FIFO swapped in between does not wait for a writer). /dev/null (how systemd
    masks a file) reads as empty. A file over ``limit`` raises TooLarge, or is cut at ``limit``
    with ``truncate`` (sysfs and procfs files, which report no size). ``nofollow``: a symbolic
    link at ``path`` itself is refused, not followed (gpuenv's own state files are never links)."""
    if _kind(os.lstat(path) if nofollow else os.stat(path), path) == "null":
        return b""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_NOFOLLOW if nofollow else 0)
    fd = os.open(path, flags)
    try:  # the descriptor itself, not a file object: a probe reads some seventy small files
        info = os.fstat(fd)
        if _kind(info, path) == "null":
            return b""
        # Small reads: some sysctl files fail with ENOMEM when asked for megabytes at once. A
        # file that states a larger size (dpkg's status file, never a procfs or sysfs one: they
        # state 0 or 4096) is asked for in one read, one byte past its size to see growth.
        step = max(65536, info.st_size + 1)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(step, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        if not truncate:
            raise TooLarge(f"{path}: larger than {limit} bytes")
        data = data[:limit]
    return data


def read_file(root: str, path: str, limit: int, *, truncate: bool = False, follow_last: bool = True) -> bytes:
    """``read_regular`` of ``path`` as a process chrooted into ``root`` would see it (with
    ``follow_last=False``, a link at the path itself is refused)."""
    real = in_root(root, path, follow_last=follow_last)
    return read_regular(real, limit, truncate=truncate, nofollow=not follow_last)


def _kind(info: os.stat_result, path: str | os.PathLike[str]) -> str:
    if stat.S_ISREG(info.st_mode):
        return "file"
    if stat.S_ISCHR(info.st_mode) and (os.major(info.st_rdev), os.minor(info.st_rdev)) == (1, 3):
        return "null"
    what = (
        "a directory" if stat.S_ISDIR(info.st_mode)
        else "a symbolic link" if stat.S_ISLNK(info.st_mode)
        else "not a regular file"
    )  # fmt: skip
    raise (IsADirectoryError if stat.S_ISDIR(info.st_mode) else NotRegular)(f"{path}: {what}")


def make_dirs(path: Path, stop: Path, mode: int = 0o755) -> list[Path]:
    """Create ``path`` and its missing parents up to ``stop``, each with exactly ``mode``.

    ``Path.mkdir(parents=True, mode=...)`` gives the mode to the last directory only: the
    parents it makes get 0o777 less the umask, world-writable under umask 0, and root then writes
    system files into them. Returns the directories made, outermost first."""
    missing = []
    here = path
    while not here.exists() and here != stop and here != here.parent:
        missing.append(here)
        here = here.parent
    made = []
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=mode)
        except FileExistsError:
            continue  # made meanwhile by someone else: theirs, left as it is
        os.chmod(directory, mode)  # not less than mode because of a umask, not more either
        made.append(directory)
    return made
