"""`gpuenv advise`: fixture trees under tests/advise/ with known answers (verdicts, places, the
share of lines needing a person, exit statuses, the JSON schema), the sourced table, the static
manifest parsers, the source scanner's edges, and files that are skipped but never fatal."""

from __future__ import annotations

import ast
import json
import os
import shutil
from pathlib import Path

import pytest

from gpuenv.advise import advise
from gpuenv.advise import deps as D
from gpuenv.advise.images import parse_dockerfile
from gpuenv.advise.sources import RULES, scan
from gpuenv.advise.table import load, parse
from gpuenv.advise.tree import MAX_BYTES
from gpuenv.matrices import MatrixError
from gpuenv.standins import bundled
from tests.cli_runner import invoke
from tests.schemas import validate

TREES = Path(__file__).resolve().parent / "advise"
PKG = Path(__import__("gpuenv").__file__).resolve().parent


def run_json(tree: Path | str) -> tuple[int, dict]:
    result = invoke(["advise", str(tree), "--json"])
    assert result.exception is None, result.exception
    assert result.stderr == ""
    doc = json.loads(result.stdout)
    validate(doc, "advise")
    return result.exit_code, doc


def found(doc: dict) -> set[tuple[str, str, str]]:
    """(level, rule, where) of every finding."""
    return {(f["verdict"], f["rule"], f["where"]) for f in doc["findings"]}


# -- the table ------------------------------------------------------------------------------------


def test_table_fits_its_schema_and_every_entry_cites_a_source():
    doc = json.loads(Path(bundled.path("matrices", "advise.json")).read_text())
    validate(doc, "matrices-advise")
    table = load()
    assert all(e.source.startswith(("http", "https")) or "/" in e.source for e in table.rules.values())


def test_every_rule_the_scanners_name_is_in_the_table():
    rules = set(load().rules)
    assert RULES <= rules
    assert {"construct:torch-cuda-index"} <= rules  # named by the manifest side


def test_the_issue_classification_is_the_table_s():
    t = load()
    # CUDA-only: TensorRT, TensorRT-LLM, NIM. FlashAttention 3 is not (hopper/setup.py builds it for ROCm).
    for name in ("tensorrt", "tensorrt-llm", "torch-tensorrt"):
        assert t.package(name).klass == "cuda-only", name
    assert t.package("flash-attn-3") is None and t.module("flash_attn_interface") is None
    assert t.image("nvcr.io/nim/meta/llama-3.1-8b-instruct:latest").klass == "cuda-only"
    # Portable: PyTorch, vLLM, SGLang, Triton, FlashAttention 2.
    for name in ("torch", "vllm", "sglang", "triton", "flash-attn", "Flash_Attn"):
        assert t.package(name).klass == "official", name
    assert t.image("rocm/pytorch:latest").klass == "official"
    assert t.image("lmsysorg/sglang:v0.4.6-rocm630").klass == "official"  # a ROCm tag of a CUDA image
    assert t.image("lmsysorg/sglang:latest").klass == "via"
    assert t.image("ubuntu:24.04") is None
    assert t.module("numba.cuda.jit").rule == "module:numba-cuda"
    assert t.module("numba") is None


def test_a_malformed_table_is_one_matrix_error_line():
    doc = json.loads(Path(bundled.path("matrices", "advise.json")).read_text())
    doc["constructs"][0]["level"] = "maybe"
    with pytest.raises(MatrixError) as exc:
        parse(doc)
    assert "advise.json: $.constructs[0].level" in str(exc.value) and "\n" not in str(exc.value)
    doc = json.loads(Path(bundled.path("matrices", "advise.json")).read_text())
    doc["images"][0]["pattern"] = "(unclosed"
    with pytest.raises(MatrixError, match="not a regular expression"):
        parse(doc)


# -- fixture trees ------------------------------------------------------------------------------


def test_portable_pytorch_vllm_project():
    code, doc = run_json(TREES / "portable-llm")
    assert (code, doc["verdict"]) == (0, "portable")
    assert {f["verdict"] for f in doc["findings"]} == {"portable"}
    assert {
        ("portable", "image:rocm", "Dockerfile:1"),
        ("portable", "package:vllm", "Dockerfile:4"),
        ("portable", "package:pytorch", "pyproject.toml:5"),
        ("portable", "package:bitsandbytes", "pyproject.toml:8"),
        ("portable", "package:flash-attn-2", "requirements.txt:5"),
        ("portable", "package:triton", "requirements.txt:6"),
    } == found(doc)
    assert doc["lines"] == {"source": 28, "need_person": 0, "share": 0.0}
    assert doc["next"] == "gpuenv install rocm --dry-run"
    torch = next(f for f in doc["findings"] if f["rule"] == "package:pytorch")
    assert torch["count"] == 2  # requirements.txt and pyproject.toml, summed up


def test_cuda_kernels_with_warp32_masks_and_cublas_are_portable_with_work():
    code, doc = run_json(TREES / "kernels-work")
    assert (code, doc["verdict"]) == (1, "portable-with-work")
    work = [f for f in doc["findings"] if f["verdict"] == "work"]
    # One finding per entry and file: the first place, and every line it covers.
    assert [(f["rule"], f["where"], f["what"], f["lines"], f["count"]) for f in work] == [
        ("construct:warp-size-32", "csrc/reduce.cu:4", "#define WARP_SIZE 32", [4, 8, 16, 25], 4),
    ]
    portable = {f["rule"]: f for f in doc["findings"] if f["verdict"] == "portable"}
    assert portable["library:cublas"]["where"] == "csrc/gemm.cu:2"
    assert portable["library:cublas"]["rocm_equivalent"].startswith("hipBLAS")
    assert portable["library:cuda-runtime"]["count"] == 5
    assert portable["construct:cuda-extension"]["where"] == "setup.py:2"
    # 4 of the 77 lines of its sources need a person: the measured share, not a claim.
    assert doc["lines"] == {"source": 77, "need_person": 4, "share": round(4 / 77, 6)}
    assert doc["reasons"] == ["warp-size-32 assumption (csrc/reduce.cu:4, +3 more): needs a person"]
    assert all(f["lines"] == [] for f in portable.values())


def test_tensorrt_nim_and_inline_ptx_are_cuda_only():
    code, doc = run_json(TREES / "cuda-only")
    assert (code, doc["verdict"]) == (6, "cuda-only")
    assert doc["rocm_path"] == []  # nothing here builds for ROCm
    assert {
        ("blocker", "image:nim", "Dockerfile:3"),  # FROM ${NIM_IMAGE}, resolved through its ARG
        ("blocker", "construct:inline-ptx", "kernels/mma.cu:5"),
        ("blocker", "construct:hopper-blackwell", "kernels/mma.cu:12"),
        ("blocker", "package:tensorrt", "requirements.txt:1"),
        ("blocker", "package:tensorrt-llm", "requirements.txt:2"),
        ("blocker", "module:tensorrt", "serve/engine.py:3"),
        ("blocker", "module:tensorrt-llm", "serve/engine.py:4"),
        ("portable", "package:pytorch", "requirements.txt:3"),
    } <= found(doc)
    by_rule = {f["rule"]: f for f in doc["findings"]}
    assert by_rule["construct:inline-ptx"]["lines"] == [5, 12, 13]
    assert by_rule["construct:inline-ptx"]["what"].startswith('asm volatile( "mma.sync.aligned.m16n8k16')
    assert by_rule["construct:hopper-blackwell"]["lines"] == [12, 13]
    nim = by_rule["image:nim"]
    assert nim["what"] == "nvcr.io/nim/meta/llama-3.1-8b-instruct:latest"
    assert nim["source"].startswith("https://docs.nvidia.com/")
    # The 4-line asm() statement at line 5 counts whole: 5-8, 12, 13, and engine.py's 2 imports.
    assert doc["lines"]["need_person"] == 8 and doc["lines"]["source"] == 36
    assert doc["next"] == "gpuenv install cuda --dry-run"
    assert doc["findings"][0]["verdict"] == "blocker"  # worst first


def test_every_manifest_format_is_read_at_its_line():
    code, doc = run_json(TREES / "manifests")
    assert (code, doc["verdict"]) == (1, "portable-with-work")
    assert doc["files"]["manifests"] == 13 and doc["files"]["skipped"]["unparsable"] == 0
    assert {
        ("work", "image:vllm-openai", "Containerfile:1"),
        ("work", "image:cuda-base", "Dockerfile:1"),
        ("portable", "package:vllm", "Dockerfile:2"),  # RUN pip install
        ("work", "package:cuda-python", "Pipfile:6"),
        ("work", "package:nvml", "Pipfile.lock:4"),
        ("work", "package:conda-cuda", "conda-lock.yml:3"),
        ("work", "package:conda-cuda", "environment.yml:7"),
        ("portable", "package:bitsandbytes", "environment.yml:10"),  # the "- pip:" list
        ("work", "package:cupy-cuda", "poetry.lock:6"),
        ("portable", "package:nvidia-runtime-wheels", "poetry.lock:2"),
        ("work", "package:xformers", "pyproject.toml:9"),  # PEP 621 optional-dependencies
        ("work", "package:onnxruntime-gpu", "pyproject.toml:13"),  # Poetry
        ("portable", "package:pytorch", "pyproject.toml:5"),
        ("portable", "construct:torch-cuda-index", "pyproject.toml:17"),  # uv index
        ("work", "package:cupy-cuda", "requirements.txt:2"),
        ("work", "package:nvml", "requirements/dev.txt:2"),
        ("work", "package:transformer-engine", "setup.cfg:7"),
        ("work", "package:apex", "setup.py:6"),
        ("work", "package:cuda-python", "uv.lock:4"),
    } == found(doc)
    index = next(f for f in doc["findings"] if f["rule"] == "construct:torch-cuda-index")
    assert index["count"] == 2  # requirements.txt's --extra-index-url too
    # Manifests are not source: dependencies cost no share of the lines.
    assert doc["lines"]["need_person"] == 0


def test_human_output_has_the_verdict_the_cost_and_the_next_command():
    result = invoke(["advise", str(TREES / "kernels-work")])
    assert result.exit_code == 1 and result.exception is None
    out = result.stdout
    assert "kernels-work: portable-with-work" in out
    assert "Source lines needing a person: 4 of 77 (5.19%)" in out
    assert "csrc/reduce.cu:4  #define WARP_SIZE 32" in out and "csrc/reduce.cu lines 4, 8, 16, 25" in out
    assert "ROCm: hipBLAS" in out
    assert out.rstrip().endswith("Next: gpuenv install rocm --dry-run")
    assert invoke(["advise", str(TREES / "portable-llm")]).exit_code == 0
    assert invoke(["advise", str(TREES / "cuda-only")]).exit_code == 6


def test_render_lines_are_pure():
    from gpuenv.render.advise import lines

    text = "\n".join(t for _, t in lines(advise(str(TREES / "cuda-only"))))
    assert "CUDA-only (" in text and "inline PTX (3 uses in 1 file)" in text and "why: TensorRT" in text


def test_path_defaults_to_the_current_directory(monkeypatch):
    monkeypatch.chdir(TREES / "portable-llm")
    code, doc = run_json(".")
    assert (code, doc["path"], doc["verdict"]) == (0, ".", "portable")


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make, words", [
    (lambda tmp: tmp / "missing", "no such directory"),
    (lambda tmp: (tmp / "requirements.txt").write_text("torch\n") and tmp / "requirements.txt", "not a directory"),
])  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(tmp_path, make, words):
    for extra in ([], ["--json"]):
        result = invoke(["advise", str(make(tmp_path)), *extra])
        assert result.exit_code == 2 and result.stdout == "" and result.exception is None
        assert result.stderr.count("\n") == 1 and words in result.stderr and "Traceback" not in result.stderr


def test_empty_tree_is_unknown_not_portable(tmp_path):
    """Nothing to read is not portable (TensorRT-LLM's sdist stub): verdict unknown, exit 5
    (NOT_JUDGED, as doctor uses it), and the reason says what advise looked for."""
    (tmp_path / "README.md").write_text("install from the vendor's index\n")
    # TensorRT-LLM's sdist: a pyproject whose only requirement is its build backend, and no code.
    (tmp_path / "pyproject.toml").write_text("[build-system]\nrequires = ['setuptools']\n[project]\nname = 'stub'\n")
    code, doc = run_json(tmp_path)
    assert (code, doc["verdict"], doc["findings"]) == (5, "unknown", [])
    assert doc["reasons"][0].startswith("nothing to judge")
    assert ".cu" in doc["looked_for"] and "requirements" in doc["looked_for"]
    # One Python file with nothing CUDA in it is judged: portable.
    (tmp_path / "main.py").write_text("print('hi')\n")
    code, doc = run_json(tmp_path)
    assert (code, doc["verdict"]) == (0, "portable")
    assert doc["reasons"][0].startswith("nothing CUDA-specific found")


# -- skipped, never fatal -----------------------------------------------------------------------


def test_binary_unreadable_huge_and_outside_files_are_skipped_and_counted(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(TREES / "skipped", tree)
    os.mkfifo(tree / "pipe.py")  # unreadable for root too: read_regular refuses a FIFO, never blocks
    (tree / "huge.cu").write_bytes(b"// x\n" * (MAX_BYTES // 5 + 1))
    outside = tmp_path / "outside.cu"
    outside.write_text('__global__ void k() { asm("trap;"); }\n')
    (tree / "link.cu").symlink_to(outside)  # never followed
    (tree / "inside.cu").symlink_to("main.py")  # inside: read where it lies, not twice
    (tree / "subdir-link").symlink_to(tmp_path)
    unreadable = 1
    if os.geteuid() != 0:
        (tree / "secret.cu").write_text('__global__ void k() { asm("trap;"); }\n')
        (tree / "secret.cu").chmod(0)
        unreadable = 2
    try:
        code, doc = run_json(tree)
    finally:
        if (tree / "secret.cu").exists():
            (tree / "secret.cu").chmod(0o600)
    assert doc["files"]["skipped"] == {
        "binary": 1, "unreadable": unreadable, "too_large": 1, "outside_tree": 2, "unparsable": 1, "ignored": 0,
    }  # fmt: skip
    # The binary blob's shuffle mask and asm() are not findings; the readable main.py is read.
    assert (code, doc["verdict"], doc["findings"]) == (0, "portable", [])
    assert doc["files"]["sources"] == 1 and doc["lines"]["source"] == 3
    result = invoke(["advise", str(tree)])
    assert result.exit_code == 0 and "Skipped: 1 binary" in result.stdout


def test_undecodable_text_is_still_read(tmp_path):
    (tmp_path / "k.cu").write_bytes(b"// \xe9t\xe9 latin-1\n__global__ void k(int* x) { x[threadIdx.x & 31] = 0; }\n")
    code, doc = run_json(tmp_path)
    assert (code, found(doc)) == (1, {("work", "construct:warp-size-32", "k.cu:2")})


# -- manifests, statically ----------------------------------------------------------------------


def names(deps: list[D.Dep]) -> list[tuple[str, str, int]]:
    return [(d.kind, d.name, d.line) for d in deps]


def test_setup_py_is_parsed_never_executed(tmp_path):
    marker = tmp_path / "ran"
    text = (
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('executed')\n"
        "BASE = ['torch>=2', 'tensorrt']\n"
        "from setuptools import setup\n"
        "setup(install_requires=BASE + ['cupy-cuda12x'], extras_require={'fa3': ['flash_attn_3']})\n"
    )
    assert names(D.parse_setup_py(text)) == [
        ("package", "torch", 3), ("package", "tensorrt", 3), ("package", "cupy-cuda12x", 5),
        ("package", "flash_attn_3", 5),
    ]  # fmt: skip
    (tmp_path / "setup.py").write_text(text)
    code, doc = run_json(tmp_path)
    assert not marker.exists()
    assert doc["verdict"] == "cuda-only"
    with pytest.raises(D.Unparsable):
        D.parse_setup_py("print 'python 2'\n")


def test_requirements_lines_options_and_continuations():
    text = (
        "# a comment\n"
        "--index-url=https://download.pytorch.org/whl/cu118\n"
        "torch==2.3.0+cu121 ; python_version > '3.9'  # pinned\n"
        "flash-attn>=2.5 \\\n"
        "    --no-build-isolation\n"
        "-e git+https://github.com/NVIDIA/TensorRT-LLM#egg=tensorrt_llm\n"
        "-r other.txt\n"
        "vllm @ https://example.invalid/vllm.whl\n"
    )
    assert names(D.parse_requirements(text)) == [
        ("index", "https://download.pytorch.org/whl/cu118", 2),
        ("package", "torch", 3),
        ("index", "+cu121", 3),
        ("package", "flash-attn", 4),
        ("package", "tensorrt_llm", 6),
        ("package", "vllm", 8),
    ]


def test_pyproject_poetry_uv_groups_and_bad_toml():
    text = (
        '[build-system]\nrequires = ["setuptools", "torch"]\n'
        '[dependency-groups]\ndev = ["pycuda", {include-group = "x"}]\n'
        '[tool.uv]\ndev-dependencies = ["tensorrt"]\n'
        '[tool.poetry.group.gpu.dependencies]\ncupy-cuda12x = "*"\n'
    )
    assert names(D.parse_pyproject(text)) == [
        ("package", "setuptools", 2), ("package", "torch", 2), ("package", "pycuda", 4),
        ("package", "tensorrt", 6), ("package", "cupy-cuda12x", 8),
    ]  # fmt: skip
    with pytest.raises(D.Unparsable):
        D.parse_pyproject("[project\n")


def test_environment_yml_conda_specs_and_pip_list():
    text = (
        "name: x\nchannels:\n  - pytorch\ndependencies:\n  - pytorch::pytorch=2.1=py3.11_cuda12.1_0\n"
        "  - pytorch-cuda=12.1\n  - pip:\n      - tensorrt==10.0\n  - cupy\nvariables:\n  - notadep\n"
    )
    assert names(D.parse_environment(text)) == [
        ("package", "pytorch", 5), ("package", "pytorch-cuda", 6), ("package", "tensorrt", 8), ("package", "cupy", 9),
    ]  # fmt: skip


def test_dockerfile_args_stages_and_run_installs():
    text = (
        "ARG BASE=nvcr.io/nvidia/pytorch:24.05-py3\n"
        "FROM --platform=linux/amd64 ${BASE} AS build\n"
        "# RUN pip install tensorrt\n"
        "RUN pip install --no-cache-dir -r req.txt tensorrt==10.0 \\\n"
        "    'vllm>=0.5' --index-url https://download.pytorch.org/whl/cu121 && pip check\n"
        "RUN conda install -y -c nvidia pytorch-cuda=12.1\n"
        "FROM build AS final\n"
        "FROM scratch\n"
        "FROM $UNSET\n"
    )
    images, deps = parse_dockerfile(text)
    assert [(i.reference, i.line) for i in images] == [("nvcr.io/nvidia/pytorch:24.05-py3", 2)]
    assert names(deps) == [
        ("package", "tensorrt", 4), ("package", "vllm", 4),
        ("index", "https://download.pytorch.org/whl/cu121", 4), ("package", "pytorch-cuda", 6),
    ]  # fmt: skip


# -- the source scanner's edges ------------------------------------------------------------------


def rules(path: str, text: str) -> list[tuple[str, int]]:
    return [(h.rule, h.line) for h in scan(path, os.path.splitext(path)[1], text)]


def test_comments_longer_names_and_non_calls_are_not_findings():
    text = (
        "// asm(\"trap;\"); __shfl_sync(0xffffffff, v, 0);\n"
        "/* cudaMalloc(&p, 1);\n"
        " * cublasSgemm(h) */\n"
        "hipcub::DeviceReduce::Sum(); my_cudaMalloc(p); cudaStream_t s; current = 1;\n"
        "__global__ void k() {}\n"
    )
    assert rules("a.cu", text) == []


def test_kernel_constructs_count_only_in_device_code():
    host = "int bucket(int n) { return n % 32; }\nvoid f() { asm(\"pause\"); cudaDeviceSynchronize(); }\n"
    assert rules("host.cpp", host) == [("library:cuda-runtime", 2)]
    # In device code % 32 is a lane index; asm("pause") is x86 wherever it is (asm is read by its text).
    assert rules("dev.cu", host) == [("construct:warp-size-32", 1), ("library:cuda-runtime", 2)]
    ptx = host.replace('asm(\"pause\")', 'asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(x))')
    assert rules("dev.cu", ptx) == [("construct:warp-size-32", 1), ("construct:inline-ptx", 2),
                                    ("library:cuda-runtime", 2)]  # fmt: skip


def test_libraries_headers_and_namespaces():
    text = (
        "#include <cudnn.h>\n#include <cutlass/gemm/device/gemm.h>\n#include <thrust/sort.h>\n"
        "#include \"nccl.h\"\nvoid f() { cufftExecC2C(p, a, b, 1); thrust::sort(a, b); cute::Tensor t; }\n"
        "texture<float, 1> tex_ref;\nvoid g() { cuLinkCreate(0, 0, 0, &s); cuTensorMapEncodeTiled(&m); }\n"
        "nvcuda::wmma::fragment<a, 16, 16, 16, half> frag;\n"
    )
    assert rules("lib.cpp", text) == [
        ("library:cudnn", 1), ("library:cutlass", 2), ("library:thrust", 3), ("library:nccl", 4),
        ("library:cufft", 5), ("library:thrust", 5), ("library:cutlass", 5),
        ("construct:texture-surface", 6), ("construct:ptx-jit", 7), ("construct:hopper-blackwell", 7),
        ("construct:wmma", 8),
    ]  # fmt: skip


def test_python_imports_extensions_and_kernels_in_strings():
    text = (
        "import torch, tensorrt as trt\n"
        "from numba import cuda\n"
        "# import pycuda\n"
        "x = 'import tensorrt_llm'\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "src = '__global__ void k(unsigned* m) { m[0] = __ballot_sync(0xffffffff, 1); }'\n"
    )
    hits = scan("m.py", ".py", text)
    assert [(h.rule, h.what, h.line) for h in hits] == [
        ("import", "torch", 1), ("import", "tensorrt", 1), ("import", "numba", 2), ("import", "numba.cuda", 2),
        ("construct:cuda-extension", "CUDAExtension", 5), ("construct:warp-size-32", text.splitlines()[5], 6),
    ]  # fmt: skip


def test_every_fixture_python_file_is_python():
    for path in TREES.rglob("*.py"):
        ast.parse(path.read_text(), filename=str(path))


def test_the_advise_core_neither_prints_nor_renders():
    for path in (PKG / "advise").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(m.split(".")[0] in ("rich", "subprocess") or m.startswith("gpuenv.render")
                               for m in mods), path  # fmt: skip
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("print", "exec", "eval"), f"{path}:{node.lineno}"


def test_a_project_with_its_own_rocm_build_is_work_not_cuda_only():
    """flash-attention's shape: a CUDA kernel with a ROCm twin (covered), and a Hopper-only kernel
    nothing on the ROCm side replaces (left). Not cuda-only: the project builds for ROCm itself
    (setup.py's ROCm branch, a .hip source); the reasons say which blockers that build covers and
    which it leaves."""
    code, doc = run_json(TREES / "own-rocm-build")
    assert (code, doc["verdict"]) == (1, "portable-with-work")
    by_where = {f["where"]: f for f in doc["findings"]}
    assert by_where["csrc/cuda/attn.cu:4"]["covered"] is True  # csrc/rocm/attn.hip is its twin
    assert by_where["csrc/hopper/fa3.cu:4"]["covered"] is False
    assert by_where["csrc/hopper/fa3.cu:4"]["rule"] == "construct:inline-ptx"
    assert doc["rocm_path"] == ["setup.py:6 IS_ROCM", "csrc/rocm/attn.hip:1 (a HIP source file)"]
    assert doc["reasons"][0] == "the project builds for ROCm itself (setup.py:6 IS_ROCM, +1 more)"
    assert doc["reasons"][1].startswith("its ROCm path covers 1 blocker use in 1 file (inline PTX at csrc/cuda/attn.cu:4)")
    assert doc["reasons"][2].startswith("it leaves 1 blocker use in 1 file on the CUDA path (inline PTX at csrc/hopper/fa3.cu:4)")
    assert doc["rocm_build"]["covers"] == ["inline PTX (csrc/cuda/attn.cu:4)"]
    assert doc["rocm_build"]["leaves"] == ["inline PTX (csrc/hopper/fa3.cu:4)"]
    assert doc["lines"]["need_person"] == 1  # the covered kernel needs no one for ROCm
    assert doc["next"] == "gpuenv install rocm --dry-run"


def test_a_gitignore_line_that_does_not_compile_is_skipped_as_git_skips_it(tmp_path):
    """Issue 40: `advise` crashed (re.error: bad character range) on a .gitignore holding
    `[z-a]`. The line is skipped and counted; the lines around it still apply."""
    (tmp_path / ".gitignore").write_text("[z-a]\nthird_party/\n[b-a]*.cu\n")
    (tmp_path / "third_party").mkdir()
    (tmp_path / "third_party/k.cu").write_text("#include <cublas_v2.h>\n")
    (tmp_path / "main.py").write_text("import torch\n")
    _, doc = run_json(tmp_path)
    skipped = doc["files"]["skipped"]
    assert skipped["ignore_lines"] == 2 and skipped["ignored"] == 1, skipped  # third_party/ still ignored
    text = invoke(["advise", str(tmp_path)])
    assert text.exception is None and "2 .gitignore lines whose pattern does not compile" in text.stdout, text.stdout
