"""Safety of the executor against hostile roots and plan files, without apt: symlinks that point
out of --root, malformed steps, a damaged journal, dpkg's own lock, expired or revoked keys,
plain-http key downloads, what a dry run's runner will run, and collateral in autoremove."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.execute import apt, executor
from gpuenv.execute import keys as keymod
from gpuenv.execute import steps as handlers
from gpuenv.execute.context import Context
from gpuenv.execute.journal import Journal
from gpuenv.execute.runner import DryRunViolation, Result, Runner, SimulatingRunner, _read_only
from gpuenv.exitcodes import Exit
from gpuenv.plan import planfile
from gpuenv.plan.plan import Kind, PlanError, Step
from gpuenv.rootpath import in_root
from tests.gpg_home import gpg_home
from tests.test_plan import load, plan_for


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() and not p.is_symlink() else b"")
        for p in sorted(root.rglob("*"))
    }


# --------------------------------------------------------------------------------------------
# Symlinks inside the root never lead out of it


@pytest.fixture
def hostile(tmp_path):
    """A root whose /etc/apt is an absolute symlink and /var a relative one climbing out, plus a
    'host' directory beside it that must stay untouched."""
    root, host = tmp_path / "root", tmp_path / "host"
    (host / "etc/apt").mkdir(parents=True)
    (host / "etc/shadow").write_text("secret\n")
    (root / "etc").mkdir(parents=True)
    os.symlink(str(host / "etc/apt"), root / "etc/apt")  # absolute: means ROOT/<host path> in a chroot
    os.symlink("../../../../../../../" + str(host).lstrip("/"), root / "var")  # climbs out on the host
    os.symlink(str(host / "etc/shadow"), root / "etc/shadow")
    return root, host


def test_files_resolve_symlinks_inside_the_root(hostile):
    root, host = hostile
    before = _tree(host)
    files = executor.Files(str(root))
    files.write("/etc/apt/sources.list.d/x.list", b"deb x\n", "0644")
    files.write("/var/lib/x", b"x", "0644")
    assert (root / str(host).lstrip("/") / "etc/apt/sources.list.d/x.list").read_bytes() == b"deb x\n"
    assert (root / str(host).lstrip("/") / "var/lib/x").exists() is False  # var -> ROOT/<host>
    assert (root / str(host).lstrip("/") / "lib/x").read_bytes() == b"x"
    assert files.read("/etc/shadow") is None  # the host's file is not read through the link
    files.remove("/etc/shadow")  # the link goes, its target stays
    assert not os.path.lexists(root / "etc/shadow")
    assert _tree(host) == before


def test_in_root_clamps_dotdot_and_loops(tmp_path):
    assert in_root(str(tmp_path), "/../../etc/x") == tmp_path / "etc/x"
    os.symlink("loop", tmp_path / "loop")
    with pytest.raises(OSError, match="too many symbolic links"):
        in_root(str(tmp_path), "/loop/x")


def test_journal_and_lock_stay_inside_the_root(hostile):
    root, host = hostile
    before = _tree(host)
    journal = Journal(str(root))
    journal.acquire()
    journal.log("x")
    journal.release()
    assert str(journal.path).startswith(str(root) + "/") and str(journal.log_path).startswith(str(root) + "/")
    assert _tree(host) == before


def test_journal_never_writes_through_planted_symlinks(tmp_path):
    root, victim = tmp_path / "root", tmp_path / "victim"
    victim.write_text("host file\n")
    (root / "var/lib/gpuenv").mkdir(parents=True)
    (root / "var/log/gpuenv").mkdir(parents=True)
    os.symlink(victim, root / "var/lib/gpuenv/.journal.json.tmp")
    os.symlink(victim, root / "var/log/gpuenv/apply.log")
    journal = Journal(str(root))
    journal.acquire()
    journal.begin("sha256:" + "0" * 64, {})
    journal.log("x")  # best effort: not written through the link, and no exception mid-apply
    journal.release()
    assert victim.read_text() == "host file\n"
    assert json.loads((root / "var/lib/gpuenv/journal.json").read_text())["plan_digest"].startswith("sha256:")
    os.symlink(victim, root / "var/lib/gpuenv/apply.lock.x")
    (root / "var/lib/gpuenv/apply.lock").unlink()
    os.symlink(victim, root / "var/lib/gpuenv/apply.lock")
    with pytest.raises(OSError):
        Journal(str(root)).acquire()
    assert victim.read_text() == "host file\n"


# --------------------------------------------------------------------------------------------
# Steps from an untrusted plan file


def _step(**kw):
    base = {"id": "s", "kind": Kind.WRITE_FILE, "title": "t", "path": "/etc/x", "content": "x", "mode": "0644"}
    return Step(**{**base, **kw})


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"path": "/"}, "absolute path below /"),
        ({"path": "//./"}, "absolute path below /"),
        ({"path": "/etc/x\0"}, "NUL"),
        ({"path": "/etc/.."}, "'..'"),
        ({"mode": None}, "needs mode"),
        ({"kind": Kind.COMMAND, "argv": ("ls",), "creates": "/../../etc/shadow"}, "creates"),
        ({"kind": Kind.COMMAND, "argv": ("ls",), "only_if_exists": "../x"}, "only_if_exists"),
        ({"kind": Kind.COMMAND, "argv": ("",)}, "argv"),
        ({"kind": Kind.GROUP_ADD, "user": "-oalice", "groups": ("render",)}, "user or group"),
        ({"kind": Kind.GROUP_ADD, "user": "alice", "groups": ("render,root",)}, "user or group"),
    ],
)
def test_unsafe_steps_are_refused(kw, match):
    with pytest.raises(PlanError, match=match):
        _step(**kw)


def test_plan_file_with_bad_argv_or_kind_is_refused(tmp_path):
    plan = plan_for(load("plan-debian12-h100-rocm-leftovers"), "cuda", version="12.8")
    good = json.loads(planfile.dumps(plan))
    cmd = next(i for i, s in enumerate(good["steps"]) if s["kind"] == "command")
    for mutate in (
        lambda d: d["steps"][cmd].update(argv="rm -rf /"),
        lambda d: d["steps"][cmd].update(argv=["rm", 1]),
        lambda d: d["steps"][cmd].update(kind="shell"),
    ):
        doc = copy.deepcopy(good)
        mutate(doc)
        with pytest.raises(PlanError):
            planfile.loads(json.dumps(doc))


# --------------------------------------------------------------------------------------------
# Journal damage, dpkg's lock, a failure before the first step


def _plan():
    return plan_for(load("plan-ubuntu2404-rx9070-cuda-leftovers"), "rocm")


def test_damaged_journal_is_a_clear_refusal(tmp_path):
    journal = tmp_path / "var/lib/gpuenv/journal.json"
    journal.parent.mkdir(parents=True)
    journal.write_text('{"plan_digest": "sha256:ab", "done": ["a"')  # truncated
    (journal.parent / "apply.lock").touch()
    before = _tree(tmp_path)
    out = executor.apply(_plan(), str(tmp_path), executor.Options(force=True))
    assert out.exit is Exit.REFUSED and "damaged" in out.message and "Nothing was changed" in out.message
    assert _tree(tmp_path) == before
    journal.write_text('{"done": "a"}')
    out = executor.apply(_plan(), str(tmp_path), executor.Options(force=True))
    assert out.exit is Exit.REFUSED and "done is not a list" in out.message
    journal.unlink()  # the lock was released: the next apply gets past it
    assert executor.apply(_plan(), str(tmp_path), executor.Options()).exit is Exit.REFUSED  # no facts


def test_dpkg_lock_held_without_lock_frontend_is_busy(tmp_path):
    lock = tmp_path / "var/lib/dpkg/lock"
    lock.parent.mkdir(parents=True)
    lock.touch()
    (tmp_path / "var/lib/dpkg/lock-frontend").touch()
    holder = subprocess.Popen(  # dpkg itself: an fcntl write lock on lock only
        [
            sys.executable,
            "-c",
            "import fcntl,sys,time; f=open(sys.argv[1],'r+'); fcntl.lockf(f, fcntl.LOCK_EX); "
            "print('held', flush=True); time.sleep(60)",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        out = executor.apply(_plan(), str(tmp_path), executor.Options(force=True))
    finally:
        holder.kill()
        holder.wait()
    assert out.exit is Exit.BUSY and "dpkg is locked" in out.message
    assert not (tmp_path / "var/lib/gpuenv/journal.json").exists()


def test_second_concurrent_apply_is_busy_and_changes_nothing(tmp_path):
    first = Journal(str(tmp_path))
    first.acquire()
    try:
        before = _tree(tmp_path)
        out = executor.apply(_plan(), str(tmp_path), executor.Options(force=True))
        assert out.exit is Exit.BUSY and "another gpuenv apply is running" in out.message
        assert _tree(tmp_path) == before
    finally:
        first.release()


def test_failed_dpkg_configure_on_resume_is_reported_not_a_traceback(tmp_path):
    plan = _plan().with_steps((_step(),))
    (tmp_path / "var/lib/dpkg/updates").mkdir(parents=True)
    (tmp_path / "var/lib/dpkg/updates/0001").write_text("")
    journal = Journal(str(tmp_path))
    journal.acquire()
    journal.begin(planfile.digest(plan), plan.to_dict())
    journal.mark_started(plan.steps[0].id)
    journal.release()
    out = executor.apply(plan, str(tmp_path), executor.Options(resume=True))  # no dpkg in this root
    assert out.exit is Exit.PROBLEMS and "dpkg --configure -a failed" in out.message
    assert not (tmp_path / "etc/x").exists()


# --------------------------------------------------------------------------------------------
# Keys


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    with gpg_home(tmp_path_factory) as (home, gpg):
        gpg("--faked-system-time", "20200101T000000", "--quick-gen-key", "Old <old@x>", "ed25519", "sign", "1d")
        gpg("--quick-gen-key", "Rev <rev@x>", "ed25519", "sign", "0")
        gpg("--quick-gen-key", "Sub <sub@x>", "ed25519", "sign", "0")
        out = {}
        for name in ("old", "rev", "sub"):
            colons = gpg("--with-colons", "--list-keys", f"{name}@x").decode()
            out[name + "_fpr"] = [ln.split(":")[9] for ln in colons.splitlines() if ln.startswith("fpr:")]
        gpg("--quick-add-key", out["sub_fpr"][0], "cv25519", "encr", "0")
        colons = gpg("--with-colons", "--list-keys", "sub@x").decode()
        out["sub_fpr"] = [ln.split(":")[9] for ln in colons.splitlines() if ln.startswith("fpr:")]
        # A certify-only primary whose one signing subkey expired: apt can verify nothing with it.
        gpg("--faked-system-time", "20200101T000000", "--quick-gen-key", "Cert <cert@x>", "ed25519", "cert", "0")
        cert = [ln.split(":")[9] for ln in gpg("--with-colons", "--list-keys", "cert@x").decode().splitlines()
                if ln.startswith("fpr:")]  # fmt: skip
        gpg("--faked-system-time", "20200101T000100", "--quick-add-key", cert[0], "ed25519", "sign", "1d")
        out["cert_fpr"] = cert
        out["cert"] = gpg("--armor", "--export", "cert@x")
        rev = next((home / "openpgp-revocs.d").glob(out["rev_fpr"][0] + ".rev")).read_text()
        (home / "rev.asc").write_text(rev.replace(":-----", "-----"))
        gpg("--import", str(home / "rev.asc"))
        for name in ("old", "rev", "sub"):
            out[name] = gpg("--armor", "--export", f"{name}@x")
        yield out


def _key_step(fpr):
    return Step(
        id="key", kind=Kind.APT_KEY, title="key", url="https://x/k", fingerprint=fpr, path="/etc/k.gpg"
    )


@pytest.mark.parametrize("name, match", [("old", "has expired"), ("rev", "is revoked")])
def test_expired_or_revoked_pinned_key_is_refused(keys, tmp_path, name, match):
    ctx = Context(root=str(tmp_path), runner=Runner(str(tmp_path)), files=executor.Files(str(tmp_path)))
    with pytest.raises(executor.Refused, match=match):
        keymod.fetch_key(ctx, _key_step(keys[name + "_fpr"][0]), lambda url: keys[name])
    assert list(tmp_path.iterdir()) == []


def test_a_key_whose_only_signing_subkey_expired_is_refused(keys, tmp_path):
    ctx = Context(root=str(tmp_path), runner=Runner(str(tmp_path)), files=executor.Files(str(tmp_path)))
    with pytest.raises(executor.Refused, match="no signing key that is neither expired nor revoked"):
        keymod.fetch_key(ctx, _key_step(keys["cert_fpr"][0]), lambda url: keys["cert"])
    assert list(tmp_path.iterdir()) == []


def test_an_armored_key_with_text_before_the_armor_is_written_binary(keys, tmp_path):
    ctx = Context(root=str(tmp_path), runner=Runner(str(tmp_path)), files=executor.Files(str(tmp_path)))
    primary = keys["sub_fpr"][0]
    published = b"Our repository signing key (since 2025):\n\n" + keys["sub"]
    data = keymod.fetch_key(ctx, _key_step(primary), lambda url: published)
    assert data[0] & 0x80 and b"-----BEGIN" not in data  # what apt reads from a .gpg keyring
    # Written there, the keyring counts as done; an armored one (apt cannot read it) does not.
    from gpuenv.plan.plan import Action, Plan, PlanTarget

    step = _key_step(primary)
    plan = Plan(Action.INSTALL, PlanTarget("rocm"), "sha256:" + "0" * 64, (step,))
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/k.gpg").write_bytes(keys["sub"])
    assert handlers.done(ctx, plan, step) == (False, "not a binary keyring (armored?): apt cannot read it; written again")
    (tmp_path / "etc/k.gpg").write_bytes(data)
    assert handlers.done(ctx, plan, step) == (True, "holds the pinned key")
    with pytest.raises(executor.Refused, match="neither an OpenPGP key nor armored: nothing was changed"):
        keymod.fetch_key(ctx, _key_step(primary), lambda url: b"<html>not found</html>")


def test_signing_keys_reads_capabilities_and_validity():
    sub_expired = (
        "pub:-:255:22:AAAA:1:::-:::cC::::::23::0:\nfpr:::::::::A1:\n"
        "sub:e:255:22:BBBB:1:2:::::s::::::23:\nfpr:::::::::B1:\n"
    )
    assert apt.signing_keys(sub_expired) == ()
    assert apt.signing_keys(sub_expired.replace("sub:e:", "sub:-:")) == ("BBBB",)
    assert apt.signing_keys("pub:-:255:22:AAAA:1:::-:::scSC::::::23::0:\n") == ("AAAA",)
    assert apt.signing_keys("pub:r:255:22:AAAA:1:::-:::scSC::::::23::0:\nsub:-:1:1:BB:1::::::s:\n") == ()


def test_key_matching_only_as_a_subkey_is_refused(keys, tmp_path):
    ctx = Context(root=str(tmp_path), runner=Runner(str(tmp_path)), files=executor.Files(str(tmp_path)))
    primary, sub = keys["sub_fpr"]
    assert keymod.fetch_key(ctx, _key_step(primary), lambda url: keys["sub"])  # the primary: fine
    with pytest.raises(executor.Refused, match="pins " + sub):
        keymod.fetch_key(ctx, _key_step(sub), lambda url: keys["sub"])


def test_pub_validity_reads_the_primary_keys():
    colons = "pub:e:255:22:1A37:1577836800:1577923200::-:::sc:::::ed25519:::0:\nfpr:::::::::AB:\nsub:-:x\n"
    assert apt.pub_validity(colons) == ("e",)


def test_keys_only_over_https_unless_the_test_override_allows_loopback():
    with pytest.raises(executor.Refused, match="over http"):
        keymod.default_fetch("http://127.0.0.1:9/k")
    with pytest.raises(executor.Refused, match="over http"):
        keymod.default_fetch("http://example.com/k", loopback_http=True)
    with pytest.raises(executor.Refused, match="cannot fetch"):  # allowed, nothing listening
        keymod.default_fetch("http://127.0.0.1:9/k", loopback_http=True)
    with pytest.raises(executor.Refused, match="over http"):  # a redirect may not downgrade
        keymod.HttpsRedirects(False).redirect_request(None, None, 302, "Found", {}, "http://x/k")


# --------------------------------------------------------------------------------------------
# The dry run's runner


@pytest.mark.parametrize(
    "argv",
    [
        ["apt-get", "-s", "update"],
        ["apt-get", "-s", "-o", "APT::Get::Simulate=false", "install", "x"],
        ["apt-get", "-s", "-o", "Dir=/tmp/elsewhere", "install", "x"],
        ["apt-get", "-s", "-oDPkg::Pre-Invoke::=touch /x", "install", "x"],
        ["apt-get", "-s", "clean"],
        ["apt-get", "-s", "download", "x"],
        ["apt-cache", "gencaches"],
        ["apt-get", "install", "x"],
    ],
)
def test_dry_run_runner_refuses_more_than_simulation(argv):
    with pytest.raises(DryRunViolation):
        SimulatingRunner("/").run(argv)


def test_dry_run_runner_allows_the_simulations_the_executor_makes():
    no_cache = ["-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache=", "-o", "Dir::Log::Planner=/dev/null"]
    for args in (["autoremove", "--purge"], ["purge", "cuda-x"], ["install", "rocm"]):
        assert _read_only(["apt-get", "-s", "-q", *no_cache, *args])


# --------------------------------------------------------------------------------------------
# Autoremove: purging the stack's orphans must not drag out anything else


class _ScriptedRunner(Runner):
    """Answers apt's simulations by verb; any other command fails the test."""

    def __init__(self, simulations: dict[str, str]):
        super().__init__("/nonexistent-root")
        self.simulations, self.ran = simulations, []

    def run(self, argv, **kw):
        self.ran.append(list(argv))
        verb = next((v for v in self.simulations if v in argv), None)
        if argv[0] != "apt-get" or "-s" not in argv or verb is None:
            raise AssertionError(f"unexpected command {argv}")
        return Result(tuple(argv), 0, self.simulations[verb])


def test_autoremove_refuses_collateral_of_its_narrowed_purge():
    runner = _ScriptedRunner(
        {  # autoremove would take two orphans; purging the stack's one drags out the other
            "autoremove": "Purg cuda-cudart-12-8 [1]\nPurg myorphan-tool [1]\n",
            "purge": "Purg cuda-cudart-12-8 [1]\nPurg myorphan-tool [1]\n",
        }
    )
    ctx = Context(root="/nonexistent-root", runner=runner, files=executor.ReadOnlyFiles("/nonexistent-root"))
    step = Step(
        id="ar", kind=Kind.APT_PURGE, title="t", autoremove=True, allow=("^cuda(-[a-z0-9.+-]+)?$",)
    )
    with pytest.raises(executor.Refused, match="myorphan-tool"):
        handlers.act(ctx, step)
    assert not any("-y" in argv for argv in runner.ran)  # nothing but simulations ran


def test_a_write_cut_off_before_its_rename_leaves_nothing_behind_on_the_next(tmp_path):
    """A power cut between the temporary file and its rename leaves '.NAME.gpuenv-XXXX'; the next
    write of NAME (the resumed step) removes it, and nothing else in the directory."""
    keyrings = tmp_path / "etc/apt/keyrings"
    keyrings.mkdir(parents=True)
    stale = keyrings / ".rocm.gpg.gpuenv-abc123"
    stale.write_bytes(b"half a key")
    other = keyrings / ".cuda.gpg.gpuenv-def456"  # another file's leftover: not this write's
    other.write_bytes(b"x")
    unrelated = keyrings / "rocm.gpg.gpuenv-keep"
    unrelated.write_bytes(b"y")
    outside = tmp_path / "victim"
    outside.write_bytes(b"z")
    link = keyrings / ".rocm.gpg.gpuenv-link"
    link.symlink_to(outside)
    executor.Files(str(tmp_path)).write("/etc/apt/keyrings/rocm.gpg", b"key", "0644")
    assert sorted(p.name for p in keyrings.iterdir()) == sorted(
        [".cuda.gpg.gpuenv-def456", ".rocm.gpg.gpuenv-link", "rocm.gpg", "rocm.gpg.gpuenv-keep"]
    )
    assert (keyrings / "rocm.gpg").read_bytes() == b"key"
    assert outside.read_bytes() == b"z"


def test_without_gpg_the_key_step_says_gpg_is_missing(keys, tmp_path, monkeypatch):
    """Debian 12 minimal images have no gpg: the refusal names it, not a wrong fingerprint."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    monkeypatch.setenv("PATH", str(bin_))
    root = tmp_path / "root"
    root.mkdir()
    ctx = Context(root=str(root), runner=Runner(str(root)), files=executor.Files(str(root)))
    with pytest.raises(executor.Refused, match=r"gpg and gpgv are not installed.*apt-get install gpg gpgv"):
        keymod.fetch_key(ctx, _key_step(keys["sub_fpr"][0]), lambda url: keys["sub"])
    assert list(root.iterdir()) == []


def test_directories_root_creates_are_0755_whatever_the_umask(tmp_path):
    """Path.mkdir(parents=True, mode=0o755) gives the mode to the last level only: under umask 0
    the parents came out 0777, and root then wrote apt's sources and the journal into them."""
    import stat

    from gpuenv.execute.journal import Journal

    old = os.umask(0)
    try:
        executor.Files(str(tmp_path)).write("/etc/apt/keyrings/rocm.gpg", b"key", "0644")
        j = Journal(str(tmp_path))
        j.acquire()
        j.log("one line")
        j.release()
    finally:
        os.umask(old)
    made = [tmp_path / d for d in ("etc", "etc/apt", "etc/apt/keyrings", "var", "var/lib", "var/lib/gpuenv",
                                    "var/log", "var/log/gpuenv")]  # fmt: skip
    assert {str(d.relative_to(tmp_path)): oct(stat.S_IMODE(d.stat().st_mode)) for d in made} == {
        str(d.relative_to(tmp_path)): "0o755" for d in made
    }
