"""What apply refuses before any change, and how: a refused apply leaves nothing under its --root,
programs another account could write are refused before the first step, dpkg's half-done runs and
locks, the downloaded key (its fingerprint, armor and de-armor), key URLs and redirects, autoremove
narrowed to the stack, and the files a plan writes (mode, durability, links, failures)."""

from __future__ import annotations

import base64
import http.server
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gpuenv import facts as facts_mod
from gpuenv.execute import executor, files
from gpuenv.execute import keys as keymod
from gpuenv.execute import steps as handlers
from gpuenv.execute.context import Context
from gpuenv.execute.runner import DryRunViolation, Result, Runner
from gpuenv.exitcodes import Exit
from gpuenv.plan.plan import Action, Kind, Plan, PlanTarget, Step
from tests.gpg_home import gpg_home
from tests.test_plan import load, plan_for

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="programs are checked when gpuenv runs as root")
DIGEST = "sha256:" + "0" * 64


def _plan(*steps: Step, blockers: tuple[str, ...] = ()) -> Plan:
    return Plan(Action.INSTALL, PlanTarget("rocm"), DIGEST, steps, blockers=blockers)


def _write(path: str = "/etc/x", content: str = "x\n", mode: str = "0644", id: str = "w") -> Step:
    return Step(id=id, kind=Kind.WRITE_FILE, title=f"write {path}", path=path, content=content, mode=mode)


def _run(*argv: str, id: str = "run") -> Step:
    return Step(id=id, kind=Kind.COMMAND, title="run", argv=argv)


def _apply(root: Path, *steps: Step, **options) -> executor.Outcome:
    options.setdefault("force", True)  # no facts of a tmp root: the stale check is not what is tested
    return executor.apply(_plan(*steps), str(root), executor.Options(**options))


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _gpuenv_left(root: Path) -> list[str]:
    return [d for d in ("var/lib/gpuenv", "var/log/gpuenv") if os.path.lexists(root / d)]


def _blocked_write(root: Path) -> Step:
    """A write that fails before it changes anything (a directory is in the way): a step the
    apply reaches only when nothing before it was refused."""
    (root / "etc/x").mkdir(parents=True)
    (root / "etc/x/keep").write_text("")
    return _write()


# --------------------------------------------------------------------------------------------
# A refused apply: the one-line reason, and nothing left under the root


def _interrupted(root: Path) -> dict:
    (root / "var/lib/dpkg/updates").mkdir(parents=True)
    (root / "var/lib/dpkg/updates/0003").write_text("")
    return {}


@pytest.mark.parametrize(
    "setup, options, message",
    [
        (None, {"force": False}, "cannot tell whether the plan is stale (no facts of this machine)"),
        (None, {"resume": True}, "nothing to resume: the journal holds no unfinished run of this plan"),
        (_interrupted, {}, "dpkg was interrupted: run 'dpkg --configure -a' first (nothing was changed)"),
    ],
    ids=["no-facts", "nothing-to-resume", "dpkg-interrupted"],
)
def test_a_refused_apply_says_why_and_leaves_no_gpuenv_state(tmp_path, setup, options, message):
    if setup:
        setup(tmp_path)
    before = _tree(tmp_path)
    out = _apply(tmp_path, _write(), **options)
    assert (out.exit, out.message, out.changed) == (Exit.REFUSED, message, False)
    assert _tree(tmp_path) == before  # no var/lib/gpuenv, no lock file, no log, no /etc/x
    assert _gpuenv_left(tmp_path) == []


def test_blockers_are_refused_by_name_and_leave_nothing(tmp_path):
    plan = plan_for(load("plan-ubuntu2404-arm64-nogpu"), "rocm")
    now = facts_mod.from_dict(load("plan-ubuntu2404-arm64-nogpu"))
    out = executor.apply(plan, str(tmp_path), executor.Options(facts_now=now))
    assert out.exit is Exit.REFUSED
    assert (
        out.message
        == "the plan has blockers: " + ", ".join(plan.blockers) + " (see its notes; --force overrides)"
    )
    assert "gpu.none" in plan.blockers
    assert list(tmp_path.iterdir()) == []


def test_dpkg_held_by_apt_is_busy_and_leaves_nothing(tmp_path):
    """apt holds lock-frontend (and then lock); the apply waits for nobody and makes nothing."""
    dpkg = tmp_path / "var/lib/dpkg"
    dpkg.mkdir(parents=True)
    for name in ("lock-frontend", "lock"):
        (dpkg / name).touch()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl,sys,time; f=open(sys.argv[1],'r+'); fcntl.lockf(f, fcntl.LOCK_EX); "
         "print('held', flush=True); time.sleep(60)", str(dpkg / "lock-frontend")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        out = _apply(tmp_path, _write())
    finally:
        holder.kill()
        holder.wait()
    assert out.exit is Exit.BUSY
    assert out.message.startswith("dpkg is locked by another package manager")
    assert _gpuenv_left(tmp_path) == [] and not (tmp_path / "etc").exists()


def test_an_apply_that_passes_the_refusals_runs_and_a_second_finds_it_done(tmp_path):
    """No dpkg state at all, an updates directory that is empty or holds only dpkg's tmp.i:
    nothing was interrupted and nothing is locked. The lock is let go after each apply."""
    (tmp_path / "var/lib/dpkg/updates").mkdir(parents=True)
    (tmp_path / "var/lib/dpkg/updates/tmp.i").write_text("")
    (tmp_path / "var/lib/dpkg/lock").touch()  # a lock file nobody holds
    out = _apply(tmp_path, _write())
    assert (out.exit, out.message, out.changed) == (Exit.OK, "applied", True)
    assert (tmp_path / "etc/x").read_text() == "x\n"
    again = _apply(tmp_path, _write())
    assert (again.exit, again.message) == (Exit.OK, "this plan was already applied: nothing to do")


def test_an_empty_root_is_neither_locked_nor_interrupted(tmp_path):
    out = _apply(tmp_path, _write(mode="0600"))
    assert (out.exit, out.message) == (Exit.OK, "applied")
    assert stat.S_IMODE((tmp_path / "etc/x").stat().st_mode) == 0o600
    assert (tmp_path / "var/lib/gpuenv/journal.json").is_file()  # an apply that ran keeps its journal


def test_a_journal_that_cannot_be_written_is_refused_in_one_line(tmp_path):
    (tmp_path / "var").write_text("not a directory\n")
    out = _apply(tmp_path, _write())
    assert out.exit is Exit.REFUSED
    assert (
        out.message
        == f"cannot write the journal under {tmp_path}/var/lib/gpuenv (Not a directory): nothing was changed"
    )
    assert _tree(tmp_path) == ["var"] and (tmp_path / "var").read_text() == "not a directory\n"


def test_a_step_that_fails_keeps_the_journal_for_resume(tmp_path):
    out = _apply(tmp_path, _blocked_write(tmp_path))
    assert out.exit is Exit.PROBLEMS
    assert out.message.startswith("step w failed: ")
    assert out.message.endswith("Fix the cause, then continue with: gpuenv apply PLAN --resume")
    assert (tmp_path / "var/lib/gpuenv/journal.json").is_file()
    assert sorted(p.name for p in (tmp_path / "etc/x").iterdir()) == ["keep"]  # no temporary left


ARABIC_DIGITS = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")  # digits to str.isdigit and int, not to shadow


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _interrupted_run(root: Path) -> Step:
    """A run that died at its step w (a directory in the way); the cause is then cleared, so that
    --resume can go on."""
    step = _blocked_write(root)
    assert _apply(root, step).exit is Exit.PROBLEMS
    for p in (root / "etc/x").iterdir():
        p.unlink()
    (root / "etc/x").rmdir()
    return step


@AS_ROOT
def test_resume_removes_the_lock_files_a_killed_usermod_left_and_nothing_else(tmp_path):
    step = _interrupted_run(tmp_path)
    etc = tmp_path / "etc"
    dead, live = _dead_pid(), os.getpid()
    gone = {f"group.{dead}": str(dead), f"gshadow.{dead}": str(dead), f"passwd.{dead}": str(dead)}
    kept = {
        f"subuid.{dead + 3}": f"{dead + 3}\n",  # shadow writes no newline
        f"group.{live}": str(live),  # a usermod running now
        f"shadow.{dead}": "1",  # not the pid its name says
        f"hosts.{dead}": str(dead),  # not a user database
        "group.0": "0",
        f"group.{dead}x": str(dead),
        "group.lock": str(dead),  # shadow clears a stale .lock itself
        "shadow.lock": "lock",  # no pid at all
        "group.99999999999": "99999999999",  # beyond any pid
        "group." + str(dead).translate(ARABIC_DIGITS): str(dead).translate(ARABIC_DIGITS),
        f"shadow.{dead + 2}": f"{dead + 2}0",  # more than the pid its name says
    }
    for name, text in {**gone, **kept}.items():
        (etc / name).write_text(text)
    (etc / "elsewhere").write_text(str(dead))
    (etc / "target").write_text(str(dead))
    (etc / f"subuid.{dead}").symlink_to(etc / "target")
    os.mkfifo(etc / f"passwd.{dead + 4}")  # opened, it would block an open without O_NONBLOCK
    os.link(etc / "elsewhere", etc / f"subgid.{dead}")  # two links: not a lock shadow left
    owned = etc / f"gshadow.{dead + 1}"
    owned.write_text(str(dead + 1))
    os.chown(owned, 1000, 1000)
    fds = len(os.listdir("/proc/self/fd"))
    out = _apply(tmp_path, step, resume=True)
    assert out.exit is Exit.OK, out.message
    assert len(os.listdir("/proc/self/fd")) == fds  # every file it opened, closed
    left = sorted(p.name for p in etc.iterdir())
    special = [f"subuid.{dead}", f"subgid.{dead}", f"passwd.{dead + 4}", "elsewhere", "target", owned.name, "x"]
    assert left == sorted([*kept, *special])
    log = (tmp_path / "var/log/gpuenv/apply.log").read_text()
    for name in gone:
        assert (
            f"removed /etc/{name}: the lock file of a user-database command the interrupted run "
            f"started (pid {dead}, gone)"
        ) in log


@AS_ROOT
def test_a_first_run_leaves_lock_files_alone(tmp_path):
    (tmp_path / "etc").mkdir()
    dead = _dead_pid()
    (tmp_path / f"etc/group.{dead}").write_text(str(dead))
    assert _apply(tmp_path, _write()).exit is Exit.OK
    assert (tmp_path / f"etc/group.{dead}").read_text() == str(dead)


# --------------------------------------------------------------------------------------------
# Programs: refused before the first step when another account could have written them


@AS_ROOT
@pytest.mark.parametrize("argv", [("/usr/local/bin/tool",), ("/usr/local/bin/tool", "--now")])
def test_a_program_another_account_owns_is_refused_before_any_step(tmp_path, argv):
    tool = tmp_path / "usr/local/bin/tool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    os.chown(tool, 1000, 1000)
    out = _apply(tmp_path, _write(), _run(*argv))
    assert out.exit is Exit.REFUSED
    assert out.message == (
        f"step run: refusing to run /usr/local/bin/tool as root: {tool} belongs to uid 1000 (mode 0755). Nothing was "
        "changed; nothing a non-root account can write is run as root."
    )
    assert not (tmp_path / "etc/x").exists()  # the step before it did not run
    assert _gpuenv_left(tmp_path) == []


@AS_ROOT
@pytest.mark.parametrize("how", ["absent", "root's own", "relative"])
def test_a_program_root_alone_could_write_or_not_there_yet_passes_the_check(tmp_path, how):
    """An absolute program that is not there yet (a venv an earlier step makes) or is root's
    alone passes; a bare name is found through PATH by the command itself, never judged by a
    file of that name at the top of the root."""
    argv = ("/opt/venv/bin/python", "-m", "pip")
    if how == "root's own":
        argv = ("/usr/bin/tool",)
        (tmp_path / "usr/bin").mkdir(parents=True)
        (tmp_path / "usr/bin/tool").write_text("#!/bin/sh\n")
        (tmp_path / "usr/bin/tool").chmod(0o755)
    elif how == "relative":
        argv = ("tool",)
        (tmp_path / "tool").write_text("#!/bin/sh\n")
        (tmp_path / "tool").chmod(0o777)
        os.chown(tmp_path / "tool", 1000, 1000)
    out = _apply(tmp_path, _blocked_write(tmp_path), _run(*argv))
    assert out.exit is Exit.PROBLEMS and out.message.startswith("step w failed: ")  # got to the first step


def _program(root: Path, path: str, uid: int = 0) -> Path:
    prog = root / path.lstrip("/")
    prog.parent.mkdir(parents=True, exist_ok=True)
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    os.chown(prog, uid, uid)
    return prog


def _refused(out: executor.Outcome, program: str, why: str) -> None:
    assert out.exit is Exit.REFUSED
    assert out.message == (
        f"step run: refusing to run {program} as root: {why}. Nothing was changed; nothing a non-root "
        "account can write is run as root."
    )


@AS_ROOT
def test_a_bare_program_name_is_judged_as_found_on_the_system_path_inside_the_root(tmp_path):
    tool = _program(tmp_path, "/usr/sbin/ldconfig", uid=1000)
    _refused(_apply(tmp_path, _write(), _run("ldconfig", "-X")), "ldconfig", f"{tool} belongs to uid 1000 (mode 0755)")
    assert not (tmp_path / "etc/x").exists() and _gpuenv_left(tmp_path) == []


@AS_ROOT
def test_the_first_program_of_that_name_on_the_system_path_is_the_one_judged(tmp_path):
    _program(tmp_path, "/usr/sbin/tool")  # root's, and found first: a user's later copy is never run
    _program(tmp_path, "/usr/bin/tool", uid=1000)
    out = _apply(tmp_path, _blocked_write(tmp_path), _run("tool"))
    assert out.exit is Exit.PROBLEMS and out.message.startswith("step w failed: ")  # got to the first step


@AS_ROOT
def test_a_system_directory_another_account_can_write_before_the_program_is_refused(tmp_path):
    # Whoever can write /usr/sbin can put a "tool" there that exec would find before /usr/bin's.
    _program(tmp_path, "/usr/bin/tool")
    (tmp_path / "usr/sbin").mkdir(parents=True)
    os.chmod(tmp_path / "usr/sbin", 0o777)
    why = f"{tmp_path / 'usr/sbin'} is writable by everyone (owner uid 0, mode 0777)"
    _refused(_apply(tmp_path, _write(), _run("tool")), "tool", why)


@AS_ROOT
def test_a_root_another_account_owns_has_none_of_its_programs_run_as_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _program(root, "/usr/bin/apt-get")  # root's own file, in a tree another account controls
    os.chown(root, 1000, 1000)
    _refused(_apply(root, _write(), _run("apt-get", "update")), "apt-get", f"{root} belongs to uid 1000 (mode 0755)")
    assert not (root / "etc/x").exists()


@AS_ROOT
@pytest.mark.parametrize("program", ["./tool", "usr/bin/tool"])
def test_a_relative_program_path_is_never_run_as_root(tmp_path, program):
    _program(tmp_path, "/usr/bin/tool")
    _refused(_apply(tmp_path, _write(), _run(program)), program, f"{program!r} is a relative path")


@AS_ROOT
@pytest.mark.parametrize("host", [False, True])
def test_the_runner_checks_every_program_it_starts_as_root(tmp_path, host):
    from gpuenv.execute.runner import Runner, Untrusted

    marker = tmp_path / "ran"
    tool = _program(tmp_path, "/usr/bin/gpuenv-test-tool", uid=1000)
    tool.write_text(f"#!/bin/sh\necho ran > {marker}\n")
    root = "/" if host else str(tmp_path)
    program = str(tool) if host else "gpuenv-test-tool"
    with pytest.raises(Untrusted, match=f"^refusing to run {program} as root: {tool} belongs to uid 1000"):
        Runner(root).run([program], host=host)
    assert not marker.exists()


# --------------------------------------------------------------------------------------------
# Keys: fingerprint, armor, de-armor


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    with gpg_home(tmp_path_factory) as (home, gpg):
        out = {}
        for name in ("pinned", "other"):
            gpg("--quick-gen-key", f"{name} <{name}@x>", "ed25519", "sign", "0")
            colons = gpg("--with-colons", "--list-keys", f"{name}@x").decode()
            out[name + "_fpr"] = next(ln.split(":")[9] for ln in colons.splitlines() if ln.startswith("fpr:"))
            out[name] = gpg("--export", f"{name}@x")
            out[name + "_asc"] = gpg("--armor", "--export", f"{name}@x")
        out["both"] = gpg("--export", "pinned@x", "other@x")
        yield out


URL = "https://keys.example/vendor.gpg"


def _fetch(tmp_path, keys, served: bytes) -> bytes:
    """The key step's preflight: fetch URL (served by URL only), check what it holds."""
    ctx = Context(root=str(tmp_path), runner=Runner(str(tmp_path)), files=executor.Files(str(tmp_path)))
    step = Step(
        id="key", kind=Kind.APT_KEY, title="key", url=URL, fingerprint=keys["pinned_fpr"], path="/etc/k.gpg"
    )
    return keymod.fetch_key(ctx, step, {URL: served}.__getitem__)


def test_the_pinned_key_is_written_as_the_binary_keyring_apt_reads(tmp_path, keys):
    assert _fetch(tmp_path, keys, keys["pinned"]) == keys["pinned"]
    armored = _fetch(tmp_path, keys, b"Our signing key:\n\n" + keys["pinned_asc"])
    assert armored == keys["pinned"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "served, got",
    [("other", "{other}"), ("both", "{pinned}, {other}"), ("nothing", "no OpenPGP key")],
    ids=["another-key", "pinned-and-another", "armor-of-no-key"],
)
def test_a_key_that_is_not_exactly_the_pinned_one_is_refused_by_fingerprint(tmp_path, keys, served, got):
    data = _armor(b"\xb4\x05alice") if served == "nothing" else keys[served]  # a lone user-ID packet
    with pytest.raises(executor.Refused) as exc:
        _fetch(tmp_path, keys, data)
    names = {"pinned": keys["pinned_fpr"], "other": keys["other_fpr"]}
    assert exc.value.exit is Exit.REFUSED
    assert str(exc.value).startswith(
        f"the key at {URL} has fingerprint {got.format(**names)}; the plan pins {keys['pinned_fpr']}. Nothing was changed."
    )
    assert list(tmp_path.iterdir()) == []


def test_a_page_that_is_no_key_is_refused_before_any_check(tmp_path, keys):
    with pytest.raises(executor.Refused) as exc:
        _fetch(tmp_path, keys, b"<html>404 Not Found</html>\n")
    assert (exc.value.exit, str(exc.value)) == (
        Exit.REFUSED, "the downloaded key is neither an OpenPGP key nor armored: nothing was changed"
    )  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def _crc24(data: bytes) -> int:
    crc = 0xB704CE
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def _armor(payload: bytes) -> bytes:
    crc = base64.b64encode(_crc24(payload).to_bytes(3, "big"))
    return (b"Vendor key, since 2025:\n-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n" + base64.encodebytes(payload)
            + b"=" + crc + b"\n-----END PGP PUBLIC KEY BLOCK-----\n")  # fmt: skip


def test_a_binary_key_followed_by_its_armored_copy_is_checked_and_written_binary(tmp_path, keys):
    """AMD's ROCm 10.0 key file (stable.repo.amd.com/rocm/gpg/packages.gpg) is the binary key
    followed by its ASCII-armored copy, which gpg cannot read as one file."""
    published = keys["pinned"] + keys["pinned_asc"]
    assert published[0] & 0x80 and b"-----BEGIN PGP PUBLIC KEY BLOCK-----" in published
    data = _fetch(tmp_path, keys, published)
    assert data == keys["pinned"]  # the armored copy, de-armored: the key itself, once
    step = Step(id="key", kind=Kind.APT_KEY, title="key", url=URL, fingerprint=keys["pinned_fpr"], path="/etc/k.gpg")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/k.gpg").write_bytes(data)
    ctx = Context(root=str(tmp_path), runner=Runner(str(tmp_path)), files=executor.Files(str(tmp_path)))
    plan = Plan(Action.INSTALL, PlanTarget("rocm"), "sha256:" + "0" * 64, (step,))
    assert handlers.done(ctx, plan, step) == (True, "holds the pinned key")


@pytest.mark.parametrize("binary", ["other", "pinned"], ids=["another-key", "binary-part-pinned-copy-not"])
def test_a_binary_and_armored_key_file_whose_copy_is_another_key_is_refused(tmp_path, keys, binary):
    """The armored copy is what apt would be given: it must be the pinned key, whatever the
    binary part before it holds."""
    with pytest.raises(executor.Refused, match=f"has fingerprint {keys['other_fpr']}; the plan pins {keys['pinned_fpr']}"):
        _fetch(tmp_path, keys, keys[binary] + keys["other_asc"])
    assert list(tmp_path.iterdir()) == []


def _packet(tag: int, body: bytes) -> bytes:
    """One OpenPGP packet in the new format (RFC 4880 4.2.2), bodies under 8,384 bytes."""
    n = len(body)
    assert n < 8384
    length = bytes([n]) if n < 192 else bytes([((n - 192) >> 8) + 192, (n - 192) & 0xFF])
    return bytes([0xC0 | tag]) + length + body


def test_armor_hidden_inside_the_pinned_key_never_reaches_apt(tmp_path, keys):
    """A hostile file: the pinned key with one more user-ID packet whose text is another key's
    armor, the whole armored. gpg lists only the pinned key; what apt is given must be those very
    bytes, never the armor inside the packet de-armored again (that would be the other key)."""
    inner = keys["pinned"] + _packet(13, b"\n" + keys["other_asc"])
    assert _fetch(tmp_path, keys, _armor(inner)) == inner  # exactly what was checked
    # The same bytes unarmored: the armor in them is what would be read, so that key is judged.
    with pytest.raises(executor.Refused, match=f"has fingerprint {keys['other_fpr']}; the plan pins"):
        _fetch(tmp_path, keys, inner)
    assert list(tmp_path.iterdir()) == []


# A byte with the OpenPGP packet-tag bit (0x80) set, one without it but with the other bits a
# wrong mask would see (0x41: bit 0; 0x7f), and high bytes after a bad first byte.
@pytest.mark.parametrize(
    "data, keyring",
    [
        (b"\x99\x00\x0dkey", b"\x99\x00\x0dkey"),
        (b"\x80", b"\x80"),
        (_armor(b"\x99\x00\x0dkey"), b"\x99\x00\x0dkey"),
        (_armor(b"\x80"), b"\x80"),
    ],
    ids=["binary", "binary-0x80", "armored", "armored-0x80"],
)
def test_binary_keyrings_pass_and_armored_ones_are_de_armored(tmp_path, data, keyring):
    assert keymod.binary_keyring(Runner(str(tmp_path)), data) == keyring


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "the downloaded key is neither an OpenPGP key nor armored: nothing was changed"),
        (b"A\xc0\xc0", "the downloaded key is neither an OpenPGP key nor armored: nothing was changed"),
        (b"\x7f\xc0", "the downloaded key is neither an OpenPGP key nor armored: nothing was changed"),
        (_armor(b""), "the downloaded key did not de-armor to an OpenPGP key: nothing was changed"),
        (_armor(b"A\xc0\xc0"), "the downloaded key did not de-armor to an OpenPGP key: nothing was changed"),
        (_armor(b"\x7f\xc0"), "the downloaded key did not de-armor to an OpenPGP key: nothing was changed"),
    ],
    ids=["empty", "text", "0x7f", "armored-empty", "armored-text", "armored-0x7f"],
)
def test_what_is_not_an_openpgp_keyring_is_refused(tmp_path, data, message):
    with pytest.raises(executor.Refused) as exc:
        keymod.binary_keyring(Runner(str(tmp_path)), data)
    assert (exc.value.exit, str(exc.value)) == (Exit.REFUSED, message)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# Key URLs: https, plain http from this machine only when the test override allows it


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's API
        moves = {"/moved": "/key", "/away": "http://keys.example.invalid/key"}
        if self.path in moves:
            target = moves[self.path]
            self.send_response(302)
            self.send_header(
                "Location",
                target if "://" in target else f"http://127.0.0.1:{self.server.server_port}{target}",
            )
            self.end_headers()
            return
        self.send_response(200 if self.path == "/key" else 404)
        self.end_headers()
        self.wfile.write(b"KEY" if self.path == "/key" else b"")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


def test_loopback_http_is_fetched_and_its_redirects_followed_when_allowed(server):
    assert keymod.default_fetch(f"http://{server}/key", loopback_http=True) == b"KEY"
    assert keymod.default_fetch(f"http://{server}/moved", loopback_http=True) == b"KEY"


@pytest.mark.parametrize(
    "url, loopback, message",
    [
        ("http://{server}/key", False, "refusing to fetch a signing key over http: http://{server}/key"),
        (
            "http://{server}/away",
            True,
            "refusing to fetch a signing key over http: http://keys.example.invalid/key",
        ),
        (
            "http://localhost:{port}/key",
            True,
            "refusing to fetch a signing key over http: http://localhost:{port}/key",
        ),
        ("ftp://{server}/key", True, "refusing to fetch a signing key over ftp: ftp://{server}/key"),
        ("https://{server}/key", False, "cannot fetch the signing key https://{server}/key: "),
    ],
    ids=["http", "redirect-off-this-machine", "a-name-is-not-loopback", "ftp", "https-is-tried"],
)
def test_key_urls_other_than_https_are_refused_before_any_fetch(server, url, loopback, message):
    fill = {"server": server, "port": server.rsplit(":", 1)[1]}
    with pytest.raises(executor.Refused) as exc:
        keymod.default_fetch(url.format(**fill), loopback_http=loopback)
    assert exc.value.exit is Exit.REFUSED and str(exc.value).startswith(message.format(**fill))


# --------------------------------------------------------------------------------------------
# Autoremove: only this stack's orphans; the rest is left for the user to review


class _Apt(Runner):
    """apt with a fixed set of orphans: simulations answer from it, the real purge succeeds."""

    def __init__(self, orphans: list[str]):
        super().__init__("/nonexistent-root")
        self.orphans, self.ran = orphans, []

    def run(self, argv, **kw):
        self.ran.append(list(argv))
        if "-s" in argv:
            gone = self.orphans if "autoremove" in argv else [p for p in self.orphans if p in argv]
            return Result(tuple(argv), 0, "".join(f"Purg {p} [1]\n" for p in gone))
        return Result(tuple(argv), 0, "")


def _autoremove_step(allow: tuple[str, ...]) -> Step:
    return Step(id="ar", kind=Kind.APT_PURGE, title="autoremove", autoremove=True, allow=allow)


def _cuda_autoremove() -> Step:
    return plan_for(load("plan-ubuntu2404-rx9070-cuda-leftovers"), "rocm").step("purge-cuda-autoremove")


@pytest.mark.parametrize(
    "step, orphans, removed, kept",
    [
        (_cuda_autoremove(), ["cuda-cudart-12-8", "libnvidia-container1", "myorphan-tool", "libcublas-12-8"],
         ["cuda-cudart-12-8", "libcublas-12-8"], ["libnvidia-container1", "myorphan-tool"]),
        (_autoremove_step(("cuda-.*", "!cuda-keep")), ["cuda-keep", "cuda-x", "x-cuda"], ["cuda-x"],
         ["cuda-keep", "x-cuda"]),
    ],
    ids=["the-planned-step", "a-keep-pattern-wins"],
)  # fmt: skip
def test_autoremove_purges_only_what_the_step_allows(step, orphans, removed, kept):
    runner = _Apt(orphans)
    ctx = Context(
        root="/nonexistent-root", runner=runner, files=executor.ReadOnlyFiles("/nonexistent-root")
    )
    plan = _plan(step)
    assert handlers.done(ctx, plan, step) == (False, "orphans: " + " ".join(removed))
    detail = handlers.act(ctx, step)
    assert detail == "removed " + " ".join(removed) + "; left for you to review: " + " ".join(kept)
    real = [argv for argv in runner.ran if "-s" not in argv]
    assert real == [["apt-get", "purge", "-y", "-q", "-o", "Dpkg::Options::=--force-confdef", "-o",
                     "Dpkg::Options::=--force-confold", *removed]]  # fmt: skip


def test_autoremove_with_no_orphan_of_the_stack_removes_nothing():
    runner = _Apt(["myorphan-tool", "libnvidia-container1"])
    ctx = Context(
        root="/nonexistent-root", runner=runner, files=executor.ReadOnlyFiles("/nonexistent-root")
    )
    step = _cuda_autoremove()
    assert handlers.done(ctx, _plan(step), step) == (True, "no orphan of this stack")
    assert handlers.act(ctx, step) == "nothing to remove"
    assert all("-s" in argv for argv in runner.ran)


# --------------------------------------------------------------------------------------------
# The files a plan writes


@pytest.mark.parametrize("mode", ["0600", "0644", "0755", "0640"])
def test_a_written_file_has_exactly_its_mode(tmp_path, mode):
    executor.Files(str(tmp_path)).write("/etc/apt/keyrings/k.gpg", b"key", mode)
    path = tmp_path / "etc/apt/keyrings/k.gpg"
    assert path.read_bytes() == b"key" and f"{stat.S_IMODE(path.stat().st_mode):04o}" == mode


def test_a_written_file_is_on_disk_before_it_is_renamed_into_place(tmp_path, monkeypatch):
    """A power-cut model: what was not fsynced is lost. The bytes must be synced, in full, while
    the file is still the temporary one (the rename makes them visible)."""
    synced: list[tuple[str, bytes, bool]] = []
    real_fsync = os.fsync
    target = tmp_path / "etc/apt/sources.list.d/rocm.list"

    def fsync(fd):
        name = os.readlink(f"/proc/self/fd/{fd}")
        with open(f"/proc/self/fd/{fd}", "rb") as fh:
            synced.append((os.path.basename(name), fh.read(), target.exists()))
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    data = b"deb [signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/7.2 noble main\n"
    executor.Files(str(tmp_path)).write("/etc/apt/sources.list.d/rocm.list", data, "0644")
    monkeypatch.undo()
    assert [(name.startswith(".rocm.list.gpuenv-"), got, visible) for name, got, visible in synced] == [
        (True, data, False)
    ]
    assert target.read_bytes() == data


def test_a_link_where_a_file_is_written_is_replaced_not_followed(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/real").write_text("left alone\n")
    os.symlink("real", tmp_path / "etc/x")
    executor.Files(str(tmp_path)).write("/etc/x", b"new\n", "0644")
    assert not (tmp_path / "etc/x").is_symlink() and (tmp_path / "etc/x").read_text() == "new\n"
    assert (tmp_path / "etc/real").read_text() == "left alone\n"


@pytest.mark.parametrize("path", ["/", "/etc/..", "/.."])
def test_the_root_itself_is_never_written(tmp_path, path):
    (tmp_path / "root").mkdir()
    with pytest.raises(IsADirectoryError, match=r"refusing to write the root itself"):
        executor.Files(str(tmp_path / "root")).write(path, b"x", "0644")
    assert _tree(tmp_path) == ["root"]


def test_a_write_that_fails_raises_and_leaves_no_temporary(tmp_path):
    (tmp_path / "etc/x").mkdir(parents=True)
    (tmp_path / "etc/x/keep").write_text("")
    with pytest.raises(IsADirectoryError):
        executor.Files(str(tmp_path)).write("/etc/x", b"x", "0644")
    assert _tree(tmp_path) == ["etc", "etc/x", "etc/x/keep"]


def test_remove_takes_a_link_not_its_target_and_an_absent_file_is_fine(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/real").write_text("kept\n")
    os.symlink("real", tmp_path / "etc/link")
    files = executor.Files(str(tmp_path))
    files.remove("/etc/link")
    files.remove("/etc/never-there")
    assert _tree(tmp_path) == ["etc", "etc/real"]


def test_a_dry_runs_files_refuse_every_change(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/x").write_text("x\n")
    files = executor.ReadOnlyFiles(str(tmp_path))
    with pytest.raises(DryRunViolation, match="dry run refused to write /etc/y"):
        files.write("/etc/y", b"y", "0644")
    with pytest.raises(DryRunViolation, match="dry run refused to remove /etc/x"):
        files.remove("/etc/x")
    assert _tree(tmp_path) == ["etc", "etc/x"] and files.read("/etc/x") == b"x\n"


def test_a_program_is_judged_only_when_gpuenv_runs_as_root(tmp_path, monkeypatch):
    """As another account nothing runs as root, so there is nothing to refuse: the check is
    root's alone (an account's own venv is its to run)."""
    from gpuenv.execute import preflight
    from gpuenv.execute.runner import Untrusted

    home = tmp_path / "home/alice"
    (home / "venv/bin").mkdir(parents=True)
    (home / "venv/bin/python").write_text("#!/bin/sh\n")
    (home / "venv/bin/python").chmod(0o755)
    os.chown(home, 1000, 1000)
    step = Step(id="pip", kind=Kind.COMMAND, title="pip", argv=("/home/alice/venv/bin/python", "-m", "pip"))
    if os.geteuid() == 0:
        with pytest.raises(Untrusted, match="belongs to uid 1000"):
            preflight.check_program(str(tmp_path), step)
    monkeypatch.setattr(preflight.os, "geteuid", lambda: 1000)
    assert preflight.check_program(str(tmp_path), step) is None
