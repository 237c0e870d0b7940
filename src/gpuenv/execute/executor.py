"""Dry run and apply of a Plan.

Every step kind has two parts: ``done`` (read-only: is the machine already in the step's end
state?) and ``act`` (make it so). A dry run calls only ``done`` and apt's simulation, and it is
built with a ``SimulatingRunner`` and ``ReadOnlyFiles``: the one place that decides dry run is
``dry_run()`` choosing those two objects, and they refuse any change by construction.

Apply: lock and journal, refuse (before any change) a stale plan, blockers without --force, a
locked or interrupted dpkg, a key whose fingerprint differs from the pinned one, and apt removals
the plan did not name; then run the steps in order, skipping those already done, so that a
second run changes nothing and --resume continues after a crash (first clearing the lock files a
killed usermod or groupadd leaves in /etc).

Every path is resolved inside the root (``rootpath.in_root``): a symlink in a chroot, absolute
or climbing with "..", is followed as the chroot would see it and never reaches the host.
"""

from __future__ import annotations

import ipaddress
import os
import re
import stat
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from gpuenv.execute import apt
from gpuenv.execute.journal import DIR as JOURNAL_DIR
from gpuenv.execute.journal import Busy, Journal, JournalError
from gpuenv.execute.runner import CommandError, DryRunViolation, Runner, SimulatingRunner, Untrusted
from gpuenv.exitcodes import Exit
from gpuenv.facts import Facts
from gpuenv.plan.plan import Kind, Plan, Step
from gpuenv.plan.planfile import digest as plan_digest
from gpuenv.record import field, record
from gpuenv.rootpath import PathEscape, in_root, make_dirs, read_file, read_regular
from gpuenv.trust import untrusted_program

Event = Callable[[str, Step | None, str], None]  # (event, step, detail)
_KEY_MAX = 1 << 20
_FILE_MAX = 1 << 20  # every file a plan writes or reads back is a few KB


class Refused(RuntimeError):
    def __init__(self, exit: Exit, message: str) -> None:
        super().__init__(message)
        self.exit = exit


# --------------------------------------------------------------------------------------------
# Files under the root


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


# --------------------------------------------------------------------------------------------
# Reports


@record(frozen=True)
class StepReport:
    step: Step
    state: str  # done (nothing to do) | todo | ran | skipped | failed | refused | pending
    detail: str = ""
    simulation: apt.Simulation | None = None
    collateral: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # autoremove: orphans outside the stack, left installed


@record(frozen=True)
class Outcome:
    exit: Exit
    message: str
    reports: tuple[StepReport, ...] = ()
    changed: bool = False
    log_path: str | None = None

    @property
    def collateral(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for r in self.reports for p in r.collateral))

    @property
    def pending(self) -> bool:
        return any(r.state == "todo" for r in self.reports)


@record(frozen=True)
class Options:
    allow_removal: frozenset[str] = frozenset()
    force: bool = False
    resume: bool = False
    facts_now: Facts | None = None  # the machine now, to refuse a stale plan
    on_event: Event | None = None
    fetch: Callable[[str], bytes] | None = None  # key download; default: HTTPS via urllib
    # Also fetch keys over plain http from 127.0.0.1/::1: the repositories in effect name a mirror
    # on this machine (the pinned fingerprint is checked either way).
    loopback_http: bool = False


# --------------------------------------------------------------------------------------------
# The context both modes share


@record
class _Ctx:
    root: str
    runner: Runner
    files: Files
    allow: frozenset[str] = frozenset()
    on_event: Event | None = None
    keys: dict[str, bytes] = field(default_factory=dict)  # step id -> verified keyring bytes
    fetch: Callable[[str], bytes] | None = None  # key download (apply only)
    changed: set[str] = field(default_factory=set)  # steps that changed something (dry run: would)
    _installed: dict[str, str] | None = None

    def emit(self, event: str, step: Step | None, detail: str = "") -> None:
        if self.on_event:
            self.on_event(event, step, detail)

    def installed(self) -> dict[str, str]:
        if self._installed is None:
            res = self.runner.run(
                ["dpkg-query", "-W", "-f", "${Package}\\t${Version}\\t${db:Status-Abbrev}\\n"], check=False
            )
            self._installed = apt.parse_dpkg_query(res.output)
        return self._installed

    def forget(self) -> None:
        self._installed = None

    def simulate(self, args: list[str]) -> apt.Simulation:
        # apt -s as root still writes its binary caches and its planner log (eipp.log.xz):
        # switched off, so that a simulation leaves /var/cache and /var/log as it found them.
        no_cache = ["-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache="]
        no_cache += ["-o", "Dir::Log::Planner=/dev/null"]
        res = self.runner.run(["apt-get", "-s", "-q", *no_cache, *args], check=False)
        return apt.parse_simulation(res.output, res.returncode)


def _sim_args(step: Step) -> list[str] | None:
    if step.kind is Kind.APT_PURGE:
        return ["autoremove", "--purge"] if step.autoremove else ["purge", *(step.packages or ())]
    if step.kind is Kind.APT_INSTALL:
        return ["install", *(step.packages or ())]
    return None


def _allowed_by(step: Step, pkg: str) -> bool:
    pats = step.allow or ()
    if any(p.startswith("!") and re.fullmatch(p[1:], pkg) for p in pats):
        return False
    return any(not p.startswith("!") and re.fullmatch(p, pkg) for p in pats)


# --------------------------------------------------------------------------------------------
# Per-kind: done (read-only) and act


def _done(ctx: _Ctx, plan: Plan, step: Step) -> tuple[bool, str]:
    k = step.kind
    if k is Kind.APT_INSTALL:
        missing = [p for p in step.packages or () if p not in ctx.installed()]
        return (not missing, "installed" if not missing else "to install: " + " ".join(missing))
    if k is Kind.APT_PURGE:
        if step.autoremove:
            sim = ctx.simulate(["autoremove", "--purge"])
            mine = [p for p in sim.removes if _allowed_by(step, p)]
            return (not mine, "no orphan of this stack" if not mine else "orphans: " + " ".join(mine))
        present = [p for p in step.packages or () if p in ctx.installed()]
        return (not present, "none installed" if not present else "to purge: " + " ".join(present))
    if k is Kind.APT_UPDATE:
        later = plan.steps[plan.steps.index(step) + 1 :]
        pending = [s for s in later if s.kind is Kind.APT_INSTALL and not _done(ctx, plan, s)[0]]
        return (
            not pending,
            "nothing left to install" if not pending else "needed by " + ", ".join(s.id for s in pending),
        )
    if k in (Kind.APT_SOURCE, Kind.APT_PIN, Kind.WRITE_FILE):
        same = (
            ctx.files.read(step.path) == (step.content or "").encode()
            and ctx.files.mode(step.path) == step.mode
        )
        return (same, "up to date" if same else ("differs" if ctx.files.exists(step.path) else "absent"))
    if k is Kind.REMOVE_FILE:
        gone = not ctx.files.exists(step.path)
        return (gone, "absent" if gone else "present")
    if k is Kind.APT_KEY:
        return _keyring_state(ctx, plan, step)
    if k is Kind.GROUP_ADD:
        members = _group_members(ctx.files.read("/etc/group") or b"")
        missing = [g for g in step.groups or () if step.user not in members.get(g, ())]
        return (not missing, "member already" if not missing else "not yet in " + ",".join(missing))
    if k is Kind.COMMAND:
        if step.after is not None and not set(step.after) & ctx.changed:
            return True, "nothing it follows changed"
        if step.only_if_exists and not ctx.files.exists(step.only_if_exists):
            return True, f"{step.only_if_exists} is absent"
        if step.creates and ctx.files.exists(step.creates):
            return True, f"{step.creates} exists"
        return False, "runs"
    if k is Kind.REBOOT or k is Kind.CHECK:
        return True, ""
    return False, "runs"


def _act(ctx: _Ctx, step: Step) -> str:
    k = step.kind
    apt_opts = ["-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"]
    status = (lambda line: ctx.emit("apt-status", step, line)) if ctx.on_event else None
    if k is Kind.APT_INSTALL or (k is Kind.APT_PURGE and not step.autoremove):
        sim = ctx.simulate(_sim_args(step) or [])
        if sim.error or sim.missing:
            raise CommandError(apt_result(sim))
        collateral = sim.collateral(step.packages or (), ctx.allow)
        if collateral:
            raise Refused(Exit.REFUSED, _collateral_message(step, collateral))
        verb = "install" if k is Kind.APT_INSTALL else "purge"
        ctx.runner.run(["apt-get", verb, "-y", "-q", *apt_opts, *(step.packages or ())], on_status=status)
        ctx.forget()
        return f"{verb}ed " + " ".join(step.packages or ())
    if k is Kind.APT_PURGE:  # autoremove, narrowed to this stack's packages
        sim = ctx.simulate(["autoremove", "--purge"])
        mine = [p for p in sim.removes if _allowed_by(step, p) or p in ctx.allow]
        kept = [p for p in sim.removes if p not in mine]
        if not mine:
            return "nothing to remove"
        # Purged by exact name, after simulating that very command: purging an orphan can still
        # drag out a package that depends on it (one of those kept), which is collateral.
        check = ctx.simulate(["purge", *mine])
        if check.error or check.missing:
            raise CommandError(apt_result(check))
        collateral = check.collateral(mine, ctx.allow)
        if collateral:
            raise Refused(Exit.REFUSED, _collateral_message(step, collateral))
        ctx.runner.run(["apt-get", "purge", "-y", "-q", *apt_opts, *mine], on_status=status)
        ctx.forget()
        return "removed " + " ".join(mine) + (f"; left for you to review: {' '.join(kept)}" if kept else "")
    if k is Kind.APT_UPDATE:
        ctx.runner.run(["apt-get", "update", "-q"])
        return "updated"
    if k in (Kind.APT_SOURCE, Kind.APT_PIN, Kind.WRITE_FILE):
        ctx.files.write(step.path, (step.content or "").encode(), step.mode or "0644")
        return f"wrote {step.path}"
    if k is Kind.REMOVE_FILE:
        ctx.files.remove(step.path)
        return f"removed {step.path}"
    if k is Kind.APT_KEY:
        data = ctx.keys.get(step.id)
        if data is None:  # --resume after the preflight: fetch and verify again
            data = ctx.keys[step.id] = _fetch_key(ctx, step, ctx.fetch)
        ctx.files.write(step.path, data, step.mode or "0644")
        return f"wrote {step.path} ({step.fingerprint})"
    if k is Kind.GROUP_ADD:
        members = _group_members(ctx.files.read("/etc/group") or b"")
        for g in step.groups or ():
            if g not in members:
                ctx.runner.run(["groupadd", "--system", g])
        ctx.runner.run(["usermod", "-a", "-G", ",".join(step.groups or ()), step.user or ""])
        return f"{step.user} added to {','.join(step.groups or ())}"
    if k in (Kind.COMMAND, Kind.PIP_INSTALL):
        ctx.runner.run(list(step.argv or ()), user=step.user)
        return "ran " + " ".join(step.argv or ()) + (f" as {step.user}" if step.user else "")
    return ""


def _check_program(root: str, step: Step) -> None:
    """Before any change: a step's program, when it is there already, must be root's alone."""
    program = (step.argv or ("",))[0]
    if os.geteuid() != 0:
        return
    why = untrusted_program(program, root)
    if why:
        raise Untrusted(
            f"step {step.id}: refusing to run {program} as root: {why}. Nothing was changed; "
            "nothing a non-root account can write is run as root."
        )


def apt_result(sim: apt.Simulation):
    from gpuenv.execute.runner import Result

    text = sim.error or ("apt cannot find: " + " ".join(sim.missing))
    return Result(("apt-get", "-s"), 100, "E: " + text)


def _collateral_message(step: Step, collateral: tuple[str, ...]) -> str:
    return (
        f"step {step.id}: apt would also remove {', '.join(collateral)}, which the plan does not name. "
        f"Nothing was changed by this step. If that is what you want, run again with "
        + " ".join(f"--allow-removal {p}" for p in collateral)
    )


# --------------------------------------------------------------------------------------------
# Keys


def _need_gpg() -> None:
    """gpg reads the fingerprint the plan pins; without it every key would look like 'no key'."""
    from gpuenv.probe.host import which

    if which("gpg") is None or which("gpgv") is None:
        raise Refused(
            Exit.REFUSED,
            "gpg is not installed on this machine: gpuenv checks the vendor key's fingerprint and signatures "
            "with gpg and gpgv. Nothing was changed. Install it (apt-get install gnupg) and run again.",
        )


def _show_keys(runner: Runner, data: bytes) -> str:
    _need_gpg()
    with tempfile.TemporaryDirectory(prefix="gpuenv-gnupg-") as home:
        os.chmod(home, 0o700)
        path = os.path.join(home, "key")
        with open(path, "wb") as fh:
            fh.write(data)
        res = runner.run(
            ["gpg", "--homedir", home, "--batch", "--no-autostart", "--show-keys", "--with-colons", path],
            host=True,
            check=False,
        )
    return res.output


_ARMOR = b"-----BEGIN PGP PUBLIC KEY BLOCK-----"


def _binary_keyring(runner: Runner, data: bytes) -> bytes:
    """The keyring apt reads from a .gpg file: binary OpenPGP. An armored key (vendors publish
    them with text before the armor, too) is de-armored; anything else is refused."""
    if _ARMOR not in data:
        if data and data[0] & 0x80:  # an OpenPGP packet tag: binary already
            return data
        raise Refused(Exit.REFUSED, "the downloaded key is neither an OpenPGP key nor armored: nothing was changed")
    with tempfile.TemporaryDirectory(prefix="gpuenv-gnupg-") as home:
        os.chmod(home, 0o700)
        src, out = os.path.join(home, "key.asc"), os.path.join(home, "key.gpg")
        with open(src, "wb") as fh:
            fh.write(data[data.index(_ARMOR) :])
        runner.run(
            ["gpg", "--homedir", home, "--batch", "--no-autostart", "--dearmor", "--output", out, src],
            host=True,
        )
        binary = Path(out).read_bytes()
    if not binary or not binary[0] & 0x80:
        raise Refused(Exit.REFUSED, "the downloaded key did not de-armor to an OpenPGP key: nothing was changed")
    return binary


def _keyring_state(ctx: _Ctx, plan: Plan, step: Step) -> tuple[bool, str]:
    """Done only when apt can use the keyring: binary, exactly the pinned primary key, a signing
    key that is neither expired nor revoked, and (once apt has fetched the vendor's InRelease)
    a signature apt's own gpgv verifies with it."""
    data = ctx.files.read(step.path)
    if data is None:
        return False, "no keyring yet"
    if not data[:1] or not data[0] & 0x80:
        return False, "not a binary keyring (armored?): apt cannot read it; written again"
    colons = _show_keys(ctx.runner, data)
    fprs, count = apt.pub_fingerprints(colons)
    if count != 1 or fprs != (step.fingerprint,):
        return False, "holds other keys: " + (" ".join(fprs) or "none")
    if not apt.signing_keys(colons):
        return False, "holds the pinned key, but no valid signing key (expired or revoked): fetch it again"
    for name in _release_files(plan, step):
        release = ctx.files.read(f"/var/lib/apt/lists/{name}")
        if release is not None and not _verifies(ctx.runner, data, release):
            return False, f"apt's {name} does not verify with it: fetch it again"
    return True, "holds the pinned key"


def _release_files(plan: Plan, key: Step) -> list[str]:
    """apt's InRelease files of the sources this plan writes that trust ``key``'s keyring."""
    return [
        apt.lists_name(uri, suite)
        for s in plan.steps
        if s.kind is Kind.APT_SOURCE and s.content
        for uri, suite in apt.sources_of(s.content, key.path or "")
    ]


def _verifies(runner: Runner, keyring: bytes, signed: bytes) -> bool:
    with tempfile.TemporaryDirectory(prefix="gpuenv-gnupg-") as home:
        os.chmod(home, 0o700)
        ring, doc = os.path.join(home, "keyring.gpg"), os.path.join(home, "InRelease")
        Path(ring).write_bytes(keyring)
        Path(doc).write_bytes(signed)
        res = runner.run(["gpgv", "--homedir", home, "--keyring", ring, doc], host=True, check=False)
    return res.ok


def _check_scheme(url: str, loopback_http: bool) -> None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "https" and not (loopback_http and _loopback(parts)):
        raise Refused(Exit.REFUSED, f"refusing to fetch a signing key over {parts.scheme or 'no scheme'}: {url}")


class _HttpsRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to a URL the first one could have been (no https -> http)."""

    def __init__(self, loopback_http: bool) -> None:
        self.loopback_http = loopback_http

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 - urllib's API
        _check_scheme(newurl, self.loopback_http)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _default_fetch(url: str, loopback_http: bool = False) -> bytes:
    _check_scheme(url, loopback_http)
    opener = urllib.request.build_opener(_HttpsRedirects(loopback_http))
    try:
        with opener.open(url, timeout=30) as resp:  # scheme checked above and on every redirect
            data = resp.read(_KEY_MAX + 1)
    except OSError as exc:
        raise Refused(Exit.REFUSED, f"cannot fetch the signing key {url}: {exc}") from exc
    if len(data) > _KEY_MAX:
        raise Refused(Exit.REFUSED, f"the signing key at {url} is larger than 1 MiB")
    return data


def _loopback(parts: urllib.parse.SplitResult) -> bool:
    # Plain http is accepted only from this machine: the tests' local repository (the
    # fingerprint is still checked, as for any key).
    try:
        return parts.scheme == "http" and ipaddress.ip_address(parts.hostname or "").is_loopback
    except ValueError:
        return False


def _fetch_key(ctx: _Ctx, step: Step, fetch: Callable[[str], bytes] | None = None) -> bytes:
    data = (fetch or _default_fetch)(step.url or "")
    colons = _show_keys(ctx.runner, data)
    fprs, count = apt.pub_fingerprints(colons)
    if count != 1 or fprs != (step.fingerprint,):
        got = ", ".join(fprs) or "no OpenPGP key"
        raise Refused(
            Exit.REFUSED,
            f"the key at {step.url} has fingerprint {got}; the plan pins {step.fingerprint}. "
            "Nothing was changed. The vendor may have rotated its key: check the vendor's announcement "
            "and update the bundled matrices before trusting a new key.",
        )
    if not apt.signing_keys(colons):
        # apt would refuse every signature it made: fail now, before any change, and say why.
        validity = apt.pub_validity(colons)
        what = (
            "has expired" if validity[:1] == ("e",)
            else "is revoked" if validity[:1] == ("r",)
            else "has no signing key that is neither expired nor revoked"
        )  # fmt: skip
        raise Refused(
            Exit.REFUSED,
            f"the key at {step.url} ({step.fingerprint}) {what}. Nothing was changed. The vendor may "
            "have extended or replaced it: check the vendor's announcement and update the bundled matrices.",
        )
    return _binary_keyring(ctx.runner, data)


def _group_members(text: bytes) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for line in text.decode("utf-8", "replace").splitlines():
        parts = line.split(":")
        if len(parts) >= 4:
            out[parts[0]] = tuple(u for u in parts[3].split(",") if u)
    return out


# --------------------------------------------------------------------------------------------
# dpkg health


def _dpkg_locked(root: str) -> bool:
    import fcntl

    # apt takes lock-frontend then lock; dpkg run by hand (or an old apt) takes only lock.
    for name in ("lock-frontend", "lock"):
        path = in_root(root, f"/var/lib/dpkg/{name}")
        if not path.is_file():
            continue
        fd = os.open(path, os.O_RDONLY)  # lockf needs write access; F_SETLK with a read lock does not
        try:
            # apt and dpkg hold write locks (fcntl F_SETLK), which conflict with this read lock.
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        else:
            fcntl.lockf(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    return False


def _dpkg_interrupted(root: str) -> bool:
    updates = in_root(root, "/var/lib/dpkg/updates")
    return updates.is_dir() and any(p.name.isdigit() for p in updates.iterdir())


# --------------------------------------------------------------------------------------------
# shadow's lock leftovers

_SHADOW_DBS = ("passwd", "shadow", "group", "gshadow", "subuid", "subgid")


def _clear_shadow_leftovers(root: str, log: Callable[[str], None]) -> None:
    """Remove what a killed usermod or groupadd (ours, or a maintainer script's) left in /etc.

    shadow locks /etc/group by writing its pid to /etc/group.PID, linking that to /etc/group.lock
    and unlinking it; a kill -9 or power cut in between leaves /etc/group.PID for good (a stale
    .lock shadow itself clears on its next run). Called only when resuming our own interrupted
    run. Removed: a regular root-owned file of one link named DB.PID, holding exactly PID, whose
    process is gone. Anything else of such a name (a live process's lock, other content, a
    symlink, a FIFO) is left alone."""
    etc = in_root(root, "/etc")
    try:
        names = os.listdir(etc)
    except OSError:
        return
    for name in names:
        db, _, pid = name.rpartition(".")
        if db not in _SHADOW_DBS or not (pid.isascii() and pid.isdigit()):
            continue
        path = os.path.join(etc, name)
        if not _lock_left(path, pid) or _alive(int(pid)):
            continue
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue  # removed meanwhile (by whom, not ours to say)
        log(f"removed /etc/{name}: the lock file of a user-database command the interrupted run started (pid {pid}, gone)")


def _lock_left(path: str, pid: str) -> bool:
    """Whether ``path`` is a lock file as shadow writes it: root's, of one link, a regular file
    holding the pid alone (no newline)."""
    try:
        st = os.lstat(path)
        # The safe reader refuses a link, a FIFO, a device, and anything longer than the pid.
        return st.st_uid == 0 and st.st_nlink == 1 and read_regular(path, len(pid), nofollow=True) == pid.encode()
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        pass  # another account's process is alive; a pid beyond any is not ours to judge
    # 0 names our own process group: never a lock shadow made, and kept.
    return True


# --------------------------------------------------------------------------------------------
# The two entry points


def dry_run(plan: Plan, root: str = "/") -> Outcome:
    """What apply would do now, step by step, with apt's own simulation. Changes nothing: the
    runner runs only read-only commands and the files object refuses writes."""
    ctx = _Ctx(root=root, runner=SimulatingRunner(root), files=ReadOnlyFiles(root))
    judged = []
    for step in plan.steps:  # in order: a step's "done" may depend on what the ones before would change
        done, detail = _done(ctx, plan, step)
        if not done:
            ctx.changed.add(step.id)
        judged.append((step, done, detail))
    sims = _simulate_all(ctx, [None if done else _sim_args(step) for step, done, _ in judged])
    reports = []
    for (step, done, detail), sim in zip(judged, sims, strict=True):
        collateral: tuple[str, ...] = ()
        kept: tuple[str, ...] = ()
        if sim is not None:
            if step.autoremove:
                kept = tuple(p for p in sim.removes if not _allowed_by(step, p))
            else:
                collateral = sim.collateral(step.packages or ())
        if not done and step.kind is Kind.APT_KEY:
            detail = f"would fetch {step.url} and require fingerprint {step.fingerprint}"
        reports.append(StepReport(step, "done" if done else "todo", detail, sim, collateral, kept))
    return Outcome(Exit.OK, "dry run: nothing was changed", tuple(reports))


def _simulate_all(ctx: _Ctx, argses: list[list[str] | None]) -> list[apt.Simulation | None]:
    """apt's simulations of the steps, run side by side: each reads the machine as it is now (a
    dry run changes nothing between them), and each costs apt a full cache build (about a
    second on a desktop's package lists), so a plan's three took most of a dry run's time."""
    wanted = [(i, args) for i, args in enumerate(argses) if args is not None]
    out: list[apt.Simulation | None] = [None] * len(argses)
    if len(wanted) <= 1:
        for i, args in wanted:
            out[i] = ctx.simulate(args)
        return out
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(4, len(wanted))) as pool:
        for (i, _), sim in zip(wanted, pool.map(ctx.simulate, [a for _, a in wanted]), strict=True):
            out[i] = sim
    return out


def apply(plan: Plan, root: str = "/", options: Options | None = None) -> Outcome:
    opts = options or Options()
    try:
        journal = Journal(root)
        journal.acquire()
    except Busy as exc:
        return Outcome(Exit.BUSY, str(exc))
    except JournalError as exc:
        return Outcome(Exit.REFUSED, str(exc))
    except PathEscape as exc:
        return Outcome(Exit.REFUSED, f"refusing to apply: {exc}. Nothing was changed.")
    except OSError as exc:  # a read-only root, a full disk: nothing has been changed yet
        return Outcome(
            Exit.REFUSED,
            f"cannot write the journal under {root}/{JOURNAL_DIR} ({exc.strerror or exc}): nothing was changed",
        )
    try:
        outcome = _apply_locked(plan, root, opts, journal)
    except PathEscape as exc:  # a symlink loop under var/lib/dpkg, or in a path a step names
        outcome = Outcome(Exit.REFUSED, f"refusing to apply: {exc}. Nothing was changed.")
    except OSError as exc:  # the journal or the log cannot be written (a disk that filled up)
        outcome = Outcome(
            Exit.PROBLEMS,
            f"cannot write under {root} ({exc.strerror or exc}). Free space, then continue with: "
            "gpuenv apply --resume",
            changed=bool(journal.state.changed) if journal.state else False,
        )
    finally:
        journal.release()
    if outcome.exit in (Exit.REFUSED, Exit.BUSY) and not outcome.changed:
        journal.discard()  # a refused apply leaves nothing behind, not even its lock file
    return outcome


def _apply_locked(plan: Plan, root: str, opts: Options, journal: Journal) -> Outcome:
    pdigest = plan_digest(plan)
    state = journal.state
    log_path = str(journal.log_path)

    def log(line: str) -> None:
        journal.log(f"{time.strftime('%H:%M:%S')} {line}")

    runner = Runner(root, log=log)
    ctx = _Ctx(root=root, runner=runner, files=Files(root), allow=opts.allow_removal, on_event=opts.on_event)
    ctx.fetch = opts.fetch or (lambda url: _default_fetch(url, loopback_http=opts.loopback_http))
    ctx.changed = set(state.changed) if state.plan_digest == pdigest else set()
    same_plan = state.plan_digest == pdigest
    if same_plan and state.finished:
        return Outcome(Exit.OK, "this plan was already applied: nothing to do", log_path=log_path)
    resuming = same_plan and bool(state.done or state.started)
    if resuming and not opts.resume:
        return Outcome(
            Exit.REFUSED,
            f"this plan was interrupted (at step {state.started or 'after ' + state.done[-1]}); "
            "continue it with: gpuenv apply PLAN --resume",
        )
    if not same_plan and state.plan_digest and not state.finished and not opts.force:
        return Outcome(
            Exit.REFUSED,
            f"another plan is half-applied (journal {journal.path}); finish it with --resume, or pass --force",
        )
    if opts.resume and not resuming:
        return Outcome(Exit.REFUSED, "nothing to resume: the journal holds no unfinished run of this plan")

    # -- refusals before any change --
    if not resuming:
        if opts.facts_now is None:
            if not opts.force:
                return Outcome(
                    Exit.REFUSED, "cannot tell whether the plan is stale (no facts of this machine)"
                )
        elif opts.facts_now.digest() != plan.facts_digest:
            return Outcome(
                Exit.REFUSED,
                "stale plan: this machine changed since the plan was made "
                f"(facts now {opts.facts_now.digest()[:19]}…, plan {plan.facts_digest[:19]}…). "
                "Make a new plan: gpuenv plan ... --out FILE",
            )
    if plan.blockers and not opts.force:
        return Outcome(
            Exit.REFUSED,
            "the plan has blockers: " + ", ".join(plan.blockers) + " (see its notes; --force overrides)",
        )
    if _dpkg_locked(root):
        return Outcome(
            Exit.BUSY,
            "dpkg is locked by another package manager (apt, unattended-upgrades?); try again when it is done",
        )
    interrupted = _dpkg_interrupted(root)
    if interrupted and not resuming:
        return Outcome(
            Exit.REFUSED, "dpkg was interrupted: run 'dpkg --configure -a' first (nothing was changed)"
        )

    reports: list[StepReport] = []
    # The journal may hold another (finished) plan: its step ids say nothing about this one.
    done_before = set(state.done) if same_plan else set()
    todo = [s for s in plan.steps if s.id not in done_before]
    try:
        for step in todo:  # keys, programs and collateral removals are checked before any change
            if step.kind in (Kind.COMMAND, Kind.PIP_INSTALL) and step.user is None:
                _check_program(root, step)
            if step.kind is Kind.APT_KEY and not _done(ctx, plan, step)[0]:
                ctx.keys[step.id] = _fetch_key(ctx, step, ctx.fetch)
            if step.kind is Kind.APT_PURGE and not step.autoremove and not _done(ctx, plan, step)[0]:
                sim = ctx.simulate(_sim_args(step) or [])
                collateral = sim.collateral(step.packages or (), opts.allow_removal)
                if collateral:
                    reports.append(StepReport(step, "refused", "", sim, collateral))
                    raise Refused(Exit.REFUSED, _collateral_message(step, collateral))
    except Refused as exc:
        return Outcome(exc.exit, str(exc), tuple(reports), log_path=log_path)
    except Untrusted as exc:
        return Outcome(Exit.REFUSED, str(exc), tuple(reports), log_path=log_path)
    except (CommandError, OSError) as exc:
        return Outcome(Exit.PROBLEMS, f"{exc}\nNothing was changed.", tuple(reports), log_path=log_path)

    if not resuming:
        journal.begin(pdigest, plan.to_dict())
    log(f"apply {pdigest} ({plan.action.value} {plan.target.stack} {plan.target.version or ''})")
    changed = False
    step: Step | None = None  # None: the dpkg --configure -a that comes before the steps
    try:
        if resuming:
            _clear_shadow_leftovers(root, log)
        if interrupted:  # our own run died inside dpkg: finish its configuration first
            ctx.emit("step-start", None, "dpkg --configure -a (the interrupted run)")
            runner.run(["dpkg", "--configure", "-a"])
            changed = True
        for step in plan.steps:
            if step.id in journal.state.done:
                reports.append(StepReport(step, "done", "done in an earlier run"))
                continue
            journal.mark_started(step.id)
            done, detail = _done(ctx, plan, step)
            if done:
                ctx.emit("step-skip", step, detail)
                reports.append(StepReport(step, "skipped", detail))
            else:
                ctx.emit("step-start", step, step.title)
                journal.mark_changed(step.id)
                detail = _act(ctx, step)
                ctx.changed.add(step.id)
                changed = True
                ctx.emit("step-done", step, detail)
                reports.append(StepReport(step, "ran", detail))
            log(f"step {step.id}: {reports[-1].state}: {detail}")
            journal.mark_done(step.id)
    except Untrusted as exc:
        if step:
            reports.append(StepReport(step, "refused", str(exc)))
        log(f"step {step.id if step else '-'}: refused: {exc}")
        return Outcome(Exit.REFUSED, str(exc), tuple(reports), changed, log_path)
    except Refused as exc:
        where = f"step {step.id}" if step else "dpkg --configure -a"
        if step:
            reports.append(StepReport(step, "refused", str(exc)))
        log(f"{where}: refused: {exc}")
        return Outcome(exc.exit, str(exc), tuple(reports), changed, log_path)
    except (CommandError, OSError, ValueError) as exc:
        # ValueError: what the OS refuses outright (a NUL in a path), never a traceback.
        where = f"step {step.id}" if step else "dpkg --configure -a"
        if step:
            reports.append(StepReport(step, "failed", str(exc)))
        log(f"{where}: failed: {exc}")
        return Outcome(
            Exit.PROBLEMS,
            f"{where} failed: {exc}\nFix the cause, then continue with: gpuenv apply PLAN --resume",
            tuple(reports),
            changed,
            log_path,
        )
    journal.finish()
    log("finished")
    reboot = any(r.step.reboot_after and r.state == "ran" for r in reports)
    msg = (
        "applied" + ("; reboot to load the new driver" if reboot else "") if changed else "nothing to change"
    )
    return Outcome(Exit.OK, msg, tuple(reports), changed, log_path)
