"""The plain steps a plan is made of, shared by both stacks and the purge: apt-get update, an
apt-get install, a file gpuenv owns or removes, ldconfig, update-initramfs (pure: each returns a
Step)."""

from __future__ import annotations

from gpuenv.plan.plan import Kind, Step


def apt_update() -> Step:
    return Step(
        id="apt-update",
        kind=Kind.APT_UPDATE,
        title="apt-get update (once, after the sources changed)",
        why="read the new vendor sources",
        argv=("apt-get", "update"),
        skip_if="every package the plan installs is already installed",
    )



def apt_install(step_id: str, title: str, why: str, packages: list[str], reboot: bool = False) -> Step:
    return Step(
        id=step_id,
        kind=Kind.APT_INSTALL,
        title=title,
        why=why,
        packages=tuple(packages),
        argv=("apt-get", "install", "-y", *packages),
        reboot_after=reboot,
        skip_if="installed",
    )


def write_file(step_id: str, title: str, why: str, path: str, content: str, kind: Kind = Kind.WRITE_FILE) -> Step:
    """A system file gpuenv owns: world-readable config, rewritten only when it differs."""
    return Step(
        id=step_id,
        kind=kind,
        title=title,
        why=why,
        path=path,
        content=content,
        mode="0644",
        skip_if="the file already has this content and mode",
    )


def remove_file(step_id: str, title: str, why: str, path: str) -> Step:
    """A file removed (a link itself, never its target); nothing to do when it is absent."""
    return Step(
        id=step_id, kind=Kind.REMOVE_FILE, title=title, why=why, path=path, skip_if="the file is absent"
    )


def ldconfig(step_id: str, why: str, after: tuple[str, ...]) -> Step:
    return Step(
        id=step_id,
        kind=Kind.COMMAND,
        title="Refresh the loader cache (ldconfig)",
        why=why,
        argv=("ldconfig",),
        after=after,
        skip_if="none of the steps it follows changed anything",
    )


def initramfs(step_id: str, why: str, after: tuple[str, ...], reboot: bool) -> Step:
    return Step(
        id=step_id,
        kind=Kind.COMMAND,
        title="Rebuild the initramfs (update-initramfs -u)",
        why=why,
        argv=("update-initramfs", "-u"),
        only_if_exists="/usr/sbin/update-initramfs",
        after=after,
        reboot_after=reboot,
        skip_if="update-initramfs is absent, or the blacklist did not change",
    )

