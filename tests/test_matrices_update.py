"""`gpuenv matrix update|reset|check`: a newer, valid, sha256-matched bundle is installed; plain
HTTP, a wrong sha256, an invalid bundle and a downgrade are refused and change nothing. All of it
inside GPUENV_STATE_DIR under a temp dir."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
import tarfile
from pathlib import Path

import pytest

from gpuenv import matrices as M
from gpuenv import matrixbundle as B
from gpuenv.exitcodes import Exit
from tests.cli_runner import CliRunner, app
from tests.test_matrices import copy_bundle, edit

runner = CliRunner()


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUENV_STATE_DIR", str(tmp_path / "state"))
    M.clear_cache()
    yield tmp_path / "state" / "matrices"
    M.clear_cache()


def tarball(directory: Path, dest: Path, extra: dict[str, bytes] | None = None) -> tuple[Path, str]:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in M.FILES:
            tar.add(directory / name, arcname=f"matrices/{name}")
        for name, data in (extra or {}).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    dest.write_bytes(buf.getvalue())
    return dest, hashlib.sha256(buf.getvalue()).hexdigest()


def snapshot(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.glob("*"))} if path.exists() else {}


def test_update_from_a_tarball_installs_and_load_uses_it(tmp_path, state):
    archive, sha = tarball(copy_bundle(tmp_path, "2099.01.01"), tmp_path / "b.tar.gz")
    done = B.install(str(archive), sha)
    assert (
        done.version == "2099.01.01"
        and done.previous == json.loads((Path(M.bundled_dir()) / "bundle.json").read_text())["version"]
    )
    assert sorted(p.name for p in state.iterdir()) == sorted(M.FILES)
    m = M.load()
    assert m.bundle.origin == "installed" and m.bundle.version == "2099.01.01"


def test_update_from_a_directory_uses_its_digest(tmp_path, state):
    bundle = copy_bundle(tmp_path, "2099.02.01")
    B.install(str(bundle), B.digest(bundle))
    assert M.load().bundle.version == "2099.02.01"


def test_plain_http_is_refused(tmp_path, state):
    with pytest.raises(B.BundleError) as err:
        B.install("http://example.invalid/b.tar.gz", "0" * 64)
    assert err.value.exit == Exit.USAGE and "HTTP" in str(err.value)
    assert not state.exists()
    result = runner.invoke(
        app, ["matrix", "update", "--from", "http://example.invalid/b.tar.gz", "--sha256", "0" * 64]
    )
    assert result.exit_code == Exit.USAGE


def test_sha256_is_required_and_checked(tmp_path, state):
    archive, sha = tarball(copy_bundle(tmp_path, "2099.01.01"), tmp_path / "b.tar.gz")
    result = runner.invoke(app, ["matrix", "update", "--from", str(archive)])
    assert result.exit_code == Exit.USAGE
    wrong = hashlib.sha256(b"something else").hexdigest()
    with pytest.raises(B.BundleError) as err:
        B.install(str(archive), wrong)
    assert err.value.exit == Exit.REFUSED and sha in str(err.value)
    with pytest.raises(B.BundleError):
        B.install(str(archive), "not-hex")
    assert not state.exists()


def test_downgrade_and_same_version_are_refused_and_change_nothing(tmp_path, state):
    newer, sha_newer = tarball(copy_bundle(tmp_path, "2099.01.01", "a"), tmp_path / "new.tar.gz")
    B.install(str(newer), sha_newer)
    before = snapshot(state)
    older, sha_older = tarball(copy_bundle(tmp_path, "2098.12.31", "b"), tmp_path / "old.tar.gz")
    with pytest.raises(B.BundleError) as err:
        B.install(str(older), sha_older)
    assert err.value.exit == Exit.REFUSED and "older" in str(err.value)
    with pytest.raises(B.BundleError, match="same version"):
        B.install(str(newer), sha_newer)
    assert snapshot(state) == before
    result = runner.invoke(app, ["matrix", "update", "--from", str(older), "--sha256", sha_older])
    assert result.exit_code == Exit.REFUSED


def test_a_bundle_older_than_the_shipped_one_is_a_downgrade(tmp_path, state):
    archive, sha = tarball(copy_bundle(tmp_path, "2000.01.01"), tmp_path / "b.tar.gz")
    with pytest.raises(B.BundleError, match="older"):
        B.install(str(archive), sha)
    assert not state.exists()


def test_an_invalid_bundle_is_refused(tmp_path, state):
    bundle = copy_bundle(tmp_path, "2099.01.01")
    edit(bundle / "cuda.json", lambda d: d["toolkits"][0].update(min_driver=520))
    archive, sha = tarball(bundle, tmp_path / "b.tar.gz")
    with pytest.raises(B.BundleError) as err:
        B.install(str(archive), sha)
    assert err.value.exit == Exit.USAGE and "cuda.json" in str(err.value)
    assert not state.exists()


def test_archive_members_cannot_escape(tmp_path, state):
    bundle = copy_bundle(tmp_path, "2099.01.01")
    archive, sha = tarball(bundle, tmp_path / "b.tar.gz", {"../escape.json": b"{}", "/tmp/abs.json": b"{}"})
    B.install(str(archive), sha)
    assert not (tmp_path / "state" / "escape.json").exists() and not (tmp_path / "escape.json").exists()
    assert sorted(p.name for p in state.iterdir()) == sorted(M.FILES)


def test_reset_removes_the_installed_bundle(tmp_path, state):
    bundle = copy_bundle(tmp_path, "2099.01.01")
    B.install(str(bundle), B.digest(bundle))
    assert M.load().bundle.origin == "installed"
    result = runner.invoke(app, ["matrix", "reset"])
    assert result.exit_code == 0 and "removed" in result.output
    assert not state.exists()
    assert M.load().bundle.origin == "bundled"
    assert B.reset() is False


def test_check_command(tmp_path):
    good = copy_bundle(tmp_path, name="g")
    result = runner.invoke(app, ["matrix", "check", str(good)])
    assert result.exit_code == 0 and B.digest(good) in result.output
    bad = copy_bundle(tmp_path, name="b")
    edit(bad / "torch.json", lambda d: d["releases"][0]["variants"][0].update(index_url="http://insecure"))
    result = runner.invoke(app, ["matrix", "check", str(bad)])
    assert result.exit_code == Exit.USAGE and "torch.json" in result.output
    assert runner.invoke(app, ["matrix", "check", str(tmp_path / "missing")]).exit_code == Exit.USAGE


def test_show_command():
    result = runner.invoke(app, ["matrix", "show"])
    assert result.exit_code == 0 and "7.2.4" in result.output
    result = runner.invoke(app, ["matrix", "show", "torch"])
    assert result.exit_code == 0 and "cu128" in result.output and "rocm6.3" in result.output
    assert runner.invoke(app, ["matrix", "show", "everything"]).exit_code == Exit.USAGE


def test_show_tables_hold_the_data():
    from gpuenv.render.matrix import SUBJECTS, tables

    m = M.load(str(M.bundled_dir()))
    rows = [row for _, _, rs in tables(m, "torch") for row in rs]
    assert ["2.7.0", "cu128", "https://download.pytorch.org/whl/cu128"] == rows[
        [r[:2] for r in rows].index(["2.7.0", "cu128"])
    ][:3]
    rocm = tables(m, "rocm")[0][2]
    row = next(r for r in rocm if r[0] == "7.2.4 (default)")
    assert "gfx1201*" in row[2] and [r[0] for r in rocm[-4:]] == ["7.14.0", "7.14.1", "10.0.0", "10.1.0"]  # the new stream follows (#29)
    for subject in SUBJECTS:
        assert all(rows for _, _, rows in tables(m, subject))


def test_a_directory_is_read_once_so_what_is_installed_is_what_was_hashed(tmp_path, state, monkeypatch):
    # The directory's owner swaps a file after gpuenv hashed it (root installing a bundle a user
    # prepared): the bytes installed are still the ones the --sha256 pinned.
    bundle = copy_bundle(tmp_path, "2099.03.01")
    pinned = B.digest(bundle)
    original = (bundle / "torch.json").read_bytes()
    hashed = B._digest_of

    def swap_after_hashing(files):
        got = hashed(files)
        edit(bundle / "torch.json", lambda d: d["releases"].pop())  # still a valid bundle
        return got

    monkeypatch.setattr(B, "_digest_of", swap_after_hashing)
    B.install(str(bundle), pinned)
    assert (state / "torch.json").read_bytes() == original != (bundle / "torch.json").read_bytes()


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory"])
def test_a_bundle_directory_file_that_is_no_regular_file_is_refused_and_never_opened(tmp_path, state, kind):
    bundle = copy_bundle(tmp_path, "2099.04.01")
    target = bundle / "torch.json"
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)  # opening it to read would wait for a writer for ever
    elif kind == "symlink":
        (tmp_path / "elsewhere.json").write_bytes((Path(M.bundled_dir()) / "torch.json").read_bytes())
        target.symlink_to(tmp_path / "elsewhere.json")
    else:
        target.mkdir()
    result = runner.invoke(app, ["matrix", "update", "--from", str(bundle), "--sha256", "0" * 64])
    assert result.exit_code == Exit.USAGE, result.output
    assert result.stderr.count("\n") == 1 and str(target) in result.stderr, result.stderr
    assert not state.exists()


def test_an_installed_bundle_with_a_fifo_is_passed_over_not_waited_on(tmp_path, state):
    B.install(str(bundle := copy_bundle(tmp_path, "2099.05.01")), B.digest(bundle))
    (state / "cuda.json").unlink()
    os.mkfifo(state / "cuda.json")
    M.clear_cache()
    m = M.load()
    assert m.bundle.origin == "bundled" and "cuda.json: not a regular file" in m.bundle.skipped
    assert m.cuda_toolkits()  # the shipped data answers


root_only = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="as root (CI is)")


@root_only
@pytest.mark.parametrize("change", ["directory writable by everyone", "file of another account"])
def test_root_passes_over_an_installed_bundle_another_account_could_have_changed(tmp_path, state, change):
    B.install(str(bundle := copy_bundle(tmp_path, "2099.06.01")), B.digest(bundle))
    if change.startswith("directory"):
        os.chmod(state, 0o777)
        expect = f"{state} is writable by everyone (owner uid 0, mode 0777)"
    else:
        os.chown(state / "torch.json", 4321, -1)
        expect = f"{state / 'torch.json'} belongs to uid 4321 (mode 0644)"
    M.clear_cache()
    m = M.load()
    assert m.bundle.origin == "bundled"
    assert m.bundle.skipped == f"installed bundle at {state} ignored: {expect}"


def test_another_user_is_steered_by_their_own_bundle_alone_so_no_ownership_is_asked(tmp_path, state, monkeypatch):
    B.install(str(bundle := copy_bundle(tmp_path, "2099.07.01")), B.digest(bundle))
    os.chmod(state, 0o777)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    M.clear_cache()
    assert M.load().bundle.origin == "installed"


@root_only
def test_an_installed_bundle_has_exact_modes_whatever_the_umask(tmp_path, state):
    old = os.umask(0o002)  # group-writable files and directories, were modes left to the umask
    try:
        B.install(str(bundle := copy_bundle(tmp_path, "2099.08.01")), B.digest(bundle))
    finally:
        os.umask(old)
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in (state, state.parent)} == {
        state.name: 0o755, state.parent.name: 0o755
    }
    assert {stat.S_IMODE(p.stat().st_mode) for p in state.iterdir()} == {0o644}
    M.clear_cache()
    assert M.load().bundle.origin == "installed"


def test_matrix_check_refuses_a_linked_file_in_one_line_as_update_would(tmp_path):
    bundle = copy_bundle(tmp_path)
    (bundle / "torch.json").rename(bundle / "torch.real")
    (bundle / "torch.json").symlink_to("torch.real")
    assert B.check(bundle) == [f"{bundle / 'torch.json'}: not a regular file"]
    result = runner.invoke(app, ["matrix", "check", str(bundle)])
    assert result.exit_code == Exit.USAGE and result.exception is None
    assert result.stderr == f"gpuenv matrix: {bundle}: 1 problem(s)\n  {bundle / 'torch.json'}: not a regular file\n"


def test_matrix_reset_refuses_a_linked_state_directory_and_removes_nothing(tmp_path, state):
    target = copy_bundle(tmp_path, name="elsewhere")
    state.parent.mkdir(parents=True)
    state.symlink_to(target)
    result = runner.invoke(app, ["matrix", "reset"])
    assert result.exit_code == Exit.USAGE and result.exception is None
    assert result.stderr == f"gpuenv matrix: {state}: a symbolic link, not a bundle gpuenv installed; not removed\n"
    assert state.is_symlink() and sorted(p.name for p in target.iterdir()) == sorted(M.FILES)


def _shown(output: str) -> str:
    return " ".join(output.split())  # the console may wrap a long line


def test_show_prints_the_bundle_date_and_each_vendors_newest_release():
    """#29: staleness is visible: the summary dates the bundle and its material and names the
    newest ROCm (and newest legacy-stream ROCm), CUDA and PyTorch it knows, read from the data."""
    data = Path(M.bundled_dir())
    bundle = json.loads((data / "bundle.json").read_text())
    rocm = sorted(json.loads((data / "rocm.json").read_text())["releases"], key=lambda r: M.vkey(r["version"]))
    legacy = [r for r in rocm if r.get("stream") is None][-1]
    cuda = max((t["version"] for t in json.loads((data / "cuda.json").read_text())["toolkits"]), key=M.vkey)
    torch = max(json.loads((data / "torch.json").read_text())["releases"], key=lambda r: M.vkey(r["versions"][-1]))
    result = runner.invoke(app, ["matrix", "show"])
    assert result.exit_code == 0
    out = _shown(result.output)
    y, mo, d = bundle["version"].split(".")[:3]
    first = _shown(result.output.splitlines()[0])  # #42: date, age and each vendor's newest on line one
    assert first.startswith(f"bundle {bundle['version']} (dated {y}-{mo}-{d}, ")
    assert re.search(r"dated \d{4}-\d{2}-\d{2}, \d+ days old\); newest known: ROCm ", first)
    assert f"data {_shown(bundle['material_dated_up_to'])}" in out
    assert f"newest known: ROCm {rocm[-1]['version']} ({rocm[-1]['release_date']})" in out
    assert f"legacy stream {legacy['version']} ({legacy['release_date']})" in out
    assert f"CUDA {cuda} (date not in the data)" in out
    assert f"PyTorch {torch['versions'][-1]} ({torch['released']})" in out


def test_show_reads_the_newest_releases_from_the_bundle_in_use(tmp_path, state):
    """An installed bundle that lacks the newest releases says so: the summary follows the data."""
    older = copy_bundle(tmp_path, "2099.01.01")
    newest_minor = max((r["minor"] for r in json.loads((older / "torch.json").read_text())["releases"]), key=M.vkey)
    edit(older / "torch.json", lambda d: d.update(releases=[r for r in d["releases"] if r["minor"] != newest_minor]))
    edit(older / "rocm.json", lambda d: d.update(releases=[r for r in d["releases"] if r.get("stream") is None]))
    edit(older / "bundle.json", lambda d: d.pop("material_dated_up_to"))
    rocm = max(json.loads((older / "rocm.json").read_text())["releases"], key=lambda r: M.vkey(r["version"]))
    torch = max(json.loads((older / "torch.json").read_text())["releases"], key=lambda r: M.vkey(r["versions"][-1]))
    archive, sha = tarball(older, tmp_path / "b.tar.gz")
    assert runner.invoke(app, ["matrix", "update", "--from", str(archive), "--sha256", sha]).exit_code == 0
    out = _shown(runner.invoke(app, ["matrix", "show"]).output)
    assert "bundle 2099.01.01 (dated 2099-01-01); newest known:" in out and "from installed," in out
    assert "data the bundle does not date its material" in out
    assert f"newest known: ROCm {rocm['version']} ({rocm['release_date']}); CUDA" in out and "legacy stream" not in out
    assert f"PyTorch {torch['versions'][-1]} ({torch['released']})" in out and newest_minor not in torch["versions"][-1]
