"""Internal consistency of the bundled matrices (#42): what can be checked without a network, from the
files alone. Each check takes the parsed JSON documents and returns its problems, one line each
(an empty list: consistent). tests/test_matrices_consistency.py runs every check on the shipped
files, and on broken copies to show each one can fail; `freshness` runs them too.

- every GPU has a gfx target (AMD) or a compute capability (NVIDIA), or its notes say why not;
- every ROCm release's amdgpu driver list is a contiguous range of the driver lines the bundle
  knows, or its notes name each line it skips;
- every torch variant lists the targets it is compiled for, or its notes say they were not read;
- every ROCm release date is the one AMD's release history prints (rocm_dates.py), the file says
  that it is its source, and no date is given for a release that history does not list.
"""

from __future__ import annotations

import re

# The words a note uses to say why a value is left out ("not read", "not established", "not known" ...).
_WHY = re.compile(r"\bnot (read|established|found|known|stated|settled|named|identified)\b|no (source|AMD document)|left (null|empty|out)")


def _line(driver: str) -> tuple[int, int]:
    """'30.10.1', '30.10', '6.4.x' -> (30, 10), (30, 10), (6, 4): the driver line."""
    major, minor = driver.split(".")[:2]
    return int(major), int(minor)


def gpu_targets(amd: dict, nvidia: dict) -> list[str]:
    out = []
    for g in amd["gpus"]:
        if not g.get("gfx_target") and not any(_WHY.search(n) for n in g.get("notes") or ()):
            out.append(f"amd_gpus.json {g['pci_id']}: no gfx target and no note saying why")
    for g in nvidia["gpus"]:
        if not g.get("compute_capability"):
            out.append(f"nvidia_gpus.json {g['pci_id']}: no compute capability")
    return out


def driver_ranges(rocm: dict) -> list[str]:
    known = sorted({_line(d) for r in rocm["releases"] for d in r.get("amdgpu_driver_compat") or ()})
    out = []
    for r in rocm["releases"]:
        compat = r.get("amdgpu_driver_compat") or []
        if not compat:
            out.append(f"rocm.json {r['version']}: no amdgpu driver list")
            continue
        lines = list(dict.fromkeys(_line(d) for d in compat))
        if lines != sorted(lines, reverse=True):
            out.append(f"rocm.json {r['version']}: amdgpu_driver_compat is not newest first: {compat}")
            continue
        span = [x for x in known if lines[-1] <= x <= lines[0]]
        skipped = [f"{a}.{b}.x" for a, b in span if (a, b) not in lines]
        said = [n for n in r.get("notes") or () if "skips" in n]
        unexplained = [x for x in skipped if not any(x in n for n in said)]
        if unexplained:
            out.append(
                f"rocm.json {r['version']}: amdgpu_driver_compat {compat} skips {', '.join(unexplained)} "
                "and no note says why"
            )
    return out


def torch_archs(torch: dict) -> list[str]:
    out = []
    for rel in torch["releases"]:
        for v in rel["variants"]:
            if v["stack"] == "cpu" or v.get("archs"):
                continue
            if not any(_WHY.search(n) for n in v.get("notes") or ()):
                out.append(f"torch.json {rel['minor']} {v['variant']}: no targets and no note saying why")
    return out


def release_dates(rocm: dict, printed: dict[str, str], iso, source: str) -> list[str]:
    """``printed``/``iso``/``source``: rocm_dates.PRINTED, rocm_dates.iso and rocm_dates.SOURCE."""
    out = []
    if rocm.get("release_dates_source") != source:
        out.append("rocm.json: release_dates_source is not AMD's release history (rocm_dates.SOURCE)")
    for r in rocm["releases"]:
        v, date = r["version"], r.get("release_date")
        if v not in printed:
            if date is not None:
                out.append(f"rocm.json {v}: dated {date}, but AMD's release history does not list {v}")
            continue
        if date != iso(v):
            out.append(f"rocm.json {v}: dated {date}, AMD's release history says {printed[v]} ({iso(v)})")
    return out


def check_all(docs: dict[str, dict], dates) -> list[str]:
    """Every check on ``docs`` ({'amd_gpus.json': ..., ...}); ``dates`` is the rocm_dates module."""
    return (
        gpu_targets(docs["amd_gpus.json"], docs["nvidia_gpus.json"])
        + driver_ranges(docs["rocm.json"])
        + torch_archs(docs["torch.json"])
        + release_dates(docs["rocm.json"], dates.PRINTED, dates.iso, dates.SOURCE)
    )
