"""The user gpuenv judges device access for, and that user's groups, from /etc/passwd and
/etc/group (under the root, so a sysroot's users are read, never the host's)."""

from __future__ import annotations

from gpuenv.facts import User
from gpuenv.probe.host import Sysroot
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from types import ModuleType


@record(frozen=True)
class PasswdEntry:
    name: str
    uid: int
    gid: int


def parse_passwd(text: str) -> list[PasswdEntry]:
    out = []
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 4 and fields[0] and _uint(fields[2]) and _uint(fields[3]):
            out.append(PasswdEntry(fields[0], int(fields[2]), int(fields[3])))
    return out


def parse_group(text: str) -> list[tuple[str, int, tuple[str, ...]]]:
    """(name, gid, members) of each /etc/group line."""
    out = []
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 4 and fields[0] and _uint(fields[2]):
            members = tuple(m.strip() for m in fields[3].split(",") if m.strip())
            out.append((fields[0], int(fields[2]), members))
    return out


def _uint(text: str) -> bool:
    # str.isdigit() also accepts digits int() refuses (superscripts): ASCII only.
    return text.isascii() and text.isdigit()


def groups_of(entry: PasswdEntry, groups: list[tuple[str, int, tuple[str, ...]]]) -> tuple[str, ...]:
    names = [g for g, gid, members in groups if gid == entry.gid or entry.name in members]
    return tuple(dict.fromkeys(names))


def group_names(host: Sysroot) -> dict[int, str]:
    return {gid: name for name, gid, _ in parse_group(host.read_optional("/etc/group") or "")}


def probe(host: Sysroot, name: str | None) -> User | None:
    """The named user, else (live only) the current process's user; None under a root without one.

    Raises LookupError for a name that is not in the machine's /etc/passwd.
    """
    passwd = parse_passwd(host.read_optional("/etc/passwd") or "")
    groups = parse_group(host.read_optional("/etc/group") or "")
    if name is None:
        if not host.live:
            return None
        import os

        uid = os.getuid()
        entry = next((e for e in passwd if e.uid == uid), None)
        if entry is None:
            # A user from NSS (LDAP, sssd) rather than /etc/passwd: ask the C library.
            import grp
            import pwd

            try:
                pw = pwd.getpwuid(uid)
            except KeyError:
                return User(name=None, uid=uid, groups=())
            names = tuple(grp.getgrgid(g).gr_name for g in os.getgroups() if _has_gid(grp, g))
            return User(name=pw.pw_name, uid=uid, groups=names)
        return User(name=entry.name, uid=entry.uid, groups=groups_of(entry, groups))
    entry = next((e for e in passwd if e.name == name), None)
    if entry is None and host.live:
        # On the live machine the user may come from NSS (LDAP, sssd) rather than /etc/passwd.
        import grp
        import pwd

        try:
            account: pwd.struct_passwd | None = pwd.getpwnam(name)
        except KeyError:
            account = None
        if account is not None:
            member_of = [g.gr_name for g in grp.getgrall() if g.gr_gid == account.pw_gid or name in g.gr_mem]
            return User(name=account.pw_name, uid=account.pw_uid, groups=tuple(dict.fromkeys(member_of)))
    if entry is None:
        raise LookupError(f"no user {name!r} in /etc/passwd")
    return User(name=entry.name, uid=entry.uid, groups=groups_of(entry, groups))


def _has_gid(grp: ModuleType, gid: int) -> bool:
    try:
        grp.getgrgid(gid)
    except KeyError:
        return False
    return True
