"""What `gpuenv torch` chooses and the reasons it gives, at each rule's boundary, where a small
bug in resolve/torchpick.py or wheelfit.py (bench/mutate.py's mutants) would change them: the
compiled-code rule, the driver rule, the ranking, the GPU-arch fallbacks, and the words of the
reasons a user reads."""

from __future__ import annotations

import json

import pytest

from gpuenv.exitcodes import Exit
from gpuenv.facts import loads
from gpuenv.matrices import load
from gpuenv.resolve.torchpick import pick
from gpuenv.resolve.wheelfit import covers, driver_fit, fit, gpu_archs
from gpuenv.standins.record import FrozenError, replace

RTX4090 = "10de:2684"  # sm_89 by its PCI id
RTX5090 = "10de:2b85"  # sm_120
RX7900XTX = "1002:744c"  # gfx1100, discrete
RX6700XT = "1002:73df"  # gfx1031: no official wheel, an HSA_OVERRIDE route
RX6600XT = "1002:73ff"  # gfx1032: another target of the same route
RAPHAEL_IGPU = "1002:164e"  # gfx1036, integrated


@pytest.fixture(scope="module")
def m():
    return load()


def nv(pci=RTX4090, cc=None, name=None) -> dict:
    g = {"vendor": "nvidia", "pci_id": pci}
    if cc:
        g["compute_capability"] = cc
    if name:
        g["name"] = name
    return g


def amd(pci=RX7900XTX, gfx=None, integrated=None, name=None) -> dict:
    g = {"vendor": "amd", "pci_id": pci}
    if gfx:
        g["gfx_target"] = gfx
    if integrated is not None:
        g["integrated"] = integrated
    if name:
        g["name"] = name
    return g


def machine(*gpus, driver=None, python=None, rocm=()):
    doc = {
        "schema": "gpuenv.facts/1",
        "host": {"arch": "x86_64", "hostname": "box"},
        "os": {"id": "ubuntu", "version_id": "24.04"},
        "kernel": {"release": "6.8.0-51-generic"},
        "platform": {"container": None, "wsl": False},
        "gpus": list(gpus),
    }
    if driver:
        doc["nvidia"] = {"driver_version": driver}
    if python is not None:
        doc["python"] = python if isinstance(python, dict) else {"version": python}
    if rocm:
        doc["toolkits"] = {"cuda": [], "rocm": [{"version": v} for v in rocm]}
    return loads(json.dumps(doc))


def variant(m, torch: str, name: str):
    return next(v for v in m.torch_variants(torch) if v.variant == name)


# -- the compiled-code rule (shared with the doctor's torch checks) ---------------------------


@pytest.mark.parametrize(
    "codes, gpu, entry",
    [
        (("sm_86",), "sm_86", "sm_86"),  # the exact cubin
        (("sm_86",), "sm_89", "sm_86"),  # same major, higher minor
        (("sm_89",), "sm_86", None),  # same major, lower minor: no
        (("sm_90",), "sm_86", None),  # a newer major: no
        (("sm_75",), "sm_86", None),  # an older major: no
        (("sm_80", "sm_86", "sm_90"), "sm_89", "sm_86"),  # the closest cubin
        (("sm_80", "compute_86"), "sm_89", "sm_80"),  # a cubin beats closer PTX
        (("compute_86",), "sm_86", "compute_86"),  # PTX of the GPU's own capability
        (("compute_80", "compute_86"), "sm_89", "compute_86"),  # the closest PTX
        (("compute_89",), "sm_86", None),  # newer PTX: no
        (("compute_70",), "sm_86", None),  # PTX across majors: no (the bundled libraries lack it)
        (("sm_90a",), "sm_90", "sm_90a"),  # an arch-specific cubin on exactly its GPU
        (("sm_100a",), "sm_103", None),  # ... and nowhere else
        (("weird", "sm_86"), "sm_86", "sm_86"),  # an entry gpuenv cannot read is skipped
        (("sm_86",), "gfx1100", None),  # not an NVIDIA GPU
    ],
)
def test_which_compiled_code_runs_on_a_gpu(codes, gpu, entry):
    assert covers(codes, gpu) == entry


# -- the driver rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "driver, via_ptx, mode, why",
    [
        ("570.26", [], "full", ""),  # exactly CUDA 12.8's minimum
        ("570.26", ["sm_120"], "full", ""),  # PTX is fine at the full minimum
        ("570.25", [], "minor", ""),  # just below: minor-version compatibility
        ("525.60.13", [], "minor", ""),  # exactly the 12.x floor
        (
            "560.35.03",
            ["sm_120"],
            None,
            "sm_120 would run through CUDA 12.8 PTX, which needs driver >= 570.26; this one is 560.35.03",
        ),
        (
            "525.60.12",
            [],
            None,
            "CUDA 12.8 needs driver >= 570.26 (or >= 525.60.13 with minor-version compatibility); "
            "this one is 525.60.12",
        ),
    ],
)
def test_how_a_driver_runs_cuda_12_8(m, driver, via_ptx, mode, why):
    assert driver_fit(m, driver, "12.8", via_ptx) == (mode, why)


def ptx_only_cu128(m):
    """torch 2.7.0 cu128 as a third-party sighting reports it: compute_120 PTX instead of the sm_120 cubin."""
    cu128 = variant(m, "2.7.0", "cu128")
    return replace(cu128, archs=tuple(a for a in cu128.archs if a != "sm_120"), ptx=("compute_120",))


def test_a_gpu_that_runs_only_through_ptx_needs_the_full_minimum_driver(m):
    blackwell = gpu_archs(machine(nv(RTX5090, cc="12.0")), m, "nvidia")
    wheel = ptx_only_cu128(m)
    assert fit(wheel, blackwell, "570.26", None, m) == (True, "fits", "full")
    ok, why, mode = fit(wheel, blackwell, "565.57.01", None, m)
    assert (ok, mode) == (False, None)
    assert (
        why == "sm_120 would run through CUDA 12.8 PTX, which needs driver >= 570.26; this one is 565.57.01"
    )
    # the same driver runs the wheel's cubins through minor-version compatibility
    assert fit(variant(m, "2.7.0", "cu128"), blackwell, "565.57.01", None, m) == (True, "fits", "minor")


def test_a_wheel_whose_arch_list_is_not_known_is_never_a_fit(m):
    # torch 2.10.0's cu129 has no arch list in the sources: driver 575 runs CUDA 12.9 natively,
    # yet the pick is cu128, and the rejection says why.
    c = pick(machine(nv(cc="8.9"), driver="575.57.08"), m, "2.10")
    assert (c.torch, c.variant, c.exit) == ("2.10.0", "cu128", Exit.OK)
    assert "cu129" not in c.alternatives
    none = pick(machine(nv(cc="3.5"), driver="575.57.08"), m, "2.10")
    assert "2.10.0 cu129: its arch list is not known (not read from a build script)" in none.reasons


# -- which GPUs, and what is known of them ----------------------------------------------------


def test_an_nvidia_gpu_of_unknown_capability_gets_no_wheel_and_is_named(m):
    c = pick(machine(nv("10de:fff0", name="NVIDIA Mystery"), driver="570.133.07"), m)
    assert (c.torch, c.variant, c.index_url, c.pip, c.uv, c.exit) == (
        None,
        None,
        None,
        None,
        None,
        Exit.PROBLEMS,
    )
    assert c.vendor == "nvidia"
    assert c.reasons == (
        "NVIDIA Mystery (10de:fff0): compute capability unknown (no driver and not in the matrices)",
    )
    assert [(g.name, g.arch, g.via) for g in c.gpus] == [("NVIDIA Mystery", None, "unknown")]
    assert c.to_dict()["pip"] is None and c.to_dict()["uv"] is None


def test_an_amd_gpu_of_unknown_target_gets_no_wheel_and_is_named_by_its_pci_id(m):
    c = pick(machine(amd("1002:fff0")), m)
    assert (c.variant, c.exit, c.vendor) == (None, Exit.PROBLEMS, "amd")
    assert c.reasons == ("1002:fff0 (1002:fff0): gfx target unknown (no driver and not in the matrices)",)
    assert [(g.arch, g.via) for g in c.gpus] == [(None, "unknown")]


def test_one_gpu_of_unknown_target_beside_a_known_one_stops_the_pick(m):
    c = pick(machine(amd(gfx="gfx1100"), amd("1002:fff0")), m)
    assert c.variant is None and c.exit == Exit.PROBLEMS
    assert [g.arch for g in c.gpus] == ["gfx1100", None]
    assert c.reasons == ("1002:fff0 (1002:fff0): gfx target unknown (no driver and not in the matrices)",)


@pytest.mark.parametrize(
    "gpu, name, arch, via",
    [
        (nv(cc="8.6", name="My Card"), "NVIDIA My Card", "sm_86", "the driver"),  # the driver's word wins
        (nv(), "NVIDIA GeForce RTX 4090", "sm_89", "its PCI id"),  # name and arch from the PCI id
        (nv(name="NVIDIA GeForce RTX 4090 D"), "NVIDIA GeForce RTX 4090 D", "sm_89", "its PCI id"),
        (amd(gfx="gfx1100", name="Radeon RX 7900 XTX"), "AMD Radeon RX 7900 XTX", "gfx1100", "the driver"),
        (amd(name="AMD Radeon Custom"), "AMD Radeon Custom", "gfx1100", "its PCI id"),
    ],
)
def test_each_gpu_is_named_with_its_arch_and_where_that_came_from(m, gpu, name, arch, via):
    c = pick(machine(gpu), m, "2.7.0")
    assert c.variant is not None
    assert f"{name} ({gpu['pci_id']}): {arch} (from {via})" in c.reasons
    assert c.gpus[0].arch == arch


def test_an_amd_gpu_known_by_pci_id_only_takes_the_matrices_name(m):
    c = pick(machine(amd()), m, "2.7.0")
    known = m.amd_gpu(RX7900XTX)
    assert c.gpus[0].name == known.name and c.gpus[0].via == "matrices"


def test_a_discrete_card_is_not_called_integrated(m):
    for facts in (machine(nv(cc="8.9")), machine(amd()), machine(amd(gfx="gfx1100"))):
        (g,) = pick(facts, m, "2.7.0").gpus
        assert g.integrated is False, g


def test_the_choice_and_its_gpus_are_frozen(m):
    c = pick(machine(nv(cc="8.9")), m, "2.7.0")
    with pytest.raises(FrozenError):
        c.gpus[0].arch = "sm_90"  # type: ignore[misc]
    assert len({c.gpus[0], c.gpus[0]}) == 1  # hashable: usable as a key


# -- integrated GPUs and several vendors ------------------------------------------------------


def test_an_nvidia_card_beside_an_amd_igpu_needs_no_vendor(m):
    c = pick(machine(nv(cc="8.9"), amd(RAPHAEL_IGPU), driver="570.133.07"), m, "2.7.0")
    # cu126, not cu128: 2.7.0 cu128's PTX entry is not confirmed (#42: a confirmed variant first)
    assert (c.variant, c.vendor, c.exit) == ("cu126", "nvidia", Exit.OK)
    assert c.reasons[0] == "Raphael iGPU: Radeon 610M (1002:164e) is an AMD integrated GPU: set aside"
    assert [g.vendor for g in c.gpus] == ["nvidia"]


def test_an_nvidia_card_beside_a_discrete_amd_card_needs_a_vendor(m):
    c = pick(machine(nv(cc="8.9"), amd(), driver="570.133.07"), m)
    assert (c.variant, c.exit) == (None, Exit.USAGE)
    assert c.reasons == ("both NVIDIA and AMD GPUs are present: pass --vendor nvidia or --vendor amd",)


def test_vendor_amd_is_honoured_beside_an_nvidia_card(m):
    c = pick(machine(nv(cc="8.9"), amd(RAPHAEL_IGPU), driver="570.133.07"), m, "2.7.0", vendor="amd")
    assert c.vendor == "amd" and [g.arch for g in c.gpus] == ["gfx1036"]
    assert "no AMD GPU in the facts" not in c.reasons
    assert not any("set aside" in r for r in c.reasons)


def test_vendor_absent_from_the_facts(m):
    c = pick(machine(amd()), m, vendor="nvidia")
    assert (c.variant, c.exit, c.vendor, c.reasons) == (
        None,
        Exit.PROBLEMS,
        "nvidia",
        ("no NVIDIA GPU in the facts",),
    )


@pytest.mark.parametrize(
    "facts_integrated, set_aside",
    [(None, True), (False, False)],  # the matrices' word, unless the driver (KFD) says otherwise
)
def test_an_igpu_beside_a_discrete_card_is_set_aside(m, facts_integrated, set_aside):
    c = pick(machine(amd(), amd(RAPHAEL_IGPU, integrated=facts_integrated)), m, "2.7.0")
    lines = [r for r in c.reasons if r.endswith("is integrated: set aside")]
    if set_aside:
        assert lines == ["Raphael iGPU: Radeon 610M (1002:164e, gfx1036) is integrated: set aside"]
        assert [g.arch for g in c.gpus] == ["gfx1100"]
        assert c.variant in ("rocm6.2.4", "rocm6.3")
    else:  # both discrete: gfx1036 has no wheel, so none fits both
        assert lines == []
        assert [g.arch for g in c.gpus] == ["gfx1100", "gfx1036"]
        assert c.variant is None


def test_a_gpu_the_facts_call_integrated_is_set_aside_whatever_the_matrices_say(m):
    c = pick(machine(amd(), amd(RX6700XT, integrated=True)), m, "2.7.0")
    name = m.amd_gpu(RX6700XT).name
    assert [r for r in c.reasons if "set aside" in r] == [
        f"{name} (1002:73df, gfx1031) is integrated: set aside"
    ]
    assert [g.arch for g in c.gpus] == ["gfx1100"] and c.variant is not None


def test_a_lone_amd_igpu_is_judged_as_an_amd_gpu(m):
    c = pick(machine(amd("1002:15bf")), m, "2.13")  # Phoenix1 (gfx1103), alone
    assert c.vendor == "amd" and c.variant in ("rocm7.1", "rocm7.2")


# -- no GPU -----------------------------------------------------------------------------------


def test_no_gpu_gets_the_cpu_wheel_of_the_newest_release(m):
    newest = m.torch_versions()[-1]
    c = pick(machine(), m)
    assert (c.torch, c.variant, c.exit) == (newest, "cpu", Exit.OK)
    assert c.index_url == "https://download.pytorch.org/whl/cpu"
    assert c.reasons == ("no NVIDIA or AMD GPU found: the CPU-only build",)
    assert pick(machine(), m, "2.7").torch == "2.7.1"


# -- the reasons ------------------------------------------------------------------------------


def test_the_driver_and_python_lines(m):
    c = pick(machine(nv(cc="8.9"), driver="570.133.07", python="3.12.3"), m, "2.7.0")
    assert "driver 570.133.07" in c.reasons and "Python 3.12" in c.reasons
    c = pick(machine(nv(cc="8.9")), m, "2.7.0")
    assert "no NVIDIA driver found: judged by architecture only" in c.reasons
    assert not any(r.startswith("Python") for r in c.reasons)
    c = pick(machine(amd(), python="3.12.3"), m, "2.7.0")
    assert "Python 3.12" in c.reasons and not any("driver" in r for r in c.reasons[:3])


@pytest.mark.parametrize("python", [{"executable": "/usr/bin/python3"}, "3"])
def test_a_python_of_unknown_minor_version_is_not_judged(m, python):
    c = pick(machine(nv(cc="8.9"), driver="570.133.07", python=python), m, "2.7.0")
    assert c.variant == "cu126"
    assert not any(r.startswith("Python") for r in c.reasons)


@pytest.mark.parametrize("python", ["3.8.18", "3.8"])  # a patch level or none: the minor is 3.8
def test_a_python_without_wheels_is_refused_by_name(m, python):
    c = pick(machine(nv(cc="8.9"), driver="570.133.07", python=python), m, "2.7.0")
    assert c.variant is None
    ships = ", ".join(variant(m, "2.7.0", "cu128").python)
    assert "3.8" not in ships.split(", ")
    assert f"2.7.0 cu128: no wheel for Python 3.8 (ships {ships})" in c.reasons


def test_the_full_support_line_and_no_rule_when_one_variant_fits(m):
    c = pick(machine(nv(RTX5090, cc="12.0"), driver="570.133.07"), m, "2.7.0")
    assert (c.variant, c.alternatives) == ("cu128", ())
    assert "cu128 is built for sm_120 (of sm_75, sm_80, sm_86, sm_90, sm_100, sm_120)" in c.reasons
    assert "driver 570.133.07 >= 570.26, CUDA 12.8's minimum" in c.reasons
    assert not any(r.startswith("rule:") for r in c.reasons)
    assert (
        "the data for torch 2.7.0 cu128 is not confirmed by a primary source (see its notes: gpuenv matrix show torch)"
        in c.reasons
    )
    assert c.confirmed is False


def test_no_rule_and_no_note_for_a_single_confirmed_fit_without_a_driver(m):
    c = pick(machine(nv(cc="3.7")), m, "2.7.0")  # sm_37: only cu118 has it
    assert (c.variant, c.alternatives, c.confirmed) == ("cu118", (), True)
    assert "install an NVIDIA driver >= 520.61.05 for CUDA 11.8" in c.reasons
    assert not any(r.startswith("rule:") or "not confirmed" in r for r in c.reasons)


def test_the_minor_version_compatibility_line(m):
    c = pick(machine(nv(cc="8.9"), driver="535.183.01"), m, "2.7.0")
    assert c.variant == "cu118"
    c = pick(machine(nv(RTX5090, cc="12.0"), driver="535.183.01"), m, "2.7.0")
    assert c.variant == "cu128"
    assert (
        "driver 535.183.01 runs CUDA 12.8 through minor-version compatibility (>= 525.60.13); "
        "570.26 or newer gives full support"
    ) in c.reasons
    assert (
        "rule: no variant of torch 2.7.0 runs natively on driver 535.183.01; cu128 is the newest that runs "
        "through minor-version compatibility"
    ) in c.reasons


def test_an_older_release_says_why_the_newer_ones_do_not_fit(m):
    c = pick(machine(nv(cc="8.6"), driver="470.256.02"), m)
    assert (c.torch, c.variant) == ("2.7.1", "cu118")
    newest = m.torch_versions()[-1]
    note = [r for r in c.reasons if r.startswith("newer releases have no fitting wheel")]
    assert note == [
        f"newer releases have no fitting wheel (e.g. {newest} cu126: CUDA 12.6 needs driver >= 560.28.03 "
        "(or >= 525.60.13 with minor-version compatibility); this one is 470.256.02)"
    ]


def test_the_newest_release_has_no_note_about_newer_ones(m):
    c = pick(machine(nv(cc="8.9"), driver="570.133.07"), m)
    assert c.torch == m.torch_versions()[-1] and c.variant == "cu126"
    assert not any("newer releases" in r for r in c.reasons)


def test_a_release_named_lists_each_variant_it_refused_and_its_scope(m):
    c = pick(machine(nv(RTX5090, cc="12.0"), driver="570.133.07"), m, "2.6")
    assert (c.variant, c.exit) == (None, Exit.PROBLEMS)
    assert "no official CUDA wheel of torch 2.6.0 fits" in c.reasons
    refused = [r for r in c.reasons if r.startswith("2.6.0 ")]
    assert [r.split(":")[0] for r in refused] == ["2.6.0 cu118", "2.6.0 cu124", "2.6.0 cu126"]
    assert "2.6.0 cu126: no sm_120 code (has sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90)" in refused


def test_with_no_release_named_only_the_newest_releases_refusals_are_listed(m):
    c = pick(machine(nv("10de:1004", cc="3.5"), driver="470.256.02"), m)  # GTX 780: no wheel at all
    first, newest = m.torch_versions()[0], m.torch_versions()[-1]
    assert f"no official CUDA wheel of torch {first} .. {newest} fits" in c.reasons
    refused = [r for r in c.reasons if r[0].isdigit()]
    assert refused and all(r.startswith(newest + " ") for r in refused)


def test_a_rocm_pick_says_the_system_rocm_is_not_used(m):
    c = pick(machine(amd(gfx="gfx1100"), rocm=("6.4.1",)), m, "2.13")
    assert (c.variant, c.alternatives) == ("rocm7.2", ("rocm7.1 (unconfirmed)",))
    assert "rocm7.2 is built for gfx1100" in c.reasons
    assert (
        "the wheel bundles its own ROCm 7.2 runtime; it needs only the amdgpu kernel driver "
        "(system ROCm 6.4.1 is not used by it)"
    ) in c.reasons
    c = pick(machine(amd(gfx="gfx1100")), m, "2.13")
    assert "the wheel bundles its own ROCm 7.2 runtime; it needs only the amdgpu kernel driver" in c.reasons


def test_an_old_rocm_release_names_its_install_page(m):
    c = pick(machine(amd(gfx="gfx906")), m, "1.9")
    assert (c.torch, c.variant) == ("1.9.1", "rocm4.2")
    assert (
        "torch 1.9.1's own install page uses pip -f https://download.pytorch.org/whl/torch_stable.html; the index "
        "above is the per-variant index of the same wheels"
    ) in c.reasons
    assert "the Python versions of torch 1.9.1 are not stated by the sources read" in c.reasons
    assert not any("install page" in r for r in pick(machine(amd(gfx="gfx1100")), m, "2.7.0").reasons)


# -- the unofficial HSA_OVERRIDE route --------------------------------------------------------


def test_the_override_route_takes_the_newest_rocm_wheel_of_the_target_it_runs_as(m):
    c = pick(machine(amd(RX6700XT)), m)
    u = c.unofficial
    newest = m.torch_versions()[-1]
    assert (u.torch, u.variant, u.index_url) == (
        newest,
        "rocm7.2",
        "https://download.pytorch.org/whl/rocm7.2",
    )
    assert u.pip == f"pip install torch=={newest} --index-url https://download.pytorch.org/whl/rocm7.2"
    out = u.to_dict()
    assert (out["pip"], out["run"]) == (u.pip, "HSA_OVERRIDE_GFX_VERSION=10.3.0 python ...")
    assert c.to_dict()["unofficial"] == out
    assert any(
        r.endswith(f"; torch {newest} rocm7.2 is built for gfx1030; risk: {u.risk}") for r in c.reasons
    )


def test_the_override_route_without_a_wheel_for_this_python(m):
    c = pick(machine(amd(RX6700XT), python="3.6.15"), m)
    u = c.unofficial
    assert u is not None and (u.gfx, u.env, u.runs_as) == (
        "gfx1031",
        "HSA_OVERRIDE_GFX_VERSION=10.3.0",
        "gfx1030",
    )
    assert (u.torch, u.variant, u.index_url, u.pip) == (None, None, None, None)
    out = c.to_dict()["unofficial"]
    assert (out["official"], out["pip"], out["run"], out["torch"]) == (False, None, None, None)
    route = [r for r in c.reasons if r.startswith("unofficial route")]
    assert route == [
        "unofficial route (not an official fit, unsupported by AMD): HSA_OVERRIDE_GFX_VERSION=10.3.0 makes the "
        f"GPU run gfx1030 code; risk: {u.risk}"
    ]


def test_two_unsupported_targets_get_no_override_route(m):
    c = pick(machine(amd(RX6700XT), amd(RX6600XT)), m)
    assert c.variant is None and c.unofficial is None
    assert not any(r.startswith("unofficial route") for r in c.reasons)
    assert c.to_dict()["unofficial"] is None


def test_two_gpus_of_one_unsupported_target_get_the_route(m):
    c = pick(machine(amd(RX6700XT), amd(RX6700XT)), m)
    assert c.unofficial is not None and c.unofficial.runs_as == "gfx1030"


def test_an_rx_6750_gre_is_gfx1031_by_its_pci_revision(m):
    # 1002:73ff revision DF is gfx1031 (AMD's device table), so beside an RX 6700 XT it is one target, and the
    # same-family route is offered; by its PCI id alone it would be gfx1032, a second target
    gre = {**amd(RX6600XT), "revision": "df"}
    assert [(a.arch, a.via) for a in gpu_archs(machine(gre), m, "amd")] == [("gfx1031", "matrices")]
    c = pick(machine(amd(RX6700XT), gre), m)
    assert c.unofficial is not None and c.unofficial.runs_as == "gfx1030"


def test_a_confirmed_variant_beats_an_unconfirmed_one_that_also_fits(m):
    # #42: torch 2.9.0's cu129 is known only from secondary sources (PyTorch's build matrix lists
    # cu126, cu128, cu130); on an H100 with driver 550.54.15 all three CUDA 12 variants fit through
    # minor-version compatibility, and the newest-CUDA rule alone would pick cu129.
    cu129 = variant(m, "2.9.0", "cu129")
    assert not cu129.confirmed and variant(m, "2.9.0", "cu128").confirmed
    c = pick(machine(nv(pci="10de:2330", cc="9.0"), driver="550.54.15", python="3.12"), m, "2.9.0")
    assert (c.torch, c.variant, c.confirmed, c.exit) == ("2.9.0", "cu128", True, Exit.OK)
    assert "cu129 (unconfirmed)" in c.alternatives
    assert (
        "rule: a variant whose data a primary source confirms is preferred: cu128 over cu129 "
        "(not confirmed: the index may lack the wheel)"
    ) in c.reasons
    # with no confirmed variant fitting, the unconfirmed one is still chosen, and says so
    blackwell = pick(machine(nv(pci=RTX5090, cc="12.0"), driver="575.57.08", python="3.12"), m, "2.9.0")
    assert blackwell.variant in {"cu128", "cu129"}
    assert blackwell.confirmed == variant(m, "2.9.0", blackwell.variant).confirmed


def test_a_wheel_that_bundles_its_rocm_beats_one_that_pip_installs_it(m):
    # #42: 2.14's rocm7.14 wheels list rocm7.2's targets less gfx900/gfx906, but take ROCm 7.14's runtime
    # from TheRock's pip packages; the wheel with its runtime inside is chosen, the other also fits.
    c = pick(machine(amd(gfx="gfx1201"), python="3.12"), m, "2.14")
    assert (c.torch, c.variant) == ("2.14.0", "rocm7.2")
    assert "rocm7.14 (unconfirmed)" in c.alternatives
    v714 = variant(m, "2.14.0", "rocm7.14")
    assert v714.rocm_from_pip and "gfx1201" in v714.archs
