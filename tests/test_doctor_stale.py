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
