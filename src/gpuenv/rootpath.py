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
from pathlib import Path

_MAX_LINKS = 40  # as the kernel's ELOOP limit


class PathEscape(OSError):
    """A path that cannot be resolved inside the root (a symlink loop)."""


def in_root(root: str, path: str, *, follow_last: bool = True) -> Path:
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
    return Path(root, *done)
