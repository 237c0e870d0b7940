"""The rule for what root trusts, written once (README "Security: what root runs and reads").

Root executes, imports or reads as trusted only a file that root owns and no other account can
write, and so is every directory from / down to it; a symbolic link on the way counts as what it
points at (and the directory holding the link is judged too: whoever can re-point the link
decides the file). A world-writable directory counts only with the sticky bit (/tmp): others can
then neither rename nor remove root's entries in it. That is what sudo does for sudoers and
OpenSSH for authorized_keys. ``untrusted`` says why a path fails it; saved plans, the apply
journal, the matrices state directory, every program apply runs as root and every interpreter
root starts are judged by it. An interpreter a user names to the doctor or verify
(``--python``) that fails it, or whose import path holds anything another account could change
(``untrusted_tree``), runs as an account that could have changed it, never as root
(``unprivileged``, ``gpuenv.interpreter``).

One exception, for writes only: a directory the distribution ships writable by a system group
(Ubuntu's /var/log, root:syslog 0775; Debian's /var/local and /var/mail) may be on the way to a
directory root writes into, but only when the write goes through a file descriptor: ``open_dir``
opens each directory from / with O_NOFOLLOW, checks what it opened, and files are then made
relative to that descriptor, so a rename in the group-writable directory cannot redirect them.
``temp_parent`` is where root's temporary directories go: only a directory that passes the rule.
install-scripts/bootstrap.sh applies the same rule in sh (its ``check_path``).
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


# Debian's and Ubuntu's system groups (adduser's FIRST_SYSTEM_GID..LAST_SYSTEM_GID are below
# 1000): the only groups whose write bit ``open_dir`` lets pass on the way to a directory.
_SYSTEM_GIDS = 1000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UntrustedDir(OSError):
    """A directory root would write into, or one above it, fails the rule (exit 3)."""


def open_dir(path: str, root: str = "/", *, make: int | None = None) -> int:
    """A descriptor of the directory ``path`` inside ``root``, for root to make files relative to
    (``os.open(name, ..., dir_fd=fd)``). Every directory from the host's / down to it is opened
    relative to the one before with O_NOFOLLOW and judged on what was opened: root's, writable by
    no other account; one of a system group's on the way (Ubuntu's /var/log) passes, since nothing
    is then reached through its names, never the last. A symbolic link on the way is read once and
    followed (inside ``root``) as what it points at. (Not as root, the caller's own directories pass
    too.) ``make``: missing directories are made with
    that mode. UntrustedDir (naming the directory, its owner and mode), or OSError."""
    stack = [(os.open("/", _DIR_FLAGS), "/")]
    try:
        _judge_open(stack, last=root == "/" and not path.strip("/"))
        _descend(stack, 1, os.path.abspath(root).split("/"), None)
        _descend(stack, len(stack), path.split("/"), make)
        fd = stack.pop()[0]
    finally:
        for other, _ in stack:
            os.close(other)
    return fd


def _descend(stack: list[tuple[int, str]], base: int, parts: list[str], make: int | None) -> None:
    """Open ``parts`` below ``stack[-1]``; an absolute link target starts again at ``stack[base - 1]``."""
    import errno

    todo = [p for p in parts if p not in ("", ".")]
    links = 0
    while todo:
        name = todo.pop(0)
        if name == "..":
            if len(stack) > base:
                os.close(stack.pop()[0])
            continue
        fd, where = stack[-1]
        here = os.path.join(where, name)
        try:
            new = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if make is None:
                raise UntrustedDir(errno.ENOENT, f"{here} does not exist") from None
            try:
                os.mkdir(name, make, dir_fd=fd)
            except FileExistsError:
                pass  # made meanwhile by someone: judged below as any other
            new = os.open(name, _DIR_FLAGS, dir_fd=fd)
            if os.fstat(new).st_uid == os.geteuid():
                os.fchmod(new, make)  # exactly ``make``, whatever the umask
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or not stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode):
                raise
            # Where others may write (a system group's /var/log), whoever can replace the link
            # decides where it leads: only root's link in a sticky directory is followed there.
            held, link = os.fstat(fd), os.lstat(name, dir_fd=fd)
            if held.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not (held.st_mode & stat.S_ISVTX and link.st_uid == 0):
                raise UntrustedDir(
                    f"{here} is a symbolic link in {where}, which others can write "
                    f"(owner uid {held.st_uid}, group {held.st_gid}, mode {stat.S_IMODE(held.st_mode):04o})"
                ) from None
            links += 1
            if links > _MAX_LINKS:
                raise UntrustedDir(errno.ELOOP, f"too many symbolic links resolving {here}") from None
            target = os.readlink(name, dir_fd=fd)
            if target.startswith("/"):
                while len(stack) > base:
                    os.close(stack.pop()[0])
            todo = [p for p in target.split("/") if p not in ("", ".")] + todo
            continue
        stack.append((new, here))
        _judge_open(stack, last=not todo)


def _judge_open(stack: list[tuple[int, str]], last: bool) -> None:
    fd, where = stack[-1]
    why = _judge(where, os.fstat(fd), frozenset({0, os.geteuid()}), is_dir=True, group_ok=not last)
    if why:
        raise UntrustedDir(why)


def temp_parent() -> str | None:
    """Where root makes its temporary directories (matrix update's staging, gpg homes): $TMPDIR
    only where it passes the rule (``sudo -E`` keeps a user's), else /run, /tmp or /var/tmp,
    the first that passes. None when not root: the caller's own choice (tempfile's)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    for candidate in (os.environ.get("TMPDIR"), "/run", "/tmp", "/var/tmp"):
        if candidate and candidate.startswith("/") and os.path.isdir(candidate) and untrusted_dir(candidate) is None:
            return candidate
    raise UntrustedDir("no directory for root's temporary files passes the rule: $TMPDIR, /run, /tmp, /var/tmp")


def untrusted_dir(directory: str) -> str | None:
    """Why root's entries in ``directory`` are not root's alone, or None: the directory passes
    the rule as a directory (a sticky one too: /tmp, where others can neither rename nor remove
    them), and so does every directory above it."""
    parent = os.path.dirname(directory.rstrip("/")) or "/"
    try:
        info = os.stat(directory)
    except OSError as exc:
        return f"{directory}: {exc.strerror or exc}"
    return untrusted(parent) or _judge(directory, info, frozenset({0}), is_dir=True)


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
            elif why := _judge(path, info, frozenset({0}), is_dir=False):  # a sticky directory too
                return why, ((info.st_uid, info.st_gid) if info.st_uid != 0 else (NOBODY, NOBODY))
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
    return _judge(path, info, uids, is_dir)


def _judge(path: str, info: os.stat_result, uids: frozenset[int], is_dir: bool, group_ok: bool = False) -> str | None:
    """Why ``info`` (of ``path``) fails the rule: the message names the path, owner and mode."""
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid not in uids:
        return f"{path} belongs to uid {info.st_uid} (mode {mode:04o})"
    writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and not (is_dir and info.st_mode & stat.S_ISVTX):
        if group_ok and not info.st_mode & stat.S_IWOTH and info.st_gid < _SYSTEM_GIDS:
            return None
        who = "everyone" if info.st_mode & stat.S_IWOTH else f"group {info.st_gid}"
        return f"{path} is writable by {who} (owner uid {info.st_uid}, mode {mode:04o})"
    return None
