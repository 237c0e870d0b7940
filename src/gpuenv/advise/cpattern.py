"""The pattern the C/CUDA scan looks for (``PATTERN``), and where it matches in a file
(``matches``): the matches of ``PATTERN.finditer(text)``, found by cheaper passes.

Every alternative of the pattern starts with a literal character, so the regex engine skips, in
C, every position whose character cannot start one, and tries the whole alternation at every
other (a leading ``\\b`` or ``^`` would make it try every position). Alternatives that start with
t, a, s, n, d or l (threadIdx, asm, surface, nccl, dim3, labeled_partition) made it try a fifth
of all positions: most of the time of a big tree (CUTLASS: 53 MB of headers). Those start with a
word of several letters instead (``WORDS``), and each is a pattern of its own: a pattern that
starts with a literal word is searched for by the engine's fast literal scan, not tried at every
t or a. The rest (``COMMON``) starts with characters that are rarer in code (c, _, #, %, ...).

Exact by construction: alternatives that start with different literals never match at one
position, so at each position PATTERN's match is that of the one pass whose alternatives can
start there. The passes' matches, merged by place, are PATTERN's as long as no two overlap;
where two do (PATTERN, having taken the first, resumes after its end and never sees the second),
the merge goes on with PATTERN itself from the end of the last match it gave.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_MASK = r"\s*\(\s*(?:0x[fF]{8}[uU]?[lL]{0,2}\b|~0[uU]?\b|-1\b|\(unsigned\)\s*-1\b)"
COMMON = (
    r"""
    c(?:u(?:da[A-Z]\w*(?=\s*\()|[A-Z]\w*(?=\s*\()|blas\w*|dnn\w*|fft\w*|sparse\w*|rand\w*|solver\w*
          |tensor\w*|tlass::|te::|b::)
       |p\.async\.bulk)
  | C(?:U_JIT_INPUT_(?:PTX|CUBIN|FATBINARY)\b|UtensorMap\b)
  | w(?:mma::(?:fragment|mma_sync|load_matrix_sync|store_matrix_sync|fill_fragment)\b|gmma\b
       |arp_?[sS]ize\w*\s*=\s*32\b)
  | _(?:_(?:asm__|asm)\s*(?:(?:volatile|__volatile__)\s*)?\(|_cluster_dims__\b
       |_(?:shfl(?:_up|_down|_xor)?|ballot|any|all|uni|match_any|match_all|reduce_\w+)_sync"""
    + _MASK
    + r""")
  | \#(?:[ \t]*(?:include[ \t]*[<"][^>"\n]+[>"]|define[ \t]+\w*(?:WARP|Warp|warp)\w*[ \t]+\(?32\b))
  | 0x[fF]{8}[uU]?[lL]{0,2}\b
  | &\s*(?:31|0x1[fF])\b
  | %\s*32\b
  | "[^"\n]*\.(?:ptx|cubin)"
  | S(?:M90_TMA\w*|M100_\w+)
  | W(?:ARP_?SIZE|arpSize)\w*\s*=\s*32\b
  | k(?:WarpSize|ThreadsPerWarp)\w*\s*=\s*32\b
  | T(?:HREADS_PER_WARP)\w*\s*=\s*32\b
  | <<<[^;>]*?,\s*32\s*(?:,|>>>)
"""
)
# Each starts with a word no alternative of COMMON or of another word starts with (no space or
# "#" in them: they are also joined into the verbose PATTERN).
WORDS = (
    r"thr(?:ust::|eadIdx\.[xyz]\s*(?:/\s*32\b|>>\s*5\b))",
    r"tex(?:ture\s*<|(?:1D|2D|3D|Cubemap)\w*\s*(?:<[^>\n]*>)?\s*\()",
    r"tcgen05\b",
    r"surf(?:ace\s*<|(?:1D|2D|3D|Cubemap)\w*\s*(?:<[^>\n]*>)?\s*\()",
    r"asm\s*(?:(?:volatile|__volatile__)\s*)?\(",
    r"nccl[A-Z]\w*",
    r"nv(?:rtc[A-Z]\w*|cuda::wmma\b)",
    r"dim3\s*\w*\s*[({]\s*32\s*[,)}]",
    r"labeled_partition\s*\(",
)
# (Instructions that only appear inside asm() strings, such as mbarrier or fence.proxy.async,
# are not looked for: the asm() statement around them is already a blocker.)
PATTERN = re.compile(COMMON + "".join(f"  | {word}\n" for word in WORDS), re.VERBOSE)
_COMMON = re.compile(COMMON, re.VERBOSE)
_WORDS = tuple(re.compile(word) for word in WORDS)


def matches(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``PATTERN.finditer(text)``, in order, found by one pass per word of WORDS
    and one of COMMON (most files hold none of the words: their pass finds nothing)."""
    words = sorted((m for word in _WORDS for m in word.finditer(text)), key=_start)
    if not words:
        yield from _COMMON.finditer(text)
        return
    end = 0  # where the last match given ends: PATTERN resumes there
    pending = iter(words)
    word = next(pending, None)
    for m in _COMMON.finditer(text):
        while word is not None and word.start() < m.start():
            if word.start() < end:
                yield from PATTERN.finditer(text, end)  # two matches overlap: PATTERN decides
                return
            yield word
            end = word.end()
            word = next(pending, None)
        if m.start() < end:
            yield from PATTERN.finditer(text, end)
            return
        yield m
        end = m.end()
    while word is not None:
        if word.start() < end:
            yield from PATTERN.finditer(text, end)
            return
        yield word
        end = word.end()
        word = next(pending, None)


def _start(m: re.Match[str]) -> int:
    return m.start()
