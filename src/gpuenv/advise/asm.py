"""What an inline ``asm()`` statement holds, read from its text: PTX, AMD GPU ISA, or host code.

Only PTX is a blocker: AMD GPU assembly (``s_waitcnt``, ``v_pk_add_f16``, ``v_mul_i32_i24``) is
already the ROCm port, and x86/Arm assembly (``cpuid``, ``rdtsc``, ``dmb ish``) runs on the CPU
whatever the GPU. A pure function of the statement's text.
"""

from __future__ import annotations

import re

PTX = "ptx"
AMD = "amd"
HOST = "host"  # x86, Arm or another CPU's assembly
EMPTY = "empty"  # asm volatile("" ::: "memory"): a compiler barrier, no instruction at all
UNKNOWN = "unknown"  # the instructions are not written here (a macro or a variable)

# A PTX instruction starts a string (or follows ";" or an escaped newline) and is dotted:
# mma.sync.aligned, ld.global.nc.v4.u32, cp.async.bulk, @p bra.uni; or it names a PTX special
# register (%laneid, %%smid) or declares registers (.reg .pred p;).
_PTX = re.compile(
    r"(?:\"|;|\\n|\\t)\s*(?:@!?%?\w+\s+)?[a-z][a-z0-9]*(?:\.[a-z0-9_:]+)+"
    r"|%%?(?:laneid|warpid|nwarpid|smid|nsmid|gridid|clock64|clock|globaltimer\w*|lanemask_\w+|dynamic_smem_size"
    r"|total_smem_size|cluster_\w+|is_explicit_cluster)\b"
    r"|\.reg\s+\.[a-z]"
)
# AMD GPU ISA (GCN/CDNA/RDNA): scalar and vector instructions, LDS/buffer/global/flat memory.
_AMD = re.compile(
    r"(?:\"|;|\\n|\\t)\s*(?:[sv]_[a-z0-9_]+|(?:ds|buffer|global|flat|scratch|image)_(?:load|store|read|write|atomic)\w*)\b"
)
_BODY = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def classify(statement: str) -> str:
    """PTX, AMD, HOST, EMPTY or UNKNOWN for one asm statement as written (all its lines)."""
    if _PTX.search(statement):
        return PTX
    if _AMD.search(statement):
        return AMD
    bodies = [b for b in _BODY.findall(_template(statement)) if b.strip()]
    if not bodies:
        return EMPTY if '"' in statement else UNKNOWN
    return HOST


def _template(statement: str) -> str:
    """The instruction template: the strings before the first operand colon."""
    depth = 0
    in_string = False
    for i, c in enumerate(statement):
        if c == '"' and (i == 0 or statement[i - 1] != "\\"):
            in_string = not in_string
        elif not in_string:
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == ":" and depth == 1 and statement[i + 1 : i + 2] != ":" and statement[i - 1 : i] != ":":
                return statement[:i]
            elif c == ":" and depth == 1:
                return statement[:i]
    return statement
