"""platform.container: a GPU on the bus the container sees but not mapped in is an error; a stack
installed in a container on a host with no GPU of its vendor (a CUDA image on a CPU-only CI
runner) is said, not called an error, unless the user asked for that stack or the bus was not
read."""

from __future__ import annotations

import pytest

from gpuenv.matrices import load
from tests.doctor_cases import edited, judge, judged_one

CODE = "platform.container"
IN_DOCKER = (("platform.container", "docker"), ("device_nodes", {}))  # nothing mapped in


@pytest.fixture(scope="module")
def matrices():
    return load()


def _errors(doc: dict, matrices, target: str | None = None) -> list[str]:
    return [f.code for f in judge(doc, matrices, target).findings if f.severity.value == "error"]


def test_a_gpu_on_the_bus_but_not_mapped_in_is_an_error(matrices):
    f = judged_one(edited("doctor-healthy-cuda", *IN_DOCKER), matrices, CODE)
    assert f.severity.value == "error" and f.title == "Inside a docker container without the GPU device nodes mapped in"
    assert "NVIDIA: /dev/nvidiactl, /dev/nvidia[0-9]* missing" in f.detail and "--gpus all" in f.fix


@pytest.mark.parametrize(
    "base, vendor, nodes, fix",
    [
        ("doctor-healthy-cuda", "NVIDIA", "/dev/nvidiactl, /dev/nvidia[0-9]*", "docker run --gpus all"),
        ("doctor-healthy-rocm", "AMD", "/dev/kfd, /dev/dri/renderD*", "docker run --device /dev/kfd --device /dev/dri"),
    ],
)
def test_an_installed_stack_with_no_gpu_of_its_vendor_on_the_bus_is_said_not_an_error(matrices, base, vendor, nodes, fix):
    doc = edited(base, *IN_DOCKER, ("gpus", []))
    f = judged_one(doc, matrices, CODE)
    assert f.severity.value == "info"
    assert f.title == f"Inside a docker container, with no {vendor} GPU to map in"
    assert f.detail.startswith(f"{vendor}: {nodes} missing, and no {vendor} GPU is on the PCI bus this container sees")
    assert f.fix.startswith("Nothing to change on a host without a GPU.") and fix in f.fix
    assert CODE not in _errors(doc, matrices)


def test_an_explicit_target_with_no_gpu_stays_an_error(matrices):
    doc = edited("doctor-healthy-cuda", *IN_DOCKER, ("gpus", []))
    f = judged_one(doc, matrices, CODE, target="cuda")
    assert f.severity.value == "error" and "NVIDIA: /dev/nvidiactl" in f.detail


def test_a_bus_that_could_not_be_read_stays_an_error(matrices):
    unread = ("errors", [{"probe": "pci", "message": "0000:00:02.0: [Errno 5] Input/output error"}])
    f = judged_one(edited("doctor-healthy-cuda", *IN_DOCKER, ("gpus", []), unread), matrices, CODE)
    assert f.severity.value == "error"


def test_a_name_lookup_failure_is_no_unread_bus(matrices):
    names = ("errors", [{"probe": "pci.ids", "message": "/usr/share/misc/pci.ids: permission denied"}])
    f = judged_one(edited("doctor-healthy-cuda", *IN_DOCKER, ("gpus", []), names), matrices, CODE)
    assert f.severity.value == "info"

