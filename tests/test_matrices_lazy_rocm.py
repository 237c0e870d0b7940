"""rocm.json read lazily (the shipped data): the versions are checked when the file is read, a
release is checked and built when it is first asked for, and every answer is the whole parse's."""

from __future__ import annotations

import json

import pytest

from gpuenv import matrices as M
from gpuenv.matrices.parsers import _Unread
from tests.doctor_cases import base, judge
from tests.test_matrices import DATA, copy_bundle, edit


@pytest.fixture(scope="module")
def whole() -> M.Matrices:
    return M.parse_dir(DATA, "bundled")


def _unread(m: M.Matrices) -> int:
    return sum(type(r) is _Unread for r in m._rocm)


def test_the_shipped_rocm_releases_are_built_when_asked_for_and_as_a_whole_parse_builds_them(whole):
    lazy = M.parse_dir(DATA, "bundled", lazy=True)
    assert lazy.rocm_versions() == [r.version for r in whole.rocm_releases()] == whole.rocm_versions()
    assert _unread(lazy) == len(lazy.rocm_versions())  # the versions alone built nothing
    assert lazy.rocm_release("7.2.4") == whole.rocm_release("7.2.4") is not None
    assert lazy.rocm_release("7.2") == whole.rocm_release("7.2") == whole.rocm_release("7.2.4")  # newest patch
    assert lazy.rocm_release("7.9") is None and lazy.rocm_release("7") == whole.rocm_release("7")
    built = {r.version for r in lazy._rocm if type(r) is not _Unread}
    assert built == {"7.2.4", whole.rocm_release("7").version}  # what was asked for, no more
    assert lazy.default_rocm() == whole.default_rocm()
    assert lazy.rocm_releases() == whole.rocm_releases()
    assert _unread(lazy) == 0 and _unread(whole) == 0
    assert lazy.rocm_routes() == whole.rocm_routes()


def test_a_doctor_run_on_a_box_with_rocm_builds_its_release_only_and_judges_as_a_whole_parse(whole):
    lazy = M.parse_dir(DATA, "bundled", lazy=True)
    doc = base("doctor-healthy-rocm")
    assert judge(doc, lazy) == judge(doc, whole)
    built = [r.version for r in lazy._rocm if type(r) is not _Unread]
    assert built == ["7.2.4"]  # the installed release; the staleness check read the versions alone


def test_the_order_is_by_version_whatever_the_files_order_lazy_or_whole(tmp_path):
    bundle = copy_bundle(tmp_path)
    edit(bundle / "rocm.json", lambda d: d["releases"].reverse())
    lazy, parsed = M.parse_dir(bundle, "test", lazy=True), M.parse_dir(bundle, "test")
    versions = lazy.rocm_versions()
    assert versions == [r.version for r in parsed.rocm_releases()] == sorted(versions, key=M.vkey)
    assert lazy.rocm_releases() == parsed.rocm_releases()


def test_a_bad_old_rocm_release_is_refused_whole_at_once_and_lazily_when_read(tmp_path):
    bundle = copy_bundle(tmp_path)
    edit(bundle / "rocm.json", lambda d: d["releases"][0]["os"][0].update(confirmed="yes"))
    with pytest.raises(M.MatrixError, match=r"rocm.json: \$.releases\[0\].os\[0\].confirmed: expected bool"):
        M.parse_dir(bundle, "test")  # an installed bundle: every release checked before use
    lazy = M.parse_dir(bundle, "test", lazy=True)
    first = json.loads((bundle / "rocm.json").read_text())["releases"][0]["version"]
    assert lazy.default_rocm().version != first  # the other releases still read
    with pytest.raises(M.MatrixError, match=r"\$.releases\[0\].os\[0\].confirmed"):
        lazy.rocm_release(first)
    with pytest.raises(M.MatrixError, match=r"\$.releases\[0\].os\[0\].confirmed"):
        lazy.rocm_releases()  # every question that reads all releases reads the bad one too


@pytest.mark.parametrize("bad", ["7.x", 7.2, None])
def test_a_bad_rocm_version_is_refused_when_the_file_is_read_even_lazily(tmp_path, bad):
    bundle = copy_bundle(tmp_path)
    edit(bundle / "rocm.json", lambda d: d["releases"][3].update(version=bad))
    lazy = M.parse_dir(bundle, "test", lazy=True)
    with pytest.raises(M.MatrixError, match=r"rocm.json: \$.releases\[3\].version"):
        lazy.rocm_versions()


def test_a_default_that_is_no_bundled_release_is_refused_even_lazily(tmp_path):
    bundle = copy_bundle(tmp_path)
    edit(bundle / "rocm.json", lambda d: d.update(default="7.2.99"))
    for lazy in (True, False):
        with pytest.raises(M.MatrixError, match=r"rocm.json: \$.default: '7.2.99' is not a bundled release"):
            M.parse_dir(bundle, "test", lazy=lazy).rocm_versions()
