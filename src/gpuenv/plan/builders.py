"""The plain steps a plan is made of, shared by both stacks, both ROCm streams and the purge:
apt-get update, an apt-get install, a vendor key and its sources, a file gpuenv owns or removes,
ldconfig, update-initramfs, the GPU groups (pure: each returns Steps)."""

from __future__ import annotations

import re

from gpuenv.plan.plan import KeyNotTrusted, Kind, Step

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from gpuenv.facts import Facts
    from gpuenv.plan.repos import Key


def pin_key(key: dict[str, Any], version: str, trust: str | None, notes: list[str]) -> None:
    """Pin a ROCm release's repository key (repos.json's ``key``, either stream) only where a
    first-party source confirms its fingerprint, or the user repeated it (--trust-unconfirmed-key):
    else KeyNotTrusted, one line saying where it was read, what to check and what to pass. Either
    way the plan says which it is (#42)."""
    fpr = key["fingerprint"]
    if key.get("confirmed") is True:
        # A confirmed key with a review (no first-party page prints its fingerprint) says where it was
        # read in the review itself; the plain source would repeat it.
        why = f"confirmed, for review: {key['review']}" if key.get("review") else f"confirmed: {key['source']}"
        notes.append(f"ROCm {version}'s repository key {fpr} is {why}")
        return
    if trust != fpr:
        given = f" (--trust-unconfirmed-key {trust} names another key)" if trust else ""
        raise KeyNotTrusted(
            f"ROCm {version}'s repository key {fpr} is not confirmed by AMD (no AMD page publishes it; read in "
            f"{_where_read(key)}){given}: check that `curl -fsSL {key['url']} | gpg --show-keys` prints it and, "
            f"to pin it anyway, repeat it: --trust-unconfirmed-key {fpr}"
        )
    notes.append(
        f"ROCm {version}'s repository key {fpr} is NOT confirmed by AMD, pinned because --trust-unconfirmed-key "
        f"repeated it; where it was read: {key['source']}"
        + (f"; {key['review']}" if key.get("review") else "")
    )


def _where_read(key: dict[str, Any]) -> str:
    """The files a key's fingerprint was read in, as its source names them ('owner/repo path @ commit'),
    without the source's explanations; the whole source where it names none."""
    read = key["source"].split("the key URL")[0]  # what follows cites the URL's page, not the fingerprint
    found = re.findall(r"[\w.-]+/[\w.-]+ [^\s;()]+ @ [0-9a-f]{7,40}", read)
    return "; ".join(dict.fromkeys(found)) or read.rstrip("; ") or key["source"]


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



def key_and_sources(key: Key, lists: list[tuple[str, str]], why: str) -> list[Step]:
    """The vendor key (fetched, held to its pinned fingerprint) and the sources files that trust it."""
    steps = [
        Step(
            id="key",
            kind=Kind.APT_KEY,
            title=f"Fetch the signing key, check fingerprint {key.fingerprint}, write {key.keyring}",
            why=why,
            url=key.url,
            fingerprint=key.fingerprint,
            path=key.keyring,
            mode="0644",
            skip_if="the keyring holds exactly that key",
        )
    ]
    for i, (path, content) in enumerate(lists):
        steps.append(write_file(f"source-{i}", f"Write {path}", why, path, content, kind=Kind.APT_SOURCE))
    return steps


GROUPS_WHY = "/dev/kfd and /dev/dri/renderD* belong to render/video"


def gpu_groups(facts: Facts, user: str | None, notes: list[str], why: str) -> list[Step]:
    """ROCm's device access: the user joins render and video (AMD's prerequisites, both streams).
    ``why`` cites the finding it fixes (the planner names it through the check)."""
    if not user or user == "root":
        notes.append("no --user given (and no SUDO_USER): add the GPU user with usermod -a -G render,video NAME")
        return []
    if facts.user is None or facts.user.name != user:
        # A facts file names the one user it was probed for: another name is not checked.
        notes.append(f"whether the account {user} exists was not checked (the facts do not describe it)")
    return [
        Step(
            id="groups",
            kind=Kind.GROUP_ADD,
            title=f"Add {user} to render and video (effective at next login)",
            why=why,
            user=user,
            groups=("render", "video"),
            argv=("usermod", "-a", "-G", "render,video", user),
            skip_if="the user is already in both groups",
        )
    ]
