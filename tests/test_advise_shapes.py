"""`gpuenv advise` on the build shapes of projects that ship ROCm builds through a route the first
build model did not read (issue 41's grown set): each rule in a small synthetic tree written here
(shaped like TGI, xformers, cupy, sglang and DeepSpeed, not copied from them), each with the same
tree's verdict where the rule does not apply, so a test fails without its rule."""

from __future__ import annotations

from tests.test_advise_builds import PLAIN, PTX, run_json, uncounted
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


CUTLASS_CU = '#include <cutlass/cutlass.h>\n#include "pack.h"\n__global__ void g(float* x) { cutlass::half_t h; x[0] = 1.0f; }\n'
GLOB_SETUP = """import glob
import os

import torch
from torch.utils.cpp_extension import CppExtension, CUDAExtension


def get_extensions():
    extensions_dir = os.path.join("pkg", "csrc")
    sources = glob.glob(os.path.join(extensions_dir, "**", "*.cpp"), recursive=True)
    source_cuda = glob.glob(os.path.join(extensions_dir, "**", "*.cu"), recursive=True)
    source_hip = glob.glob(os.path.join(extensions_dir, "attention", "hip_*", "**", "*.cpp"), recursive=True)
    sources = list(set(sources) - set(source_hip))
    extension = CppExtension
    if (torch.cuda.is_available() and torch.version.cuda is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        extension = CUDAExtension
        sources += source_cuda
    elif torch.version.hip:
        extension = CUDAExtension
        sources += source_hip
    return [extension("pkg._C", sorted(sources))]
"""


def test_globbed_sources_follow_the_side_of_the_switch_that_adds_them(tmp_path):
    """xformers: setup.py globs csrc/**/*.cu and adds that list only under the CUDA test
    (``torch.version.cuda is not None``, ``FORCE_CUDA``), its hip_*/ sources under
    ``torch.version.hip``. The globs are read as patterns: the CUTLASS kernels (and the header only
    they include, and a .cu at the top of csrc/: ``**`` matches no directory too) are the CUDA
    build's. Added outside the switch, the same glob is compiled by both builds and counts."""
    files = {"setup.py": GLOB_SETUP, "pkg/__init__.py": "", "pkg/csrc/sparse/gemm.cu": CUTLASS_CU,
             "pkg/csrc/sparse/pack.h": "#include <cutlass/array.h>\n", "pkg/csrc/sparse/bind.cpp": "int bind();\n",
             "pkg/csrc/top.cu": PTX, "pkg/csrc/attention/hip_fmha/attn.cpp": "#include <hip/hip_runtime.h>\nint a();\n"}  # fmt: skip
    code, doc = run_json(tree(tmp_path / "sided", files))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    handled = {f["where"].rsplit(":", 1)[0]: f["handled"] for f in doc["findings"] if f["verdict"] == "blocker"}
    assert handled == dict.fromkeys(["pkg/csrc/sparse/gemm.cu", "pkg/csrc/sparse/pack.h", "pkg/csrc/top.cu"],
                                    "already handled by the ROCm build: only the CUDA build compiles it")  # fmt: skip
    both = GLOB_SETUP.replace("    sources = list(set(sources) - set(source_hip))\n",
                              "    sources = list(set(sources) - set(source_hip)) + source_cuda\n")  # fmt: skip
    code, doc = run_json(tree(tmp_path / "both", {**files, "setup.py": both}))
    assert doc["verdict"] == "portable-with-work"
    assert uncounted(doc) == {"pkg/csrc/sparse/gemm.cu", "pkg/csrc/sparse/pack.h", "pkg/csrc/top.cu"}


def test_setup_py_cuda_tests_and_platform_switches_read_from_the_environment():
    import ast

    from gpuenv.advise.regions import CUDA, HIP
    from gpuenv.advise.setuppy import _test_side

    def side(src: str) -> str | None:
        return _test_side(ast.parse(src, mode="eval").body)

    assert side("torch.version.cuda is not None") == CUDA and side("torch.version.cuda is None") == HIP
    assert side('os.getenv("FORCE_CUDA", "0") == "1"') == CUDA and side('os.getenv("FORCE_CUDA", "0") == "0"') is None
    assert side('os.environ.get("TORCH_CUDA_ARCH_LIST", "") != ""') == CUDA
    assert side('os.getenv("USE_ROCM") == "1"') == HIP and side('os.getenv("MAX_JOBS") == "4"') is None
    # torch.cuda.is_available() holds on ROCm too: alone it is no side, beside torch.version.cuda it is.
    assert side("torch.cuda.is_available()") is None
    assert side("torch.cuda.is_available() and torch.version.cuda is not None") == CUDA


SERVE_PYPROJECT = '[project]\nname = "srv"\ndependencies = ["torch", "flashinfer_python==0.6.7", "nvidia-cutlass-dsl>=4.4"]\n'
OTHER_PYPROJECT = ('[project]\nname = "srv"\ndependencies = ["torch"]\n\n[project.optional-dependencies]\n'
                   'srt_hip = ["torch", "petit_kernel"]\nsrt_npu = ["torch_npu"]\n')  # fmt: skip


def test_a_pyproject_variant_with_a_rocm_extra_is_the_rocm_install_beside_the_cuda_one(tmp_path):
    """sglang: pyproject.toml names the CUDA platform's packages (flashinfer, CUTLASS DSL);
    pyproject_other.toml beside it installs the other platforms, ROCm among them ([srt_hip]).
    Without the variant (or with one naming no ROCm extra) the CUDA-only packages are core."""
    files = {"pyproject.toml": SERVE_PYPROJECT, "srv/__init__.py": ""}
    code, doc = run_json(tree(tmp_path / "cuda", files))
    assert doc["verdict"] == "cuda-only"
    npu_only = OTHER_PYPROJECT.replace('srt_hip = ["torch", "petit_kernel"]\n', "")
    code, doc = run_json(tree(tmp_path / "npu", {**files, "pyproject_other.toml": npu_only}))
    assert doc["verdict"] == "cuda-only"
    code, doc = run_json(tree(tmp_path / "both", {**files, "pyproject_other.toml": OTHER_PYPROJECT}))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    assert doc["reasons"][0].startswith("the project builds for ROCm itself (pyproject_other.toml:6 (a ROCm manifest: "
                                        "the extra [srt_hip])")  # fmt: skip
    assert all(f["covered"] for f in doc["findings"] if f["where"].startswith("pyproject.toml:") and f["verdict"] != "portable")


JIT_LOADER = ('from srv.jit.utils import load_jit\n\n\ndef _module():\n'
              '    return load_jit("hicache", cuda_files=["cache/hicache.cuh"])\n')  # fmt: skip


def test_kernels_compiled_at_run_time_follow_the_python_that_loads_them(tmp_path):
    """sglang's jit_kernel/: beside the project's ROCm build, a .cuh named by a Python module
    (compiled when that module runs) is an optional part when every module naming it is optional
    (here imported only inside a function), and so is a header only it includes; named by a core
    module, or without a ROCm build of the tree's own, it is core."""
    files = {"pyproject.toml": '[project]\nname = "srv"\n', "srv/__init__.py": "",
             "srv/jit/__init__.py": "", "srv/jit/utils.py": "def load_jit(name, cuda_files):\n    return name\n",
             "srv/jit/hicache.py": JIT_LOADER,
             "srv/jit/csrc/cache/hicache.cuh": '#include "ptx_load.cuh"\n' + PLAIN,
             "srv/jit/csrc/cache/ptx_load.cuh": PTX,
             "srv/mem.py": "def pool():\n    from srv.jit.hicache import _module\n    return _module()\n",
             "Dockerfile.rocm": ROCM_DOCKERFILE}  # fmt: skip
    code, doc = run_json(tree(tmp_path / "lazy", files))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    (f,) = [f for f in doc["findings"] if f["rule"] == "construct:inline-ptx"]
    assert f["optional"].startswith("srv/jit/csrc/cache/ (compiled at run time only by optional code (srv/jit/hicache.py: ")
    no_rocm = {k: v for k, v in files.items() if k not in ("Dockerfile.rocm", "srv/jit/csrc/cache/ptx_load.cuh")}
    no_rocm["srv/jit/csrc/cache/hicache.cuh"] = PTX
    code, doc = run_json(tree(tmp_path / "cuda", no_rocm))  # no ROCm build: nothing says the core runs without it
    assert doc["verdict"] == "cuda-only"
    core = {**files, "srv/mem.py": "from srv.jit.hicache import _module\n\n\ndef pool():\n    return _module()\n"}
    code, doc = run_json(tree(tmp_path / "core", core))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"srv/jit/csrc/cache/ptx_load.cuh"}


def test_a_feature_macro_defined_to_0_on_the_hip_side_guards_like_cuda_arch(tmp_path):
    """sglang's utils.cuh: ``#ifndef USE_ROCM`` defines SGL_ARCH_HOPPER_OR_GREATER as an
    expression, ``#else`` as 0; PTX under ``#if SGL_ARCH_HOPPER_OR_GREATER`` is the CUDA
    compiler's only. Defined the same way on both sides, it guards nothing."""
    utils = ("#ifndef USE_ROCM\n#define ARCH_HOPPER_OR_GREATER (SGL_CUDA_ARCH >= 900)\n#else  // USE_ROCM\n"
             "#include <hip/hip_runtime.h>\n#define ARCH_HOPPER_OR_GREATER 0\n#endif\n"
             "__device__ void wait() {\n#if ARCH_HOPPER_OR_GREATER\n  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
             "#endif\n}\n")  # fmt: skip
    rocm = {"Dockerfile.rocm": ROCM_DOCKERFILE}
    code, doc = run_json(tree(tmp_path / "guarded", {**rocm, "csrc/utils.cuh": utils}))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    same = utils.replace("#define ARCH_HOPPER_OR_GREATER 0\n", "#define ARCH_HOPPER_OR_GREATER (SGL_CUDA_ARCH >= 900)\n")
    code, doc = run_json(tree(tmp_path / "both", {**rocm, "csrc/utils.cuh": same}))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"csrc/utils.cuh"}


ROCM_SETUP = ("import torch\nfrom setuptools import setup\n\nIS_ROCM = torch.version.hip is not None\n"
              "setup(name='pk', packages=['pk', 'op_builder'])\n")  # fmt: skip
OP_BUILDER = ('class AttnBuilder:\n    BUILD_VAR = "PK_BUILD_ATTN"\n\n    def sources(self):\n'
              "        src_dir = 'csrc/attn'\n        return [f'{src_dir}/attn.cu', f'{src_dir}/attn.cpp']\n")  # fmt: skip


def test_sources_of_an_extension_built_on_request_are_optional_beside_a_rocm_build(tmp_path):
    """DeepSpeed's op_builder/: each builder names its sources (f-strings over a local directory)
    and the environment switch that asks for its build (BUILD_VAR = "DS_BUILD_..."); the op is
    built on request or compiled at first use, and the package runs without it. Beside the
    project's ROCm build such sources (and the headers only they include) are optional parts;
    without the switch, or without a ROCm build of the tree's own, they are core."""
    files = {"setup.py": ROCM_SETUP, "pk/__init__.py": "", "op_builder/__init__.py": "", "op_builder/attn.py": OP_BUILDER,
             "csrc/attn/attn.cu": '#include <cutlass/cutlass.h>\n#include "kernel.h"\n' + PLAIN,
             "csrc/attn/attn.cpp": "int bind();\n", "csrc/attn/kernel.h": PTX}  # fmt: skip
    code, doc = run_json(tree(tmp_path / "requested", files))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    optional = {f["where"].rsplit(":", 1)[0]: f["optional"] for f in doc["findings"] if f["verdict"] == "blocker"}
    assert optional == dict.fromkeys(["csrc/attn/attn.cu", "csrc/attn/kernel.h"],
                                     "csrc/attn/ (an extension built on request (PK_BUILD_ATTN, op_builder/attn.py))")  # fmt: skip
    no_switch = OP_BUILDER.replace('    BUILD_VAR = "PK_BUILD_ATTN"\n\n', "")
    code, doc = run_json(tree(tmp_path / "always", {**files, "op_builder/attn.py": no_switch}))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"csrc/attn/attn.cu", "csrc/attn/kernel.h"}
    # setup.py's own sources are its build's, whatever switch it reads (BUILD_CUDA_EXT=1 by default).
    built = ROCM_SETUP + 'import os\nBUILD = os.environ.get("BUILD_CUDA_EXT", "1")\nSOURCES = ["csrc/core.cu"]\n'
    code, doc = run_json(tree(tmp_path / "setup", {**files, "setup.py": built, "csrc/core.cu": PTX}))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"csrc/core.cu"}
    cuda = ROCM_SETUP.replace("IS_ROCM = torch.version.hip is not None\n", "")
    code, doc = run_json(tree(tmp_path / "cuda", {**files, "setup.py": cuda}))
    assert doc["verdict"] == "cuda-only"


def test_a_conda_environment_beside_a_package_that_builds_for_rocm_is_optional(tmp_path):
    """DeepSpeed's environment.yml pins pytorch-cuda for its developers; the package installs from
    setup.py and builds for ROCm itself. Without that ROCm build the pin is work."""
    env = "channels:\n  - nvidia\ndependencies:\n  - pytorch\n  - pytorch-cuda=11.8\n"
    files = {"setup.py": "from setuptools import setup\nsetup(name='pk', packages=['pk'])\n", "pk/__init__.py": "",
             "environment.yml": env}  # fmt: skip
    code, doc = run_json(tree(tmp_path / "cuda", files))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"environment.yml"}
    code, doc = run_json(tree(tmp_path / "rocm", {**files, "setup.py": ROCM_SETUP}))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    assert {p["part"] for p in doc["optional_parts"]} == {"environment.yml (a conda environment beside the package's own install)"}


DRIVER_PYX = ('cdef extern from "backend.h":\n    int cuLinkCreate(int n, void* a, void* b, void* c)\n\n\n'
              "cpdef link():\n    return cuLinkCreate(0, NULL, NULL, NULL)\n")  # fmt: skip


def test_cython_bindings_under_cuda_beside_a_hip_directory_are_its_twins(tmp_path):
    """cupy: cupy_backends/cuda/api/driver.pyx binds the CUDA driver; cupy_backends/hip/ holds the
    HIP layer the ROCm build compiles in its place. Without the hip/ directory it is work."""
    files = {"Dockerfile.rocm": ROCM_DOCKERFILE, "pk_backends/cuda/api/driver.pyx": DRIVER_PYX}
    code, doc = run_json(tree(tmp_path / "alone", files))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"pk_backends/cuda/api/driver.pyx"}
    hip = {"pk_backends/hip/pk_hip.h": "#include <hip/hip_runtime.h>\nint cuLinkCreate(...) { return 1; }\n"}
    code, doc = run_json(tree(tmp_path / "twin", {**files, **hip}))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    (f,) = [f for f in doc["findings"] if f["where"].startswith("pk_backends/cuda/api/driver.pyx")]
    assert f["covered"] and f["handled"] == "beside its ROCm twin directory (pk_backends/...)"


def test_a_kernel_in_a_python_string_with_its_own_hip_branch(tmp_path):
    """cupyx: a RawKernel source #defines its warp mask under ``#ifdef __HIP_DEVICE_COMPILE__``
    (``__activemask()``) and ``#else`` (0xffffffff): the full mask is the CUDA side's."""
    kernel = ('KERNEL = r"""\n#ifdef __HIP_DEVICE_COMPILE__\n  #define FULL_MASK __activemask()\n#else\n'
              '  #define FULL_MASK 0xffffffffu\n#endif\n__global__ void count(int* x) {\n'
              '    x[0] += __shfl_down_sync(FULL_MASK, x[0], 1);\n}\n"""\n')  # fmt: skip
    code, doc = run_json(tree(tmp_path / "sided", {"pk/sparse.py": kernel}))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    plain = kernel.replace("#ifdef __HIP_DEVICE_COMPILE__\n  #define FULL_MASK __activemask()\n#else\n", "")
    code, doc = run_json(tree(tmp_path / "plain", {"pk/sparse.py": plain.replace("#endif\n", "")}))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"pk/sparse.py"}


def test_cython_docstrings_and_binding_attributes_are_no_uses(tmp_path):
    """cupy's texture.pyx documents ``.. seealso:: `cudaCreateTextureObject()`_`` and
    function.pyx passes ``driver.CU_JIT_INPUT_PTX`` to its own binding: neither calls the CUDA
    API (the binding's file does, and is judged there). Called bare, they are uses."""
    texture = ('cdef class TextureObject:\n    """A texture object.\n\n    .. seealso:: `cudaCreateTextureObject()`_\n'
               '    """\n    pass\n')  # fmt: skip
    function = ("from pk_backends.api cimport driver\n\n\ncpdef add(ptr, data):\n"
                "    driver.linkAddData(ptr, driver.CU_JIT_INPUT_PTX, data)\n")  # fmt: skip
    code, doc = run_json(tree(tmp_path / "docs", {"pk/texture.pyx": texture, "pk/function.pyx": function}))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    used = {"pk/texture.pyx": texture.replace('    pass\n', "    cdef int make(self):\n        return cudaCreateTextureObject(NULL, NULL, NULL, NULL)\n"),
            "pk/function.pyx": function.replace("driver.CU_JIT_INPUT_PTX", "CU_JIT_INPUT_PTX")}  # fmt: skip
    code, doc = run_json(tree(tmp_path / "used", used))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"pk/texture.pyx", "pk/function.pyx"}
