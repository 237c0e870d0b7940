"""The bundled matrices: every file fits its schema, every entry cites a source, errata.md is
applied, and the loader answers the questions the resolver and `gpuenv torch` ask."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuenv import matrices as M
from tests.schemas import validate

DATA = M.bundled_dir()
SUBJECTS = ("bundle", "amd_gpus", "nvidia_gpus", "rocm", "cuda", "torch")


@pytest.fixture(scope="module")
def m() -> M.Matrices:
    return M.parse_dir(DATA, "bundled")


def doc(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


@pytest.mark.parametrize("name", SUBJECTS)
def test_file_validates_against_its_schema(name):
    validate(doc(name), f"matrices-{name}")


def _entries():
    """(label, entry) for every record that states a fact."""
    for g in doc("amd_gpus")["gpus"]:
        yield f"amd {g['pci_id']}", g
    for g in doc("nvidia_gpus")["gpus"]:
        yield f"nvidia {g['pci_id']}", g
    rocm = doc("rocm")
    for r in rocm["releases"]:
        yield f"rocm {r['version']}", r
        for o in r["os"]:
            yield f"rocm {r['version']} {o['id']} {o['version']}", o
    for p in rocm["products"]:
        yield f"rocm product {p['product']}", p
    cuda = doc("cuda")
    for key in ("toolkits", "architectures", "driver_branches", "kernel_module_facts", "driver_distros"):
        for i, e in enumerate(cuda[key]):
            yield f"cuda {key}[{i}]", e
    yield "cuda minor_version_compatibility", cuda["minor_version_compatibility"]
    yield "cuda binary_compatibility", cuda["binary_compatibility"]
    torch = doc("torch")
    for r in torch["releases"]:
        yield f"torch {r['minor']}", r
    for i, f in enumerate(torch["facts"]):
        yield f"torch facts[{i}]", f


def test_every_entry_cites_a_source():
    entries = list(_entries())
    assert len(entries) > 700
    missing = [label for label, e in entries if not isinstance(e.get("source"), str) or len(e["source"]) < 8]
    assert missing == []


def test_no_guessed_value_is_stored_as_a_fact():
    # The reference marks guesses with "?"; the data leaves those out (null plus a note).
    for g in doc("amd_gpus")["gpus"]:
        assert "?" not in (g["gfx_target"] or "") and "?" not in (g["architecture"] or "")
        if g["gfx_target"] is None:
            assert g["notes"], g["pci_id"]


def test_loader_answers_the_resolver_questions(m):
    assert m.amd_gpu("1002:7550").gfx_target == "gfx1201"
    assert m.amd_gpu("1002:7550").product("c0") == "AMD Radeon RX 9070 XT"
    assert m.rocm_release("7.2.4").support("gfx1201") == "radeon"
    assert m.rocm_release("7.2.4").supports("gfx942") == "full"
    assert m.rocm_release("7.2.4").support("gfx1031") is None
    assert {v.variant for v in m.torch_variants("2.7.0")} == {
        "cpu",
        "cu118",
        "cu126",
        "cu128",
        "rocm6.2.4",
        "rocm6.3",
    }
    assert m.min_driver("12.8") == "570.26"
    assert m.min_driver("12.8.1") == "570.124.06"
    assert m.min_driver("99.1") is None
    assert m.default_rocm().version == "7.2.4"


def test_versions_sort_numerically(m):
    torch = m.torch_versions()
    assert torch.index("2.10.0") > torch.index("2.9.1")
    assert torch[0] == "2.4.0" and torch[-1] == "2.13.0"
    rocm = [r.version for r in m.rocm_releases()]
    assert rocm[0] == "6.2.0" and rocm[-1] == "7.2.4"
    assert [t.version for t in m.cuda_toolkits()][0] == "11.8.0"
    assert m.torch_variants("2.7")[0].torch == "2.7.1"  # a bare minor means its newest patch
    assert m.rocm_release("7.2").version == "7.2.4"


def test_cuda_series_means_its_ga_release(m):
    assert m.cuda_toolkit("12.8").version == "12.8.0"
    assert m.cuda_toolkit("13.4").version == "13.4.1"  # 13.4.0 was a developer preview (errata item 5)
    assert m.cuda_toolkit("13.4").min_driver is None  # not found: left out, not invented
    assert not m.cuda_toolkit("13.4").confirmed


def test_driver_and_cuda(m):
    assert m.driver_runs_cuda("570.133.07", "12.8") == "full"
    assert m.driver_runs_cuda("535.183.01", "12.8") == "minor"
    assert m.driver_runs_cuda("470.256.02", "12.6") is None
    assert m.driver_runs_cuda("470.256.02", "11.8") == "minor"
    assert m.driver_runs_cuda("575.64", "13.0") is None  # 13.x needs >= 580 even for minor compat
    assert m.driver_branch("570.133.07").branch == "R570"
    assert m.driver_branch("590.48.01").legacy_gpus is False


def test_kernel_module_requirements(m):
    assert m.nvidia_arch("Blackwell").module == "open"
    assert "blog" in m.nvidia_arch("Blackwell").module_source.lower()  # errata item 4: cite the blog
    for arch in ("Maxwell", "Pascal", "Volta"):
        assert m.nvidia_arch(arch).module == "proprietary"
        assert m.nvidia_arch(arch).last_driver == "R580"
    assert m.nvidia_arch_for("8.9").architecture == "Ada"


def test_errata_rocm_721_and_later_support_ubuntu_24044(m):
    for version in ("7.2.1", "7.2.4"):
        entry = m.rocm_release(version).os_support("ubuntu", "24.04")
        assert entry.point_releases == ("24.04.4",)
        assert entry.ga_kernels == ("6.8",) and entry.hwe_kernels == ("6.17",)
    old = m.rocm_release("7.2.0").os_support("ubuntu", "24.04.3")
    assert old.point_releases == ("24.04.3",) and "6.14" in old.kernels
    assert m.rocm_release("7.2.4").os_support("rhel", "9.4").version == "9"
    assert m.rocm_release("7.2.4").os_support("ubuntu", "20.04") is None


def test_errata_rdna4_supported_from_641_not_preview(m):
    assert m.rocm_release("6.4.0").support("gfx1201") is None
    assert m.rocm_release("6.4.1").support("gfx1201") == "radeon"
    assert all("preview" not in r.gpus.values() for r in m.rocm_releases())


def test_errata_torch_rocm_arch_lists(m):
    def archs(version, variant):
        return next(v for v in m.torch_variants(version) if v.variant == variant).archs

    assert len(archs("2.10.0", "rocm7.0")) == 14 and {"gfx950", "gfx1150", "gfx1151"} <= set(
        archs("2.10.0", "rocm7.1")
    )
    seven = archs("2.7.0", "rocm6.3")
    assert len(seven) == 11 and "gfx1201" in seven and "gfx950" not in seven
    assert "gfx1103" in archs("2.13.0", "rocm7.2")
    assert not next(v for v in m.torch_variants("2.13.0") if v.variant == "rocm7.2").confirmed


def test_brief_claims_follow_the_source(m):
    r = m.rocm_release("7.2.4")
    assert "2.7.1" in r.torch and "2.7.0" not in r.torch
    assert any("2.7.0" in n and "brief" in n for n in r.notes)


def test_required_gpus_are_present(m):
    amd = {
        "1002:7550": "gfx1201",  # RX 9070 / 9070 XT
        "1002:7590": "gfx1200",  # RX 9060 XT
        "1002:744c": "gfx1100",  # RX 7900 XTX / XT / GRE
        "1002:75a3": "gfx950",  # MI355X
        "1002:75a0": "gfx950",  # MI350X
        "1002:74a1": "gfx942",  # MI300X
        "1002:74a0": "gfx942",  # MI300A
        "1002:74a5": "gfx942",  # MI325X
        "1002:740c": "gfx90a",  # MI250X / MI250
        "1002:740f": "gfx90a",  # MI210
    }
    for pci, gfx in amd.items():
        assert m.amd_gpu(pci).gfx_target == gfx, pci
    assert any(g.integrated for g in m.amd_gpus())
    nvidia = {
        "10de:2330": "9.0", "10de:2335": "9.0", "10de:20b2": "8.0", "10de:26b9": "8.9", "10de:27b8": "8.9",
        "10de:1eb8": "7.5", "10de:1db4": "7.0", "10de:15f8": "6.0", "10de:2b85": "12.0", "10de:2c02": "12.0",
        "10de:2f04": "12.0", "10de:2684": "8.9", "10de:2704": "8.9", "10de:2204": "8.6", "10de:2206": "8.6",
        "10de:1e04": "7.5", "10de:1b06": "6.1", "10de:1b80": "6.1", "10de:1b81": "6.1", "10de:13c0": "5.2",
        "10de:13c2": "5.2", "10de:1d81": "7.0", "10de:2901": "10.0", "10de:2941": "10.0",
    }  # fmt: skip
    for pci, cc in nvidia.items():
        assert m.nvidia_gpu(pci).compute_capability == cc, pci


def test_every_rocm_gfx_target_has_a_pci_id(m):
    known = {g.gfx_target for g in m.amd_gpus()}
    for r in m.rocm_releases():
        assert set(r.gpus) <= known, r.version


def test_nvidia_arch_matches_compute_capability(m):
    for g in m.nvidia_gpus():
        assert g.compute_capability in m.nvidia_arch(g.architecture).compute_capabilities, g.pci_id


# -- loading, caching and bad data -------------------------------------------------------------


def copy_bundle(tmp_path: Path, version: str | None = None, name: str = "bundle") -> Path:
    dest = tmp_path / name
    dest.mkdir()
    for name in M.FILES:
        shutil.copyfile(DATA / name, dest / name)
    if version:
        b = json.loads((dest / "bundle.json").read_text())
        b["version"] = version
        (dest / "bundle.json").write_text(json.dumps(b))
    return dest


def edit(path: Path, fn) -> None:
    d = json.loads(path.read_text())
    fn(d)
    path.write_text(json.dumps(d))


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUENV_STATE_DIR", str(tmp_path / "state"))
    M.clear_cache()
    yield tmp_path / "state" / "matrices"
    M.clear_cache()


def test_load_parses_once_and_reports_the_bundle(state):
    first = M.load()
    assert M.load() is first
    assert first.bundle.origin == "bundled" and first.bundle.skipped is None
    assert first.bundle.version == doc("bundle")["version"]


def test_load_prefers_a_valid_installed_bundle(tmp_path, state):
    installed = copy_bundle(tmp_path, "2099.01.01")
    state.parent.mkdir(parents=True)
    installed.rename(state)
    m = M.load()
    assert m.bundle.origin == "installed" and m.bundle.version == "2099.01.01"
    assert m.bundle.path == str(state)


def test_load_passes_over_a_broken_installed_bundle(tmp_path, state):
    broken = copy_bundle(tmp_path, "2099.01.01")
    edit(broken / "rocm.json", lambda d: d["releases"][0].pop("os"))
    state.parent.mkdir(parents=True)
    broken.rename(state)
    m = M.load()
    assert m.bundle.origin == "bundled"
    assert "rocm.json" in m.bundle.skipped and "os" in m.bundle.skipped
    assert m.rocm_release("7.2.4") is not None


@pytest.mark.parametrize(
    ("file", "change", "expect"),
    [
        (
            "rocm.json",
            lambda d: d["releases"][3].pop("source"),
            "rocm.json: $.releases[3].source: required field missing",
        ),
        ("rocm.json", lambda d: d["releases"][0]["gpus"].update(gfx1201="maybe"), "level 'maybe'"),
        ("rocm.json", lambda d: d.update(default="9.9.9"), "$.default"),
        (
            "amd_gpus.json",
            lambda d: d["gpus"][0].update(pci_id="1002:ZZZZ"),
            "amd_gpus.json: $.gpus[0].pci_id",
        ),
        ("amd_gpus.json", lambda d: d["gpus"][1].update(integrated="no"), "expected bool"),
        ("nvidia_gpus.json", lambda d: d["gpus"][2].pop("compute_capability"), "nvidia_gpus.json: $.gpus[2]"),
        (
            "cuda.json",
            lambda d: d["architectures"][0].update(module="closed"),
            "cuda.json: $.architectures[0].module",
        ),
        (
            "torch.json",
            lambda d: d["releases"][0]["variants"][0].update(archs="sm_90"),
            "torch.json: $.releases[0]",
        ),
        ("bundle.json", lambda d: d.pop("version"), "bundle.json: $.version"),
    ],
)
def test_bad_data_raises_matrix_error_with_file_and_path(tmp_path, file, change, expect):
    bundle = copy_bundle(tmp_path)
    edit(bundle / file, change)
    with pytest.raises(M.MatrixError) as err:
        M.parse_dir(bundle, "test")
    assert expect in str(err.value)


def test_unreadable_and_invalid_json(tmp_path):
    bundle = copy_bundle(tmp_path)
    (bundle / "torch.json").write_text("{not json")
    with pytest.raises(M.MatrixError, match="torch.json: not valid JSON"):
        M.parse_dir(bundle, "test")
    (bundle / "torch.json").unlink()
    with pytest.raises(M.MatrixError, match="torch.json: cannot read"):
        M.parse_dir(bundle, "test")
    with pytest.raises(M.MatrixError):
        M.load(str(bundle))


def test_state_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUENV_STATE_DIR", str(tmp_path))
    assert M.state_dir() == tmp_path / "matrices"
    monkeypatch.delenv("GPUENV_STATE_DIR")
    import os

    expected = (
        Path("/var/lib/gpuenv/matrices") if os.geteuid() == 0 else Path.home() / ".cache/gpuenv/matrices"
    )
    assert M.state_dir() == expected
