"""GPU device nodes: /dev/kfd, /dev/dri/renderD*, /dev/nvidia*, /dev/dxg, with mode, group and
whether the probed user can open them read-write.

A sysroot kept in git cannot hold device nodes, so there a *regular file* stands in for one; it
may hold one line in ``ls -l`` form, ``crw-rw---- root render``, giving the node's mode, owner
and group (without it, the file's own mode and group are used), and after them the node's
``MAJOR, MINOR`` as ``ls -l`` prints them (``crw-rw-rw- root root 195, 0``), which the device
cgroup's rules are judged by.
"""

from __future__ import annotations

import re
import stat as st

from gpuenv.facts import DeviceNode, User
from gpuenv.probe.host import Sysroot

ALWAYS = ("/dev/kfd", "/dev/nvidiactl", "/dev/dxg")
_NVIDIA = r"nvidia([0-9]+|-uvm|-uvm-tools|-modeset)$"
_LS_MODE = r"^[cb-]([r-][w-][xsS-]){2}[r-][w-][xtT-]$"


def parse_ls_mode(text: str) -> tuple[int, str | None, str | None]:
    """``crw-rw---- root render`` -> (0o660, "root", "render")."""
    fields = text.split()
    if not fields or not re.match(_LS_MODE, fields[0]):
        raise ValueError(f"not an ls -l mode line: {text.strip()[:40]!r}")
    bits = 0
    for i, ch in enumerate(fields[0][1:]):
        if ch not in "-STs" or ch in "st":
            bits |= 1 << (8 - i)
    owner = fields[1] if len(fields) > 1 else None
    group = fields[2] if len(fields) > 2 else None
    return bits, owner, group


def parse_ls_numbers(text: str) -> tuple[int, int] | None:
    """``crw-rw-rw- root root 195, 0`` -> (195, 0); None when the line gives no numbers."""
    m = re.search(r"\s(\d+),\s*(\d+)\s*$", text.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def node_paths(host: Sysroot) -> list[str]:
    paths = list(ALWAYS)
    paths += [f"/dev/dri/{n}" for n in host.listdir("/dev/dri") if n.startswith("renderD")]
    # Hundreds of names in /dev: a C-level test first, the pattern only on a box with NVIDIA nodes.
    paths += [f"/dev/{n}" for n in host.listdir("/dev") if n.startswith("nvidia") and re.match(_NVIDIA, n)]
    return list(dict.fromkeys(paths))


def can_open(mode: int, owner_uid: int | None, group: str | None, user: User | None) -> bool | None:
    """Read-write access by permission bits alone (ACLs are not read)."""
    if user is None or user.uid is None:
        return None
    if user.uid == 0:
        return True
    if owner_uid is not None and owner_uid == user.uid:
        return mode & 0o600 == 0o600
    if group is not None and group in user.groups:
        return mode & 0o060 == 0o060
    return mode & 0o006 == 0o006


def probe(host: Sysroot, user: User | None, current_user: bool) -> dict[str, DeviceNode] | None:
    """None when the root has no /dev at all (a chroot without /dev mounted: unknown)."""
    if not host.is_dir("/dev"):
        return None
    from gpuenv.probe import cgroup
    from gpuenv.probe.users import group_names, parse_passwd

    rules = cgroup.device_rules(host)
    gids = group_names(host)
    uids = {e.name: e.uid for e in parse_passwd(host.read_optional("/etc/passwd") or "")}
    out: dict[str, DeviceNode] = {}
    for path in node_paths(host):
        info = host.stat(path)
        if info is None:
            out[path] = DeviceNode(exists=False)
            continue
        owner_uid: int | None
        mode, owner_uid, group = st.S_IMODE(info.st_mode), info.st_uid, gids.get(info.st_gid)
        numbers: tuple[int, int] | None = None
        if st.S_ISCHR(info.st_mode):
            import os

            numbers = os.major(info.st_rdev), os.minor(info.st_rdev)
        elif not host.live:
            try:
                line = host.read_optional(path) or ""
                mode, owner, group = parse_ls_mode(line)
                owner_uid = uids.get(owner) if owner else None
                numbers = parse_ls_numbers(line)
            except (ValueError, OSError):
                pass  # no readable stand-in line (or not a regular file): its own mode and group stand
        if host.live and current_user:
            import os

            accessible: bool | None = os.access(path, os.R_OK | os.W_OK)
        else:
            accessible = can_open(mode, owner_uid, group, user)
        allowed = None if rules is None or numbers is None else cgroup.allows(rules, *numbers)
        out[path] = DeviceNode(
            exists=True, mode=f"{mode:04o}", group=group, accessible=accessible, cgroup_allowed=allowed
        )
    return out
