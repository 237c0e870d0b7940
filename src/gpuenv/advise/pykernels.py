"""The CUDA source a Python file holds in its string literals, and nothing else of the file.

A Python file that names ``__global__`` may hold kernels in strings (``load_inline``, CuPy's
``RawKernel``), but it may as well be a code generator or a parser of kernel source (a regex
``r"__global__\\s+void"``, a comparison ``decl == "CUtensorMap"``): its Python code and its short
strings are no kernel. Only string literals that read as C/CUDA source are kept; everything else
is blanked, lines kept, so what the C scanner finds keeps its line.
"""

from __future__ import annotations

# A string holds kernel source when it has one of these (a statement, a kernel, an asm block).
_MARKERS = ("__global__", "__device__", "#include", "asm", ";", "{")


def kernel_text(text: str) -> str:
    """``text`` with everything blanked but the string literals that read as C/CUDA source."""
    out = [" " if c != "\n" else "\n" for c in text]
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            i = n if end == -1 else end
            continue
        if c not in "'\"":
            i += 1
            continue
        quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else c
        end = _string_end(text, i + len(quote), quote)
        body = text[i + len(quote) : end]
        if any(m in body for m in _MARKERS):
            out[i + len(quote) : end] = list(body)
        i = end + len(quote)
    return "".join(out)


def _string_end(text: str, start: int, quote: str) -> int:
    """Where the literal opened before ``start`` closes (the end of the text, or of the line for a
    one-line string left open)."""
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2  # an escaped character, the quote too (in a raw string as well)
            continue
        if c == "\n" and len(quote) == 1:
            return i
        if text.startswith(quote, i):
            return i
        i += 1
    return n
