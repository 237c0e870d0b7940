"""`gpuenv advise` on the build shapes of projects that ship ROCm builds through a route the first
build model did not read (issue 41's grown set): each rule in a small synthetic tree written here
(shaped like TGI, xformers, cupy, sglang and DeepSpeed, not copied from them), each with the same
tree's verdict where the rule does not apply, so a test fails without its rule."""

from __future__ import annotations

from tests.test_advise_builds import run_json, uncounted
from tests.test_advise_rules import tree

CUDA_DOCKERFILE = "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install .\n"
ROCM_DOCKERFILE = "FROM rocm/dev-ubuntu-22.04:6.2\nRUN pip install .\n"
TRTLLM_CMAKE = "cmake_minimum_required(VERSION 3.20)\nproject(trt LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit REQUIRED)\n"


def test_a_platform_dockerfile_beside_the_plain_one_is_its_twin(tmp_path):
    """TGI: Dockerfile (nvidia/cuda) beside Dockerfile_amd (rocm/...): the CUDA image is the CUDA
    recipe's own; Dockerfile_amd is read as a Dockerfile and is the ROCm recipe beside it."""
    files = {"pyproject.toml": '[project]\nname = "srv"\n', "srv/__init__.py": "", "Dockerfile": CUDA_DOCKERFILE}
    code, doc = run_json(tree(tmp_path / "cuda", files))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"Dockerfile"}
    code, doc = run_json(tree(tmp_path / "both", {**files, "Dockerfile_amd": ROCM_DOCKERFILE}))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    assert any("Dockerfile_amd" in r for r in doc["reasons"])
    (f,) = [f for f in doc["findings"] if f["where"].startswith("Dockerfile:")]
    assert f["covered"] and f["handled"] == "beside its ROCm twin file"


def test_a_cuda_only_backends_build_beside_a_rocm_build_is_optional(tmp_path):
    """TGI's backends/trtllm/CMakeLists.txt: the TensorRT-LLM backend's CUDA build, one backend
    among others, beside the project's ROCm build; without that ROCm build it is core work."""
    files = {"pyproject.toml": '[project]\nname = "srv"\n', "srv/__init__.py": "",
             "backends/trtllm/CMakeLists.txt": TRTLLM_CMAKE, "backends/trtllm/cmake/trt.cmake": "set(CMAKE_CUDA_ARCHITECTURES 90)\n"}  # fmt: skip
    code, doc = run_json(tree(tmp_path / "cuda", files))
    assert doc["verdict"] == "portable-with-work"
    assert uncounted(doc) == {"backends/trtllm/CMakeLists.txt", "backends/trtllm/cmake/trt.cmake"}
    code, doc = run_json(tree(tmp_path / "both", {**files, "Dockerfile_amd": ROCM_DOCKERFILE}))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    parts = {p["part"] for p in doc["optional_parts"]}
    assert "backends/trtllm/ (a CUDA-only backend, named for it, beside the project's ROCm build)" in parts
