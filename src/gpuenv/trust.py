"""Whether a file that decides what root runs could have been changed by another account.

What sudo does for sudoers and OpenSSH for authorized_keys: a file is trusted only when it and
every directory above it belong to a trusted account (root, and for a plan the sudo user) and no
one else can write them. A world-writable directory is accepted only with the sticky bit (/tmp),
where others cannot rename or remove a trusted account's entries. Symbolic links are followed, and
each directory that holds one is checked too: whoever can re-point the link decides the file.
Used for saved plans, the apply journal, and every program or interpreter apply runs as root;
an interpreter a user names to the doctor or verify (``--python``) that fails the check, or
whose import path holds anything another account could change (``untrusted_tree``), runs as an
account that could have changed it, never as root (``unprivileged``, ``gpuenv.interpreter``).
"""

from __future__ import annotations

import os
import stat

_MAX_LINKS = 40


def untrusted(path: str, trusted_uids: frozenset[int] = frozenset({0}), root: str = "/") -> str | None:
    """Why another account could change ``path`` (as seen inside ``root``), or None if none can.

    ``root`` is a chroot's directory: the path is resolved inside it, and the directories from the
    host's / down to the root itself are checked as well."""
    root = os.path.abspath(root)
    if root != "/":
        why = _walk("/", root.lstrip("/").split("/"), trusted_uids, "/")
        if why:
            return why
    start = os.path.abspath(path) if root == "/" else path
    return _walk(root, [p for p in start.split("/") if p not in ("", ".")], trusted_uids, root)


# Where root's commands are found: the system's own directories, no /usr/local (group staff may
# write it on Debian), so that a bare program name means the distribution's program.
SYSTEM_PATH = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
NOBODY = 65534


def untrusted_program(program: str, root: str = "/") -> str | None:
    """Why root must not start ``program`` inside ``root``: another account could have written
    it or a directory above it, or one of the system directories searched before it for a bare
    name (where it could plant one of its own first). None when no one could, and when the
    program is not there at all (the run then fails on its own).

    An absolute path is checked as it is; a bare name as exec finds it on ``SYSTEM_PATH``
    inside the root; a relative path with a slash is never run (it would be found from the
    current directory)."""
    if program.startswith("/"):
        return _present(untrusted(program, root=root))
    if "/" in program or not program:
        return f"{program!r} is a relative path"
    for directory in SYSTEM_PATH:
        why = _present(untrusted(directory, root=root))
        if why:
            return why
        if _on(directory, program, root):
            return _present(untrusted(f"{directory}/{program}", root=root))
    return None


def unprivileged(program: str) -> list[str]:
    """What to put before ``program`` (an interpreter a user named) so that root does not run
    what another account could have changed: nothing when not root or when no other account
    could (``untrusted``); else setpriv to the account that owns the program as named, or its
    directory (a venv's bin/python, a link its owner made), and to nobody when root owns both
    (a directory others may write), with that file's group and no other (its environment is
    gpuenv.interpreter's to choose). RuntimeError when no trusted setpriv is there: then it is not run at all."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    why = untrusted(program)
    if why is None:
        return []
    uid = gid = NOBODY
    for path in (program, os.path.dirname(program) or "."):
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_uid != 0:
            uid, gid = info.st_uid, info.st_gid
            break
    return setpriv_as(uid, gid, program, why)


def untrusted_tree(top: str) -> tuple[str, tuple[int, int]] | None:
    """Why another account could change what Python would import from ``top`` (a directory on
    an import path, or a file such as a zipped standard library), and who (uid, gid) to run as
    instead: the path as ``untrusted`` judges it, then every file and directory beneath it, each
    owned by root and writable by no one else (a sticky directory too: anyone could add a module
    to it). A symbolic link beneath is judged by where it leads, and a directory it leads to is
    walked as well. None when no one could, and when ``top`` is not there."""
    why = _present(untrusted(top))
    if why:
        return why, _writer(top)
    seen: set[str] = set()
    todo = [os.path.realpath(top)]
    while todo:
        current = todo.pop()
        if current in seen or not os.path.isdir(current):
            continue
        seen.add(current)
        try:
            names = os.listdir(current)
        except OSError as exc:
            return f"{current}: {exc.strerror or exc}", (NOBODY, NOBODY)
        for name in names:
            path = f"{current}/{name}"
            try:
                info = os.lstat(path)
            except OSError as exc:
                return f"{path}: {exc.strerror or exc}", (NOBODY, NOBODY)
            if stat.S_ISLNK(info.st_mode):
                why = _present(untrusted(path))
                if why:
                    return why, _writer(path)
                todo.append(os.path.realpath(path))
            elif info.st_uid != 0:
                return f"{path} belongs to uid {info.st_uid}", (info.st_uid, info.st_gid)
            elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return f"{path} is writable by others (mode {stat.S_IMODE(info.st_mode):04o})", (NOBODY, NOBODY)
            elif stat.S_ISDIR(info.st_mode):
                todo.append(path)
    return None


def _writer(path: str) -> tuple[int, int]:
    """(uid, gid) of the first account other than root that owns ``path`` or a directory above
    it (links followed); nobody's when only a group or everyone could change it."""
    probe = os.path.abspath(path)
    while True:
        try:
            info = os.stat(probe)
            if info.st_uid != 0:
                return info.st_uid, info.st_gid
        except OSError:
            pass
        parent = os.path.dirname(probe)
        if parent == probe:
            return NOBODY, NOBODY
        probe = parent


def setpriv_as(uid: int, gid: int, what: str, why: str) -> list[str]:
    """What to put before a command to run it as ``uid``:``gid`` with no other group (``what``
    could be changed by that account: ``why``). RuntimeError when no setpriv of root's is there:
    then it is not run at all."""
    setpriv = next((f"{d}/setpriv" for d in SYSTEM_PATH if _on(d, "setpriv", "/")), None)
    if setpriv is None or untrusted_program(setpriv):
        raise RuntimeError(f"{what}: another account could change it ({why}), and without a setpriv "
                           "of root's it cannot be run as that account; not run as root")  # fmt: skip
    return [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]


def _on(directory: str, program: str, root: str) -> bool:
    """Whether exec would find ``program`` in ``directory`` inside ``root``."""
    from gpuenv.rootpath import resolve

    found = resolve(root, f"{directory}/{program}")
    return os.path.isfile(found) and os.access(found, os.X_OK)


def _present(why: str | None) -> str | None:
    """``why`` unless it says only that the path is not there yet (nothing to be run from it)."""
    return None if why is None or why.endswith("does not exist") else why


def _walk(base: str, parts: list[str], uids: frozenset[int], root: str) -> str | None:
    done: list[str] = []
    todo = list(parts)
    links = 0
    why = _check(base, uids, is_dir=True)
    if why:
        return why
    while todo:
        name = todo.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            if done:
                done.pop()
            continue
        here = os.path.join(base, *done, name)
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            return f"{here} does not exist"
        except OSError as exc:
            return f"{here}: {exc.strerror or exc}"
        if stat.S_ISLNK(info.st_mode):
            # In a directory others may write (accepted above only for its sticky bit), the
            # link's owner can replace it at will: it must be a trusted account (as the kernel's
            # protected_symlinks rule, which not every system has on).
            if info.st_uid not in uids and _others_write(os.path.join(base, *done)):
                return f"{here} is a symbolic link of uid {info.st_uid} in a directory others can write"
            links += 1
            if links > _MAX_LINKS:
                return f"too many symbolic links resolving {here}"
            target = os.readlink(here)
            if target.startswith("/"):
                done = []
            todo = [p for p in target.split("/") if p] + todo
            continue
        last = not todo
        if not last and not stat.S_ISDIR(info.st_mode):
            return f"{here} is not a directory"
        why = _check(here, uids, is_dir=not last, info=info)
        if why:
            return why
        done.append(name)
    return None


def _others_write(directory: str) -> bool:
    try:
        return bool(os.lstat(directory).st_mode & (stat.S_IWGRP | stat.S_IWOTH))
    except OSError:
        return True  # unknown: not trusted


def _check(path: str, uids: frozenset[int], is_dir: bool, info: os.stat_result | None = None) -> str | None:
    try:
        info = info or os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if info.st_uid not in uids:
        return f"{path} belongs to uid {info.st_uid}"
    writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and not (is_dir and info.st_mode & stat.S_ISVTX):
        who = "everyone" if info.st_mode & stat.S_IWOTH else f"group {info.st_gid}"
        return f"{path} is writable by {who} (mode {stat.S_IMODE(info.st_mode):04o})"
    return None
