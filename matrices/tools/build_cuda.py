"""cuda.json: the CUDA toolkits, minor-version compatibility floors, driver branches and NVIDIA
architectures (the reference, errata.md, and CUDA 8.0-11.7 and the older architectures from
additions.py)."""

from __future__ import annotations

import re

import additions as ADD  # the sourced additions (matrices/tools/additions.py)
from build_common import ERRATA, vtuple

CUDA_ARCH_URL = (
    "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html"
)
BINARY_COMPAT_URL = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility"
OPEN_BLOG = (
    "https://developer.nvidia.com/blog/nvidia-transitions-fully-towards-open-source-gpu-kernel-modules/"
)
KMOD_GUIDE = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html"
# NVIDIA's data center driver table; its 'Maximum CUDA Major Version' column is the max_cuda of the confirmed
# branches that cite it first (R620's comes from it too, where no Table 3 row names a minor).
DATACENTER_PAGE = "NVIDIA Data Center Drivers 'Supported Drivers and CUDA Toolkit Versions'"
DATACENTER_MAJOR = ("R535", "R580", "R595", "R610")
# R610 (#42, the second audit of 2026-12): the 615 edition of the same page (https://docs.nvidia.com/datacenter/
# tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html, read 2026-12-07 in a stored capture) gives
# the New Feature Branch R610 'CUDA 13' as its 'Maximum CUDA Major Version Supported Without Forward
# Compatibility Package', as it gives R580 and R595; the bundle had the secondary '13.3' (a Table 3 minimum it
# could not read), which under minor-version compatibility understates what the branch runs.
# The third audit (2026-12-07): an earlier edition of the same NVIDIA page, the one listing R535, R570 and
# R580 only (read in a stored capture of https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-
# cuda-toolkit-versions.html), gives R570 its designation and end of life, which the reference left empty, and
# R580 an end of life ('August 2028') other than the 615/620 editions' ('June 2028') the entry cites.
DATACENTER_EARLIER = (
    "NVIDIA Data Center Drivers 'Supported Drivers and CUDA Toolkit Versions', the edition listing R535, R570 and "
    "R580 (https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html, "
    "stored capture read 2026-12-07)"
)
# The third audit of 2026-12 (audit-2026-12-third.md): the same earlier edition gives R570 'Maximum CUDA Version
# Supported: CUDA 12.0+', 'This driver branch supports CUDA 12.x (through CUDA minor version compatibility)', as it
# gives R535, whose max_cuda is the major '12'; R570 kept the Table 3 minor '12.8', which understates the series.
BRANCH_AUDIT = {
    "R570": {"designation": "Production Branch", "end_of_life": "February 2026", "max_cuda": "12"},
}
BRANCH_AUDIT_NOTES = {
    "R570": f"designation, end of life and max CUDA: {DATACENTER_EARLIER} ('Production Branch', 'February 2026', "
    "'CUDA 12.0+ ... supports CUDA 12.x (through CUDA minor version compatibility)')",
    "R580": f"end of life: {DATACENTER_EARLIER} says 'August 2028', the 615/620 editions cited 'June 2028'; which "
    "edition is current was not settled (third audit, 2026-12-07)",
}


def driver_value(text: str | None) -> str | None:
    if not text:
        return None
    m = re.fullmatch(r">=(\d+(?:\.\d+)*)", text.strip())
    return m.group(1) if m else None


MINOR_COMPAT = {"11": "450.80.02", "12": "525.60.13", "13": "580"}
MINOR_COMPAT_SOURCE = (
    "NVIDIA CUDA Toolkit release notes Table 2 (13.x >= 580; 12.x >= 525 and < 580; 11.x >= 450 and "
    "< 525; patch levels 525.60.13 / 450.80.02 from the older 12.x/11.x notes and uv's "
    "LINUX_CUDA_DRIVERS table), https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html"
)


def arch_table(ref: dict) -> list[dict]:
    out = []
    modules = {
        "Blackwell": "open",
        "Hopper": "either",
        "Ada": "either",
        "Ampere": "either",
        "Turing": "either",
        "Volta": "proprietary",
        "Pascal": "proprietary",
        "Maxwell": "proprietary",
        "Kepler": "proprietary",
    }
    for a in ref["cuda_architecture_matrix"]:
        name = a["architecture"]
        first = a["first_cuda"]
        notes = []
        if "/" in first:
            notes.append(f"NVIDIA's matrix prints two first toolkits: {first}")
            first = first.split("/")[0].strip()
        entry = {
            "architecture": name,
            "compute_capabilities": a["compute_capability"],
            "first_cuda": first,
            "last_cuda": None if a["last_cuda"] == "ongoing" else a["last_cuda"],
            "last_driver": None if a["last_driver"] == "ongoing" else a["last_driver"],
            "module": modules[name],
            "source": a["source"],
            "module_source": KMOD_GUIDE,
            "confirmed": bool(a["confirmed"]),
            "notes": notes,
        }
        if name == "Hopper":
            # ERRATA item 4: the blog names Grace Hopper, not Hopper as a whole.
            notes.append(
                "Grace Hopper (GH200, e.g. 10de:2342, 10de:2348) requires the open kernel modules "
                f"(NVIDIA Technical Blog '{OPEN_BLOG}', via {ERRATA} item 4; confirmed=false as for "
                "Blackwell); other Hopper parts (H100/H200/H800/H20) may use either flavor."
            )
        if name == "Blackwell":
            # ERRATA item 4: the requirement is stated in NVIDIA's blog, not in the install guide.
            entry["module_source"] = (
                f"NVIDIA Technical Blog '{OPEN_BLOG}' (July 2024): 'For cutting-edge platforms such as "
                "NVIDIA Grace Hopper or NVIDIA Blackwell, you must use the open-source GPU kernel "
                "modules.' Exact wording confirmed via a full-text copy (compspec.one/?p=300) and "
                "multiple verbatim quotes; the driver-installation-guide Kernel Modules page does not "
                f"state it ({ERRATA} item 4)"
            )
            entry["module_confirmed"] = False
            notes.append("Grace Hopper also requires the open modules (same blog post).")
        extra = ADD.ARCH_EXTRA.get(name)
        if extra:
            entry["compute_capabilities"] = extra["compute_capabilities"]
            for key in ("first_cuda_by_cc", "last_cuda_by_cc"):
                if key in extra:
                    entry[key] = extra[key]
            entry["source"] = f"{entry['source']}; {extra['source_extra']}"
            notes.append(extra["note"])
            if extra.get("first_cuda_by_cc_confirmed") is False:
                entry["first_cuda_by_cc_confirmed"] = False
        out.append(entry)
    out.extend(dict(a, notes=list(a["notes"])) for a in ADD.NEW_ARCHS)
    return out


def _after(series: tuple[int, ...], last: str) -> bool:
    """Is toolkit series past ``last`` ("12.x": the whole 12 family; "10.2": exactly that series)?"""
    if "x" in last:
        return series[0] > vtuple(last)[0]
    return series > vtuple(last)[:2]


def ccs_for(series: str, archs: list[dict], min_cc: str) -> list[str]:
    """Compute capabilities a toolkit series supports: the architecture rows' first/last CUDA,
    with per-capability overrides (first_cuda_by_cc, last_cuda_by_cc) where NVIDIA gives them."""
    sv = vtuple(series)[:2]
    ccs: list[str] = []
    for a in archs:
        for cc in a["compute_capabilities"]:
            first = (a.get("first_cuda_by_cc") or {}).get(cc, a["first_cuda"])
            last = (a.get("last_cuda_by_cc") or {}).get(cc, a["last_cuda"])
            if first is None or sv < vtuple(first)[:2]:
                continue
            if last is not None and _after(sv, last):
                continue
            if vtuple(cc) >= vtuple(min_cc):
                ccs.append(cc)
    return sorted(set(ccs), key=vtuple)


def old_toolkits(archs: list[dict]) -> list[dict]:
    """CUDA 8.0 - 11.7 (additions.OLD_TOOLKITS): Table 3 minimum, runfile driver, capabilities.
    confirmed where an NVIDIA-hosted artifact (the runfile name, or CUDA Compatibility Table 2 for
    10.x) carries the same driver as the Table 3 copy."""
    out = []
    for version, name, minimum, runfile, min_cc in ADD.OLD_TOOLKITS:
        series = ".".join(version.split(".")[:2])
        major = series.split(".")[0]
        primary = (
            series in ADD.TEN_X_PRIMARY
            or runfile == minimum
            or (runfile is not None and vtuple(runfile) == vtuple(minimum))
        )
        source = ADD.TABLE3_COPY
        if series in ADD.TEN_X_PRIMARY:
            source += f"; {ADD.COMPAT_DOC} Table 2 (10.x minimum drivers)"
        if runfile:
            source += f"; {ADD.RUNFILES}"
        if version == "11.7.1":
            source += f"; {ADD.LTT_108}"
        out.append(
            {
                "version": version,
                "name": name,
                "min_driver": minimum,
                "minor_compat_driver": MINOR_COMPAT.get(major),
                "runfile_driver": runfile,
                "compute_capabilities": ccs_for(series, archs, min_cc),
                "source": source,
                "arch_source": f"{ADD.ARCH_MATRIX}; {ADD.ARCH_MATRIX_COPY}",
                "confirmed": bool(primary),
                "notes": list(ADD.TOOLKIT_NOTES.get(version, []))
                + ([] if major in MINOR_COMPAT else ["no minor-version compatibility before CUDA 11"]),
            }
        )
    return out


def build_cuda(ref: dict) -> dict:
    archs = arch_table(ref)
    toolkits = old_toolkits(archs)
    for t in ref["cuda_toolkits"]:
        version = t["version"]
        series = ".".join(version.split(".")[:2])
        notes = [t["notes"]] if t.get("notes") else []
        min_driver = driver_value(t["min_driver_linux_x86_64"])
        if min_driver is None and t["min_driver_linux_x86_64"]:
            notes.append(f"minimum driver as printed: {t['min_driver_linux_x86_64']}")
        if version == "13.5":
            notes.append("released; its GA patch level and minimum driver were not found")
        toolkits.append(
            {
                "version": version,
                "name": t["toolkit"],
                "min_driver": min_driver,
                "minor_compat_driver": MINOR_COMPAT[series.split(".")[0]],
                "runfile_driver": t.get("runfile_bundled_linux_driver"),
                "compute_capabilities": ccs_for(series, archs, t["architecture"]["supported_min_cc"]),
                "source": t["source"],
                "arch_source": t.get("arch_source") or CUDA_ARCH_URL,
                "confirmed": bool(t["confirmed"]) and min_driver is not None,
                "notes": notes,
            }
        )
    # ERRATA item 5: 13.4 GA is versioned 13.4.1, 13.4 Update 1 is 13.4.2; minimums not found.
    insert_at = next(i for i, t in enumerate(toolkits) if t["version"] == "13.5")
    for ver, name, url in (
        (
            "13.4.1",
            "CUDA 13.4 GA",
            "https://docs.nvidia.com/cuda/archive/13.4.1/cuda-toolkit-release-notes/index.html",
        ),
        (
            "13.4.2",
            "CUDA 13.4 Update 1",
            "https://docs.nvidia.com/cuda/archive/13.4.2/cuda-toolkit-release-notes/index.html",
        ),
    ):
        toolkits.insert(
            insert_at,
            {
                "version": ver,
                "name": name,
                "min_driver": None,
                "minor_compat_driver": "580",
                "runfile_driver": None,
                "compute_capabilities": ccs_for("13.4", archs, "7.5"),
                "source": f"{url} (via {ERRATA} item 5)",
                "arch_source": CUDA_ARCH_URL,
                "confirmed": False,
                "notes": ["minimum Linux driver not found (Table 3 not read)"],
            },
        )
        insert_at += 1
    branches = []
    for b in ref["nvidia_driver_branches"]:
        max_cuda = b["newest_cuda_supported_derived_from_table3"]
        notes = [b["notes"]] if b.get("notes") else []
        if max_cuda and " " in max_cuda:
            notes.append(f"max CUDA as printed: {max_cuda}")
            max_cuda = max_cuda.split(" ")[0]
        major = b["max_cuda_major_without_forward_compat"]
        if max_cuda is None and major:
            # #42: no Table 3 row names a 13.x minor for R620 yet, but NVIDIA's data center table gives
            # the branch its CUDA major ('CUDA 13', i.e. every 13.x through minor-version compatibility):
            # the series, not a guessed minor.
            max_cuda = major.removeprefix("CUDA ")
            notes.append(
                f"max CUDA: the {major}.x series, as the {b['source'].split(' (')[0]} table gives it for the branch; "
                "the newest 13.x minor whose Table 3 minimum falls in this branch is not in the pages read"
            )
        if b["branch"] in DATACENTER_MAJOR:
            # The second audit: the page these branches cite first (NVIDIA's data center 'Supported Drivers
            # and CUDA Toolkit Versions', 615 and 620 editions) gives the branch a 'Maximum CUDA Major
            # Version', not a minor; the Table 3 derivation stays as a note.
            assert b["source"].startswith(DATACENTER_PAGE) and major, b["branch"]
            notes.append(f"newest toolkit whose Table 3 minimum falls in this branch: {max_cuda}")
            max_cuda = major.removeprefix("CUDA ")
        fix = BRANCH_AUDIT.get(b["branch"], {})
        if "max_cuda" in fix:
            notes.append(f"newest toolkit whose Table 3 minimum falls in this branch: {max_cuda}")
            max_cuda = fix["max_cuda"]
        if b["branch"] in BRANCH_AUDIT_NOTES:
            notes.append(BRANCH_AUDIT_NOTES[b["branch"]])
        branches.append(
            {
                "branch": b["branch"],
                "designation": fix.get("designation", b["designation"]),
                "end_of_life": fix.get("end_of_life", b["end_of_life"]),
                "max_cuda": max_cuda,
                "legacy_gpus": bool(b["supports_maxwell_pascal_volta"]),
                "open_available": bool(b["open_kernel_modules_available"]),
                "open_default": bool(b["open_kernel_modules_default"]),
                "source": f"{b['source']}; {DATACENTER_EARLIER}" if b["branch"] in BRANCH_AUDIT_NOTES else b["source"],
                "confirmed": bool(b["confirmed"]),
                "notes": notes,
            }
        )
    return {
        "schema": "gpuenv.matrices.cuda/1",
        "minor_version_compatibility": {
            "drivers": MINOR_COMPAT,
            "source": MINOR_COMPAT_SOURCE,
            "note": "A CUDA X.y application runs on a driver at or above the family floor even when the "
            "driver is older than X.y's own minimum (PTX JIT and some features need the full minimum).",
            "not_available": ADD.MINOR_COMPAT_NONE,
        },
        "binary_compatibility": {
            "rule": "a cubin built for sm_XY runs on a GPU of the same major version X and minor >= Y; "
            "PTX for compute_XY is JIT-compiled by the driver for any GPU of compute capability >= X.Y",
            "source": BINARY_COMPAT_URL,
        },
        "toolkits": toolkits,
        "architectures": archs,
        "driver_branches": branches,
        "kernel_module_facts": ref["nvidia_kernel_module_facts"]
        + [
            {
                # ERRATA item 4: new in the R620 edition of the install guide.
                "fact": "The R620 edition of the driver installation guide no longer describes a "
                "proprietary flavor: 'The kernel modules are open source and dual licensed MIT/GPLv2.' "
                "(consistent with R580 being the last branch for Maxwell/Pascal/Volta).",
                "source": "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/620/kernel-modules.html "
                f"(via {ERRATA} item 4)",
                "confirmed": True,
            }
        ],
        "driver_distros": ref["nvidia_driver_install_distros"],
    }


# ----------------------------------------------------------------------------------- torch
