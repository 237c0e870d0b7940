"""The machine a probe reads: the live system, or a sysroot given with ``--root``.

Every file a probe reads goes through a ``Sysroot``, so one ``root`` redirects all of them (as
``distro``'s ``root_dir`` does). Symbolic links are resolved *inside* the root, the way a chroot
would see them: an absolute link target such as ``/usr/src/linux-headers-6.8.0-51-generic`` in a
sysroot points into the sysroot, never at the host. With a root, live sources (NVML, AMD SMI,
uname, the environment, the current process's user) are off, so that an image or a fixture tree
is never mixed with facts of the machine that happens to read it.

A probe runs no command but another Python interpreter, for ``--python PATH`` on the live
machine only, through ``gpuenv.interpreter``.
"""

from __future__ import annotations

import os
import stat

from gpuenv.standins.record import record


@record(frozen=True)
class Sysroot:
    """The root-confined reader every probe reads through (``facts.Host`` is the facts record)."""

    root: str = "/"
    # Live sources on: only for the running machine, never for a given root (even `--root /`,
    # which means "read the files, not the kernel's or the process's view").
    live: bool = True

    @classmethod
    def at(cls, root: str | None) -> Sysroot:
        if root is None:
            return cls("/", True)
        return cls(os.path.realpath(root), False)

    # -- paths -------------------------------------------------------------------------------
    def path(self, path: str) -> str:
        """Host path of ``path`` (absolute, as the probed machine sees it), links resolved in root."""
        if self.root == "/":
            return path
        return self._resolve(path)

    def _resolve(self, path: str) -> str:
        # The same resolution the executor uses for writes: symlinks are followed inside the root.
        from gpuenv.rootpath import resolve

        return resolve(self.root, path)

    # -- reads -------------------------------------------------------------------------------
    def read_text(self, path: str, limit: int = 4 << 20) -> str:
        """Text of a file; raises OSError when it cannot be read. Undecodable bytes are replaced."""
        return self.read_bytes(path, limit).decode("utf-8", errors="replace")

    def read_bytes(self, path: str, limit: int = 1 << 16) -> bytes:
        """At most ``limit`` bytes of a regular file (``rootpath.read_regular``: a sysroot is
        untrusted input; FIFOs and device nodes are never opened)."""
        from gpuenv.rootpath import read_regular

        return read_regular(self.path(path), limit, truncate=True)

    def read_optional(self, path: str) -> str | None:
        """Text of a file, or None when it does not exist (other errors still raise)."""
        try:
            return self.read_text(path)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None

    def exists(self, path: str) -> bool:
        try:
            return os.path.exists(self.path(path))
        except OSError:
            return False

    def is_dir(self, path: str) -> bool:
        try:
            return os.path.isdir(self.path(path))
        except OSError:
            return False

    def is_link(self, path: str) -> bool:
        """Whether ``path`` itself (last component unresolved) is a symbolic link."""
        head, _, name = path.rstrip("/").rpartition("/")
        try:
            return os.path.islink(os.path.join(self.path(head or "/"), name))
        except OSError:
            return False

    def readlink(self, path: str) -> str | None:
        head, _, name = path.rstrip("/").rpartition("/")
        try:
            return os.readlink(os.path.join(self.path(head or "/"), name))
        except OSError:
            return None

    def listdir(self, path: str) -> list[str]:
        """Sorted entries of a directory; empty when it does not exist."""
        try:
            return sorted(os.listdir(self.path(path)))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def stat(self, path: str) -> os.stat_result | None:
        try:
            return os.stat(self.path(path))
        except (FileNotFoundError, NotADirectoryError):
            return None

    def is_char_device(self, path: str) -> bool:
        st = self.stat(path)
        return st is not None and stat.S_ISCHR(st.st_mode)

    def which(self, name: str) -> str | None:
        """Where ``name`` is on PATH (live machine only; None under ``--root``)."""
        if not self.live:
            return None
        return which(name)


def which(name: str) -> str | None:
    """The first executable file ``name`` on PATH, as ``shutil.which`` finds it on POSIX (an
    empty entry is the working directory; a name with a slash is itself checked). Here rather
    than shutil's: importing shutil (zlib, bz2, lzma, fnmatch) costs more than the probe's
    whole PATH lookup."""
    if "/" in name:
        return name if _executable(name) else None
    path = os.environ.get("PATH")
    if path is None:
        path = os.confstr("CS_PATH") or os.defpath
    seen: set[str] = set()
    for directory in path.split(os.pathsep):
        if directory in seen:
            continue
        seen.add(directory)
        candidate = os.path.join(directory, name)
        if _executable(candidate):
            return candidate
    return None


def _executable(path: str) -> bool:
    return os.path.exists(path) and os.access(path, os.X_OK) and not os.path.isdir(path)
