"""A gfx target a release lists only on secondary sources (rocm.json ``gpus_unconfirmed``, #42):
the doctor says so where that listing is what makes the GPU supported, matrix show marks it, and
a target AMD's own pages list for the release is judged as before.

Machines: the Strix Halo of a public thread (tests/cases, pytorch#164346) and the healthy RX 7900
XTX facts file; the bundled matrices as shipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuenv import matrices as M
from gpuenv.facts import from_dict
from gpuenv.resolve.finding import Severity, Target
from gpuenv.resolve.report import diagnose

HERE = Path(__file__).parent
STRIX_HALO = HERE / "cases/pytorch-164346-strix-halo-gfx1151-nightly-rocm7.0.facts.json"


def _facts(path: Path):
    return from_dict(json.loads(path.read_text()))


def _gpu_findings(path: Path, version: str):
    report = diagnose(_facts(path), M.load(), Target(stack="rocm", version=version, explicit=True))
    return [f for f in report.findings if f.code == "amd.gpu-unsupported"]


def test_the_bundle_marks_the_ryzen_targets_of_7_1_1_to_7_2_4_and_nothing_else():
    m = M.load()
    marked = {r.version: r.gpus_unconfirmed for r in m.rocm_releases() if r.gpus_unconfirmed}
    assert set(marked) == {"7.1.1", "7.2.0", "7.2.1", "7.2.2", "7.2.3", "7.2.4"} & {r.version for r in m.rocm_releases()}
    assert all(set(v) == {"gfx1150", "gfx1151"} for v in marked.values())
    for r in m.rocm_releases():
        assert set(r.gpus_unconfirmed) <= set(r.gpus), r.version


@pytest.mark.parametrize("version", ["7.1.1", "7.2.4"])
def test_a_strix_halo_on_a_release_that_lists_it_only_on_secondary_sources_gets_a_warning(version):
    (f,) = _gpu_findings(STRIX_HALO, version)
    assert f.severity is Severity.WARNING
    assert f.title == f"ROCm {version}'s support for gfx1151 is not confirmed by AMD"
    assert "read from secondary sources, not confirmed by AMD" in f.detail and "1002:1586" in f.detail


def test_where_the_release_lacks_the_target_the_error_stands_and_says_nothing_of_doubt():
    (f,) = _gpu_findings(STRIX_HALO, "7.1.0")
    assert f.severity is Severity.ERROR and f.title == "ROCm 7.1.0 does not support gfx1151"
    assert "secondary sources" not in f.detail


def test_a_target_amds_pages_list_gets_nothing():
    healthy = HERE / "facts/doctor-healthy-rocm.json"
    assert _gpu_findings(healthy, "7.2.4") == []


def test_install_autos_pick_is_said_as_information_only():
    """Nothing of ROCm installed on Ubuntu 24.04: judged against the release `install auto` picks;
    where that pick lists the target only on secondary sources, nothing fails yet."""
    doc = json.loads(STRIX_HALO.read_text())
    doc["toolkits"] = {"rocm": []}
    doc["os"] = {"id": "ubuntu", "version_id": "24.04", "pretty_name": "Ubuntu 24.04.3 LTS"}
    report = diagnose(from_dict(doc), M.load(), Target())
    # install auto's pick here (its key is pinned; 10.1.0's is not), listing gfx1151 on secondary sources
    assert (report.target.version, report.target.extra.get("basis")) == ("7.2.4", "auto")
    found = [(f.severity, f.title) for f in report.findings if f.code == "amd.gpu-unsupported"]
    assert found == [(Severity.INFO, "ROCm 7.2.4's support for gfx1151 is not confirmed by AMD")]


def test_matrix_show_marks_the_unconfirmed_targets():
    from gpuenv.render.matrix import tables

    (title, _, rows), = tables(M.load(), "rocm")
    row = next(r for r in rows if r[0].startswith("7.2.4"))
    assert "gfx1151* (unconfirmed)" in row[2] and "gfx1100* (unconfirmed)" not in row[2]
