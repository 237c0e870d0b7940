"""Toolkits without a version file: a CUDA tree laid out from NVIDIA's pip packages (or a conda
env) has no version.json; nvcc on PATH may be a wrapper script; ROCm may lack .info/version."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuenv.probe import toolkits
from gpuenv.probe.host import Sysroot


def test_cuda_h_gives_the_series():
    assert toolkits.parse_cuda_h("/* x */\n#define CUDA_VERSION 13000\n") == "13.0"
    assert toolkits.parse_cuda_h("#define CUDA_VERSION 12080\n") == "12.8"
    assert toolkits.parse_cuda_h("#define CUDA_VERSION 11070\n") == "11.7"
    with pytest.raises(ValueError):
        toolkits.parse_cuda_h("#define CUDART_VERSION 12080\n")


def test_cuda_h_reads_a_define_only_at_the_start_of_a_line():
    assert toolkits.parse_cuda_h("/* #define CUDA_VERSION 9000 */\n#define  CUDA_VERSION\t12080\n") == "12.8"
    for text in (" #define CUDA_VERSION 12080\n", "x#define CUDA_VERSION 12080\n", "#define CUDA_VERSIONS 1\n"):
        with pytest.raises(ValueError):
            toolkits.parse_cuda_h(text)


_LINE = st.tuples(
    st.sampled_from(("", " ", "x", "/* ")),
    st.sampled_from(("#define", "# define", "#defin")),
    st.sampled_from((" ", "\t", "\n", "")),
    st.sampled_from(("CUDA_VERSION", "ROCM_VERSION_MAJOR", "ROCM_VERSION_PATCH", "CUDART_VERSION")),
    st.sampled_from((" ", "\t ", "\n", "")),
    st.sampled_from(("12080", "6", "x")),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=6), st.sampled_from(("\n", " ", "\n\n")))
def test_the_header_patterns_find_what_a_line_anchored_search_finds(lines, sep):
    """The patterns put their line anchor after the literal (for speed): they find what the
    plain (?m)^ formulation finds, in any text."""
    text = sep.join("".join(line) for line in lines)
    for fast, plain in (
        (toolkits._CUDA_H, r"(?m)^#define\s+CUDA_VERSION\s+(\d+)"),
        (toolkits._ROCM_H, r"(?m)^#define\s+ROCM_VERSION_(MAJOR|MINOR|PATCH)\s+(\d+)"),
    ):
        assert [m.span() for m in re.finditer(fast, text)] == [m.span() for m in re.finditer(plain, text)]


def test_rocm_version_h():
    text = "#define ROCM_VERSION_MAJOR 6\n#define ROCM_VERSION_MINOR 4\n#define ROCM_VERSION_PATCH 1\n"
    assert toolkits.parse_rocm_version_h(text) == "6.4.1"
    with pytest.raises(ValueError):
        toolkits.parse_rocm_version_h("#define ROCM_VERSION_MAJOR 6\n")


def _tree(root, files: dict[str, str]):
    for path, text in files.items():
        p = root / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_a_pip_laid_out_cuda_tree_and_a_rocm_without_info_version(tmp_path):
    _tree(tmp_path, {
        "/usr/local/cuda-13.0/include/cuda.h": "#define CUDA_VERSION 13000\n",
        "/usr/local/cuda-13.0/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info/METADATA": "Name: nvidia-cuda-nvcc\n",
        "/usr/local/cuda-12.8/version.json": '{"cuda": {"version": "12.8.1"}}',
        "/usr/local/cuda-11.0/include/cuda.h": "#define CUDA_VERSION 11000\n",  # a conda-style tree
        "/usr/local/cudnn/README": "not a toolkit\n",
        "/opt/rocm-6.4.1/include/rocm-core/rocm_version.h":
            "#define ROCM_VERSION_MAJOR 6\n#define ROCM_VERSION_MINOR 4\n#define ROCM_VERSION_PATCH 1\n",
    })  # fmt: skip
    (tmp_path / "usr/local/cuda").symlink_to("cuda-13.0")
    found = toolkits.probe(Sysroot.at(str(tmp_path)), {}, [])
    assert [(t.version, t.path, t.source) for t in found.cuda] == [
        ("11.0", "/usr/local/cuda-11.0", None),
        ("12.8.1", "/usr/local/cuda-12.8", None),
        ("13.0", "/usr/local/cuda-13.0", "pip"),
    ]
    assert [(t.version, t.path) for t in found.rocm] == [("6.4.1", "/opt/rocm-6.4.1")]


def test_nvcc_on_path_through_a_wrapper_script(tmp_path, monkeypatch):
    tree = tmp_path / "opt/nv/cuda-13.0"
    _tree(tree, {"/include/cuda.h": "#define CUDA_VERSION 13000\n", "/bin/nvcc": "binary\n"})
    wrapper = tmp_path / "bin/nvcc"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {tree}/bin/nvcc "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:/usr/bin:/bin")
    roots = toolkits._nvcc_roots(Sysroot.at(None))
    assert str(tree) in roots
    # Under --root nothing of the reading machine's PATH is looked at.
    assert toolkits._nvcc_roots(Sysroot.at(str(tmp_path))) == []
