"""doctor.matrices-stale on CUDA: an installed toolkit of a newer series than every bundled one,
judged on the shipped (lazily read) matrices as on a whole parse."""

from __future__ import annotations

import pytest

from gpuenv import matrices as M
from gpuenv.resolve.inventory import version_tuple
from tests.doctor_cases import edited, judged, judged_one

CODE = "doctor.matrices-stale"


def _with_cuda(name: str, version: str) -> dict:
    cuda = [{"version": version, "path": f"/usr/local/cuda-{version}", "source": "package"}]
    return edited(name, ("toolkits.cuda", cuda))


def _newest() -> str:
    return max(M.parse_dir(M.bundled_dir(), "bundled").cuda_versions(), key=version_tuple)


def _next_series(version: str) -> str:
    major, minor = version_tuple(version)[:2]
    return f"{major}.{minor + 1}.0"


@pytest.fixture(params=["lazy", "whole"])
def matrices(request):
    return M.parse_dir(M.bundled_dir(), "bundled", lazy=request.param == "lazy")


def test_a_toolkit_of_a_newer_series_than_every_bundled_one_is_named_with_the_newest(matrices):
    newest = _newest()
    installed = _next_series(newest)
    f = judged_one(_with_cuda("doctor-healthy-cuda", installed), matrices, CODE)
    assert f.severity.value == "info"
    assert f"CUDA {installed} (newest bundled {newest})" in f.detail


@pytest.mark.parametrize("older", [False, True])
def test_a_toolkit_of_the_newest_bundled_series_or_older_is_not_stale(matrices, older):
    bundled = M.parse_dir(M.bundled_dir(), "bundled").cuda_versions()
    major, minor = version_tuple(_newest())[:2]
    installed = min(bundled, key=version_tuple) if older else f"{major}.{minor}.9"
    assert judged(_with_cuda("doctor-healthy-cuda", installed), matrices, CODE) == []


def test_cuda_leftovers_beside_an_amd_card_are_judged_without_building_the_cuda_tables():
    lazy = M.parse_dir(M.bundled_dir(), "bundled", lazy=True)
    installed = _next_series(_newest())
    f = judged_one(_with_cuda("doctor-healthy-rocm", installed), lazy, CODE)
    assert f"CUDA {installed}" in f.detail
    assert "cuda" in lazy._pending  # the versions alone were read off cuda.json


# -- matrices.stale (#42): an old bundle on a machine that has moved past it -------------------

STALE = "matrices.stale"
ROCM_102 = [{"version": "10.2.0", "path": "/opt/rocm/core-10.2", "source": "package", "stream": "therock"}]


def _probed(days_after_bundle: int, rocm=ROCM_102) -> dict:
    import datetime

    bundle = M.parse_dir(M.bundled_dir(), "bundled").bundle
    day = datetime.date.fromisoformat(bundle.dated()) + datetime.timedelta(days=days_after_bundle)
    return edited("doctor-healthy-rocm", ("collected_at", f"{day.isoformat()}T10:00:00Z"), ("toolkits.rocm", rocm))


def test_an_old_bundle_and_a_newer_release_is_a_warning_naming_both(matrices):
    f = judged_one(_probed(121), matrices, STALE)
    assert f.severity.value == "warning"
    assert "121 days" in f.title and "ROCm 10.2.0 (newest bundled 10.1.0)" in f.detail
    assert "gpuenv matrix update" in f.fix
    # the info of doctor.matrices-stale still says what is newer, as before
    assert judged_one(_probed(121), matrices, CODE).severity.value == "info"


@pytest.mark.parametrize("days", [0, 120])
def test_a_bundle_up_to_120_days_old_is_not_stale(matrices, days):
    assert judged(_probed(days), matrices, STALE) == []


def test_an_old_bundle_on_a_machine_it_still_knows_is_not_stale(matrices):
    known = [{"version": "7.2.4", "path": "/opt/rocm-7.2.4", "source": "package"}]
    assert judged(_probed(400, rocm=known), matrices, STALE) == []


def test_a_probe_without_a_date_leaves_the_age_unjudged(matrices):
    doc = _probed(400)
    doc["collected_at"] = None
    assert judged(doc, matrices, STALE) == []
    assert judged(doc, matrices, CODE) != []  # the newer release is still said
