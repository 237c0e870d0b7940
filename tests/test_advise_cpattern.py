"""``cpattern.matches``: the C/CUDA scan pattern's matches found by one pass per rare word and
one for the rest, held to the one pattern's own ``finditer`` (the oracle) on the cases a wrong
split would get wrong: a word only in a comment or a string, no word at all, matches at the
first and last character, CRLF lines, a file decoded from bytes that are not UTF-8, and matches
that overlap (the one pattern takes the first and never sees the second)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuenv.advise.cpattern import COMMON, PATTERN, WORDS, matches
from gpuenv.advise.sources import scan


def spans(found: object) -> list[tuple[tuple[int, int], str]]:
    return [(m.span(), m.group()) for m in found]  # type: ignore[attr-defined]


def oracle(text: str) -> list[tuple[tuple[int, int], str]]:
    return spans(PATTERN.finditer(text))


CASES = {
    "no word, no candidate": "int main() { return 0; }\n",
    "no word, common candidates": "#include <cuda_runtime.h>\ncudaMalloc(&p, n);\n",
    "a word only in a comment": "// asm(\"mov.u32 %0, %%laneid;\")\nint x;\n",
    "a word only in a string": 'const char* s = "threadIdx.x / 32";\n',
    "a word at the first and last character": "asm(\"nop\");\nint x = tcgen05",
    "CRLF lines": "#include <cub/cub.cuh>\r\n__global__ void k() {\r\n  int w = threadIdx.x >> 5;\r\n}\r\n",
    "a word inside a common match": '"asm(kernel.ptx"; dim3 b(32, 1);',
    "a common match inside a word": "tex1D<cutlass::half_t>(t, x); cutlass::gemm g;",
    "a word inside a launch": "k<<<grid, dim3(32, 1), 32>>>(x); nccl_x; ncclAllReduce(a);",
    "words back to back": "asm(asm(thrust::thrust::labeled_partition(surface<",
    "a word inside a word": "texture<tex2D<float>(x)>",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_matches_are_the_one_pattern_s(text):
    assert spans(matches(text)) == oracle(text)


def test_the_overlap_cases_need_the_one_pattern():
    """Where passes' matches overlap, their union is not the pattern's matches: the merge
    must hand over to the pattern (each case here fails if it does not)."""
    for name in ("a word inside a common match", "a common match inside a word"):
        text = CASES[name]
        union = sorted(spans(m for p in (re.compile(COMMON, re.VERBOSE), *map(re.compile, WORDS)) for m in p.finditer(text)))
        assert union != oracle(text), name
        assert spans(matches(text)) == oracle(text), name


def test_bytes_that_are_not_utf8():
    """The scan reads text decoded with replacement characters: a word beside one is found."""
    text = b"\xff\xfeasm(\"mov.u32 %0, %%smid;\" : \"=r\"(x));\xe9 dim3 b(32);\n".decode("utf-8", "replace")
    assert spans(matches(text)) == oracle(text)
    assert [rule for rule, _ in [(h.rule, h.line) for h in scan("a.cu", ".cu", text)]] == [
        "construct:inline-ptx", "construct:warp-size-32"]  # fmt: skip


def test_hits_on_the_first_and_last_line_of_a_crlf_file():
    text = 'asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));\r\nint x;\r\n__syncwarp();\r\ndim3 b(32, 4);'
    assert [(h.rule, h.line) for h in scan("k.cu", ".cu", text)] == [
        ("construct:inline-ptx", 1), ("construct:warp-size-32", 4)]  # fmt: skip


# Pieces that start, end or nest the pattern's alternatives, and filler between them.
_PIECES = [
    "asm(", "asm volatile(", "thrust::", "threadIdx.x / 32", "threadIdx.y >> 5", "texture<", "tex1D<",
    "tex2D(", "tcgen05", "surface<", "surf3D(", "ncclSend", "nvrtcCompile", "nvcuda::wmma", "dim3 b(32,",
    "labeled_partition(", "cutlass::", "cute::", "cudaMalloc(", "cuLaunch(", '"', ".ptx", ".cubin", "<<<", ">>>",
    ", 32", "% 32", "& 31", "0xffffffff", "#include <cub/x.h>", "#define WARP_SIZE 32", "__shfl_sync(0xffffffff",
    "__asm__(", "kWarpSize = 32", "//", "\n", "\r\n", " ", "x", "_", "(", ")", "<", ">", ";", "\ufffd",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_matches_are_the_one_pattern_s_on_any_mix(pieces):
    text = "".join(pieces)
    assert spans(matches(text)) == oracle(text)
