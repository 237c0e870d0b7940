"""The apply journal as --resume sees it: what a resumed apply reads back, every malformed field
refused by name, the lock held and let go, a crash or a power cut at any point of a write, planted
files and links around the temporary file, and a refused apply leaving nothing behind."""

from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import sys

import pytest

from gpuenv.execute import journal as journal_mod
from gpuenv.execute.journal import Busy, Journal, JournalError, State
from gpuenv.plan import planfile
from tests.test_plan import load, plan_for

DIGEST = "sha256:" + "0" * 64


def _plan():
    return plan_for(load("plan-ubuntu2404-rx9070-cuda-leftovers"), "rocm")


def _jdir(root) -> pathlib.Path:
    return pathlib.Path(root) / "var/lib/gpuenv"


def _write_journal(root, doc) -> None:
    _jdir(root).mkdir(parents=True, exist_ok=True)
    (_jdir(root) / "journal.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))


# -- what a resumed apply reads back


def test_a_resumed_apply_reads_back_done_changed_and_the_running_step(tmp_path):
    j = Journal(str(tmp_path))
    j.acquire()
    j.begin(DIGEST, {"x": 1})
    j.mark_started("a")
    j.mark_changed("a")
    j.mark_changed("a")  # once only
    j.mark_done("a")
    j.mark_done("a")
    j.mark_started("b")
    j.mark_changed("b")
    j.release()

    again = Journal(str(tmp_path))
    again.acquire()
    try:
        s = again.state
        assert s.plan_digest == DIGEST
        assert s.done == ["a"]
        assert s.changed == ["a", "b"]
        assert s.started == "b"
        assert s.finished is False and s.finished_at is None
        assert s.started_at and s.started_at.endswith("Z")
    finally:
        again.release()
    assert json.loads((_jdir(tmp_path) / "plan.json").read_text()) == {"x": 1}


def test_a_done_step_is_no_longer_the_running_one(tmp_path):
    j = Journal(str(tmp_path))
    j.acquire()
    j.begin(DIGEST, {})
    j.mark_started("a")
    j.mark_done("a")
    j.release()
    assert Journal(str(tmp_path)).read().started is None


def test_a_changed_step_is_on_disk_before_the_step_finishes(tmp_path):
    j = Journal(str(tmp_path))
    j.acquire()
    j.begin(DIGEST, {})
    j.mark_started("a")
    j.mark_changed("a")  # the process dies here, mid-step
    assert Journal(str(tmp_path)).read().changed == ["a"]
    j.release()


def test_a_finished_apply_is_recorded_and_offers_no_plan_to_resume(tmp_path):
    plan = _plan()
    j = Journal(str(tmp_path))
    j.acquire()
    j.begin(planfile.digest(plan), plan.to_dict())
    assert planfile.digest(Journal(str(tmp_path)).saved_plan()) == planfile.digest(plan)
    j.finish()
    j.release()
    s = Journal(str(tmp_path)).read()
    assert s.finished is True and s.finished_at and s.finished_at.endswith("Z")
    assert Journal(str(tmp_path)).saved_plan() is None


def test_no_journal_means_no_plan_to_resume(tmp_path):
    assert Journal(str(tmp_path)).saved_plan() is None
    assert Journal(str(tmp_path)).read() == State()


def test_a_journal_without_a_digest_offers_no_plan(tmp_path):
    _write_journal(tmp_path, {"done": []})
    assert Journal(str(tmp_path)).saved_plan() is None


def test_the_saved_plan_must_be_there_and_be_the_recorded_one(tmp_path):
    plan = _plan()
    j = Journal(str(tmp_path))
    j.acquire()
    j.begin(planfile.digest(plan), plan.to_dict())
    j.release()
    plan_path = _jdir(tmp_path) / "plan.json"

    doc = json.loads(plan_path.read_text())
    doc["steps"] = doc["steps"][:-1]
    plan_path.write_text(json.dumps(doc))
    with pytest.raises(JournalError, match="is not the plan the journal records"):
        Journal(str(tmp_path)).saved_plan()

    plan_path.write_text('{"steps": 5}')
    with pytest.raises(JournalError, match="damaged"):
        Journal(str(tmp_path)).saved_plan()

    plan_path.unlink()
    with pytest.raises(JournalError, match="is missing"):
        Journal(str(tmp_path)).saved_plan()


# -- every field checked


@pytest.mark.parametrize(
    "doc, match",
    [
        ([], "not a JSON object"),
        ({"done": "a"}, "done is not a list of step ids"),
        ({"done": ["a", 1]}, "done is not a list of step ids"),
        ({"changed": "a"}, "changed is not a list of step ids"),
        ({"changed": ["a", None]}, "changed is not a list of step ids"),
        ({"plan_digest": 5}, "plan_digest is not a string"),
        ({"started": ["a"]}, "started is not a string"),
        ({"started_at": 1}, "started_at is not a string"),
        ({"finished_at": True}, "finished_at is not a string"),
        ({"finished": "yes"}, "finished is not true or false"),
        ({"finished": 1}, "finished is not true or false"),
        ('{"done": [', "damaged"),
    ],
)
def test_a_malformed_field_is_refused_by_name(tmp_path, doc, match):
    _write_journal(tmp_path, doc)
    with pytest.raises(JournalError, match=match) as exc:
        Journal(str(tmp_path)).read()
    msg = str(exc.value)
    assert "Nothing was changed" in msg and "apply.log" in msg and "move the journal aside" in msg


def test_unknown_fields_are_ignored_and_nulls_accepted(tmp_path):
    _write_journal(tmp_path, {"done": ["a"], "plan_digest": None, "started": None, "future": 1, "finished": False})
    assert Journal(str(tmp_path)).read() == State(done=["a"])


def test_a_damaged_journal_refuses_acquire_and_releases_the_lock(tmp_path):
    _write_journal(tmp_path, {"done": 1})
    with pytest.raises(JournalError):
        Journal(str(tmp_path)).acquire()
    (_jdir(tmp_path) / "journal.json").unlink()
    j = Journal(str(tmp_path))
    j.acquire()  # not Busy: the refused one let go
    j.release()


def test_a_journal_that_is_a_fifo_or_a_link_is_refused_not_opened(tmp_path):
    _jdir(tmp_path).mkdir(parents=True)
    os.mkfifo(_jdir(tmp_path) / "journal.json")
    with pytest.raises(JournalError, match="cannot read the journal"):
        Journal(str(tmp_path)).read()
    (_jdir(tmp_path) / "journal.json").unlink()
    (tmp_path / "elsewhere.json").write_text("{}")
    os.symlink(tmp_path / "elsewhere.json", _jdir(tmp_path) / "journal.json")
    with pytest.raises(JournalError, match="cannot read the journal"):
        Journal(str(tmp_path)).read()


def test_the_journal_size_cap_is_exactly_four_mib(tmp_path):
    cap = 4 << 20
    body = '{"done": []}'
    _write_journal(tmp_path, body + " " * (cap - len(body)))
    assert Journal(str(tmp_path)).read() == State()
    _write_journal(tmp_path, body + " " * (cap + 1 - len(body)))
    with pytest.raises(JournalError, match="cannot read the journal"):
        Journal(str(tmp_path)).read()


def test_a_var_that_loops_is_a_journal_error(tmp_path):
    os.symlink("var", tmp_path / "var")
    with pytest.raises(JournalError, match="cannot resolve"):
        Journal(str(tmp_path))


# -- the lock


def test_a_second_apply_is_busy_at_once_and_gets_the_lock_after_release(tmp_path):
    first = Journal(str(tmp_path))
    first.acquire()
    with pytest.raises(Busy, match="another gpuenv apply is running"):
        Journal(str(tmp_path)).acquire()  # at once, never waiting
    first.release()
    first.release()  # twice is harmless
    second = Journal(str(tmp_path))
    second.acquire()
    second.release()


def test_a_program_the_apply_starts_does_not_keep_the_lock(tmp_path):
    j = Journal(str(tmp_path))
    j.acquire()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], close_fds=False)
    try:
        j.release()
        other = Journal(str(tmp_path))
        other.acquire()  # the child (dpkg, say) still runs: it must not hold the lock
        other.release()
    finally:
        child.kill()
        child.wait()


def test_another_process_sees_the_lock_held(tmp_path):
    j = Journal(str(tmp_path))
    j.acquire()
    code = (
        "import sys; from gpuenv.execute.journal import Journal, Busy\n"
        "try:\n    Journal(sys.argv[1]).acquire()\nexcept Busy:\n    sys.exit(3)\n"
    )
    try:
        held = subprocess.run([sys.executable, "-c", code, str(tmp_path)], timeout=60)
    finally:
        j.release()
    assert held.returncode == 3
    free = subprocess.run([sys.executable, "-c", code, str(tmp_path)], timeout=60)
    assert free.returncode == 0


# -- a refused apply leaves nothing behind


def test_discard_removes_exactly_what_acquire_created(tmp_path):
    j = Journal(str(tmp_path))
    j.acquire()
    j.release()
    assert (_jdir(tmp_path) / "apply.lock").exists()
    j.discard()
    assert list(tmp_path.iterdir()) == []


def test_discard_keeps_what_was_there_before(tmp_path):
    (tmp_path / "var/lib").mkdir(parents=True)
    (tmp_path / "var/lib/keep").write_text("x")
    j = Journal(str(tmp_path))
    j.acquire()
    j.release()
    j.discard()
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["var", "var/lib", "var/lib/keep"]


def test_discard_after_begin_keeps_the_journal(tmp_path):
    j = Journal(str(tmp_path))
    j.acquire()
    j.begin(DIGEST, {})
    j.release()
    j.discard()
    assert (_jdir(tmp_path) / "journal.json").exists() and (_jdir(tmp_path) / "apply.lock").exists()


def test_discard_with_an_existing_journal_removes_nothing(tmp_path):
    _write_journal(tmp_path, {"done": []})
    j = Journal(str(tmp_path))
    j.acquire()
    j.release()
    (_jdir(tmp_path) / "apply.lock").unlink()
    j2 = Journal(str(tmp_path))
    j2.acquire()
    j2.release()
    j2.discard()
    assert (_jdir(tmp_path) / "apply.lock").exists()


def test_the_directories_made_are_writable_by_root_alone(tmp_path):
    old = os.umask(0)
    try:
        j = Journal(str(tmp_path))
        j.acquire()
        j.release()
    finally:
        os.umask(old)
    for d in ("var", "var/lib", "var/lib/gpuenv"):
        assert stat.S_IMODE((tmp_path / d).stat().st_mode) == 0o755, d
    assert stat.S_IMODE((_jdir(tmp_path) / "apply.lock").stat().st_mode) == 0o644


@pytest.mark.skipif(os.geteuid() != 0, reason="the trust check applies to root only")
def test_a_journal_directory_others_can_write_is_refused(tmp_path):
    _jdir(tmp_path).mkdir(parents=True)
    os.chmod(_jdir(tmp_path), 0o777)
    with pytest.raises(JournalError, match="cannot be trusted") as exc:
        Journal(str(tmp_path)).acquire()
    assert "writable by root alone" in str(exc.value)
    with pytest.raises(JournalError, match="cannot be trusted"):
        Journal(str(tmp_path)).saved_plan()
    assert not (_jdir(tmp_path) / "apply.lock").exists()


# -- crashes and power cuts


def test_a_leftover_temporary_file_of_a_crash_is_replaced_never_read(tmp_path):
    j = Journal(str(tmp_path))
    j.acquire()
    j.begin(DIGEST, {})
    tmp = _jdir(tmp_path) / ".journal.json.tmp"
    tmp.write_text('{"done": ["half')  # kill -9 between the write and the rename
    assert Journal(str(tmp_path)).read().plan_digest == DIGEST
    j.mark_done("a")
    j.release()
    assert not tmp.exists()
    assert Journal(str(tmp_path)).read().done == ["a"]


def test_a_crash_before_the_rename_leaves_the_previous_journal(tmp_path, monkeypatch):
    j = Journal(str(tmp_path))
    j.acquire()
    j.begin(DIGEST, {})
    j.mark_done("a")

    def killed(*_a, **_k):
        raise KeyboardInterrupt  # the process dies between fsync and rename

    monkeypatch.setattr(journal_mod.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        j.mark_done("b")
    monkeypatch.undo()
    j.release()
    assert Journal(str(tmp_path)).read().done == ["a"]


def test_a_symlink_planted_after_the_leftover_is_removed_is_never_written_through(tmp_path, monkeypatch):
    """A race: something plants a link (or a file) at the temporary name between its removal and
    its creation. The write fails rather than following it or writing into someone else's file."""
    victim = tmp_path / "victim"
    victim.write_text("host file\n")
    root = tmp_path / "root"
    root.mkdir()
    j = Journal(str(root))
    j.acquire()
    real_unlink = pathlib.Path.unlink

    for plant in (lambda p: os.symlink(victim, p), lambda p: p.write_text("planted\n")):

        def unlink(self, missing_ok=False, _plant=plant):
            real_unlink(self, missing_ok=missing_ok)
            if self.name.endswith(".tmp"):
                _plant(self)

        monkeypatch.setattr(pathlib.Path, "unlink", unlink)
        with pytest.raises(OSError):
            j.begin(DIGEST, {})
        monkeypatch.undo()
        assert victim.read_text() == "host file\n"
        for p in _jdir(root).glob(".*.tmp"):
            real_unlink(p)
    j.release()


def test_every_write_is_durable_before_it_is_visible(tmp_path, monkeypatch):
    """A power-cut model: only what was fsynced survives. The new journal's full text must be
    synced before the rename makes it the journal, and the directory synced after the rename."""
    synced: list[tuple[str, object]] = []
    real_fsync = os.fsync

    def fsync(fd):
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            synced.append(("dir", sorted(os.listdir(f"/proc/self/fd/{fd}"))))
        else:
            with open(f"/proc/self/fd/{fd}", "rb") as fh:
                synced.append(("file", fh.read()))
        real_fsync(fd)

    j = Journal(str(tmp_path))
    j.acquire()
    monkeypatch.setattr(journal_mod.os, "fsync", fsync)
    j.begin(DIGEST, {"p": 1})
    j.mark_done("a")
    monkeypatch.undo()
    j.release()
    final = (_jdir(tmp_path) / "journal.json").read_bytes()
    plan = (_jdir(tmp_path) / "plan.json").read_bytes()
    files = [data for kind, data in synced if kind == "file"]
    assert plan in files and final in files
    # after the last file sync, a directory sync showing journal.json (and no temporary left)
    last = max(i for i, (kind, data) in enumerate(synced) if kind == "file" and data == final)
    dirs_after = [data for kind, data in synced[last + 1 :] if kind == "dir"]
    assert dirs_after and "journal.json" in dirs_after[-1] and ".journal.json.tmp" not in dirs_after[-1]


# -- the log


def test_the_log_appends_lines_and_never_follows_a_link(tmp_path):
    j = Journal(str(tmp_path))
    j.log("one")
    j.log("two")
    log = tmp_path / "var/log/gpuenv/apply.log"
    assert log.read_text() == "one\ntwo\n"
    assert stat.S_IMODE(log.stat().st_mode) & 0o022 == 0
    victim = tmp_path / "victim"
    victim.write_text("v\n")
    log.unlink()
    os.symlink(victim, log)
    j.log("three")  # best effort: no exception
    assert victim.read_text() == "v\n"


def test_a_full_disk_mid_write_keeps_the_last_journal_and_leaves_no_half_copy(tmp_path, monkeypatch):
    j = Journal(str(tmp_path))
    j.acquire()
    j.begin(DIGEST, {})
    j.mark_done("a")

    def full(_fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal_mod.os, "fsync", full)
    with pytest.raises(OSError):
        j.mark_done("b")
    monkeypatch.undo()
    j.release()
    assert Journal(str(tmp_path)).read().done == ["a"]
    assert sorted(p.name for p in _jdir(tmp_path).iterdir()) == ["apply.lock", "journal.json", "plan.json"]


def test_the_files_written_have_exactly_their_modes(tmp_path):
    old = os.umask(0)
    try:
        j = Journal(str(tmp_path))
        j.acquire()
        j.begin(DIGEST, {})
        j.log("x")
        j.release()
    finally:
        os.umask(old)
    for rel in ("var/lib/gpuenv/journal.json", "var/lib/gpuenv/plan.json"):
        assert stat.S_IMODE((tmp_path / rel).stat().st_mode) == 0o644, rel
    # The log says what root changed, with the URLs it fetched: root's to read alone.
    assert stat.S_IMODE((tmp_path / "var/log/gpuenv/apply.log").stat().st_mode) == 0o600
    for rel in ("var/log/gpuenv",):  # (var/log itself: see bench/mutation-survivors.md)
        assert stat.S_IMODE((tmp_path / rel).stat().st_mode) == 0o755, rel


def test_a_lock_file_replaced_while_locking_is_busy_not_a_lock_on_nothing(tmp_path, monkeypatch):
    """A refused apply removes its lock file just as this one opens it: a lock on the unlinked
    file excludes nobody, so this apply must say busy and take no lock."""
    import fcntl

    j = Journal(str(tmp_path))
    j.acquire()
    j.release()
    lock = _jdir(tmp_path) / "apply.lock"
    real = fcntl.flock

    def racing(fd, op):
        if op & fcntl.LOCK_EX and lock.exists():
            lock.unlink()
            lock.touch()
        return real(fd, op)

    monkeypatch.setattr(journal_mod.fcntl, "flock", racing)
    with pytest.raises(Busy, match="try again"):
        Journal(str(tmp_path)).acquire()
    monkeypatch.undo()
    other = Journal(str(tmp_path))
    other.acquire()
    other.release()
