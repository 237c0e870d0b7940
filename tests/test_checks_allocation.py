"""gpu.not-allocated: a batch job or a device cgroup that leaves this process none of the GPUs on
the bus, from the facts (SLURM's variables, device_nodes[].cgroup_allowed) and from a sysroot
whose /proc/self/cgroup and devices.list the probe reads (gpuenv/probe/cgroup.py)."""

from __future__ import annotations

import pytest

from gpuenv.matrices import load
from gpuenv.probe import cgroup, collect
from tests.doctor_cases import box, judged, judged_one

CODE = "gpu.not-allocated"


@pytest.fixture(scope="module")
def matrices():
    return load()


def _env(**values):
    return ("environment", {"PATH": "/usr/local/cuda-12.8/bin", **values})


def test_the_healthy_boxes_are_allocated(matrices):
    assert judged(box("cuda"), matrices, CODE) == []
    assert judged(box("rocm"), matrices, CODE) == []


def test_a_slurm_job_with_its_gpus_says_nothing(matrices):
    doc = box("cuda", _env(SLURM_JOB_ID="4242", SLURM_JOB_GPUS="0", CUDA_VISIBLE_DEVICES="0"))
    assert judged(doc, matrices, CODE) == []


def test_a_slurm_job_with_an_empty_cuda_visible_devices_is_an_error(matrices):
    doc = box("cuda", _env(SLURM_JOB_ID="4242", CUDA_VISIBLE_DEVICES=""))
    f = judged_one(doc, matrices, CODE)
    assert f.severity.value == "error"
    assert "SLURM job 4242" in f.detail and "--gres=gpu" in f.fix
    # one cause, one line: the generic variable check leaves it to this one inside a job
    assert judged(doc, matrices, "gpu.hidden-by-env") == []


def test_outside_a_job_an_empty_cuda_visible_devices_stays_hidden_by_env(matrices):
    doc = box("cuda", _env(CUDA_VISIBLE_DEVICES=""))
    assert judged(doc, matrices, CODE) == []
    assert len(judged(doc, matrices, "gpu.hidden-by-env")) == 1


def test_a_job_without_gpu_variables_and_nvml_seeing_none_is_an_error(matrices):
    def nvml_lists_none(d):
        d["gpus"][0]["sources"] = ["sysfs"]

    doc = box("cuda", _env(SLURM_JOB_ID="77"), nvml_lists_none)
    f = judged_one(doc, matrices, CODE)
    assert f.severity.value == "error"
    assert "NVML answers but lists none" in f.detail


def test_a_job_without_gpu_variables_whose_gpus_are_reachable_is_a_warning(matrices):
    f = judged_one(box("cuda", _env(SLURM_JOB_ID="77")), matrices, CODE)
    assert f.severity.value == "warning"
    assert "SLURM_JOB_GPUS" in f.detail


def test_a_device_cgroup_that_denies_the_render_node_is_an_error(matrices):
    doc = box("rocm", ("device_nodes./dev/dri/renderD128.cgroup_allowed", False))
    f = judged_one(doc, matrices, CODE)
    assert f.severity.value == "error"
    assert "/dev/dri/renderD128" in f.detail


def test_an_allowed_or_unknown_cgroup_says_nothing(matrices):
    doc = box("rocm", ("device_nodes./dev/dri/renderD128.cgroup_allowed", True))
    assert judged(doc, matrices, CODE) == []


def test_no_gpu_on_the_bus_is_not_this_codes_to_say(matrices):
    doc = box("cuda", _env(SLURM_JOB_ID="1", CUDA_VISIBLE_DEVICES=""), ("gpus", []))
    assert judged(doc, matrices, CODE) == []


# -- the probe -----------------------------------------------------------------------------------


def test_parse_devices_list_and_allows():
    rules = cgroup.parse_devices_list("c 1:3 rwm\nc 195:0 rw\nc 226:* r\n")
    assert cgroup.allows(rules, 195, 0) and not cgroup.allows(rules, 195, 1)
    assert not cgroup.allows(rules, 226, 128)  # read only
    assert cgroup.allows(cgroup.parse_devices_list("a *:* rwm\n"), 511, 0)
    with pytest.raises(ValueError):
        cgroup.parse_devices_list("c 195 rw\n")


def test_devices_path_reads_the_v1_controller_line():
    text = "12:memory:/slurm/uid_1000/job_42\n5:devices:/slurm/uid_1000/job_42/step_0\n0::/\n"
    assert cgroup.devices_path(text) == "/slurm/uid_1000/job_42/step_0"
    assert cgroup.devices_path("0::/user.slice\n") is None  # cgroup v2: rules in eBPF


def _write(root, path, text):
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_the_probe_reads_the_job_cgroup_of_a_sysroot(tmp_path):
    _write(tmp_path, "/proc/self/cgroup", "5:devices:/slurm/uid_1000/job_42/step_0\n")
    _write(tmp_path, "/sys/fs/cgroup/devices/slurm/uid_1000/job_42/step_0/devices.list", "c 195:255 rw\nc 195:1 rwm\n")
    _write(tmp_path, "/dev/nvidiactl", "crw-rw-rw- root root 195, 255\n")
    _write(tmp_path, "/dev/nvidia0", "crw-rw-rw- root root 195, 0\n")
    _write(tmp_path, "/dev/nvidia1", "crw-rw-rw- root root 195, 1\n")
    _write(tmp_path, "/dev/kfd", "crw-rw---- root render\n")  # no numbers: not judged
    nodes = collect(str(tmp_path)).device_nodes
    assert nodes["/dev/nvidia0"].cgroup_allowed is False
    assert nodes["/dev/nvidia1"].cgroup_allowed is True
    assert nodes["/dev/nvidiactl"].cgroup_allowed is True
    assert nodes["/dev/kfd"].cgroup_allowed is None


def test_without_a_v1_devices_controller_nothing_is_said(tmp_path):
    _write(tmp_path, "/proc/self/cgroup", "0::/user.slice/session-3.scope\n")
    _write(tmp_path, "/dev/nvidia0", "crw-rw-rw- root root 195, 0\n")
    facts = collect(str(tmp_path))
    assert facts.device_nodes["/dev/nvidia0"].cgroup_allowed is None
    assert "cgroup_allowed" not in facts.to_dict()["device_nodes"]["/dev/nvidia0"]
