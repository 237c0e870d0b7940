"""`gpuenv advise` reads what each platform's build compiles (issue 41), each rule in a small
synthetic tree written here (shaped like vLLM, bitsandbytes, flash-attention, Liger-Kernel, mamba,
apex and a stub sdist, not copied from them): sources only the CUDA build compiles are handled by
the ROCm build, optional parts do not decide the verdict, a stub is judged by its name, inline
PTX is listed by instruction with its AMD counterpart, and cuda-only exits 6."""

from __future__ import annotations

import ast
import json

from gpuenv.advise.asm import instructions
from gpuenv.advise.buildmodel import BuildModel, cuda_only_files, read_cmake
from gpuenv.advise.regions import CUDA, HIP, c_regions, cmake_sides
from gpuenv.advise.setuppy import _test_side, read_setup_py
from gpuenv.advise.table import load
from gpuenv.exitcodes import Exit
from tests.cli_runner import invoke
from tests.schemas import validate
from tests.test_advise_rules import tree

PTX = ('__global__ void k(unsigned* o, const unsigned* a) {\n    unsigned r;\n'
       '    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0}, [%1];\\n" : "=r"(r) : "r"(a[0]));\n'
       '    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0}, {%1};" : "=r"(r) : "r"(r));\n'
       '    o[0] = r;\n}\n')  # fmt: skip
PLAIN = "__global__ void add(float* x) { x[threadIdx.x] += 1.0f; }\n"
HIP_KERNEL = "#include <hip/hip_runtime.h>\n__global__ void add(float* x) { x[threadIdx.x] += 1.0f; }\n"


def run_json(root) -> tuple[int, dict]:
    result = invoke(["advise", str(root), "--json"])
    assert result.exception is None, result.exception
    doc = json.loads(result.stdout)
    validate(doc, "advise")
    return result.exit_code, doc


def uncounted(doc: dict) -> set[str]:
    """The files whose work or blockers count against the verdict."""
    return {f["where"].rsplit(":", 1)[0] for f in doc["findings"]
            if f["verdict"] != "portable" and not f["covered"] and not f["optional"]}  # fmt: skip


# -- 1. the build model ------------------------------------------------------------------------------

VLLM_CMAKE = """cmake_minimum_required(VERSION 3.26)
project(ext LANGUAGES CXX)
set(EXT_SRC "csrc/cache.cu" "csrc/ops.cu")
if(VLLM_GPU_LANG STREQUAL "CUDA")
  list(APPEND EXT_SRC "csrc/quant/marlin.cu")
  add_subdirectory(csrc/cutlass_kernels)
elseif(VLLM_GPU_LANG STREQUAL "HIP")
  list(APPEND EXT_SRC "csrc/rocm/attention.cu")
endif()
"""


def test_sources_only_the_cuda_build_compiles_are_handled_by_the_rocm_build(tmp_path):
    root = tree(tmp_path, {
        "CMakeLists.txt": VLLM_CMAKE,
        "csrc/cache.cu": PLAIN,
        "csrc/ops.cu": PLAIN,
        "csrc/quant/marlin.cu": PTX,
        "csrc/cutlass_kernels/gemm.cu": PTX,
        "csrc/rocm/attention.cu": HIP_KERNEL,
    })  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable")
    marlin = [f for f in doc["findings"] if f["where"].startswith("csrc/quant/marlin.cu")]
    assert marlin and all(f["covered"] for f in marlin)
    assert marlin[0]["handled"] == "already handled by the ROCm build: only the CUDA build compiles it"
    assert all(f["covered"] for f in doc["findings"] if f["where"].startswith("csrc/cutlass_kernels/"))
    # The same kernel in a source both builds compile counts.
    (root / "csrc/ops.cu").write_text(PTX)
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (1, "portable-with-work")
    assert uncounted(doc) == {"csrc/ops.cu"}


def test_a_cuda_switch_without_a_rocm_build_handles_nothing(tmp_path):
    """if(BUILD_CUDA) beside a CPU build: no ROCm build compiles anything, the kernel counts."""
    root = tree(tmp_path, {
        "CMakeLists.txt": "project(x LANGUAGES CXX)\nif(BUILD_CUDA)\n  list(APPEND SRC csrc/k.cu)\nelse()\n"
                          "  list(APPEND SRC csrc/cpu.cpp)\nendif()\n",
        "csrc/k.cu": PTX,
        "csrc/cpu.cpp": "int f() { return 1; }\n",
    })  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (Exit.CUDA_ONLY, "cuda-only")


def test_a_header_only_cuda_only_sources_include_follows_them(tmp_path):
    """bitsandbytes' shape: gemm_sm80.cu only in the CUDA branch includes mma.cuh; a header a
    shared source includes too stays work."""
    root = tree(tmp_path, {
        "CMakeLists.txt": ('set(GPU_FILES csrc/ops.cu)\nif(${COMPUTE_BACKEND} STREQUAL "cuda")\n'
                           "  list(APPEND SRC ${GPU_FILES} csrc/gemm_sm80.cu)\nelseif(BUILD_HIP)\n"
                           "  enable_language(HIP)\n  list(APPEND SRC ${GPU_FILES})\nendif()\n"),
        "csrc/gemm_sm80.cu": '#include "mma.cuh"\n#include "common.cuh"\n',
        "csrc/mma.cuh": PTX,
        "csrc/common.cuh": PTX,
        "csrc/ops.cu": '#include "common.cuh"\n' + PLAIN,
    })  # fmt: skip
    code, doc = run_json(root)
    assert uncounted(doc) == {"csrc/common.cuh"}
    assert doc["verdict"] == "portable-with-work"


def test_setup_py_branches_and_the_sources_each_extension_names(tmp_path):
    """flash-attention's shape: CUTLASS sources under `not SKIP_CUDA_BUILD and not IS_ROCM`, the CK
    port under `IS_ROCM`; a .cu the list leaves out, beside the listed ones, is the CUDA build's too."""
    setup = ("import os\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension, ROCM_HOME\n"
             "IS_ROCM = ROCM_HOME is not None\nSKIP_CUDA_BUILD = os.getenv('SKIP', '') == '1'\next = []\n"
             "if not SKIP_CUDA_BUILD and not IS_ROCM:\n"
             "    ext.append(CUDAExtension('fa', sources=['csrc/fa/api.cpp', 'csrc/fa/src/fwd_sm80.cu']))\n"
             "elif not SKIP_CUDA_BUILD and IS_ROCM:\n"
             "    ext.append(CUDAExtension('fa', sources=['csrc/ck/api.cpp']))\n"
             "setup(name='fa', ext_modules=ext)\n")  # fmt: skip
    root = tree(tmp_path, {
        "setup.py": setup,
        "csrc/fa/api.cpp": '#include "src/kernel.h"\n',
        "csrc/fa/src/fwd_sm80.cu": '#include "kernel.h"\n',
        "csrc/fa/src/bwd_sm80.cu": '#include "kernel.h"\n' + PTX,
        "csrc/fa/src/kernel.h": "#include <cute/tensor.hpp>\n" + PTX,
        "csrc/ck/api.cpp": "#include <hip/hip_runtime.h>\nint f() { return hipDeviceSynchronize(); }\n",
    })  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    assert not uncounted(doc)


def test_setup_py_test_sides():
    def side(expr: str) -> str | None:
        node = ast.parse(expr, mode="eval").body
        return _test_side(node)

    assert side("IS_ROCM") == HIP and side("not IS_ROCM") == CUDA
    assert side("torch.version.hip is not None") == HIP and side("torch.version.hip is None") == CUDA
    assert side("not SKIP_CUDA_BUILD and not IS_ROCM") == CUDA
    assert side("BUILD_TARGET == 'rocm'") == HIP and side("BUILD_TARGET == 'cuda'") == CUDA
    assert side("BUILD_CUDA_EXT") is None and side("SKIP_CUDA_BUILD") is None  # build at all, both platforms


def test_read_setup_py_is_static_and_sides_sources(tmp_path):
    model = BuildModel()
    # Never run: the raise would stop any execution; sources are read from the literals.
    read_setup_py("setup.py", "raise SystemExit\nif torch.version.hip:\n    s = ['a/r.hip']\nelse:\n"
                              "    s = ['a/c.cu', 'a/*.cu']\n", model)  # fmt: skip
    assert (model.hip, model.cuda) == ({"a/r.hip"}, {"a/c.cu", "a/*.cu"})
    assert cuda_only_files(model, ["a/c.cu", "a/d.cu", "a/r.hip", "b/e.cu"], {}) == {"a/c.cu", "a/d.cu"}


def test_cmake_backend_switches():
    lines = ['if(VLLM_GPU_LANG STREQUAL "CUDA")', "a", 'elseif(VLLM_GPU_LANG STREQUAL "HIP")', "b", "else()",
             "c", "endif()", "if(BUILD_CUDA)", "d", "else()", "e", "endif()", "if(USE_ROCM)", "f", "else()", "g",
             "endif()"]  # fmt: skip
    sides = dict(zip(lines, cmake_sides(lines), strict=True))
    assert (sides["a"], sides["b"], sides["d"], sides["f"], sides["g"]) == (CUDA, HIP, CUDA, HIP, CUDA)
    assert sides["e"] is None  # the else of a CUDA switch is a CPU or XPU build, not ROCm's
    model = BuildModel()
    read_cmake("sub/CMakeLists.txt", "if(BUILD_CUDA)\n  set(S ${CMAKE_CURRENT_SOURCE_DIR}/k.cu ../up.cu)\n"
                                     "  add_subdirectory(cuda)\nendif()\n", model)  # fmt: skip
    assert model.cuda == {"sub/k.cu", "up.cu", "sub/cuda/**"} and model.files == {"sub/CMakeLists.txt"}


def test_cuda_arch_guards_above_what_hip_defines():
    """HIP-Clang leaves __CUDA_ARCH__ undefined: `>= 900` is dead on ROCm. With an #else, that is
    the ROCm path (covered); without one, nothing stands in (still work); `< 800` is taken on ROCm."""
    text = ("// HIP\n#if __CUDA_ARCH__ >= 900\nasm1;\n#else\nplain;\n#endif\n"
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\nasm2;\n#endif\n"
            "#if __CUDA_ARCH__ < 800\nold;\n#endif\n")  # fmt: skip
    r = c_regions(text)
    assert [r.side(n) for n in (3, 5, 8, 11)] == [CUDA, None, None, None]
    assert c_regions(text, arch=True).side(8) == CUDA  # in a tree that builds for ROCm, dead there all the same


def test_a_cuda_arch_guarded_ptx_load_in_a_shared_source_is_covered(tmp_path):
    kernel = ("#if defined(USE_ROCM)\n#include <hip/hip_runtime.h>\nint hip_only() { return 1; }\n#endif\n"
              "__global__ void k(uint4* o, const uint4* a) {\n#if __CUDA_ARCH__ >= 900\n    uint4 v;\n"
              '    asm volatile("ld.global.ca.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), '
              '"=r"(v.w) : "l"(a));\n#else\n    uint4 v = a[0];\n#endif\n    o[0] = v;\n}\n')  # fmt: skip
    code, doc = run_json(tree(tmp_path, {"csrc/gemv.cu": kernel}))
    (f,) = [f for f in doc["findings"] if f["rule"] == "construct:inline-ptx"]
    assert f["covered"] and doc["verdict"] == "portable"


# -- 2. optional parts ------------------------------------------------------------------------------


def test_nested_packages_contrib_and_extras_are_optional_parts(tmp_path):
    root = tree(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='core')\n",
        "core/__init__.py": "import torch\n",
        "cute_kernels/setup.py": "from setuptools import setup\nsetup(name='cute-kernels')\n",
        "cute_kernels/csrc/moe.cu": PTX,
        "core/contrib/csrc/group_norm.cu": PTX,
        "pyproject.toml": '[project]\nname = "core"\ndependencies = ["torch"]\n'
                          '[project.optional-dependencies]\ntrt = ["tensorrt"]\n',
    })  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable")
    parts = {p["part"]: p for p in doc["optional_parts"]}
    assert set(parts) == {"cute_kernels/ (a package of its own: setup.py or pyproject.toml)",
                          "core/contrib/csrc/ (a contrib extension, built on request)", "the extra [trt]"}
    assert all(p["verdict"] == "blocker" for p in parts.values())
    assert any(r.startswith("optional: ") and r.endswith("the verdict follows the core") for r in doc["reasons"])


def test_a_nested_package_without_one_at_the_top_is_the_project(tmp_path):
    """sglang's python/pyproject.toml is the project itself, not an optional part."""
    code, doc = run_json(tree(tmp_path, {"python/pyproject.toml": '[project]\nname = "x"\n',
                                         "python/csrc/k.cu": PTX}))  # fmt: skip
    assert (code, doc["verdict"]) == (Exit.CUDA_ONLY, "cuda-only")


def test_a_module_reached_only_through_guarded_or_lazy_imports_is_optional(tmp_path):
    """mamba's try/except ImportError around a CuTe DSL kernel and Liger's backend loaded inside a
    function are optional; a module-level import from a core module makes the module core."""
    root = tree(tmp_path, {
        "pyproject.toml": '[project]\nname = "pkg"\n',
        "pkg/__init__.py": "",
        "pkg/modules.py": "try:\n    from pkg.ops.cute.step import step\nexcept ImportError:\n    step = None\n",
        "pkg/ops/__init__.py": "",
        "pkg/ops/cute/__init__.py": "",
        "pkg/ops/cute/step.py": "import cutlass.cute as cute\nfrom .helpers import h\n",
        "pkg/ops/cute/helpers.py": "import cutlass\n",
        "pkg/dispatch.py": "def load():\n    from pkg.backends.sm90 import f\n    return f\n",
        "pkg/backends/__init__.py": "",
        "pkg/backends/sm90.py": "import cutlass\n",
        "tests/test_step.py": "from pkg.ops.cute.step import step\n",  # a test importing it is no core import
    })  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    optional = {f["where"]: f["optional"] for f in doc["findings"] if f["optional"]}
    assert optional["pkg/ops/cute/step.py:1"].startswith("pkg/ops/cute/ (imported only inside try:/if:/a function")
    assert optional["pkg/ops/cute/helpers.py:1"] == "pkg/ops/cute/ (imported only by optional or CUDA-only modules)"
    assert "pkg/backends/sm90.py:1" in optional
    (root / "pkg/core.py").write_text("from pkg.ops.cute.step import step\n")
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (Exit.CUDA_ONLY, "cuda-only")


def test_scripts_and_container_recipes_below_a_package_are_optional(tmp_path):
    root = tree(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
        "pkg/__init__.py": "import torch\n",
        "AI/repro.py": "import cutlass\n",
        "training/Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.01-py3\n",
    })  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable")
    assert {p["part"] for p in doc["optional_parts"]} == {
        "AI/ (scripts outside the Python package)", "training/ (a container recipe below the top of the tree)"}


# -- 3. a stub sdist, and ports ----------------------------------------------------------------------

STUB = ("import sys\nERROR = 'Please install tensorrt-llm from https://pypi.nvidia.com'\n"
        "raise RuntimeError(ERROR if False else 'This package is a placeholder: pip install from pypi.nvidia.com')\n")  # fmt: skip


def test_a_stub_sdist_is_judged_by_its_name_never_portable(tmp_path):
    root = tree(tmp_path, {"setup.py": STUB, "PKG-INFO": "Metadata-Version: 2.1\nName: tensorrt-llm\nVersion: 0.1\n"})
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (Exit.CUDA_ONLY, "cuda-only")
    assert doc["reasons"][0].startswith("a stub, not the source: setup.py:3 raises: This package is a placeholder")
    (root / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: some-wrapper\nVersion: 0.1\n")
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (Exit.NOT_JUDGED, "unknown")
    # A setup.py that raises only on a bad Python is no stub.
    (root / "setup.py").write_text("import sys\nfrom setuptools import setup\nif sys.version_info < (3, 8):\n"
                                   "    raise RuntimeError('old')\nsetup(name='w', install_requires=['torch'])\n")  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable")


def test_a_project_with_a_rocm_port_elsewhere_names_it(tmp_path):
    code, doc = run_json(tree(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='apex')\n",
                                         "csrc/k.cu": "#define WARP_SIZE 32\n" + PLAIN}))  # fmt: skip
    assert doc["verdict"] == "portable-with-work"
    assert doc["port"].startswith("https://github.com/ROCm/apex")
    assert "a ROCm port is maintained outside this project: https://github.com/ROCm/apex" in invoke(
        ["advise", str(tmp_path)]).stdout


# -- 4. the PTX inventory ----------------------------------------------------------------------------


def test_ptx_instructions_are_named_with_their_amd_counterpart(tmp_path):
    extra = ('__device__ void b(unsigned x) {\n    asm volatile("bar.sync 1, 64;");\n'
             '    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(0), "l"(0));\n'
             '    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile [%0], [%1];" :: "r"(0), "l"(0));\n'
             '    asm volatile("vabsdiff4.u32.u32.u32.add %0, %0, %0, %0;" : "+r"(x));\n'
             '    asm volatile("bmsk.clamp.b32 %0, %0, %0;" : "+r"(x));\n}\n')  # fmt: skip
    code, doc = run_json(tree(tmp_path, {"csrc/a.cu": PTX, "csrc/b.cu": PTX + extra}))
    rows = {r["instruction"]: r for r in doc["ptx"]}
    assert set(rows) == {"ldmatrix", "mma.sync", "bar.sync", "cp.async", "cp.async.bulk", "vabsdiff4", "bmsk"}
    assert (rows["ldmatrix"]["count"], rows["ldmatrix"]["files"]) == (2, ["csrc/a.cu", "csrc/b.cu"])
    assert rows["mma.sync"]["rocm"].startswith("MFMA on CDNA") and "instruction-set-architecture" in rows["mma.sync"]["source"]
    assert rows["cp.async.bulk"]["rocm"].startswith("none: redesign")
    assert rows["vabsdiff4"]["rocm"].startswith("__builtin_amdgcn_sad_u8") and "BuiltinsAMDGPU" in rows["vabsdiff4"]["source"]
    assert rows["bmsk"]["rocm"] == "none known: a person must redesign it" and rows["bmsk"]["source"] is None
    human = invoke(["advise", str(tmp_path)]).stdout
    assert "Inline PTX, by instruction" in human and "  ldmatrix: 2; 2; csrc/a.cu, csrc/b.cu" in human


def test_instruction_names():
    assert instructions('asm("{\\n.reg .pred p;\\nsetp.ne.b32 p, %0, 0;\\n@p cp.async.ca.shared.global [%1], [%2], 4;\\n}\\n" :: "r"(1))') == ("setp", "cp.async")  # fmt: skip
    assert instructions('asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory")') == ("wgmma",)
    assert instructions('asm volatile("ld.global.nc.v4.u32 {%0}, [%1];" : "=r"(x) : "l"(p))') == ("ld.global",)


def test_every_ptx_counterpart_cites_amd_documentation():
    t = load()
    assert t.ptx("mma.sync") and t.ptx("mma")  # by name, or by its opcode alone
    for name in ("ldmatrix", "mma.sync", "cp.async", "wgmma", "bar.sync", "shfl.sync", "cp.async.bulk"):
        rocm, source = t.ptx(name)
        assert rocm and ("amd.com" in source or "llvm" in source), name


# -- 5. exit codes -----------------------------------------------------------------------------------


def test_cuda_only_has_an_exit_code_of_its_own():
    codes = [int(e) for e in Exit]
    assert len(codes) == len(set(codes))
    assert Exit.CUDA_ONLY == 6 and Exit.REFUSED == 3  # 3 was taken: plan/apply refused
    help_text = invoke(["advise", "--help"]).stdout
    assert "6 cuda-only" in " ".join(help_text.split())


# -- 6. vLLM's shapes: what its ROCm build leaves out, said in the code itself -----------------------

ROCM_CMAKE = ('project(x LANGUAGES CXX)\nset(SRC "csrc/topk.cu" "csrc/cache.cu")\n'
              'if(VLLM_GPU_LANG STREQUAL "CUDA")\n  list(APPEND SRC "csrc/cuda_only.cu")\n'
              '  execute_process(COMMAND python ${CMAKE_CURRENT_SOURCE_DIR}/csrc/marlin/generate_kernels.py)\n'
              'elseif(VLLM_GPU_LANG STREQUAL "HIP")\n  list(APPEND SRC "csrc/rocm/attn.cu")\nendif()\n')  # fmt: skip


def rocm_tree(tmp_path, files: dict[str, str]):
    base = {"CMakeLists.txt": ROCM_CMAKE, "csrc/cuda_only.cu": PLAIN, "csrc/rocm/attn.cu": HIP_KERNEL,
            "csrc/cache.cu": PLAIN, "csrc/topk.cu": PLAIN}  # fmt: skip
    return tree(tmp_path, {**base, **files})


def test_a_header_included_only_inside_ifndef_use_rocm_is_the_cuda_builds(tmp_path):
    root = rocm_tree(tmp_path, {
        "csrc/topk.cu": '#ifndef USE_ROCM\n  #include "persistent_topk.cuh"\n#endif\n' + PLAIN,
        "csrc/persistent_topk.cuh": PTX,
    })  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable")
    (root / "csrc/topk.cu").write_text('#include "persistent_topk.cuh"\n' + PLAIN)
    code, doc = run_json(root)
    assert uncounted(doc) == {"csrc/persistent_topk.cuh"}


def test_a_flag_macro_defined_only_on_the_cuda_side_guards_like_cuda_arch(tmp_path):
    utils = ("#if !defined(USE_ROCM) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000\n  #define WIDE_PTX 1\n#else\n"
             "  #define WIDE_PTX 0\n#endif\n__device__ void ld(unsigned* v, const unsigned* p) {\n#if WIDE_PTX\n"
             '  asm volatile("ld.global.nc.v8.u32 {%0}, [%1];" : "=r"(v[0]) : "l"(p));\n#else\n  v[0] = p[0];\n#endif\n}\n')  # fmt: skip
    r = c_regions(utils)
    assert r.side(8) == CUDA and r.side(10) is None


def test_generated_kernels_twin_directories_and_rocm_compiled_work(tmp_path):
    """marlin/: the CUDA side runs its generator, so its templates are the CUDA build's; models/x/nvidia/
    beside models/x/amd/ is covered; work-level code the ROCm build compiles is the project's own port."""
    root = rocm_tree(tmp_path, {
        "csrc/marlin/generate_kernels.py": "print('kernels')\n",
        "csrc/marlin/marlin_template.h": PTX,
        "csrc/cache.cu": "__global__ void k(int* o) { o[0] = threadIdx.x & 31; }\n",
        "pyproject.toml": '[project]\nname = "srv"\n',
        "srv/__init__.py": "",
        "srv/models/x/__init__.py": "",
        "srv/models/x/amd/__init__.py": "import torch\n",
        "srv/models/x/nvidia/__init__.py": "import cutlass\n",
    })  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    handled = {f["where"].rsplit(":", 1)[0]: f["handled"] for f in doc["findings"] if f["covered"]}
    assert handled["csrc/marlin/marlin_template.h"] == "already handled by the ROCm build: only the CUDA build compiles it"
    assert handled["srv/models/x/nvidia/__init__.py"].startswith("beside its ROCm twin directory")
    assert handled["csrc/cache.cu"] == "compiled by the project's own ROCm build (its build files name it for ROCm)"
    # A blocker in a source the ROCm build compiles is never excused that way.
    (root / "csrc/cache.cu").write_text(PTX)
    code, doc = run_json(root)
    assert uncounted(doc) == {"csrc/cache.cu"} and doc["verdict"] == "portable-with-work"


def test_backends_named_for_cuda_and_lazy_imports_are_optional_only_beside_a_rocm_build(tmp_path):
    files = {
        "pyproject.toml": '[project]\nname = "srv"\n',
        "srv/__init__.py": "",
        "srv/ops/gdn_cutedsl/__init__.py": "import cutlass\n",
        "srv/sampler.py": "def top_k():\n    from flashinfer import top_k\n    return top_k\n",
        "srv/comm.py": "def make():\n    from srv.mnnvl import (\n        Backend,\n    )\n    return Backend\n",
        "srv/mnnvl.py": "from flashinfer.comm import Backend\n",
        "requirements/kv_connectors.txt": "tensorrt\n",
    }
    code, doc = run_json(tree(tmp_path / "plain", files))
    assert (code, doc["verdict"]) == (Exit.CUDA_ONLY, "cuda-only")  # no ROCm build: the lazy import is core
    code, doc = run_json(rocm_tree(tmp_path / "rocm", files))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    parts = {p["part"] for p in doc["optional_parts"]}
    assert "srv/ops/gdn_cutedsl/ (a CUDA-only backend, named for it, beside the project's ROCm build)" in parts
    assert "inside a function: imported when that code runs" in parts
    assert "srv/ (imported only inside try:/if:/a function (srv/comm.py))" in parts  # a multi-line import
    assert "requirements/kv_connectors.txt (a requirements list beside the core's)" in parts


# -- 7. llama.cpp's shapes ---------------------------------------------------------------------------


def test_feature_macros_defined_only_for_cuda_guard_other_files(tmp_path):
    """common.cuh #defines TURING_MMA_AVAILABLE only when not GGML_USE_HIP; mma.cuh's PTX behind
    #ifdef TURING_MMA_AVAILABLE is then the CUDA build's; a guard against a named arch constant
    (__CUDA_ARCH__ == GGML_CUDA_CC_DGX_SPARK) is dead on HIP too in a tree that builds for ROCm."""
    root = tree(tmp_path, {
        "CMakeLists.txt": "project(g LANGUAGES CXX)\nif(GGML_HIP)\n  enable_language(HIP)\nendif()\n",
        "ggml-cuda/common.cuh": ("#if !defined(GGML_USE_HIP) && __CUDA_ARCH__ >= 750\n#define TURING_MMA_AVAILABLE\n#endif\n"
                                 "#if defined(GGML_USE_HIP)\n#include <hip/hip_runtime.h>\nint hip_side();\n#endif\n"),
        "ggml-cuda/mma.cuh": ('#include "common.cuh"\n__device__ int mv(int x) {\n    int r = 0;\n#ifdef TURING_MMA_AVAILABLE\n'
                              '    asm("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(r) : "r"(x));\n#else\n'
                              '    r = x;\n#endif\n    return r;\n}\n'),
        "ggml-cuda/mmvq.cu": ('#if __CUDA_ARCH__ == GGML_CUDA_CC_DGX_SPARK\n__device__ void pf(const void* p) {\n'
                              '    asm volatile("prefetch.global.L2 [%0];" :: "l"(p));\n}\n#endif\n'),
        "ggml-cuda/CMakeLists.txt": "find_package(CUDAToolkit)\nenable_language(CUDA)\n",
        "ggml-hip/CMakeLists.txt": "enable_language(HIP)\n",
        "vendor/miniaudio/miniaudio.h": "#define WARP_SIZE 32\n__device__ int lane(int t) { return t & 31; }\n",
    })  # fmt: skip
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    by = {f["where"].rsplit(":", 1)[0]: f for f in doc["findings"] if f["verdict"] != "portable"}
    assert by["ggml-cuda/mma.cuh"]["covered"] and by["ggml-cuda/mmvq.cu"]["covered"]
    assert by["ggml-cuda/CMakeLists.txt"]["handled"] == "the CUDA build's own build file: the ROCm build has its own beside it"
    assert by["vendor/miniaudio/miniaudio.h"]["optional"] == "vendor/ (vendored third-party code)"
    # Without a ROCm build of the tree's own, the same PTX is work for a person.
    (root / "ggml-hip/CMakeLists.txt").unlink()
    (root / "CMakeLists.txt").write_text("project(g LANGUAGES CXX)\n")
    (root / "ggml-cuda/common.cuh").write_text("#if __CUDA_ARCH__ >= 750\n#define TURING_MMA_AVAILABLE\n#endif\n")
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (Exit.CUDA_ONLY, "cuda-only")


AO_SETUP = ("import glob, os\nimport torch\nfrom setuptools import setup\n"
            "from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, CUDAExtension\n"
            "this_dir = os.path.dirname(os.path.abspath(__file__))\n"
            "ext_dir = os.path.join(this_dir, 'pkg', 'csrc')\n"
            "use_cuda = torch.version.cuda and CUDA_HOME is not None\n"
            "use_rocm = torch.version.hip and ROCM_HOME is not None\n"
            "sources = list(glob.glob(os.path.join(ext_dir, '**/*.cpp'), recursive=True))\n"
            "cuda_sources = list(glob.glob(os.path.join(ext_dir, 'cuda', '**/*.cu'), recursive=True))\n"
            "{add}"
            "use_cutlass = False\n"
            "if use_cuda and os.name != 'nt':\n    use_cutlass = True\n"
            "if use_cutlass:\n    extra = ['-DUSE_CUTLASS']\n"
            "else:\n"
            "    cutlass_sources = glob.glob(os.path.join(ext_dir, '**/*cutlass*.cu'), recursive=True)\n"
            "    sources = [s for s in sources if s not in cutlass_sources]\n"
            "setup(name='pkg', ext_modules=[CUDAExtension('pkg._C', sources)])\n")  # fmt: skip


def test_setup_py_flags_the_scripts_own_directory_and_exclusion_lists(tmp_path):
    """torchao's shape: paths joined onto the script's own directory, `use_cuda` assigned from
    `torch.version.cuda`, CUDA sources added only `if use_cuda:`, and a list of CUTLASS sources
    that is only ever removed (`not in`): the PTX and CUTLASS kernels are the CUDA build's."""
    files = {
        "pkg/csrc/ops.cpp": "int f() { return 0; }\n",
        "pkg/csrc/cuda/k.cu": PTX,
        "pkg/csrc/cuda/gemm_cutlass.cu": "#include <cutlass/cutlass.h>\n" + PLAIN,
    }
    root = tree(tmp_path / "ao", {"setup.py": AO_SETUP.format(add="if use_cuda:\n    sources += cuda_sources\n"), **files})
    code, doc = run_json(root)
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    assert not uncounted(doc)
    # Control: the same kernels added outside any switch are compiled by both builds and count.
    root = tree(tmp_path / "both", {"setup.py": AO_SETUP.format(add="sources += cuda_sources\n"), **files})
    code, doc = run_json(root)
    assert doc["verdict"] == "portable-with-work"
    assert uncounted(doc) == {"pkg/csrc/cuda/k.cu", "pkg/csrc/cuda/gemm_cutlass.cu"}


def test_setup_py_flags_hold_their_tests_side_but_environment_switches_do_not():
    model = BuildModel()
    read_setup_py("setup.py", "import os, torch\nIS_ROCM = torch.version.hip is not None\n"
                              "SKIP = os.getenv('SKIP_CUDA_BUILD', 'FALSE') == 'TRUE'\n"
                              "use_cuda = torch.version.cuda is not None\n"
                              "if not SKIP and not IS_ROCM:\n    a = ['a/fa.cu']\n"
                              "if use_cuda:\n    b = ['b/k.cu']\nelse:\n    c = ['c/r.cpp']\n"
                              "use_cuda = False\nif use_cuda:\n    d = ['d/x.cu']\n", model)  # fmt: skip
    assert model.cuda == {"a/fa.cu", "b/k.cu"} and model.hip == {"c/r.cpp"}
    assert model.both == {"d/x.cu"}  # reassigned a constant outside any switch: no side any more


def test_an_else_after_a_disjunction_with_a_rocm_term_is_the_cuda_side():
    """exllamav2's tanh: `#if defined(USE_ROCM) || (__CUDA_ARCH__ < 750)` holds whenever ROCm
    compiles it, so its #else (the PTX) is never ROCm's; the #if itself is not the port either."""
    text = ("#if defined(USE_ROCM) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 750)\nplain;\n#else\nasm1;\n#endif\n"
            "#if (defined(USE_ROCM) && FAST) || OLD\nplain;\n#else\nasm2;\n#endif\n"
            "#if X\na;\n#elif defined(__HIP_PLATFORM_AMD__) || Y\nb;\n#else\nasm3;\n#endif\n")  # fmt: skip
    r = c_regions(text)
    assert [r.side(n) for n in (2, 4)] == [None, CUDA]
    assert [r.side(n) for n in (7, 9)] == [None, None]  # the ROCm test is inside parentheses with &&: decides nothing
    assert [r.side(n) for n in (12, 14, 16)] == [None, None, CUDA]


def test_setup_py_reading_the_torch_version_module_under_another_name_is_a_rocm_build(tmp_path):
    """`from torch import version as torch_version` ... `if torch_version.hip:`: a ROCm branch of
    the build; the kernels its extension lists are compiled by both builds, their headers too."""
    setup = ("from setuptools import setup\nfrom torch.utils import cpp_extension\nfrom torch import version as torch_version\n"
             "flags = ['-O3']\nif torch_version.hip:\n    flags += ['-DHIPBLAS_USE_HIP_HALF']\n"
             "setup(name='x', ext_modules=[cpp_extension.CUDAExtension('x', ['x/ext/cache.cu'], "
             "extra_compile_args={'nvcc': flags})])\n")  # fmt: skip
    files = {
        "x/ext/cache.cu": '#include "cache_q.cuh"\n#include "compat.cuh"\n' + PLAIN,
        "x/ext/cache_q.cuh": "__device__ float f(float w) { return __shfl_xor_sync(0xffffffff, w, 1); }\n",
        "x/ext/compat.cuh": ("#if defined(USE_ROCM)\n#include <hip/hip_runtime.h>\n#define __shfl_xor_sync(m, v, l) __shfl_xor(v, l)\n"
                             "#endif\n__device__ float t(float x) {\n"
                             "#if defined(USE_ROCM) || __CUDA_ARCH__ < 750\n  return tanhf(x);\n#else\n  float r;\n"
                             '  asm("tanh.approx.f32 %0,%1;" : "=f"(r) : "f"(x));\n  return r;\n#endif\n}\n'),
    }  # fmt: skip
    code, doc = run_json(tree(tmp_path / "rocm", {"setup.py": setup, **files}))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    assert doc["rocm_path"][0] == "setup.py:5 torch_version.hip"
    # Control: no ROCm branch anywhere: the shuffle is work and the PTX a blocker.
    files["x/ext/compat.cuh"] = '__device__ float t(float x) { float r; asm("tanh.approx.f32 %0,%1;" : "=f"(r) : "f"(x)); return r; }\n'
    code, doc = run_json(tree(tmp_path / "cuda", {"setup.py": setup.replace("torch_version.hip", "False"), **files}))
    assert doc["verdict"] == "cuda-only" and uncounted(doc) == {"x/ext/cache_q.cuh", "x/ext/compat.cuh"}


def test_hip_branches_of_a_library_the_project_licenses_are_no_rocm_build(tmp_path):
    """NVIDIA Warp's shape: a vendored BVH library (named by licenses/cubql-LICENSE.txt) has
    `#ifdef __HIPCC__` branches of its own; they are that library's, not a ROCm build of the
    project's: the project's PTX decides (cuda-only). Control: without the license file naming it,
    the same branch is the project's own evidence."""
    files = {
        "licenses/cubql-LICENSE.txt": "Apache-2.0\n",
        "licenses/cuda-LICENSE.txt": "EULA\n",
        "pkg/native/cuBQL/builder.h": "#ifdef __HIPCC__\n#include <hip/hip_runtime.h>\n#else\n#include <cuda_runtime_api.h>\n#endif\n",
        "pkg/native/builtin.h": '__device__ float rcp(float a) { float r; asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(a)); return r; }\n',
    }  # fmt: skip
    code, doc = run_json(tree(tmp_path / "vendored", files))
    assert (code, doc["verdict"], doc["rocm_path"]) == (6, "cuda-only", [])
    del files["licenses/cubql-LICENSE.txt"]
    code, doc = run_json(tree(tmp_path / "own", files))
    assert doc["verdict"] == "portable-with-work" and doc["rocm_path"][0].startswith("pkg/native/cuBQL/builder.h")
    # A license named for a toolkit (cuda-LICENSE.txt) never makes a cuda/ directory vendored.
    files["licenses/cubql-LICENSE.txt"] = "Apache-2.0\n"
    files["pkg/native/cuda/port.cu"] = "#ifdef __HIPCC__\n#include <hip/hip_runtime.h>\nint x = 1;\n#endif\n"
    code, doc = run_json(tree(tmp_path / "generic", files))
    assert doc["rocm_path"] == ["pkg/native/cuda/port.cu:1 (a HIP/ROCm branch of #if)"]


def test_a_core_dependency_on_nvidia_warp_is_cuda_only_and_a_guarded_one_optional(tmp_path):
    """kaolin's shape: plain CUDA kernels (work) and a core that imports NVIDIA Warp (warp-lang:
    GPU kernels on CUDA devices only, per its README) at module level: cuda-only. Control: the
    same import inside try:/except ImportError is an optional part and the kernels decide."""
    files = {
        "requirements.txt": "numpy\nwarp-lang\n",
        "pkg/__init__.py": "",
        "pkg/sim.py": "import warp as wp\n\n\ndef step(x):\n    return wp.launch(x)\n",
        "pkg/csrc/k.cu": "__global__ void k(float* x) { x[threadIdx.x & 31] += 1.0f; }\n",
    }
    code, doc = run_json(tree(tmp_path / "core", files))
    assert (code, doc["verdict"]) == (6, "cuda-only")
    assert {f["what"] for f in doc["findings"] if f["verdict"] == "blocker"} >= {"warp", "warp-lang"}
    files["requirements.txt"] = "numpy\n"
    files["pkg/sim.py"] = "try:\n    import warp as wp\nexcept ImportError:\n    wp = None\n"
    code, doc = run_json(tree(tmp_path / "guarded", files))
    assert (code, doc["verdict"]) == (1, "portable-with-work")
    assert [(f["what"], f["optional"]) for f in doc["findings"] if f["verdict"] == "blocker"] == [("warp", "inside try:")]


def test_a_python_parser_of_kernel_source_is_no_kernel_but_its_kernel_strings_are(tmp_path):
    """tilelang's adapter shape: a module that matches `__global__` with a regex and compares a
    declaration with "CUtensorMap" holds no kernel; the C scan reads only string literals that
    read as C source. Control: a kernel in a triple-quoted string beside it is still read."""
    parser = ('import re\n\n\ndef match_kernel(source):\n    return re.search(r"__global__\\s+void\\s+(\\w+)", source)\n\n\n'
              'def is_tma(decls):\n    return any(d == "CUtensorMap" for d in decls)  # a TMA descriptor\n')  # fmt: skip
    code, doc = run_json(tree(tmp_path / "parser", {"pkg/__init__.py": "", "pkg/adapter.py": parser}))
    assert (code, doc["verdict"]) == (0, "portable") and not uncounted(doc)
    kernel = parser + ('\nSRC = """\n__global__ void k(CUtensorMap* m) {\n'
                       '  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global [%0], [%1];" :: "r"(0), "l"(m));\n}\n"""\n')  # fmt: skip
    code, doc = run_json(tree(tmp_path / "kernel", {"pkg/__init__.py": "", "pkg/adapter.py": kernel}))
    assert doc["verdict"] == "cuda-only"
    assert {f["where"] for f in doc["findings"] if f["verdict"] == "blocker"} == {"pkg/adapter.py:12", "pkg/adapter.py:13"}


def test_a_cute_namespace_the_tree_nests_in_its_own_is_no_cutlass(tmp_path):
    """TileLang's compiler shape: `namespace tvm { namespace tl { namespace cute {` holds a layout
    IR of its own; files naming `cute::` that include no CuTe header use it. Control: the same
    namespace at the top (CuTe's own shape) leaves them CUTLASS uses; and a file that includes
    <cute/tensor.hpp> is one whatever the tree defines."""
    files = {
        "src/layout/cute_layout.h": "#pragma once\nnamespace tvm {\nnamespace tl {\nnamespace cute {\nstruct Layout {};\n}  // namespace cute\n}\n}\n",
        "src/layout/tcgen05.cc": '#include "cute_layout.h"\nnamespace tvm {\nnamespace tl {\nconst cute::Layout kDp{};\n}\n}\n',
    }  # fmt: skip
    code, doc = run_json(tree(tmp_path / "own", files))
    assert (code, doc["verdict"]) == (0, "portable") and not doc["findings"]
    files["src/tl_templates/gemm.h"] = "#include <cute/tensor.hpp>\nauto t = cute::make_tensor(p, l);\n"
    code, doc = run_json(tree(tmp_path / "with-cute", files))
    assert uncounted(doc) == {"src/tl_templates/gemm.h"}
    files["src/layout/cute_layout.h"] = "#pragma once\nnamespace cute {\nstruct Layout {};\n}\n"
    code, doc = run_json(tree(tmp_path / "top", files))
    assert uncounted(doc) == {"src/tl_templates/gemm.h", "src/layout/tcgen05.cc"}


def test_an_optional_cuda_probe_beside_a_rocm_build_needs_no_one(tmp_path):
    """`find_package(CUDAToolkit QUIET)` in a CMake module every build includes: the build goes
    on without CUDA, and the tree builds for ROCm. Control: REQUIRED is the CUDA build's need."""
    files = {
        "CMakeLists.txt": "include(cmake/FindPipCUDA.cmake)\nproject(p LANGUAGES CXX)\nif(USE_ROCM)\n"
                          "  enable_language(HIP)\n  add_library(k src/k.hip)\nendif()\n",
        "cmake/FindPipCUDA.cmake": "find_package(CUDAToolkit QUIET)\nif(CUDAToolkit_FOUND)\n  return()\nendif()\n",
        "src/k.hip": "#include <hip/hip_runtime.h>\n",
    }  # fmt: skip
    code, doc = run_json(tree(tmp_path / "quiet", files))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    files["cmake/FindPipCUDA.cmake"] = "find_package(CUDAToolkit QUIET REQUIRED)\n"
    code, doc = run_json(tree(tmp_path / "required", files))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"cmake/FindPipCUDA.cmake"}


def test_an_own_cute_namespace_reaches_only_its_top_directory(tmp_path):
    """CUTLASS's shape: an MLIR compiler nests `cutlass_compiler::cute` under compiler/; the
    library's own headers elsewhere that name `cute::` (reaching CuTe through other headers)
    stay CUTLASS uses."""
    files = {
        "compiler/include/conv.h": "namespace mlir {\nnamespace cutlass_compiler::cute {\nstruct T {};\n}\n}\n",
        "compiler/lib/conv.cpp": '#include "conv.h"\nusing X = mlir::cutlass_compiler::cute::T;\nauto y = cute::T{};\n',
        "include/cute/algorithm/copy.hpp": "#pragma once\nauto z = cute::copy(a, b);\n",
    }
    code, doc = run_json(tree(tmp_path, files))
    assert uncounted(doc) == {"include/cute/algorithm/copy.hpp"}


def test_ptx_address_space_queries_have_a_counterpart_and_the_asm_keyword_is_no_instruction():
    """Warp's `isspacep.global` (is this flat pointer global?) maps to the AMDGPU address-space
    builtins; a code generator writing `"asm volatile (\\n"` into its output names no instruction,
    while the instructions of a real statement beside it are still named."""
    got = instructions('asm volatile("{ .reg .pred p; isspacep.global p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "l"(a))')
    assert got == ("isspacep.global", "selp")
    counterpart, source = load().ptx("isspacep.global")
    assert "__builtin_amdgcn_is_shared" in counterpart and "BuiltinsAMDGPU" in source
    assert instructions('this->stream << "asm volatile (\\n";') == () and instructions('__asm__ __volatile__("cp.async.commit_group;")') == (
        "cp.async",)


def test_scoped_loads_and_generic_address_conversions_get_their_own_counterparts():
    """`ld.relaxed.gpu` is a scoped atomic load (a plain load is no counterpart), `cvta` converts
    an address between state spaces (not a number: no conversion intrinsic); a scoped atomic
    read-modify-write keeps the atomics' counterpart, a plain global load the loads'."""
    table = load()
    cases = {
        'asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p))': ("ld.relaxed", "__hip_atomic_load"),
        'asm volatile("st.release.sys.global.u32 [%0], %1;" :: "l"(p), "r"(v))': ("st.release", "__HIP_MEMORY_SCOPE_SYSTEM"),
        'asm("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(p))': ("cvta", "flat address space"),
        'asm("red.relaxed.gpu.global.add.u64 [%0], %1;" :: "l"(p), "l"(v))': ("red.relaxed", "atomicAdd"),
        'asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p))': ("ld.global", "plain loads"),
    }
    for statement, (name, words) in cases.items():
        (got,) = instructions(statement)
        counterpart, source = table.ptx(got)
        assert (got, words in counterpart) == (name, True), (statement, counterpart)
        assert source.startswith("https://")
    assert "__float2half_rn" not in table.ptx("cvta")[0]


def test_a_project_is_never_its_own_cuda_only_dependency(tmp_path):
    """NVIDIA Warp's own tree imports `warp` everywhere and its lock file lists warp-lang: that is
    the project itself, not a dependency on it. Control: another project importing it depends on it."""
    files = {
        "pyproject.toml": '[project]\nname = "warp-lang"\nversion = "1.0"\ndependencies = ["numpy"]\n',
        "build_docs.py": "import warp\n",
        "warp/__init__.py": "",
        "warp/sim.py": "import warp\nimport warp._src.context\n",
    }
    code, doc = run_json(tree(tmp_path / "self", files))
    assert (code, doc["verdict"]) == (0, "portable") and not any("warp" in f["what"] for f in doc["findings"])
    files["pyproject.toml"] = files["pyproject.toml"].replace("warp-lang", "sim-tools")
    code, doc = run_json(tree(tmp_path / "user", files))
    assert (code, doc["verdict"]) == (6, "cuda-only")


def test_setup_name_given_by_a_module_constant_names_the_project(tmp_path):
    """MegaBlocks' setup(name=_PACKAGE_NAME) with _PACKAGE_NAME = 'megablocks' at the top: the
    project is known, and so is AMD's port of it. Control: a name computed by a call is unknown."""
    setup = "from setuptools import setup\n_PACKAGE_NAME = 'megablocks'\nsetup(name=_PACKAGE_NAME)\n"
    code, doc = run_json(tree(tmp_path / "const", {"setup.py": setup, "csrc/ops.cu": PLAIN}))
    assert (doc["port"] or "").startswith("https://github.com/ROCm/megablocks")
    code, doc = run_json(tree(tmp_path / "call", {"setup.py": setup.replace("'megablocks'", "read_name()"),
                                                  "csrc/ops.cu": PLAIN}))  # fmt: skip
    assert not doc["port"]


UV_LOCK = ('version = 1\n\n[[package]]\nname = "mlm"\nversion = "0.1"\nsource = {{ editable = "." }}\n'
           'dependencies = [{{ name = "numpy" }}{core}]\n\n[package.optional-dependencies]\ndev = [{{ name = "quack-kernels" }}]\n\n'
           '[[package]]\nname = "numpy"\nversion = "2.0"\nsource = {{ registry = "https://pypi.org/simple" }}\n\n'
           '[[package]]\nname = "quack-kernels"\nversion = "0.1"\nsource = {{ registry = "https://pypi.org/simple" }}\n')  # fmt: skip


def test_lock_entries_only_extras_reach_and_container_requirements_are_optional(tmp_path):
    """Megatron-LM's shape: uv.lock resolves quack-kernels for the [dev] group only, and
    docker/lts/requirements.txt lists what an image installs: neither is the core's. Control: the
    same package reached from the project's own dependencies, or a top requirements.txt, is."""
    files = {
        "pyproject.toml": '[project]\nname = "mlm"\nversion = "0.1"\ndependencies = ["numpy"]\n',
        "uv.lock": UV_LOCK.format(core=""),
        "docker/lts/requirements.txt": "flashinfer-python\n",
        "mlm/__init__.py": "",
    }
    code, doc = run_json(tree(tmp_path / "extras", files))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    parts = {p["part"] for p in doc["optional_parts"]}
    assert parts == {"docker/lts/ (a container recipe below the top of the tree)", "locked for an extra or a dev group only"}
    files["uv.lock"] = UV_LOCK.format(core=', { name = "quack-kernels" }')
    files["requirements.txt"] = "flashinfer-python\n"
    code, doc = run_json(tree(tmp_path / "core", files))
    assert doc["verdict"] == "cuda-only" and uncounted(doc) == {"uv.lock", "requirements.txt"}


def test_packages_pyproject_does_not_install_and_lazy_integrations_are_optional(tmp_path):
    """Megatron-LM's shape: pyproject.toml installs `mlm.core*` only, so mlm/post_training/
    importing modelopt at module level is not the package; and mlm/core/export/trtllm/ imports
    tensorrt_llm inside a function of a module named for it. Control: installing every package
    makes post_training core, and the same lazy import in a module named for nothing stays core."""
    find = '\n[tool.setuptools.packages.find]\ninclude = ["mlm.core", "mlm.core.*"]\n'
    files = {
        "pyproject.toml": '[project]\nname = "mlm"\nversion = "0.1"\ndependencies = ["numpy"]\n' + find,
        "mlm/core/__init__.py": "",
        "mlm/core/export/trtllm/convert.py": "def f(x):\n    from tensorrt_llm._utils import to_torch\n    return to_torch(x)\n",
        "mlm/post_training/__init__.py": "",
        "mlm/post_training/generate.py": "from modelopt.torch.utils.plugins import megatron_generate\n",
    }  # fmt: skip
    code, doc = run_json(tree(tmp_path / "installed", files))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    why = {f["where"]: f["optional"] for f in doc["findings"] if f["verdict"] == "blocker"}
    assert why["mlm/post_training/generate.py:1"] == "mlm/post_training/ (not among the packages pyproject.toml installs)"
    assert why["mlm/core/export/trtllm/convert.py:2"].startswith("mlm/core/export/trtllm/ (imported inside a function of a module named for it")
    files["pyproject.toml"] = files["pyproject.toml"].replace(find, "")
    files["mlm/core/export/helpers.py"] = files.pop("mlm/core/export/trtllm/convert.py")
    code, doc = run_json(tree(tmp_path / "all", files))
    assert doc["verdict"] == "cuda-only"
    assert uncounted(doc) == {"mlm/post_training/generate.py", "mlm/core/export/helpers.py"}
