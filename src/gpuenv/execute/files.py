"""The files a plan writes, removes and reads back, all under the root.

Every path is resolved inside the root (``rootpath.in_root``): a symlink in a chroot, absolute
or climbing with "..", is followed as the chroot would see it and never reaches the host.
``ReadOnlyFiles`` is the dry run's: it refuses any change by construction.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from gpuenv.execute.runner import DryRunViolation
from gpuenv.rootpath import in_root, make_dirs, read_file

_FILE_MAX = 1 << 20  # every file a plan writes or reads back is a few KB


class Files:
    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)

    def at(self, path: str, follow_last: bool = True) -> Path:
        """Where path lies under the root, symlinks resolved inside the root (never out of it)."""
        return in_root(self.root, path, follow_last=follow_last)

    def read(self, path: str) -> bytes | None:
        """A file's bytes (the one safe reader: a FIFO or device node there is never opened, and
        raises; so does a file over 1 MiB), or None when there is no file."""
        try:
            return read_file(self.root, path, _FILE_MAX)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None  # a directory in the way: not the file; writing it fails with a clear error

    def mode(self, path: str) -> str | None:
        try:
            return f"{stat.S_IMODE(self.at(path).stat().st_mode):04o}"
        except (FileNotFoundError, NotADirectoryError):
            return None

    def exists(self, path: str) -> bool:
        return os.path.lexists(self.at(path, follow_last=False))

    def write(self, path: str, data: bytes, mode: str) -> None:
        """Atomic: a temporary file in the same directory, fsync, chmod, rename (a symlink at
        path is replaced, not followed)."""
        target = self.at(path, follow_last=False)
        if target == Path(self.root):
            raise IsADirectoryError(f"refusing to write the root itself ({path})")
        make_dirs(target.parent, Path(os.path.abspath(self.root)))
        prefix = f".{target.name}.gpuenv-"
        _remove_stale(target.parent, prefix)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, int(mode, 8))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def remove(self, path: str) -> None:
        self.at(path, follow_last=False).unlink(missing_ok=True)  # a symlink itself, not its target


def _remove_stale(directory: Path, prefix: str) -> None:
    """Temporary files of an earlier write of the same file that was cut off (power loss, kill -9)
    before its rename: only regular files carrying this exact prefix (ours), never followed."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(prefix) and entry.is_file(follow_symlinks=False):
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass


class ReadOnlyFiles(Files):
    def write(self, path: str, data: bytes, mode: str) -> None:
        raise DryRunViolation(f"dry run refused to write {path}")

    def remove(self, path: str) -> None:
        raise DryRunViolation(f"dry run refused to remove {path}")
