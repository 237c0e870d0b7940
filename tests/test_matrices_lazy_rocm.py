"""rocm.json read lazily (the shipped data): the versions are checked when the file is read, a
release is checked and built when it is first asked for, and every answer is the whole parse's
(and cuda.json's versions, read alone, checked as rocm.json's are)."""

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


@pytest.mark.parametrize(
    ("name", "change", "where", "oldest", "ask", "versions"),
    [
        ("rocm.json", lambda d: d["releases"][0]["os"][0].update(confirmed="yes"),
         r"\$.releases\[0\].os\[0\].confirmed: expected bool", lambda d: d["releases"][0]["version"],
         "rocm_release", "rocm_versions"),
        ("torch.json", lambda d: d["releases"][0]["variants"][0].update(index_url="http://evil"),
         r"\$.releases\[0\].variants\[0\].index_url", lambda d: d["releases"][0]["versions"][0],
         "torch_variants", "torch_versions"),
    ],
)  # fmt: skip
def test_a_bad_old_release_is_refused_whole_at_once_and_lazily_when_read(
    tmp_path, name, change, where, oldest, ask, versions
):
    bundle = copy_bundle(tmp_path)
    edit(bundle / name, change)
    with pytest.raises(M.MatrixError, match=rf"{name}: {where}"):
        M.parse_dir(bundle, "test")  # an installed bundle: every release checked before use
    lazy = M.parse_dir(bundle, "test", lazy=True)
    assert getattr(lazy, ask)(getattr(lazy, versions)()[-1])  # the other releases still read
    with pytest.raises(M.MatrixError, match=where):
        getattr(lazy, ask)(oldest(json.loads((bundle / name).read_text())))


def test_every_question_that_reads_all_rocm_releases_reads_a_bad_one_too(tmp_path):
    bundle = copy_bundle(tmp_path)
    edit(bundle / "rocm.json", lambda d: d["releases"][0]["os"][0].update(confirmed="yes"))
    lazy = M.parse_dir(bundle, "test", lazy=True)
    for ask in (lazy.rocm_releases, lazy.rocm_routes, lambda: lazy.rocm_releases_for(("gfx1201",))):
        with pytest.raises(M.MatrixError, match=r"rocm.json: \$.releases\[0\].os\[0\].confirmed"):
            ask()


@pytest.mark.parametrize("bad", ["7.x", 7.2, None])
@pytest.mark.parametrize(
    ("name", "key", "ask"), [("rocm.json", "releases", "rocm_versions"), ("cuda.json", "toolkits", "cuda_versions")]
)
def test_a_bad_version_is_refused_when_the_versions_alone_are_read(tmp_path, bad, name, key, ask):
    bundle = copy_bundle(tmp_path)
    edit(bundle / name, lambda d: d[key][3].update(version=bad))
    lazy = M.parse_dir(bundle, "test", lazy=True)
    with pytest.raises(M.MatrixError, match=rf"{name}: \$.{key}\[3\].version"):
        getattr(lazy, ask)()


def test_a_default_that_is_no_bundled_release_is_refused_even_lazily(tmp_path):
    bundle = copy_bundle(tmp_path)
    edit(bundle / "rocm.json", lambda d: d.update(default="7.2.99"))
    for lazy in (True, False):
        with pytest.raises(M.MatrixError, match=r"rocm.json: \$.default: '7.2.99' is not a bundled release"):
            M.parse_dir(bundle, "test", lazy=lazy).rocm_versions()
