"""Reading the verify script's records: one JSON object per line, and the values in them."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any


def parse_records(stdout: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(records, lines that are not records) of the script's output: one JSON object per line,
    read with gpuenv's JSON input rules (strict UTF-8, no NaN, bounded depth): the interpreter
    is the user's, and whatever it printed is input like any file."""
    from gpuenv.standins.jsoninput import InputError, parse

    records: list[dict[str, Any]] = []
    other: list[str] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            doc = parse(line.encode("utf-8", "surrogateescape"), "verify output")
        except InputError:
            other.append(line)
            continue
        if isinstance(doc, dict) and isinstance(doc.get("step"), str):
            records.append(doc)
        else:
            other.append(line)
    return records, other


def str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def arch_of(gpu: dict[str, Any], stack: str | None) -> str | None:
    """The GPU's architecture as the build lists them: "sm_120" (CUDA), "gfx1201" (ROCm)."""
    if stack == "rocm":
        gcn = str_or_none(gpu.get("gcn_arch"))
        return (gcn.split(":", 1)[0].strip() or None) if gcn else None
    cap = gpu.get("capability")
    if isinstance(cap, list) and len(cap) == 2 and all(int_or_none(v) is not None and v >= 0 for v in cap):
        return f"sm_{cap[0]}{cap[1]}"
    return None


def in_build(
    arch: str | None, arch_list: tuple[str, ...] | None, stack: str | None
) -> tuple[bool | None, str | None]:
    """(whether the build has code for ``arch``, the entry that covers it), by gpuenv's rule."""
    if arch is None or not arch_list or stack is None:
        return None, None
    if stack == "rocm":
        targets = {a.split(":", 1)[0] for a in arch_list}
        return (arch in targets), (arch if arch in targets else None)
    from gpuenv.resolve.wheelfit import covers

    entry = covers(list(arch_list), arch)
    return entry is not None, entry

