"""One reading of what the machine is (#43): each GPU's gfx target, integrated or not and class,
and the OS's base and point release, are read once per facts document (and matrices bundle), and
every check and the planner take them from there. Counted here over whole commands; and the
reading is never served for another facts document or another bundle, even an equal one."""

from __future__ import annotations

import json
import pickle
import shutil
from collections import Counter
from pathlib import Path

import pytest

from gpuenv.facts import OS, OsBase, from_dict
from gpuenv.matrices import load
from gpuenv.matrices.bundles import bundled_dir, parse_dir
from gpuenv.resolve import facts_view, gpuinfo, inventory
from gpuenv.standins.record import replace
from tests.cli_runner import CliRunner, app

FACTS = Path(__file__).parent / "facts"
# An RX 7900 XTX and a Raphael iGPU whose facts name neither gfx target (and the dGPU's
# integration): the matrices must be read for each.
TWO_AMD = FACTS / "torch-rx7900xtx-igpu.json"
NVIDIA = FACTS / "doctor-healthy-cuda.json"
NO_GPU = FACTS / "plan-ubuntu2404-arm64-nogpu.json"
RULES = ("_gfx_by_pci_id", "_integrated_by_pci_id", "_class_by_tables")


@pytest.fixture
def reads(monkeypatch):
    """Counts of each underlying read, by (rule, PCI id) and ("base_release", None)."""
    counts: Counter = Counter()

    def counted(name, rule):
        def read(gpu, matrices):
            counts[name, gpu.pci_id] += 1
            return rule(gpu, matrices)

        return read

    for name in RULES:
        monkeypatch.setattr(gpuinfo, name, counted(name, getattr(gpuinfo, name)))
    base_release = inventory.base_release

    def base(os):
        counts["base_release", None] += 1
        return base_release(os)

    monkeypatch.setattr(inventory, "base_release", base)
    return counts


def _facts(path: Path):
    return from_dict(json.loads(path.read_text()))


@pytest.mark.parametrize(
    "argv, os_reads",
    [
        (["doctor", "--json", "--facts", str(TWO_AMD)], 1),
        (["install", "rocm", "--dry-run", "--json", "--facts", str(TWO_AMD)], 1),
        (["doctor", "--json", "--target", "rocm", "--facts", str(TWO_AMD)], 1),
        (["torch", "--json", "--facts", str(TWO_AMD)], 0),  # the wheel choice asks nothing of the OS
    ],
)
def test_each_gpu_and_the_os_are_read_once_per_command(reads, argv, os_reads):
    result = CliRunner().invoke(app, argv)
    assert result.exception is None and result.exit_code in (0, 1, 5), result.output
    # Both GPUs' targets were needed (the report names them), each read once; the dGPU's
    # integration once (the iGPU's facts say it); the OS's base once.
    assert reads["_gfx_by_pci_id", "1002:744c"] == 1
    assert reads["_gfx_by_pci_id", "1002:164e"] == 1
    assert reads["_integrated_by_pci_id", "1002:744c"] == 1
    assert reads["base_release", None] == os_reads
    assert max(reads.values()) == 1, reads


@pytest.mark.parametrize("path", [NVIDIA, NO_GPU])
def test_machines_without_amd_gpus_read_the_os_once_and_no_amd_table(reads, path):
    result = CliRunner().invoke(app, ["doctor", "--json", "--facts", str(path)])
    assert result.exception is None, result.output
    assert reads == {("base_release", None): 1}


def test_every_facts_file_of_a_fleet_run_is_read_once(reads, tmp_path):
    for n in range(3):
        shutil.copy(TWO_AMD, tmp_path / f"box{n}.json")
    result = CliRunner().invoke(app, ["doctor", "--json", "--facts", str(tmp_path)])
    assert result.exception is None, result.output
    assert reads["_gfx_by_pci_id", "1002:744c"] == 3
    assert reads["base_release", None] == 3


# -- never a stale reading ---------------------------------------------------------------------


def _apu_as_discrete(tmp_path: Path) -> object:
    """A second bundle, the bundled one with the Raphael iGPU (1002:164e) listed as a discrete
    gfx1030: what the same facts are depends on the bundle they are read with."""
    copy = tmp_path / "matrices"
    shutil.copytree(bundled_dir(), copy)
    doc = json.loads((copy / "amd_gpus.json").read_text())
    for g in doc["gpus"]:
        if g["pci_id"] == "1002:164e":
            g.update(integrated=False, gfx_target="gfx1030", name="AMD Radeon RX test")
    (copy / "amd_gpus.json").write_text(json.dumps(doc))
    return parse_dir(str(copy), "given")


def test_the_same_facts_read_with_another_bundle_are_read_afresh(tmp_path):
    facts, bundled, other = _facts(TWO_AMD), load(), _apu_as_discrete(tmp_path)
    doc = json.loads(TWO_AMD.read_text())
    doc["gpus"][1]["integrated"] = None  # the iGPU's integration from the bundle too
    facts = from_dict(doc)
    dgpu, igpu = facts.gpus
    for first, second in ((bundled, other), (other, bundled)):
        gpuinfo.amd_discrete(facts, first)  # read with the first bundle
        expected = (dgpu,) if second is bundled else (dgpu, igpu)
        assert gpuinfo.amd_discrete(facts, second) == expected
        assert gpuinfo.gfx_target(igpu, second) == ("gfx1036" if second is bundled else "gfx1030")
        assert gpuinfo.is_integrated(igpu, second) is (second is bundled)
        assert facts_view.rocm_gpus(facts, second) == expected
    # And with no bundle at all: nothing the tables say.
    gpuinfo.amd_discrete(facts, bundled)
    assert gpuinfo.gfx_target(igpu, None) is None
    assert gpuinfo.amd_discrete(facts, None) == (dgpu, igpu)


def test_equal_facts_documents_are_each_read_as_their_own():
    matrices = load()
    first, second = _facts(TWO_AMD), _facts(TWO_AMD)
    assert first == second and first is not second
    assert gpuinfo.amd_discrete(first, matrices)[0] is first.gpus[0]
    # The second document's own GPU objects, never the first's (a caller may key on identity:
    # verify/machine.py does).
    assert gpuinfo.amd_discrete(second, matrices)[0] is second.gpus[0]
    assert gpuinfo.amd_compute(second, matrices)[0] is second.gpus[0]
    assert gpuinfo.amd_discrete(first, matrices)[0] is first.gpus[0]


def test_a_gpu_not_of_the_facts_read_is_judged_by_itself():
    matrices = load()
    facts = _facts(TWO_AMD)
    gpuinfo.amd_discrete(facts, matrices)
    dgpu = facts.gpus[0]
    # Another GPU, asked while this document's reading is kept: its own answer, not the dGPU's.
    mi300x = replace(dgpu, pci_id="1002:74a1")
    assert gpuinfo.gfx_target(dgpu, matrices) == "gfx1100"
    assert gpuinfo.gfx_target(mi300x, matrices) == "gfx942"
    assert gpuinfo.gpu_class(dgpu, matrices) == "radeon"
    assert gpuinfo.gpu_class(mi300x, matrices) == "instinct"
    # GPUs built and dropped one after another (CPython gives a new object a dropped one's
    # identity): each its own answer.
    for pci_id, gfx in [("1002:74a1", "gfx942"), ("1002:744c", "gfx1100"), ("1002:7550", "gfx1201")] * 3:
        assert gpuinfo.gfx_target(replace(dgpu, pci_id=pci_id), matrices) == gfx


def test_the_os_is_read_for_each_os_record():
    plain = _facts(TWO_AMD)
    mint = replace(plain, os=OS("linuxmint", "22", "wilma", ("ubuntu", "debian"), "Linux Mint 22", OsBase("ubuntu", "24.04", "noble")))
    assert inventory.os_base(plain) is None and inventory.os_id(plain) == "ubuntu"
    assert inventory.os_base(mint) == ("ubuntu", "24.04") and inventory.os_version(mint) == "24.04"
    assert inventory.os_base(plain) is None  # the derivative's reading is not served for another OS
    rhel = replace(plain, os=OS("rhel", "9", pretty_name="Red Hat Enterprise Linux 9.4 (Plow)"))
    assert inventory.os_point(rhel, "9") == "9.4"
    assert inventory.os_point(plain, "9") is None
    assert inventory.os_point(rhel, "8") is None
    assert inventory.os_point(replace(rhel, os=OS("rhel", "9", pretty_name="Red Hat Enterprise Linux 9.6")), "9") == "9.6"


def test_reading_leaves_the_facts_as_they_were():
    matrices = load()
    facts = _facts(TWO_AMD)
    before = (dict(vars(facts)), [dict(vars(g)) for g in facts.gpus], facts.to_dict())
    gpuinfo.amd_compute(facts, matrices)
    gpuinfo.gpu_class(facts.gpus[0], matrices)
    inventory.os_point(facts, "24.04")
    assert (dict(vars(facts)), [dict(vars(g)) for g in facts.gpus], facts.to_dict()) == before
    assert pickle.loads(pickle.dumps(facts)) == facts == _facts(TWO_AMD)


def test_the_wheel_choice_reads_gpus_through_gpuinfo_and_loads_it_only_for_a_gpu(tmp_path):
    """gpuenv torch takes each GPU's target from gpuinfo (the count above); a box without a GPU (an
    empty root) does not load it, and no box loads the package tables for it (start-up)."""
    from tests.test_startup_imports import _loaded

    assert not {"gpuenv.resolve.gpuinfo", "gpuenv.resolve.inventory"} & _loaded("torch", "--json", "--root", str(tmp_path))
    with_gpus = _loaded("torch", "--json", "--facts", str(TWO_AMD))
    assert "gpuenv.resolve.gpuinfo" in with_gpus and "gpuenv.resolve.inventory" not in with_gpus
