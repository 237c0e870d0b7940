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

# A PTX instruction starts a string (or follows ";" or an escaped newline) and carries at least
# one of PTX's own dotted qualifiers: a type (.u32 .f16x2 .bf16 .pred .b128), a state space
# (.global .shared::cta), a memory order or scope (.release .gpu .cta), a shape (.m16n8k16 .x4), or
# .sync/.aligned/.approx/.rn... (mma.sync.aligned, ld.global.nc.v4.u32, @p bra.uni); or it names a
# PTX special register (%laneid, %%smid) or declares registers (.reg .pred p;). CPU assembly that
# also dots its opcodes does not qualify: LoongArch ld.d/vadd.w, RISC-V vle8.v, Arm v0.16b.
# Types are PTX's weak sign (Esperanto's RISC-V writes fcvt.ps.f16 too): enough in device code.
_TYPES = r"(?:[usbf](?:8|16|32|64|128)(?:x[24])?|bf16(?:x2)?|tf32|e[45]m[23]|pred)"
# State spaces, orders, scopes, shapes and modes are PTX's own: enough anywhere.
_QUALIFIER = (r"(?:v[248]|global|shared(?:::\w+)?|local|const|param|sync|aligned|approx|full|rn|rz|rm|rp|rni|rzi|ftz"
              r"|sat|release|acquire|relaxed|gpu|sys|cta|cluster|uni|wide|nc|ca|cg|cs|lu|cv|async|bulk|trans"
              r"|m\d+n\d+(?:k\d+)?|x[124]|commit_group|wait_group|wait_all|row|col|bfly|idx|up|down|ballot|any|all)")
_START = r"(?:\"|;|\\n|\\t)\s*(?:@!?%?\w+\s+)?"
# Opcodes no CPU assembly has: dotted, they are PTX whatever follows (griddepcontrol.wait).
_PTX_ONLY = ("griddepcontrol|setmaxnreg|mbarrier|wgmma|tcgen05|cp|ldmatrix|stmatrix|movmatrix|fence|membar|multimem"
             "|cvta|mapa|getctarank|redux|createpolicy|applypriority|discard|prefetchu|elect|vote|shfl|lop3|prmt|dp4a"
             "|dp2a|bfe|bfi|bmsk|szext|isspacep|activemask|nanosleep|clusterlaunchcontrol")
_PTX = re.compile(
    _START + r"(?:[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_:]+)*\." + _QUALIFIER + r"(?![a-z0-9_])"
    r"|(?:" + _PTX_ONLY + r")\.[a-z]|trap;)"
    r"|%%?(?:laneid|warpid|nwarpid|smid|nsmid|gridid|clock64|clock|globaltimer\w*|lanemask_\w+|dynamic_smem_size"
    r"|total_smem_size|cluster_\w+|is_explicit_cluster)\b"
    r"|\.reg\s+\.[a-z]"
)
_PTX_TYPED = re.compile(_START + r"[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_:]+)*\." + _TYPES + r"(?![a-z0-9_])")
# AMD GPU ISA (GCN/CDNA/RDNA): scalar and vector instructions, LDS/buffer/global/flat memory.
_AMD = re.compile(
    r"(?:\"|;|\\n|\\t)\s*(?:[sv]_[a-z0-9_]+|(?:ds|buffer|global|flat|scratch|image)_(?:load|store|read|write|atomic)\w*)\b"
)
_BODY = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def classify(statement: str, device: bool = True) -> str:
    """PTX, AMD, HOST, EMPTY or UNKNOWN for one asm statement as written (all its lines).
    ``device``: the file holds device code, where a typed opcode (cvt.f32.f16) is PTX too."""
    if _PTX.search(statement) or (device and _PTX_TYPED.search(statement)):
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


_PIECE = re.compile(r"(?:\\n|\\t|;|\n)+")
_OPCODE = re.compile(r"\s*(?:@!?%?\w+\s+)?([a-z][a-z0-9_]*(?:\.[a-z0-9_:]+)*)")
# The second qualifier says which instruction it is (cp.async, mma.sync, ld.shared, bar.sync);
# the rest are types, shapes and modes of that one instruction.
_KIND = frozenset({"async", "sync", "mma_async", "bulk", "shared", "global", "local", "const", "param", "arrive",
                   "wait", "commit_group", "wait_group", "fence", "try_wait", "expect_tx", "init", "approx",
                   "tensor", "arrive_and_expect_tx", "test_wait", "alloc", "dealloc", "mma", "ld", "st", "cp",
                   "commit", "red", "cta", "gpu", "sys", "acq_rel", "release", "acquire", "reduce",
                   "relaxed"})  # fmt: skip
# Clobbers, and the asm keyword itself: a code generator writing `"asm volatile (\n"` into its
# output holds the statement's start in a string, no instruction (TileLang's codegen_cuda.cc).
_NOT_OPCODES = frozenset({"memory", "cc", "asm", "__asm__", "volatile", "__volatile__"})
_LITERALS = re.compile(r'(?:"(?:[^"\\\n]|\\.)*"\s*)+')
_BARE = frozenset({"trap", "exit", "brkpt", "ret", "pmevent"})  # PTX instructions written without operands or a dot
_WHOLE = frozenset({"ldmatrix", "stmatrix", "movmatrix", "wgmma", "tcgen05", "setmaxnreg", "griddepcontrol",
                    "elect", "redux", "mbarrier", "multimem"})  # fmt: skip


def instructions(statement: str) -> tuple[str, ...]:
    """The PTX instructions of one asm statement, named by their opcode and the qualifier that
    picks the instruction (``ldmatrix``, ``mma.sync``, ``cp.async``, ``cp.async.bulk``,
    ``ld.global``, ``bar.sync``), one per instruction written (a statement may hold several)."""
    out = []
    # The template is the first run of adjacent string literals (C joins them: one instruction
    # may be written over several); the strings after it are operand constraints and clobbers.
    first = _LITERALS.search(statement)
    if first is None:
        return ()
    template = "".join(_BODY.findall(first.group()))
    for body in (template,):
        for piece in _PIECE.split(body):
            piece = piece.strip()
            if not piece or piece[0] in "{}.%" or piece.endswith(":"):
                continue  # a brace, a directive (.reg .pred p), a label
            if " " not in piece and "." not in piece and piece not in _BARE:
                continue
            m = _OPCODE.match(piece)
            if m is None:
                continue
            parts = m.group(1).split(".")
            if parts[0] in _NOT_OPCODES:
                continue
            name = parts[0]
            if name in _WHOLE:
                pass  # ldmatrix.sync.aligned...: one instruction whatever its qualifiers
            elif len(parts) > 1 and parts[1] in _KIND:
                name += "." + parts[1]
                if len(parts) > 2 and parts[2] == "bulk":
                    name += ".bulk"  # cp.async.bulk: the TMA copy, unlike cp.async
            out.append(name)
    return tuple(out)
