"""doctor never crashes on any facts: property-based facts (valid gpuenv.facts/1, odd contents)
through every check, with and without targets; no check may end up as doctor.check-crashed."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve.finding import Target
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import BASES, FACTS_DIR, base
from tests.schemas import load_schema

MATRICES = load()
BASE_DOCS = {name: base(name) for name in BASES}


def _validator(name):
    import jsonschema

    return jsonschema.Draft202012Validator(load_schema(name))


FACTS_SCHEMA, REPORT_SCHEMA = _validator("facts"), _validator("report")

text = st.one_of(
    st.sampled_from(
        ["", "x", "1:", "570.133.07", "12.8", "6.3.42131", "7.2.4-70204", "2.7.0+cu128", "9" * 30, "…"]
    ),
    st.text(max_size=12),
)
maybe = lambda s: st.one_of(st.none(), s)  # noqa: E731
pci = st.sampled_from(
    [
        "1002:7550",
        "1002:74a1",
        "1002:164e",
        "1002:73df",
        "1002:ffff",
        "10de:2684",
        "10de:2b85",
        "10de:1b06",
        "10de:ffff",
        "8086:a7a0",
    ]
)

gpu = st.fixed_dictionaries(
    {
        "vendor": st.sampled_from(["nvidia", "amd", "intel", "other"]),
        "pci_id": pci,
        "pci_slot": maybe(text),
        "name": maybe(text),
        "kernel_driver": maybe(st.sampled_from(["nvidia", "nouveau", "amdgpu", "vfio-pci", "i915"])),
        "gfx_target": maybe(st.sampled_from(["gfx1201", "gfx942", "gfx1031", "gfx", ""])),
        "compute_capability": maybe(st.sampled_from(["8.9", "12.0", "6.1", "x", "", "10"])),
        "architecture": maybe(st.sampled_from(["Ada", "Blackwell", "Pascal", "RDNA4", "Unknown"])),
        "integrated": maybe(st.booleans()),
    }
)
pkg_names = st.sampled_from(
    ["amdgpu-dkms", "rocm-core", "rocm", "nvidia-driver-570-open", "nvidia-dkms-570", "cuda-drivers", "cuda-toolkit-12-8",
     "cuda-compat-12-8", "linux-image-6.8.0-85-generic", "linux-image-unsigned-7.0.0-1-generic", "nvidia-driver", "gdm3"]
)  # fmt: skip
env_names = st.sampled_from(["PATH", "LD_LIBRARY_PATH", "HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES"])
dkms = st.fixed_dictionaries(
    {"module": st.sampled_from(["amdgpu", "nvidia", "nvidia-srv", "x"]), "version": text,
     "kernel": maybe(text), "status": st.sampled_from(["added", "built", "installed", "broken"])}
)  # fmt: skip
source = st.fixed_dictionaries(
    {"uri": st.sampled_from(["https://repo.radeon.com/amdgpu/30.30.4/ubuntu", "http://repo.radeon.com/rocm/apt/6.3",
                             "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/", "x"]),
     "suites": st.lists(text, max_size=2), "components": st.lists(text, max_size=2), "signed_by": maybe(text),
     "enabled": st.booleans()}
)  # fmt: skip
toolkit = st.fixed_dictionaries(
    {"version": text, "path": maybe(text), "source": maybe(st.sampled_from(["package", "runfile"]))}
)
torch = st.fixed_dictionaries(
    {"version": text, "cuda": maybe(text), "hip": maybe(text), "arch_list": maybe(st.lists(text, max_size=4))}
)

edits = st.fixed_dictionaries(
    {},
    optional={
        "gpus": st.lists(gpu, max_size=4),
        "packages": maybe(st.fixed_dictionaries({"installed": st.dictionaries(pkg_names, text, max_size=5),
                                                 "unconfigured": st.lists(text, max_size=2)})),
        "environment": maybe(st.dictionaries(env_names, text, max_size=3)),
        "apt_sources": maybe(st.lists(source, max_size=3)),
        "kernel.release": text,
        "kernel.dkms": maybe(st.lists(dkms, max_size=3)),
        "kernel.modules_loaded": maybe(st.lists(st.sampled_from(["nvidia", "amdgpu", "nouveau"]), max_size=3)),
        "kernel.cmdline": maybe(text),
        "kernel.secure_boot": maybe(st.booleans()),
        "os.pretty_name": maybe(text),
        "os.version_id": maybe(text),
        "host.arch": st.sampled_from(["x86_64", "aarch64", "riscv64"]),
        "platform.wsl": st.booleans(),
        "platform.container": maybe(st.sampled_from(["docker", "lxc"])),
        "toolkits": st.fixed_dictionaries({"cuda": st.lists(toolkit, max_size=2), "rocm": st.lists(toolkit, max_size=2)}),
        "python.torch": maybe(torch),
        "nvidia": maybe(st.fixed_dictionaries({"driver_version": maybe(text), "module_version": maybe(text),
                                               "kernel_module": maybe(text), "nvml": text,
                                               "persistence_mode": maybe(st.booleans())})),
        "amd": maybe(st.fixed_dictionaries({"driver_version": maybe(text), "kfd": maybe(st.booleans())})),
        "user": maybe(st.fixed_dictionaries({"name": maybe(text), "uid": maybe(st.integers(0, 5000)),
                                             "groups": st.lists(text, max_size=3)})),
        "errors": st.lists(st.fixed_dictionaries({"probe": text, "message": text}), max_size=2),
    },
)  # fmt: skip


def apply(doc: dict, changes: dict) -> dict:
    doc = copy.deepcopy(doc)
    for path, value in changes.items():
        *parents, last = path.split(".")
        node = doc
        for p in parents:
            if node.get(p) is None:
                node[p] = {}
            node = node[p]
        node[last] = value
    if doc.get("python") is None and "python.torch" in changes:
        doc["python"] = {"torch": changes["python.torch"]}
    return doc


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(BASES),
    changes=edits,
    target=st.sampled_from([None, "rocm", "cuda", "rocm@6.2.4", "cuda@11.8", "cuda@13.0"]),
    torch_version=st.sampled_from([None, "2.7.0", "2.13.0"]),
)
def test_doctor_never_crashes(name, changes, target, torch_version):
    doc = apply(BASE_DOCS[name], changes)
    FACTS_SCHEMA.validate(doc)
    report = diagnose(from_dict(doc), MATRICES, Target.parse(target, torch=torch_version))
    crashed = [f.detail for f in report.findings if f.code == "doctor.check-crashed"]
    assert crashed == []
    REPORT_SCHEMA.validate(report.to_dict())


FIXTURES = sorted(FACTS_DIR.glob("*.json"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
@pytest.mark.parametrize("target", [None, "rocm", "cuda"])
def test_every_facts_fixture_is_judged_without_a_crash(path, target):
    report = diagnose(from_dict(json.loads(path.read_text())), MATRICES, Target.parse(target, torch="2.7.0"))
    assert [f.detail for f in report.findings if f.code == "doctor.check-crashed"] == []
    REPORT_SCHEMA.validate(report.to_dict())
