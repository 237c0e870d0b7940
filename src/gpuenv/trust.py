"""Whether a file that decides what root runs could have been changed by another account.

What sudo does for sudoers and OpenSSH for authorized_keys: a file is trusted only when it and
every directory above it belong to a trusted account (root, and for a plan the sudo user) and no
one else can write them. A world-writable directory is accepted only with the sticky bit (/tmp),
where others cannot rename or remove a trusted account's entries. Symbolic links are followed, and
each directory that holds one is checked too: whoever can re-point the link decides the file.
Used for saved plans, the apply journal, and every program or interpreter apply runs as root.
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
