"""The indexes (rocm.index.json, ...): the shipped data's releases of rocm.json and torch.json and
GPUs of amd_gpus.json are read from the bytes they locate, one at a time, and answer as the
whole parse does; an index that does not fit its file is passed over, and one that misplaces an
entry is one MatrixError line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuenv import matrices as M
from gpuenv.matrices.index import Located, index_of
from gpuenv.matrices.parsers import _Unread
from tests.test_matrices import DATA, copy_bundle, edit


@pytest.fixture(scope="module")
def whole() -> M.Matrices:
    return M.parse_dir(DATA, "bundled")


def _indexed(tmp_path: Path) -> Path:
    bundle = copy_bundle(tmp_path)
    for name in INDEXED:
        shutil.copyfile(DATA / index_of(name), bundle / index_of(name))
    return bundle


def _located(entries) -> int:
    return sum(type(e) is _Unread and type(e[2]) is Located for e in entries)


INDEXED = {
    "rocm.json": ({"releases": "version"}, ("default",)),
    "amd_gpus.json": ({"gpus": "pci_id"}, ()),
    "torch.json": ({"releases": "versions"}, ("arch_notes", "gfx_overrides", "amd_wheels")),
    "cuda.json": ({"toolkits": "version"}, ()),
}


def test_the_index_locates_every_entry_of_the_shipped_files():
    assert sorted(p.name for p in DATA.glob("*.index.json")) == sorted(index_of(name) for name in INDEXED)
    for name, (lists, values) in INDEXED.items():
        index = json.loads((DATA / index_of(name)).read_text())
        raw = (DATA / name).read_bytes()
        doc = json.loads(raw)
        assert index["bytes"] == len(raw)
        for key, field in lists.items():
            for (found, start, length), entry in zip(index[key], doc[key], strict=True):
                assert json.loads(raw[start : start + length]) == entry and found == entry[field]
        for key in values:
            start, length = index[key]
            assert json.loads(raw[start : start + length]) == doc[key]


def test_the_shipped_data_is_read_an_entry_at_a_time_and_answers_as_the_whole_parse(whole):
    lazy = M.parse_dir(DATA, "bundled", lazy=True)
    assert lazy.rocm_versions() == whole.rocm_versions()
    assert _located(lazy._rocm) == len(lazy._rocm)  # not one release read yet
    assert lazy.default_rocm() == whole.default_rocm()
    assert _located(lazy._rocm) == len(lazy._rocm) - 1
    assert lazy.amd_gpu("1002:7550") == whole.amd_gpu("1002:7550") is not None
    assert _located(lazy._amd.values()) == len(lazy._amd) - 1
    assert lazy.amd_gpu("1002:ffff") is None
    assert lazy.rocm_releases() == whole.rocm_releases() and lazy.amd_gpus() == whole.amd_gpus()


def test_the_shipped_torch_releases_are_read_one_at_a_time_from_where_the_index_puts_them(whole):
    lazy = M.parse_dir(DATA, "bundled", lazy=True)
    versions = lazy.torch_versions()
    assert versions == whole.torch_versions() and _located(lazy._torch.values()) == len(versions)
    assert lazy.torch_variants(versions[-1]) == whole.torch_variants(versions[-1]) != []
    assert _located(lazy._torch.values()) < len(versions)
    for arch in ("gfx906", "gfx1031", "sm_35"):
        assert lazy.torch_arch_note(arch) == whole.torch_arch_note(arch)
        assert lazy.gfx_override(arch) == whole.gfx_override(arch)
    assert lazy.amd_wheels("10.0") == whole.amd_wheels("10.0") is not None
    assert all(lazy.torch_variants(v) == whole.torch_variants(v) for v in versions)


def test_the_shipped_cuda_versions_are_read_off_the_index(whole, tmp_path):
    lazy = M.parse_dir(DATA, "bundled", lazy=True)
    assert lazy.cuda_versions() == whole.cuda_versions() and "cuda" in lazy._pending
    bundle = _indexed(tmp_path)
    edit(bundle / "cuda.index.json", lambda d: d["toolkits"][2].__setitem__(0, "12.x"))
    with pytest.raises(M.MatrixError, match=r"cuda.json: \$.toolkits\[2\].version: '12.x' is not well formed"):
        M.parse_dir(bundle, "test", lazy=True).cuda_versions()


def test_an_index_that_does_not_fit_its_file_is_passed_over_for_the_whole_file(tmp_path):
    bundle = _indexed(tmp_path)
    edit(bundle / "rocm.json", lambda d: d["releases"][-1]["notes"].append("an edit without a rebuild"))
    lazy, parsed = M.parse_dir(bundle, "test", lazy=True), M.parse_dir(bundle, "test")
    assert lazy.rocm_versions() == parsed.rocm_versions()
    assert _located(lazy._rocm) == 0 and type(lazy._rocm[0]) is _Unread  # from the file read whole
    assert lazy.rocm_releases() == parsed.rocm_releases()
    assert any("an edit without a rebuild" in r.notes for r in lazy.rocm_releases())
    assert lazy.amd_gpu("1002:7550") == parsed.amd_gpu("1002:7550")  # amd_gpus.json still fits: located
    assert _located(lazy._amd.values()) == len(lazy._amd) - 1


@pytest.mark.parametrize("shift", [1, -1, 10**9])
def test_an_index_whose_span_is_no_whole_entry_of_the_file_is_passed_over(tmp_path, whole, shift):
    # Same size, entries moved (an index older than its file): read whole, never a broken entry.
    bundle = _indexed(tmp_path)

    def move(d):
        d["releases"][3][1] += shift

    edit(bundle / "rocm.index.json", move)
    lazy = M.parse_dir(bundle, "test", lazy=True)
    assert lazy.rocm_versions() == whole.rocm_versions() and _located(lazy._rocm) == 0
    assert lazy.rocm_releases() == whole.rocm_releases()
    assert lazy.amd_gpu("1002:7550") == whole.amd_gpu("1002:7550")  # amd_gpus.json's part still fits
    assert _located(lazy._amd.values()) == len(lazy._amd) - 1


def test_a_bad_value_in_a_located_entry_is_the_whole_parses_error(tmp_path):
    bundle = _indexed(tmp_path)
    raw = (bundle / "rocm.json").read_bytes()
    at = raw.index(b'"confirmed": true')
    (bundle / "rocm.json").write_bytes(raw[:at] + b'"confirmed": "ye"' + raw[at + len(b'"confirmed": true') :])
    with pytest.raises(M.MatrixError) as parsed:
        M.parse_dir(bundle, "test")
    lazy = M.parse_dir(bundle, "test", lazy=True)
    assert _located(lazy._rocm) == len(lazy._rocm)  # same size: the index is used
    with pytest.raises(M.MatrixError) as located:
        lazy.rocm_releases()
    assert str(located.value) == str(parsed.value)
    assert "rocm.json: $.releases[0]" in str(parsed.value) and "expected bool, got str" in str(parsed.value)


def _misplace(bundle: Path, name: str, key: str) -> None:
    """Give the first two rows of a list in the index each other's key (same sizes: still used)."""

    def swap(d):
        rows = d[key]
        rows[0][0], rows[1][0] = rows[1][0], rows[0][0]

    edit(bundle / index_of(name), swap)


def test_an_index_that_misplaces_a_release_or_a_gpu_is_refused_when_it_is_read(tmp_path):
    bundle = _indexed(tmp_path)
    _misplace(bundle, "rocm.json", "releases")
    _misplace(bundle, "amd_gpus.json", "gpus")
    _misplace(bundle, "torch.json", "releases")
    version = json.loads((bundle / "rocm.index.json").read_text())["releases"][0][0]
    pci = json.loads((bundle / "amd_gpus.index.json").read_text())["gpus"][0][0]
    torch = json.loads((bundle / "torch.index.json").read_text())["releases"][0][0]
    lazy = M.parse_dir(bundle, "test", lazy=True)
    with pytest.raises(M.MatrixError, match=rf"rocm.json: \$.releases\[0\].version: .* where rocm.index.json has '{version}'"):
        lazy.rocm_release(version)
    with pytest.raises(M.MatrixError, match=rf"amd_gpus.json: \$.gpus\[0\].pci_id: .* where amd_gpus.index.json has '{pci}'"):
        lazy.amd_gpu(pci)
    with pytest.raises(M.MatrixError, match=r"torch.json: \$.releases\[0\].versions: .* where torch.index.json has"):
        lazy.torch_variants(torch[0])
    assert lazy.default_rocm().version == lazy._default_rocm  # the entries it places right still read
    assert lazy.torch_variants(lazy.torch_versions()[-1])


def test_a_span_over_two_entries_or_over_a_list_is_refused_when_it_is_read(tmp_path):
    """Spans that open and close where entries do (so the index is used) but hold no one entry:
    two releases and the comma between them (no JSON value), and a release's own list of notes
    (a value, but no object): each is one MatrixError line naming the index."""
    bundle = _indexed(tmp_path)
    raw = (bundle / "rocm.json").read_bytes()

    def two(d):
        first, second = d["releases"][0], d["releases"][1]
        first[2] = second[1] + second[2] - first[1]  # from the first's "{" to the second's "}"

    edit(bundle / "rocm.index.json", two)
    first = json.loads((bundle / "rocm.index.json").read_text())["releases"][0][0]
    with pytest.raises(M.MatrixError, match=r"at byte \d+.*rocm.index.json does not fit it"):
        M.parse_dir(bundle, "test", lazy=True).rocm_release(first)

    def a_list(d):
        row = d["releases"][0]
        start = raw.index(b'"notes": [', row[1]) + len(b'"notes": ')
        row[1], row[2] = start, raw.index(b"]", start) + 1 - start

    (tmp_path / "list").mkdir()
    bundle = _indexed(tmp_path / "list")
    edit(bundle / "rocm.index.json", a_list)
    first = json.loads((bundle / "rocm.index.json").read_text())["releases"][0][0]
    with pytest.raises(M.MatrixError, match=r"rocm.json: \$.releases\[0\]: expected an object"):
        M.parse_dir(bundle, "test", lazy=True).rocm_release(first)


@pytest.mark.parametrize(
    ("name", "change", "needle"),
    [
        ("rocm.json", lambda d: d["releases"][3].pop(), r"rocm.index.json: \$.releases\[3\]: expected \[key, offset, length\]"),
        ("rocm.json", lambda d: d["releases"][3].__setitem__(1, "12"), r"rocm.index.json: \$.releases\[3\]: expected \[offset, length\]"),
        ("rocm.json", lambda d: d.__setitem__("default", None), r"rocm.index.json: \$.default: expected \[offset, length\]"),
        ("rocm.json", lambda d: d.__setitem__("releases", {}), r"rocm.index.json: \$.releases: expected a list"),
        ("torch.json", lambda d: d["releases"][0].__setitem__(0, "2.4.0"), r"torch.index.json: \$.releases\[0\]: expected \[key"),
        ("rocm.json", lambda d: d.__setitem__("bytes", "many"), r"rocm.index.json: expected an object with the size of rocm.json"),
        ("torch.json", lambda d: d.clear(), r"torch.index.json: expected an object with the size of torch.json"),
    ],
)  # fmt: skip
def test_a_malformed_index_is_one_matrix_error_line(tmp_path, name, change, needle):
    bundle = _indexed(tmp_path)
    edit(bundle / index_of(name), change)
    with pytest.raises(M.MatrixError, match=needle) as err:
        lazy = M.parse_dir(bundle, "test", lazy=True)
        lazy.rocm_versions()
        lazy.torch_versions()
    assert "\n" not in str(err.value)


def test_an_index_that_is_no_json_is_one_matrix_error_line(tmp_path):
    bundle = _indexed(tmp_path)
    (bundle / "amd_gpus.index.json").write_text('{"gpus": ')
    with pytest.raises(M.MatrixError, match=r"amd_gpus.index.json: not valid JSON"):
        M.parse_dir(bundle, "test", lazy=True).amd_gpu("1002:7550")


def test_a_file_without_an_index_is_read_whole_beside_those_with_one(tmp_path, whole):
    bundle = _indexed(tmp_path)
    (bundle / "rocm.index.json").unlink()
    lazy = M.parse_dir(bundle, "test", lazy=True)
    assert lazy.default_rocm() == whole.default_rocm() and _located(lazy._rocm) == 0
    assert lazy.amd_gpu("1002:7550") == whole.amd_gpu("1002:7550")
    assert _located(lazy._amd.values()) == len(lazy._amd) - 1


def test_a_whole_parse_never_reads_the_indexes(tmp_path):
    bundle = _indexed(tmp_path)
    for name in INDEXED:  # an installed bundle is checked whole, indexes or not
        (bundle / index_of(name)).write_text("not json")
    parsed = M.parse_dir(bundle, "test")
    assert parsed.rocm_release("7.2.4") is not None and parsed.amd_gpu("1002:7550") is not None
