"""The bundled matrices: every file fits its schema, every entry cites a source, errata.md is
applied, and the loader answers the questions the resolver and `gpuenv torch` ask."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuenv import matrices as M
from gpuenv.matrices.parsers import _Unread
from tests.schemas import validate

DATA = Path(M.bundled_dir())
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
    assert torch[0] == "1.8.0" and torch[-1] == "2.14.0"
    rocm = [r.version for r in m.rocm_releases()]
    assert rocm[0] == "5.0.0" and rocm[-5:] == ["7.2.4", "7.14.0", "7.14.1", "10.0.0", "10.1.0"]  # the new stream sorts after 7.2 (#29)
    assert [t.version for t in m.cuda_toolkits()][0] == "8.0.44"
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
    # gfx1153 (Radeon 820M, listed by AMD's 7.14/10.0 Ryzen tables): no source read names its PCI
    # id (errata.md section 7 leaves Krackan2's 1902 unmapped), so it has none here (#29).
    unmapped = {"gfx1153"}
    for r in m.rocm_releases():
        assert set(r.gpus) <= known | unmapped, r.version


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
            "rocm.json",
            lambda d: d["releases"][0].update(gpus_unconfirmed=["gfx1999"]),
            "rocm.json: $.releases[0].gpus_unconfirmed: 'gfx1999' is not one of the release's gpus",
        ),
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


# -- data added for "Doctor on real-world reports" ------------------------------------------------


def test_cuda_8_to_11_7_minimum_drivers_from_table_3(m):
    assert m.min_driver("8.0") == "367.48" and m.min_driver("8.0.61") == "375.26"
    assert m.min_driver("9.2") == "396.26" and m.min_driver("9.2.148") == "396.37"
    assert m.min_driver("10.2") == "440.33" and m.min_driver("10.1") == "418.39"
    assert m.min_driver("11.0") == "450.51.05"  # 11.0.2 GA; 11.0.1 was a release candidate
    assert m.min_driver("11.4") == "470.42.01" and m.min_driver("11.4.4") == "470.82.01"
    assert m.min_driver("11.7") == "515.43.04" and m.min_driver("11.7.1") == "515.48.07"
    assert m.cuda_toolkit("11.7.1").confirmed is False  # the runfile bundles 515.65.01: sources differ
    series = {t.series for t in m.cuda_toolkits()}
    assert {"8.0", "9.0", "9.1", "9.2", "10.0", "10.1", "10.2", "11.0", "11.1", "11.2", "11.3"} <= series
    assert {"11.4", "11.5", "11.6", "11.7"} <= series
    for t in m.cuda_toolkits():
        assert t.source and ("Table 3" in t.source or t.series in ("13.4", "13.5") or "13.3" in t.series), t.version


def test_no_minor_version_compatibility_before_cuda_11(m):
    assert m.minor_compat_driver("10.2") is None and m.minor_compat_driver("9.0") is None
    assert m.minor_compat_driver("11.7") == "450.80.02"
    assert m.minor_compat_driver("12.9") == "525.60.13" and m.minor_compat_driver("13.2") == "580"
    assert m.driver_runs_cuda("440.33", "10.2") == "full"
    assert m.driver_runs_cuda("418.87.00", "10.2") is None  # no family floor to fall back on
    assert m.driver_runs_cuda("470.82.01", "11.7") == "minor"
    none = doc("cuda")["minor_version_compatibility"]["not_available"]
    assert none["families"] == ["10", "9", "8"] and "cuda-compatibility" in none["source"]


def test_compute_capabilities_per_toolkit(m):
    assert m.cuda_toolkit("8.0").compute_capabilities[0] == "2.0"  # the last toolkit for Fermi
    assert "2.0" not in m.cuda_toolkit("9.0").compute_capabilities
    assert "3.0" in m.cuda_toolkit("10.2").compute_capabilities
    assert "3.0" not in m.cuda_toolkit("11.0").compute_capabilities  # Kepler 3.0/3.2 end with 10.2
    assert "3.5" in m.cuda_toolkit("11.8").compute_capabilities
    assert "3.5" not in m.cuda_toolkit("12.0").compute_capabilities
    assert "7.5" not in m.cuda_toolkit("9.2").compute_capabilities and "7.5" in m.cuda_toolkit("10.0").compute_capabilities
    twelve8, twelve9, thirteen = (m.cuda_toolkit(v).compute_capabilities for v in ("12.8", "12.9", "13.0"))
    assert "10.1" in twelve8 and "10.3" not in twelve8 and "12.1" not in twelve8
    assert {"10.1", "10.3", "12.1"} <= set(twelve9) and "11.0" not in twelve9
    assert {"10.3", "11.0", "12.1"} <= set(thirteen) and "10.1" not in thirteen  # sm_101 -> sm_110


def test_architecture_table_covers_old_and_new_generations(m):
    blackwell = m.nvidia_arch("Blackwell")
    assert {"10.0", "10.3", "11.0", "12.0", "12.1"} <= set(blackwell.compute_capabilities)
    assert blackwell.module == "open"
    assert blackwell.first_cuda_for("10.3") == "12.9" and blackwell.first_cuda_for("12.1") == "12.9"
    assert blackwell.first_cuda_for("11.0") == "13.0" and blackwell.last_cuda_for("10.1") == "12.9"
    assert blackwell.first_cuda_for("10.0") == "12.8"
    assert m.nvidia_arch_for("10.3") is blackwell and m.nvidia_arch_for("12.1") is blackwell
    kepler = m.nvidia_arch("Kepler")
    assert kepler.last_driver == "R470" and kepler.last_cuda == "11.x" and kepler.last_cuda_for("3.0") == "10.2"
    assert m.nvidia_arch_for("3.0") is kepler and m.nvidia_arch_for("3.7") is kepler
    fermi, tesla = m.nvidia_arch("Fermi"), m.nvidia_arch("Tesla")
    assert (fermi.last_driver, fermi.last_cuda, fermi.module) == ("R390", "8.0", "proprietary")
    assert (tesla.last_driver, tesla.last_cuda) == ("R340", "6.5") and not tesla.confirmed
    for arch in ("Maxwell", "Pascal", "Volta"):
        assert m.nvidia_arch(arch).last_cuda == "12.x" and m.nvidia_arch(arch).last_driver == "R580"


def test_nvidia_gpus_cover_old_and_new_chips(m):
    cases = {
        "10de:1004": ("Kepler", "3.5"),  # GeForce GTX 780
        "10de:1180": ("Kepler", "3.0"),  # GeForce GTX 680
        "10de:102d": ("Kepler", "3.7"),  # Tesla K80
        "10de:1080": ("Fermi", "2.0"),  # GeForce GTX 580
        "10de:0191": ("Tesla", "1.0"),  # GeForce 8800 GTX
        "10de:05e1": ("Tesla", "1.3"),  # GeForce GTX 280
        "10de:3182": ("Blackwell", "10.3"),  # B300 SXM6 AC
        "10de:31c2": ("Blackwell", "10.3"),  # GB300
        "10de:2e12": ("Blackwell", "12.1"),  # GB10 (DGX Spark)
        "10de:2b00": ("Blackwell", "11.0"),  # Jetson AGX Thor
    }
    for pci, (arch, cc) in cases.items():
        g = m.nvidia_gpu(pci)
        assert (g.architecture, g.compute_capability) == (arch, cc), pci
    assert not m.nvidia_gpu("10de:1004").confirmed and m.nvidia_gpu("10de:3182").confirmed
    assert any(int(g.pci_id[5:], 16) > 0x2FFF for g in m.nvidia_gpus())
    assert m.nvidia_gpu("10de:3000") is None  # GR100 (Rubin): no source gives its capability
    meta = doc("nvidia_gpus")["pci_ids"]
    assert meta["commit"] == "c1c12547d626ebf05fd0223144ad87fab5e95d06" and meta["version"] == "2026.08.22"
    assert all(g["source"].split("sources.")[1] in doc("nvidia_gpus")["sources"] for g in doc("nvidia_gpus")["gpus"])


def test_rocm_6_0_and_6_1_releases(m):
    versions = [r.version for r in m.rocm_releases()]
    assert {"6.0.0", "6.0.2", "6.1.0", "6.1.1", "6.1.2", "6.1.5"} <= set(versions)
    r = m.rocm_release("6.1")
    assert r.version == "6.1.5" and r.support("gfx942") == "full" and r.support("gfx1100") == "radeon"
    assert r.amdgpu_driver == "6.1.x"
    # gfx906 is "deprecated" in 6.0-6.3 (system requirements) and gone from 6.4 (errata.md section 7).
    assert r.support("gfx906") == "deprecated" and m.rocm_release("6.0.0").support("gfx906") == "deprecated"
    assert m.rocm_release("6.3.3").support("gfx906") == "deprecated" and m.rocm_release("6.4.0").support("gfx906") is None
    assert any("compatibility-matrix-historical-6.0.csv omits gfx906" in n for n in r.notes)
    assert m.rocm_release("6.0.0").torch == ("2.1", "2.0", "1.13")
    assert m.rocm_release("6.0.0").os_support("ubuntu", "22.04.3") is not None
    assert m.rocm_release("6.0.0").os_support("centos", "7") is not None
    assert m.default_rocm().version == "7.2.4"


def test_amd_gfx_targets_checked(m):
    mendocino = m.amd_gpu("1002:1506")
    assert mendocino.gfx_target == "gfx1036" and any("gfx1037" in n for n in mendocino.notes)
    mi308x = m.amd_gpu("1002:74a2")
    assert mi308x.gfx_target is None and any("MI308X" in n for n in mi308x.notes)


def test_torch_releases_before_2_4(m):
    def variants(version):
        return {v.variant: v for v in m.torch_variants(version)}

    assert set(variants("2.3.1")) == {"cpu", "cu118", "cu121", "rocm5.7", "rocm6.0"}
    assert variants("2.3.1")["rocm6.0"].archs[-1] == "gfx942" and "gfx942" not in variants("2.3.1")["rocm5.7"].archs
    assert variants("2.3.1")["cu118"].archs[0] == "sm_37" and "sm_37" not in variants("2.3.1")["cu121"].archs
    assert set(variants("2.2.2")) == {"cpu", "cu118", "cu121", "rocm5.6", "rocm5.7"}
    assert set(variants("2.1.0")) == {"cpu", "cu118", "cu121", "rocm5.5", "rocm5.6"}
    assert set(variants("2.0.1")) == {"cpu", "cu117", "cu118", "rocm5.3", "rocm5.4.2"}
    assert set(variants("1.13.1")) == {"cpu", "cu116", "cu117", "rocm5.1.1", "rocm5.2"}
    assert set(variants("1.12.0")) == {"cpu", "cu102", "cu113", "cu116", "rocm5.1.1"}
    assert set(variants("1.11.0")) == {"cpu", "cu102", "cu113", "rocm4.5.2"}
    assert set(variants("1.10.1")) == {"cpu", "cu102", "cu111", "rocm4.0.1", "rocm4.1", "rocm4.2"}
    assert variants("1.8.0")["cu102"].archs == ("sm_37", "sm_50", "sm_60", "sm_70")
    assert variants("1.9.0")["cu111"].archs[-1] == "sm_86" and variants("1.9.0")["cu111"].find_links
    assert variants("1.9.0")["cu111"].python == ()  # not stated by the sources read
    assert variants("1.12.1")["cu113"].python == ("3.7", "3.8", "3.9", "3.10")
    assert not variants("1.10.0")["rocm4.2"].confirmed  # LoadHIP.cmake default, not measured
    for version in m.torch_versions():
        for v in m.torch_variants(version):
            assert v.index_url == f"https://download.pytorch.org/whl/{v.variant}", (version, v.variant)


def test_cu129_wheels_of_2_9_to_2_11(m):
    for version in ("2.9.1", "2.10.0", "2.11.0"):
        cu129 = next(v for v in m.torch_variants(version) if v.variant == "cu129")
        assert cu129.stack_version == "12.9" and not cu129.confirmed
        assert any("generate_binary_build_matrix" in n for n in cu129.notes)
    assert next(v for v in m.torch_variants("2.9.1") if v.variant == "cu129").archs[-1] == "sm_120"
    assert next(v for v in m.torch_variants("2.10.0") if v.variant == "cu129").archs == ()  # not read
    assert all(v.variant != "cu129" for v in m.torch_variants("2.12.1"))


def test_270_cu128_ptx_still_not_counted(m):
    cu128 = next(v for v in m.torch_variants("2.7.0") if v.variant == "cu128")
    assert cu128.ptx == () and any("no primary source settles it" in n for n in cu128.notes)


def test_rocm_wheels_without_gfx906_kernels(m):
    for version in m.torch_versions():
        for v in m.torch_variants(version):
            if v.stack != "rocm":
                continue
            if v.variant in ("rocm6.4", "rocm7.0", "rocm7.1", "rocm7.2"):
                assert v.archs_without_kernels == ("gfx900", "gfx906"), (version, v.variant)
                assert "TensileLibrary" in v.archs_without_kernels_source
                assert "gfx906" not in v.usable_archs and "gfx906" in v.archs
            else:
                assert v.archs_without_kernels == (), (version, v.variant)
    note = m.torch_arch_note("gfx906")
    assert (note.last_torch, note.last_variant) == ("2.9.1", "rocm6.3") and "MI50" in note.products
    assert m.torch_arch_note("sm_35").last_torch is None and "2aac90bd" in m.torch_arch_note("sm_35").source


def test_gfx_overrides_are_recorded_as_unofficial(m):
    assert (m.gfx_override("gfx1031").value, m.gfx_override("gfx1031").runs_as) == ("10.3.0", "gfx1030")
    assert (m.gfx_override("gfx1103").value, m.gfx_override("gfx1103").runs_as) == ("11.0.0", "gfx1100")
    assert m.gfx_override("gfx1031").env == "HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert m.gfx_override("gfx1201") is None


ROCM5 = [
    "5.0.0", "5.0.1", "5.0.2", "5.1.0", "5.1.1", "5.1.3", "5.2.0", "5.2.1", "5.2.3", "5.3.0", "5.3.2",
    "5.3.3", "5.4.0", "5.4.1", "5.4.2", "5.4.3", "5.5.0", "5.5.1", "5.6.0", "5.6.1", "5.7.0", "5.7.1",
]  # fmt: skip


def test_rocm_5_releases_from_the_docs_branches(m):
    # ROCm/ROCm docs/<version>:docs/release/gpu_os_support.md (rocm.docs.amd.com/en/docs-<version>/)
    assert [r.version for r in m.rocm_releases()][: len(ROCM5)] == ROCM5
    assert m.rocm_release("5.7").version == "5.7.1" and m.rocm_release("5.4").version == "5.4.3"
    r = m.rocm_release("5.7.1")
    assert r.support("gfx1030") == "radeon" and r.support("gfx1031") is None  # RX 6700 XT: not listed
    assert r.support("gfx906") == "full" and r.support("gfx90a") == "full" and r.support("gfx908") == "full"
    assert r.support("gfx900") is None  # MI25 is listed with a cross
    assert r.support("gfx1100") == "radeon" and m.rocm_release("5.7.0").support("gfx1100") is None
    for v in ROCM5:
        rel = m.rocm_release(v)
        assert rel.support("gfx803") is None and rel.support("gfx1031") is None, v
        assert f"docs/{v}" in rel.source and f"rocm.docs.amd.com/en/docs-{v}/" in rel.source, v
        assert rel.amdgpu_driver == ".".join(v.split(".")[:2]) + ".x"
    assert m.rocm_release("5.4.2").os_support("ubuntu", "22.04").point_releases == ("22.04.1",)
    assert m.rocm_release("5.7.1").os_support("centos", "9") is None  # CentOS Stream 9: not listed
    assert m.rocm_release("5.7.1").os_support("centos", "7").point_releases == ("7.9",)
    assert m.rocm_release("5.7.1").os_support("rhel", "9.2") is not None
    assert m.rocm_release("5.0.0").os_support("ubuntu", "18.04") is not None
    assert m.rocm_release("5.0.0").os_support("centos", "8").point_releases == ("8.3",)
    assert m.rocm_release("5.7.1").torch == ("2.0", "1.13", "1.12.1")
    assert m.rocm_release("5.0.2").torch == ("1.10", "1.9", "1.8") and m.rocm_release("5.0.0").torch == ()
    assert m.rocm_release("5.7.1").amdgpu_driver_compat == ("6.1.x", "6.0.x", "5.7.x", "5.6.x", "5.5.x")
    assert m.rocm_release("5.0.0").amdgpu_driver_compat == ("5.0.x",)


def test_rocm_5_pages_that_are_copies_stay_unconfirmed(m):
    releases = {r["version"]: r for r in doc("rocm")["releases"]}
    for v in ("5.1.1", "5.1.3", "5.2.1", "5.5.1"):  # OS table copied from a later release's page
        assert releases[v]["kernels_confirmed"] is False
        assert all(o["confirmed"] is False for o in releases[v]["os"]), v
    for v in ("5.0.0", "5.0.1", "5.5.1"):  # AMD's own pages disagree on the GPU list
        assert not m.rocm_release(v).confirmed
    assert m.rocm_release("5.4.2").confirmed and releases["5.4.2"]["kernels_confirmed"]
    assert any("Downgrade OS support to 5.4.3" in n for n in m.rocm_release("5.4.2").notes)


def test_older_amd_gpus_from_the_amdgpu_pci_table(m):
    cases = {
        "1002:6811": ("gfx601", "PITCAIRN"),  # Curacao PRO [Radeon R7 370 / R9 270/370 OEM]
        "1002:6798": ("gfx600", "TAHITI"),  # Radeon HD 7970 / R9 280X
        "1002:683f": ("gfx601", "VERDE"),  # Cape Verde PRO [Radeon HD 7750]
        "1002:6610": ("gfx602", "OLAND"),
        "1002:6660": ("gfx602", "HAINAN"),
        "1002:665c": ("gfx704", "BONAIRE"),
        "1002:6939": ("gfx802", "TONGA"),  # Radeon R9 285/380
        "1002:7300": ("gfx803", "FIJI"),
        "1002:67df": ("gfx803", "POLARIS10"),  # Ellesmere [Radeon RX 470/480/570/580/590]
        "1002:67ef": ("gfx803", "POLARIS11"),  # Baffin
        "1002:699f": ("gfx803", "POLARIS12"),  # Lexa
        "1002:6863": ("gfx900", "VEGA10"),  # Vega Frontier Edition
        "1002:69af": ("gfx904", "VEGA12"),
        "1002:66a7": ("gfx906", "VEGA20"),
    }
    for pci, (gfx, chip) in cases.items():
        g = m.amd_gpu(pci)
        assert (g.gfx_target, g.chip) == (gfx, chip), pci
    pitcairn = m.amd_gpu("1002:6811")
    assert pitcairn.kfd == "unsupported" and pitcairn.kernel_drivers == ("radeon", "amdgpu")
    assert any("PITCAIRN not supported in kfd" in n for n in pitcairn.notes) and not pitcairn.integrated
    rx480 = m.amd_gpu("1002:67df")
    assert rx480.kfd == "supported" and rx480.kernel_drivers == ("amdgpu",) and "RX 470/480" in rx480.name
    hawaii = m.amd_gpu("1002:67b1")  # R9 290/390: LLVM says gfx702, the KFD reports 70001
    assert hawaii.gfx_target == "gfx701" and hawaii.kfd == "experimental" and not hawaii.confirmed
    kaveri = m.amd_gpu("1002:1309")
    assert kaveri.integrated and kaveri.gfx_target == "gfx700" and kaveri.kernel_drivers[0] == "radeon"
    assert m.amd_gpu("1002:687f").chip == "VEGA10" and m.amd_gpu("1002:687f").kfd == "supported"
    assert m.amd_gpu("1002:6790") is None  # in the amdgpu table, not named by pci.ids: left out
    never = ("gfx600", "gfx601", "gfx602", "gfx701", "gfx803")  # no bundled ROCm release lists them
    for r in m.rocm_releases():
        assert all(r.support(gfx) is None for gfx in never), r.version


def test_the_shipped_torch_releases_are_read_one_at_a_time_and_read_as_a_whole_parse_reads_them(m):
    lazy = M.parse_dir(DATA, "bundled", lazy=True)
    newest = lazy.torch_versions()[-1]
    assert lazy.torch_variants(newest) == m.torch_variants(newest)
    unread = [v for v in lazy.torch_versions() if type(lazy._torch[v]) is _Unread]
    assert unread and newest not in unread  # `gpuenv torch` on a fitting box stops at the newest
    assert all(lazy.torch_variants(v) == m.torch_variants(v) for v in m.torch_versions())
    assert not [v for v in lazy.torch_versions() if type(lazy._torch[v]) is _Unread]
    assert lazy.torch_variants("2.7") == m.torch_variants("2.7") != []  # a series: its newest patch


def test_the_shipped_amd_gpus_are_built_when_looked_up_and_as_a_whole_parse_builds_them(m):
    lazy = M.parse_dir(DATA, "bundled", lazy=True)
    assert lazy.amd_gpu("1002:7550") == m.amd_gpu("1002:7550") is not None  # RX 9070 XT
    assert lazy.amd_gpu("1002:FFFF") is None and lazy.amd_gpu("1002:7550".upper()) == m.amd_gpu("1002:7550")
    assert sum(type(e) is _Unread for e in lazy._amd.values()) == len(lazy._amd) - 1
    assert lazy.amd_gpus() == m.amd_gpus()


def test_the_shipped_cuda_versions_are_read_without_building_the_toolkits(m):
    lazy = M.parse_dir(DATA, "bundled", lazy=True)
    versions = lazy.cuda_versions()
    assert versions == [t.version for t in m.cuda_toolkits()] == m.cuda_versions()
    assert "cuda" in lazy._pending and lazy._cuda == []  # nothing else of cuda.json built
    assert lazy.cuda_toolkits() == m.cuda_toolkits()  # the whole file still read when asked
    assert lazy.cuda_versions() == m.cuda_versions()


def test_cuda_versions_are_in_the_toolkits_order_whatever_the_files_order(tmp_path):
    bundle = copy_bundle(tmp_path)
    edit(bundle / "cuda.json", lambda d: d["toolkits"].reverse())
    lazy, whole = M.parse_dir(bundle, "test", lazy=True), M.parse_dir(bundle, "test")
    assert lazy.cuda_versions() == [t.version for t in whole.cuda_toolkits()] == whole.cuda_versions()
    assert M.vkey(lazy.cuda_versions()[0]) < M.vkey(lazy.cuda_versions()[-1])


def test_a_whole_parse_answers_cuda_versions_from_what_it_checked_never_the_file_again(tmp_path):
    # An installed bundle is checked whole before use: what it says later is what was checked,
    # whatever happens to the files afterwards.
    bundle = copy_bundle(tmp_path)
    whole = M.parse_dir(bundle, "test")
    (bundle / "cuda.json").unlink()
    assert whole.cuda_versions() == [t.version for t in whole.cuda_toolkits()] != []


def test_a_bad_amd_entry_is_refused_whole_at_once_and_lazily_when_looked_up(tmp_path):
    bundle = copy_bundle(tmp_path)
    edit(bundle / "amd_gpus.json", lambda d: d["gpus"][0].update(kfd="maybe"))
    with pytest.raises(M.MatrixError, match=r"amd_gpus.json: \$.gpus\[0\].kfd"):
        M.parse_dir(bundle, "test")
    lazy = M.parse_dir(bundle, "test", lazy=True)
    first, second = (g["pci_id"] for g in json.loads((bundle / "amd_gpus.json").read_text())["gpus"][:2])
    assert lazy.amd_gpu(second).pci_id == second  # the other entries still read
    with pytest.raises(M.MatrixError, match="kfd"):
        lazy.amd_gpu(first)
