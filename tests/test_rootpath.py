"""rootpath at its exact boundaries: the symlink limit, `..` and `.` components, the last component
followed or not, and the one safe file read at exactly its size limit, across its chunk size, and on
what is not a regular file."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from gpuenv.rootpath import NotRegular, PathEscape, TooLarge, in_root, read_file, read_regular, resolve


def _chain(root: Path, n: int) -> None:
    """ROOT/l0 -> l1 -> ... -> l{n-1} -> target: n links to resolve from l0."""
    (root / "target").mkdir()
    (root / "target/f").write_text("end\n")
    for i in range(n):
        os.symlink(f"l{i + 1}" if i + 1 < n else "target", root / f"l{i}")


def test_a_chain_of_exactly_the_kernels_link_limit_resolves(tmp_path):
    _chain(tmp_path, 40)
    assert in_root(str(tmp_path), "/l0/f") == tmp_path / "target/f"


def test_one_link_more_than_the_limit_is_a_path_escape(tmp_path):
    _chain(tmp_path, 41)
    with pytest.raises(PathEscape, match="too many symbolic links"):
        in_root(str(tmp_path), "/l0/f")


def test_a_loop_is_a_path_escape_not_a_hang(tmp_path):
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    with pytest.raises(PathEscape):
        in_root(str(tmp_path), "/a/x")


def test_dotdot_climbs_one_level_and_stops_at_the_root(tmp_path):
    root = str(tmp_path)
    assert in_root(root, "/etc/apt/../x") == tmp_path / "etc/x"
    assert in_root(root, "/../../etc/./x") == tmp_path / "etc/x"
    assert in_root(root, "//etc//x/.") == tmp_path / "etc/x"
    assert in_root(root, "/") == tmp_path
    assert in_root(root, "/a/b/../../..") == tmp_path


def test_a_relative_link_resolves_from_its_own_directory(tmp_path):
    (tmp_path / "etc/apt").mkdir(parents=True)
    (tmp_path / "srv").mkdir()
    os.symlink("../srv", tmp_path / "etc/apt/d")
    assert in_root(str(tmp_path), "/etc/apt/d/x") == tmp_path / "etc/srv/x"
    os.symlink("../../srv", tmp_path / "etc/apt/e")
    assert in_root(str(tmp_path), "/etc/apt/e/x") == tmp_path / "srv/x"


def test_an_absolute_link_starts_again_at_the_root(tmp_path):
    (tmp_path / "etc").mkdir()
    os.symlink("/srv/data", tmp_path / "etc/d")
    assert in_root(str(tmp_path), "/etc/d/x") == tmp_path / "srv/data/x"


def test_the_last_link_is_followed_only_when_asked(tmp_path):
    (tmp_path / "etc").mkdir()
    os.symlink("/srv", tmp_path / "etc/d")
    os.symlink("/real", tmp_path / "etc/last")
    root = str(tmp_path)
    assert in_root(root, "/etc/last") == tmp_path / "real"
    assert in_root(root, "/etc/last", follow_last=False) == tmp_path / "etc/last"
    # a link before the last component is always followed
    assert in_root(root, "/etc/d/x", follow_last=False) == tmp_path / "srv/x"
    # resolve, what a probe's Sysroot reads through, follows the last link too unless told not to
    assert resolve(root, "/etc/last") == str(tmp_path / "real")


def test_a_relative_root_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert in_root("r", "/etc") == tmp_path / "r/etc"


# -- read_regular


@pytest.mark.parametrize("size", [65535, 65536, 65537, 300_001])
@pytest.mark.parametrize("limit_delta", [-1, 0, 1])
def test_large_files_read_whole_or_at_the_limit(tmp_path, size, limit_delta):
    # A file stating its size is read in one go; the limit and truncation hold at every edge.
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    f = tmp_path / "big"
    f.write_bytes(data)
    limit = size + limit_delta
    if limit < size:
        with pytest.raises(TooLarge):
            read_regular(f, limit)
        assert read_regular(f, limit, truncate=True) == data[:limit]
    else:
        assert read_regular(f, limit) == data


def test_a_file_of_exactly_the_limit_is_read_whole(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"x" * 100)
    assert read_regular(f, 100) == b"x" * 100


def test_one_byte_over_the_limit_is_too_large_or_cut(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"x" * 100 + b"y")
    with pytest.raises(TooLarge, match="larger than 100 bytes"):
        read_regular(f, 100)
    assert read_regular(f, 100, truncate=True) == b"x" * 100


def test_files_larger_than_one_read_chunk_are_read_whole(tmp_path):
    data = bytes(range(256)) * 1000  # 256000 bytes: several 64 KiB reads
    f = tmp_path / "f"
    f.write_bytes(data)
    assert read_regular(f, len(data)) == data
    assert read_regular(f, 70000, truncate=True) == data[:70000]
    with pytest.raises(TooLarge):
        read_regular(f, len(data) - 1)


def test_an_empty_file_and_dev_null_read_empty():
    assert read_regular("/dev/null", 10) == b""
    assert read_regular("/dev/null", 10, nofollow=True) == b""


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegular, match="not a regular file"):
        read_regular(fifo, 10)


def test_a_fifo_swapped_in_after_the_check_is_refused_on_the_open_descriptor(tmp_path, monkeypatch):
    # The race read_regular guards against: a regular file at stat time, a FIFO at open time.
    # The descriptor is checked again, refused without blocking, and closed.
    fifo, plain = tmp_path / "fifo", tmp_path / "plain"
    os.mkfifo(fifo)
    plain.write_text("x")
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: real_stat(plain if str(p) == str(fifo) else p, *a, **k))
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(NotRegular, match="not a regular file"):
        read_regular(fifo, 10)
    assert set(os.listdir("/proc/self/fd")) <= before


def test_reads_and_refusals_leave_no_descriptor_open(tmp_path):
    (tmp_path / "f").write_bytes(b"y" * 100)
    before = set(os.listdir("/proc/self/fd"))
    for _ in range(50):
        assert read_regular(tmp_path / "f", 200) == b"y" * 100
        assert read_regular("/dev/null", 10) == b""
        with pytest.raises(TooLarge):
            read_regular(tmp_path / "f", 10)
    assert set(os.listdir("/proc/self/fd")) <= before


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(IsADirectoryError, match="a directory"):
        read_regular(tmp_path, 10)


def test_a_device_other_than_dev_null_is_refused():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    with pytest.raises(NotRegular):
        read_regular("/dev/zero", 10)


def test_a_link_is_followed_unless_nofollow(tmp_path):
    (tmp_path / "f").write_text("data\n")
    os.symlink("f", tmp_path / "link")
    assert read_regular(tmp_path / "link", 100) == b"data\n"
    with pytest.raises(OSError) as exc:
        read_regular(tmp_path / "link", 100, nofollow=True)
    assert isinstance(exc.value, NotRegular) or exc.value.errno == errno.ELOOP


def test_read_file_resolves_inside_the_root_and_refuses_a_last_link(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/real").write_text("inside\n")
    os.symlink("/etc/real", tmp_path / "etc/link")
    assert read_file(str(tmp_path), "/etc/link", 100) == b"inside\n"
    assert read_file(str(tmp_path), "/etc/real", 100, follow_last=False) == b"inside\n"
    with pytest.raises(OSError):
        read_file(str(tmp_path), "/etc/link", 100, follow_last=False)
    (tmp_path / "etc/big").write_bytes(b"z" * 11)
    assert read_file(str(tmp_path), "/etc/big", 10, truncate=True) == b"z" * 10


def test_read_file_refuses_a_file_over_its_limit_unless_asked_to_cut(tmp_path):
    (tmp_path / "f").write_bytes(b"z" * 11)
    with pytest.raises(TooLarge):
        read_file(str(tmp_path), "/f", 10)


def test_a_last_link_to_a_host_path_is_refused_not_read_on_the_host(tmp_path):
    host = tmp_path / "host-secret"
    host.write_text("host\n")
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    os.symlink(str(host), root / "etc/link")  # in a chroot: ROOT/<host path>, which is not there
    with pytest.raises(OSError):
        read_file(str(root), "/etc/link", 100, follow_last=False)


def test_make_dirs_gives_every_directory_it_makes_exactly_the_mode_under_any_umask(tmp_path):
    from gpuenv.rootpath import make_dirs

    old = os.umask(0o077)
    try:
        made = make_dirs(tmp_path / "a" / "b" / "c", tmp_path)
    finally:
        os.umask(old)
    assert made == [tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"]  # outermost first
    assert [d.stat().st_mode & 0o7777 for d in made] == [0o755] * 3
    assert make_dirs(tmp_path / "a" / "b", tmp_path) == []  # nothing made, nothing claimed


def test_make_dirs_leaves_a_directory_made_meanwhile_by_someone_else(tmp_path, monkeypatch):
    # The race the FileExistsError branch is for: between the look and the mkdir another process
    # makes the directory. It is theirs: its mode is kept and it is not returned (a journal's
    # rollback removes what make_dirs returns).
    from gpuenv.rootpath import make_dirs

    theirs = tmp_path / "a"
    real_mkdir = Path.mkdir

    def racing_mkdir(self, *args, **kwargs):
        if self == theirs:
            real_mkdir(self, mode=0o700)
            os.chmod(self, 0o700)
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    made = make_dirs(theirs / "b", tmp_path)
    assert made == [theirs / "b"]
    assert theirs.stat().st_mode & 0o7777 == 0o700
