"""AMD's own PyTorch wheels for ROCm's new stream (#29): on a box with a TheRock release installed
(7.14, 10.0), for which PyTorch publishes no index, `gpuenv torch` keeps its official choice and
names AMD's index for that release with the GPU's device extra (torch.json amd_wheels)."""

from __future__ import annotations

import json

import pytest

from gpuenv import matrices as M
from gpuenv import matrixbundle as B
from gpuenv.facts import loads
from gpuenv.probe import collect
from gpuenv.render.torch import lines
from gpuenv.resolve.torchpick import pick
from tests.probe_helpers import ROOTS
from tests.test_matrices import copy_bundle, edit
from tests.test_torch import FACTS

THEROCK_ROOT = ROOTS / "ubuntu2404-rx9070xt-rocm714-therock"


@pytest.fixture(scope="module")
def m() -> M.Matrices:
    return M.parse_dir(M.bundled_dir(), "bundled")


def _box(rocm: dict, **gpu):
    doc = json.loads((FACTS / "torch-rx9070xt.json").read_text())
    doc["toolkits"]["rocm"] = [rocm]
    doc["gpus"][0].update(gpu)
    return loads(json.dumps(doc))


def test_the_714_sysroot_names_amds_714_index_beside_the_official_wheel(m):
    c = pick(collect(root=str(THEROCK_ROOT), user="alice"), m)
    assert (c.torch, c.variant) == ("2.14.0", "rocm7.2")  # PyTorch's own wheel still fits
    assert c.amd is not None and c.amd.rocm == "7.14.0" and not c.amd.confirmed
    assert c.amd.pip == 'pip install "torch[device-gfx1201]==2.12.0" --index-url https://repo.amd.com/rocm/whl-multi-arch/'
    assert any("ROCm 7.14.0 (the new release stream) is installed" in r for r in c.reasons)
    shown = [text for _style, text in lines(c)]
    assert f"  {c.amd.pip}" in shown and any(t.startswith("AMD's own wheels for the installed ROCm 7.14.0") for t in shown)
    assert c.to_dict()["amd_wheels"]["requirement"] == "torch[device-gfx1201]==2.12.0"
    # the third audit: AMD's 7.14 release matrix builds 2.12 and 2.11 (and the Instinct-only 2.10, not named)
    assert c.amd.also == ("2.11.0",) and "configure_pytorch_release_matrix.py @ f51dc6c9" in m.amd_wheels("7.14.0").source


def test_a_strix_halo_with_100_gets_the_stable_index_and_its_extra(m):
    strix = _box(
        {"version": "10.0.0", "path": "/opt/rocm/core-10.0", "source": "package", "stream": "therock"},
        pci_id="1002:1586", name="AMD Radeon 8060S", gfx_target="gfx1151",
    )
    c = pick(strix, m)
    assert c.amd is not None and c.amd.index_url == "https://stable.repo.amd.com/rocm/whl-next/"
    # AMD's 10.0 compatibility matrix lists 2.13.0, 2.12.0, 2.11.0; its AI ecosystem table gives 2.11.0 to
    # Instinct GPUs only (the third audit), so a Strix Halo is not named it
    assert c.amd.requirement == "torch[device-gfx1151]==2.13.0" and c.amd.also == ("2.12.0",)
    assert m.rocm_release("10.0.0").torch == ("2.13.0", "2.12.0", "2.11.0")


def test_an_rx9070xt_with_1010_gets_the_stable_index_and_only_the_torch_amd_lists_for_every_gpu(m):
    """AMD's 10.1.0 AI ecosystem table lists torch 2.14.0 for every GPU, 2.13.0 and 2.12.0 for
    Instinct GPUs only: a Radeon is named 2.14.0 and nothing older."""
    c = pick(_box({"version": "10.1.0", "path": "/opt/rocm/core-10.1", "source": "package", "stream": "therock"}), m)
    assert c.amd is not None and (c.amd.rocm, c.amd.confirmed) == ("10.1.0", False)
    assert c.amd.pip == 'pip install "torch[device-gfx1201]==2.14.0" --index-url https://stable.repo.amd.com/rocm/whl-next/'
    assert c.amd.also == ()
    assert "200-install.rst @ f47eb2f8ba97787da0cfd5166d1afbf42956fd9d" in m.amd_wheels("10.1.0").source


def test_a_legacy_install_gets_no_amd_route(m):
    c = pick(_box({"version": "7.2.4", "path": "/opt/rocm-7.2.4", "source": "package"}), m)
    assert c.amd is None and c.to_dict()["amd_wheels"] is None
    assert not any("new release stream" in r for r in c.reasons)


def test_a_gpu_without_a_device_extra_is_told_so(m):
    rx6700 = _box(
        {"version": "7.14.0", "path": "/opt/rocm/core-7.14", "source": "package", "stream": "therock"},
        pci_id="1002:73df", name="AMD Radeon RX 6700 XT", gfx_target="gfx1031",
    )
    c = pick(rx6700, m)
    assert c.amd is None
    assert "ROCm 7.14.0 (the new release stream) is installed: AMD's wheels for it have no device extra for gfx1031" in c.reasons


@pytest.mark.parametrize(
    "url",
    ["https://evil.example/rocm/whl-next/", "http://repo.amd.com/rocm/whl-next/", "https://repo.amd.com.evil/rocm/x/",
     "https://repo.amd.com/rocm/../simple", "https://repo.amd.com/rocm/whl-next/?x=1", "https://download.pytorch.org/whl/rocm7.2"],
)  # fmt: skip
def test_a_hostile_amd_index_is_refused(tmp_path, url):
    bundle = copy_bundle(tmp_path, "2099.01.01")
    edit(bundle / "torch.json", lambda d: d["amd_wheels"][0].update(index_url=url))
    with pytest.raises(M.MatrixError) as err:
        M.parse_dir(bundle, "test")
    assert str(err.value).startswith("torch.json: $.amd_wheels[0].index_url")
    assert B.check(bundle) == [str(err.value)]
