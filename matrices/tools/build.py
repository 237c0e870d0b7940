"""Regenerate matrices/*.json from the gathered reference (shared/reference/matrices.json).

Run by hand when the reference changes: ``python3 matrices/tools/build.py [REFERENCE_DIR]``.
The committed JSON files are the product; this script only spares retyping and records, in
code, every place where errata.md overrides matrices.json (search for ERRATA). Facts the
reference lacks (CUDA 8.0-11.7, Tesla/Fermi/Kepler and new Blackwell capabilities, torch 1.8-2.3,
cu129, rocBLAS gaps, HSA overrides, AMD notes, ROCm 5.x, GCN 1-5 GPUs) are in ``additions.py``
beside this file, each with its source; the rows read from the ROCm 5.x documentation pages and the
pci.ids names of the older AMD GPUs are in ``legacy_data.json`` (written by ``legacy.py``).
nvidia_gpus.json is written by ``nvidia_pci.py`` from pci.ids.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent
# The compiled reference (and the errata it is corrected by) is pinned in the repository
# (matrices/sources/reference, copied from the project's shared/reference on 2026-12-05), so that
# the bundle rebuilds from a clone byte for byte (tests/test_matrices_rebuild.py); another copy
# can still be named on the command line.
REF = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT / "sources" / "reference"
sys.path.insert(0, str(HERE))

import additions as ADD  # noqa: E402 - the sibling module of sourced additions (matrices/tools/additions.py)
import amd_ids as AMD_IDS  # noqa: E402 - AMD PCI ids the reference lacked (matrices/tools/amd_ids.py)
import therock as THEROCK  # noqa: E402 - ROCm 7.14 / Core SDK 10.0 (matrices/tools/therock.py)

BUNDLE_VERSION = "2026.12.05"


class _Legacy:
    """matrices/tools/legacy_data.json (ROCm 5.x pages, AMD PCI names), written by legacy.py."""

    def __init__(self, path: Path) -> None:
        doc = json.loads(path.read_text())
        self.ROCM5_PAGES = doc["ROCM5_PAGES"]
        self.ROCM5_TORCH = doc["ROCM5_TORCH"]
        self.AMD_PCI_NAMES = doc["AMD_PCI_NAMES"]


LEGACY = _Legacy(HERE / "legacy_data.json")

ROCM_MIN = ADD.ROCM_MIN  # 6.0.x and 6.1.x are in the reference; earlier bundles started at 6.2
ERRATA = "shared/reference/errata.md"
ROCM_724_SYSREQ = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-7.2.4/reference/system-requirements.html"
)
ROCM_721_NOTES = "https://rocm.docs.amd.com/en/latest/about/release-notes.html (ROCm 7.2.1 section)"

OS_IDS = {
    "Ubuntu": "ubuntu",
    "RHEL": "rhel",
    "SLES": "sles",
    "Oracle Linux": "ol",
    "Debian": "debian",
    "Azure Linux": "azurelinux",
    "Rocky Linux": "rocky",
    "CentOS": "centos",  # ROCm 6.0.x / 6.1.x list CentOS 7.9
}
INSTINCT_ARCHS = ("CDNA", "CDNA2", "CDNA3", "CDNA4")


def vtuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def dump(name: str, doc: dict) -> None:
    path = OUT / name
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path.relative_to(OUT.parent)}")


# ----------------------------------------------------------------------------------- ROCm


def split_os(entry: str) -> tuple[str, list[str]]:
    """'RHEL 10.1, 10.0, 9.7' -> ('rhel', ['10.1', '10.0', '9.7']); 'SLES 15 SP7, SP6' -> sles 15.7, 15.6."""
    for name, os_id in OS_IDS.items():
        if entry.startswith(name + " "):
            rest = entry[len(name) + 1 :]
            if os_id == "sles":
                m = re.match(r"(\d+) (SP\d+(?:, SP\d+)*)", rest)
                assert m, entry
                return os_id, [f"{m.group(1)}.{sp[2:]}" for sp in m.group(2).split(", ")]
            return os_id, [v.strip() for v in rest.split(",")]
    raise ValueError(f"unknown OS in {entry!r}")


def major_of(os_id: str, version: str) -> str:
    # Ubuntu majors are "YY.MM"; the others are the first number (RHEL 9.4 -> 9, SLES 15.7 -> 15).
    parts = version.split(".")
    if os_id == "ubuntu":
        return ".".join(parts[:2])
    if os_id == "azurelinux":
        return version
    return parts[0]


_KERNEL = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?(?:-[\d.]+)?\+?(?:\s*\(UEK\))?(?:\s*\[(GA|HWE)\])?")


def parse_kernels(text: str) -> tuple[list[str], list[str], list[str]]:
    """'6.8 [GA], 6.14 [HWE] (glibc 2.39)' -> (series, ga, hwe)."""
    text = re.sub(r"\(glibc [^)]*\)", "", text)
    text = re.sub(r"\(as printed[^)]*\)", "", text)
    series: list[str] = []
    ga: list[str] = []
    hwe: list[str] = []
    for m in _KERNEL.finditer(text):
        s = f"{m.group(1)}.{m.group(2)}"
        if s not in series:
            series.append(s)
        if m.group(3) == "GA" and s not in ga:
            ga.append(s)
        if m.group(3) == "HWE" and s not in hwe:
            hwe.append(s)
    return series, ga, hwe


def rocm_os(rel: dict) -> list[dict]:
    entries: dict[tuple[str, str], dict] = {}
    for item in rel["os_supported"]:
        os_id, versions = split_os(item)
        for v in versions:
            major = major_of(os_id, v)
            e = entries.setdefault(
                (os_id, major),
                {
                    "id": os_id,
                    "version": major,
                    "point_releases": [],
                    "kernels": [],
                    "ga_kernels": [],
                    "hwe_kernels": [],
                    "kernels_as_printed": {},
                },
            )
            if v != major and v not in e["point_releases"]:
                e["point_releases"].append(v)
    for label, text in (rel.get("kernels") or {}).items():
        os_id, versions = split_os(label)
        major = major_of(os_id, versions[0])
        e = entries.get((os_id, major))
        if e is None:
            continue  # a kernel row for an OS the release does not list (e.g. 6.3.0 Debian 12)
        series, ga, hwe = parse_kernels(text)
        for key, vals in (("kernels", series), ("ga_kernels", ga), ("hwe_kernels", hwe)):
            for s in vals:
                if s not in e[key]:
                    e[key].append(s)
        e["kernels_as_printed"][label] = text
    return list(entries.values())


def gfx_arch(support: list[dict]) -> dict[str, str]:
    return {g["gfx_target"]: g["architecture"] for g in support}


# ERRATA section 7: gfx906 on ROCm 6.0-6.3. The system-requirements pages list MI50 (6.0.0 on) and
# Radeon VII / Radeon PRO VII (6.0.2 on; 6.0.0 marks them supported) as "⚠️ Deprecated: Existing
# features and capabilities are maintained"; the compatibility CSV the release lists come from
# omits gfx906. Its own level, citing both; the 6.4.2-era page marks it unsupported (6.4.0/6.4.1
# pages not read; ROCm 6.4.0's rocBLAS already lacked gfx906: ROCm/ROCm#4625), so 6.4 is left out.
GFX906_DEPRECATED = ((6, 0), (6, 1), (6, 2), (6, 3))
GFX906_SOURCE = (
    "ROCm/rocm-install-on-linux docs/reference/system-requirements.rst @ docs/6.0.0, docs/6.0.2, docs/6.1.x, "
    "docs/6.2.x, docs/6.3.0 (rendered at https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.4/"
    "reference/system-requirements.html): MI50, Radeon PRO VII, Radeon VII '⚠️ Deprecated'; "
    "ROCm/ROCm docs/compatibility/compatibility-matrix-historical-6.0.csv omits gfx906"
)


def rocm_release(rel: dict, archs: dict[str, str]) -> dict:
    v = rel["version"]
    out = {
        "version": v,
        "release_date": rel.get("release_date"),
        "os": rocm_os(rel),
        "gpus": {g: ("full" if archs.get(g) in INSTINCT_ARCHS else "radeon") for g in rel["gfx_targets"]},
        "amdgpu_driver": None,
        "amdgpu_driver_compat": [s.strip() for s in rel["amdgpu_driver_compat"].split(",")],
        "torch": rel["pytorch_versions_amd_lists"],
        "source": rel["source"],
        "kernels_source": rel.get("kernels_source"),
        "confirmed": bool(rel["confirmed"]),
        "kernels_confirmed": rel.get("kernels_confirmed", True) is not False,
        "notes": list(rel.get("notes") or []),
    }
    # The compat column lists every amdgpu driver AMD calls compatible, newest first. Up to 6.4
    # the driver lines carry the ROCm numbers, so the pairing is the same-numbered line; from 7.0
    # (30.x numbering) it is the newest one listed for the release's column.
    same = f"{v.rsplit('.', 1)[0]}.x"
    if same in out["amdgpu_driver_compat"]:
        out["amdgpu_driver"] = same
    else:
        out["amdgpu_driver"] = out["amdgpu_driver_compat"][0]
    if v in ("7.0.0", "7.0.1"):
        out["notes"].append(
            "amdgpu pairing inferred: 7.0.0 and 7.0.1 share one matrix column ('7.0.1/7.0.0'), whose "
            "newest driver (30.10.1) is taken as the pairing for both; AMD does not pair them one to one."
        )
    if vtuple(v) >= (7, 2, 1):
        out["notes"].append(
            "amdgpu: AMD's matrix gives the driver line (30.30.x), not a point release. "
            + (
                "'ROCm 7.2.4 <-> amdgpu 30.30.4' is inferred (install page links docs-30.30.4; "
                "third-party scripts use amdgpu/30.30.4 with amdgpu-install_7.2.4.70204-1), not stated "
                "by AMD; AMD's 7.2.x quick start pins amdgpu/30.30.1 (shared/reference/installers.md B1 "
                "'Version data'). repos.json carries 30.30.4 with confirmed=false."
                if v == "7.2.4"
                else "Which 30.30 point release pairs with it is not stated in the sources read."
            )
        )
    if vtuple(v) >= (7, 2, 1):
        # ERRATA item 3: 7.2.1 added Ubuntu 24.04.4 (6.8 GA / 6.17 HWE) and ended 24.04.3.
        for e in out["os"]:
            if e["id"] == "ubuntu" and e["version"] == "24.04":
                e["point_releases"] = ["24.04.4"]
                e["kernels"], e["ga_kernels"], e["hwe_kernels"] = ["6.8", "6.17"], ["6.8"], ["6.17"]
                e["kernels_as_printed"] = {"Ubuntu 24.04.4": "6.8 [GA], 6.17 [HWE] (glibc 2.39)"}
                e["source"] = f"{ROCM_724_SYSREQ}; {ROCM_721_NOTES} (via {ERRATA} item 3)"
                e["confirmed"] = True
        out["notes"] = [n for n in out["notes"] if "Treat the Ubuntu 24.04 point release" not in n]
        out["notes"].append(
            "errata.md item 3: ROCm 7.2.1 added Ubuntu 24.04.4 (kernel 6.8 GA, 6.17 HWE) and ended "
            "support for 24.04.3; matrices.md's 24.04.3/6.14 row holds for 7.1.1/7.2.0 only."
        )
    if vtuple(v) >= (7, 2, 1):
        out["kernels_source"] = (
            "derived from the 7.1.1 OS/kernel lookup table; Ubuntu 24.04.4 kernels from errata.md item 3"
        )
    if v == "7.2.4":
        for e in out["os"]:
            # ERRATA item 3 read these rows from the 7.2.4 system requirements themselves.
            if (e["id"], e["version"]) in (
                ("ubuntu", "22.04"), ("debian", "12"), ("debian", "13"), ("rocky", "9"), ("ol", "10"), ("ol", "8"),
            ):  # fmt: skip
                e["source"] = f"{ROCM_724_SYSREQ} (via {ERRATA} item 3)"
                e["confirmed"] = True
            if (e["id"], e["version"]) == ("debian", "12"):
                e["notes"] = [
                    "Debian 12 is supported only on AMD Instinct MI325X, MI300X, MI300A, MI250X, MI250 "
                    "and MI210 GPUs (system-requirements footnote)."
                ]
            if (e["id"], e["version"]) == ("ol", "9"):
                # ERRATA item 3: AMD's two pages disagree; record both.
                e["kernels"] = ["5.15", "6.12"]
                e["kernels_as_printed"]["Oracle Linux 9 (7.2.4 system requirements)"] = "5.15.0 (UEK)"
                e["notes"] = [
                    "AMD disagrees with itself: 7.2.4 system requirements say 5.15.0 (UEK), the "
                    "compatibility-matrix lookup table says 6.12.0 (UEK); both are listed."
                ]
    if vtuple(v) >= (7, 2, 0):
        out["notes"].append(
            "The product brief said ROCm 7.2.4 supports PyTorch 2.7.0; AMD lists 2.9.1, 2.8.0 and 2.7.1 "
            "(seed check). The torch list follows AMD."
            if v == "7.2.4"
            else "AMD lists PyTorch 2.9.1, 2.8.0 and 2.7.1 for this release."
        )
    if vtuple(v) >= (6, 4, 1):
        out["notes"].append(
            "RDNA4 (gfx1200/gfx1201) is Supported from 6.4.1 in the production docs, not 'preview' "
            "as the product brief said (seed check; ROCm 6.4.1 RELEASE.md)."
        )
    if vtuple(v)[:2] in GFX906_DEPRECATED and "gfx906" not in out["gpus"]:
        out["gpus"]["gfx906"] = "deprecated"
        out["notes"].append(
            f"gfx906 (MI50/MI60, Radeon VII, Radeon PRO VII): level deprecated ({ERRATA} section 7): "
            f"{GFX906_SOURCE}."
            + (" 6.0.0 itself lists Radeon VII and Radeon PRO VII as supported, MI50 as deprecated; one gfx "
               "target takes the weaker level." if v == "6.0.0" else "")
        )
    for e in out["os"]:
        e.setdefault("source", rel.get("kernels_source") or rel["source"])
        e.setdefault("confirmed", out["kernels_confirmed"] or not e["kernels"])
        e.setdefault("notes", [])
    return out


# ----------------------------------------------------------------------------------- ROCm 5.x


def _os_label(printed: str) -> str:
    """'Ubuntu 20.04.3 LTS' -> 'Ubuntu 20.04.3'; 'RHEL 8.6 to 8.7' -> 'RHEL 8.6, 8.7' (split_os's form)."""
    return re.sub(r"\s+LTS$", "", printed.strip()).replace(" to ", ", ")


def _series_x(version: str) -> str:
    return ".".join(version.split(".")[:2]) + ".x"


def rocm5_release(v: str) -> dict:
    """One ROCm 5.x release from its docs/<version> page (legacy_data.ROCM5_PAGES) and additions.py."""
    page = LEGACY.ROCM5_PAGES[v]
    source = ADD.rocm5_source(v)
    os_confirmed = v not in ADD.ROCM5_OS_UNCONFIRMED
    rel = {
        "os_supported": [_os_label(name) for name, _ in page["os"]],
        "kernels": {_os_label(name): kernel for name, kernel in page["os"] if kernel},
    }
    oses = rocm_os(rel)
    for e in oses:
        e["source"] = source
        e["confirmed"] = os_confirmed
        e["notes"] = []
    gpus: dict[str, str] = {}
    for tab, _product, _arch, gfx, mark in page["gpus"]:
        if not mark.startswith("✅"):
            continue
        if tab == "instinct" or gpus.get(gfx) == "full":
            gpus[gfx] = "full"
        else:
            gpus.setdefault(gfx, "radeon")
    own = _series_x(v)
    compat = [own] + [kfd for kfd, users in ADD.ROCM5_KFD.items() if own in users]
    compat = sorted(dict.fromkeys(compat), key=vtuple, reverse=True)
    torch = LEGACY.ROCM5_TORCH.get(v) or LEGACY.ROCM5_TORCH.get(own) or []
    notes = list(ADD.ROCM5_NOTES.get(v, []))
    if v in ADD.ROCM5_OS_UNCONFIRMED:
        notes.append(ADD.ROCM5_OS_UNCONFIRMED[v])
    elif ADD.ROCM5_OS_SET_FOR.get(v, v) != v:
        notes.append(
            f"The docs/{v} page carries the ROCm {ADD.ROCM5_OS_SET_FOR[v]} OS list (AMD commit 'Downgrade OS "
            f"support to {ADD.ROCM5_OS_SET_FOR[v]}', 2023-06-21); it is AMD's page for {v} and is used as such."
        )
    unsupported = sorted({gfx for _t, _p, _a, gfx, mark in page["gpus"] if "❌" in mark} - set(gpus))
    if unsupported:
        names = sorted({p.replace("™", "") for _t, p, _a, gfx, mark in page["gpus"] if "❌" in mark})
        notes.append(f"Listed as unsupported (❌): {', '.join(names)} ({', '.join(unsupported)}).")
    if "gfx906" in gpus:
        notes.append(
            "gfx906 is listed on the Instinct tab (MI50) and on the Radeon Pro / Radeon tabs (Pro VII, VII): "
            "level full."
        )
    if not torch:
        notes.append(f"{ADD.ROCM5_TORCH_NOTE}: none for {v}.")
    notes.append(
        f"amdgpu_driver_compat: the release's own driver line ({own}) plus the KFD rows of the user/kernel-space "
        "support matrix that list its user space series."
    )
    return {
        "version": v,
        "release_date": None,
        "os": oses,
        "gpus": gpus,
        "amdgpu_driver": own,
        "amdgpu_driver_compat": compat,
        "torch": sorted(torch, key=vtuple, reverse=True),
        "source": f"{source}; PyTorch: {ADD.ROCM5_TORCH_SOURCE}; amdgpu: {ADD.ROCM5_KFD_SOURCE}",
        "kernels_source": source,
        "confirmed": v not in ADD.ROCM5_GPU_UNCONFIRMED,
        "kernels_confirmed": os_confirmed,
        "notes": notes,
    }


def _ranges(versions: list[str], order: list[str]) -> str:
    """['5.0.0', '5.0.1', '5.2.0'] over the 5.x order -> '5.0.0-5.0.1, 5.2.0'."""
    out, run = [], []
    for v in order:
        if v in versions:
            run.append(v)
            continue
        if run:
            out.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}")
            run = []
    if run:
        out.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ", ".join(out)


def rocm5_product(p: dict) -> None:
    """Add a product's 5.x listing (supported / unsupported per docs/<version> page) to its history."""
    order = list(ADD.ROCM5_DOCS)
    name = " ".join(p["product"].lower().split())
    listed: dict[str, list[str]] = {}
    for v in order:
        for _tab, product, _arch, gfx, mark in LEGACY.ROCM5_PAGES[v]["gpus"]:
            if " ".join(product.replace("™", "").lower().split()) == name and gfx == p["gfx_target"]:
                listed.setdefault(mark, []).append(v)
    if not listed:
        return
    history = {}
    for mark, versions in listed.items():
        status = "supported" if mark.startswith("✅") else "unsupported" if "❌" in mark else mark
        if "(" in mark:
            status += " " + mark[mark.index("(") :]
        history[_ranges(versions, order)] = status
    p["status_history"] = {**history, **p["status_history"]}
    first = [v for v in order if any(v in vs for m, vs in listed.items() if m.startswith("✅"))]
    if first and re.fullmatch(r"\d+\.\d+\.\d+", p["first_rocm_listed"] or ""):
        p["first_rocm_listed"] = first[0]
        p["notes"] = (p["notes"] + " " if p["notes"] else "") + (
            "first_rocm_listed is the first release of the bundle (which starts at 5.0.0) that lists it."
        )
    p["source"] = (
        f"{p['source']}; 5.x: {ADD.ROCM5_REPO} docs/release/gpu_os_support.md @ branches docs/5.0.0-5.7.1"
    )


def build_rocm(ref: dict) -> dict:
    archs = gfx_arch(ref["rocm_gpu_support"])
    releases = [rocm5_release(v) for v in ADD.ROCM5_DOCS]
    releases += [rocm_release(r, archs) for r in ref["rocm_releases"] if vtuple(r["version"])[:2] >= ROCM_MIN]
    releases += THEROCK.RELEASES  # the new stream (#29): matrices/tools/therock.py
    products = []
    for p in ref["rocm_gpu_support"]:
        gfx = p["gfx_target"]
        products.append(
            {
                "product": p["product"],
                "gfx_target": gfx if gfx and not gfx.endswith("?") else None,
                "architecture": p["architecture"],
                "family": p["family"],
                "first_rocm_listed": p["first_rocm_listed"],
                "status_history": p["status_history"],
                "os_limits": p["os_limits"],
                "source": p["source"],
                "confirmed": bool(p["confirmed"]),
                "notes": p["notes"],
            }
        )
        rocm5_product(products[-1])
    return {
        "schema": "gpuenv.matrices.rocm/1",
        "default": "7.2.4",
        "levels": {
            "full": "Instinct (CDNA) target: supported; AMD still limits some OS entries to particular "
            "Instinct GPUs (footnotes, e.g. 7.2.4 Debian 12: MI325X/MI300X/MI300A/MI250X/MI250/MI210 only; "
            "see the OS entry's notes and products[].os_limits)",
            "radeon": "Radeon / Radeon PRO (RDNA) target: supported, on the narrower OS list AMD gives per GPU",
            "preview": "technology-preview stream only (TheRock 7.9-7.12); no production release 6.2-7.2.4 uses it",
            # 7.14 and 10.0 list Ryzen APUs (gfx115x, gfx1103) on Radeon-like terms: Ubuntu only, inbox driver.
            "deprecated": "listed with '⚠️ Deprecated: existing features and capabilities are maintained, no new "
            "features or optimizations; a future release removes support' (gfx906 in 6.0-6.3: " + GFX906_SOURCE + ")",
        },
        "levels_source": "ROCm system-requirements.rst per-GPU OS limits; shared/reference/matrices.md section 1c; "
        "5.x: the Instinct tab of gpu_os_support.md is full, the Radeon Pro and Radeon tabs radeon",
        "releases": releases,
        "products": products,
    }


# ----------------------------------------------------------------------------------- AMD GPUs


def build_amd(ref: dict) -> dict:
    gpus = []
    for g in ref["amd_gpus"]:
        gfx = g["gfx_target"]
        arch = g["architecture"]
        notes = [g["notes"]] if g.get("notes") else []
        if gfx and gfx.endswith("?"):
            notes.append(f"gfx target not established by any source (reference guessed {gfx})")
            gfx = None
        if arch and arch.endswith("?"):
            notes.append(f"architecture not established (reference guessed {arch})")
            arch = None
        pci = f"1002:{g['device_id'][2:].lower()}"
        if pci in ADD.AMD_NOTES:
            notes.append(ADD.AMD_NOTES[pci])
        gpus.append(
            {
                "pci_id": pci,
                "name": g["product"],
                "codename": g.get("codename"),
                "gfx_target": gfx,
                "architecture": arch,
                "integrated": g["kind"] == "APU",
                "revisions": g.get("revisions"),
                "source": g["source"],
                "gfx_source": g.get("gfx_source"),
                "confirmed": bool(g["confirmed"]),
                "notes": notes,
            }
        )
    gpus += amd_legacy(gpus)
    known = {g["pci_id"] for g in gpus}
    gpus += [g for g in AMD_IDS.entries() if g["pci_id"] not in known]  # #29's missing ids
    return {"schema": "gpuenv.matrices.amd_gpus/1", "gpus": gpus}


PCIIDS_SOURCE = "pci.ids (pciutils/pciids @ c1c12547d626, Version 2026.08.22), vendor 1002"


def _driver_facts(chip: str) -> dict:
    _gfx, _arch, _apu, kfd, drivers, _src, _ok, _note = ADD.AMD_LEGACY_CHIPS[chip]
    return {
        "chip": chip,
        "kernel_drivers": list(drivers),
        "kernel_drivers_source": ADD.SI_CIK_DRIVER,
        "kfd": kfd,
        "kfd_source": ADD.KFD_PROBE,
    }


def amd_legacy(known: list[dict]) -> list[dict]:
    """GCN 1-5 GPUs (Southern Islands to Vega 20) from the amdgpu pciidlist, named by pci.ids. Entries the
    reference already has (Vega 10/20) get the chip, kernel driver and KFD facts added."""
    by_pci = {g["pci_id"]: g for g in known}
    out = []
    for chip, ids in ADD.AMDGPU_PCIIDLIST.items():
        gfx, arch, integrated, kfd, drivers, gfx_source, confirmed, note = ADD.AMD_LEGACY_CHIPS[chip]
        for short in ids.split():
            pci = f"1002:{short}"
            if pci in by_pci:
                assert by_pci[pci]["gfx_target"] == gfx, pci  # a check, not a source of values
                by_pci[pci].update(_driver_facts(chip))
                continue
            printed = LEGACY.AMD_PCI_NAMES.get(pci)
            if printed is None:
                continue  # in the driver's table, not named by pci.ids: left out
            m = re.fullmatch(r"(.*?)\s*\[(.*)\]", printed)
            notes = [note] if note else []
            if pci in ADD.AMD_LEGACY_DISAGREE:
                notes.append(ADD.AMD_LEGACY_DISAGREE[pci])
            if kfd == "unsupported":
                notes.append(ADD.AMD_KFD_NOTE.format(chip=chip))
            if "radeon" in drivers:
                param = "si_support" if arch.startswith("GCN GFX6") else "cik_support"
                notes.append(ADD.AMD_SI_CIK_NOTE.format(param=param))
            out.append(
                {
                    "pci_id": pci,
                    "name": m.group(2) if m else printed,
                    "codename": m.group(1) if m else printed,
                    "gfx_target": gfx,
                    "architecture": arch,
                    "integrated": integrated,
                    "revisions": None,
                    "source": f"{PCIIDS_SOURCE} ('{printed}'); chip: {ADD.AMDGPU_DRV} CHIP_{chip}",
                    "gfx_source": gfx_source,
                    "confirmed": confirmed and pci not in ADD.AMD_LEGACY_DISAGREE,
                    "notes": notes,
                    **_driver_facts(chip),
                }
            )
    return out


# ----------------------------------------------------------------------------------- CUDA

CUDA_ARCH_URL = (
    "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html"
)
BINARY_COMPAT_URL = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility"
OPEN_BLOG = (
    "https://developer.nvidia.com/blog/nvidia-transitions-fully-towards-open-source-gpu-kernel-modules/"
)
KMOD_GUIDE = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html"


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
        branches.append(
            {
                "branch": b["branch"],
                "designation": b["designation"],
                "end_of_life": b["end_of_life"],
                "max_cuda": max_cuda,
                "legacy_gpus": bool(b["supports_maxwell_pascal_volta"]),
                "open_available": bool(b["open_kernel_modules_available"]),
                "open_default": bool(b["open_kernel_modules_default"]),
                "source": b["source"],
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

TORCH_PATCHES = {
    "2.4": ["2.4.0", "2.4.1"],
    "2.5": ["2.5.0", "2.5.1"],
    "2.6": ["2.6.0"],
    "2.7": ["2.7.0", "2.7.1"],
    "2.8": ["2.8.0"],
    "2.9": ["2.9.0", "2.9.1"],
    "2.10": ["2.10.0"],
    "2.11": ["2.11.0"],
    "2.12": ["2.12.0", "2.12.1"],
    "2.13": ["2.13.0"],
    "2.14": ["2.14.0"],
}
ROCM_14 = [
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102",
    "gfx1200", "gfx1201", "gfx950", "gfx1150", "gfx1151",
]  # fmt: skip
ROCM_15 = ROCM_14[:9] + ["gfx1103"] + ROCM_14[9:]
TI_212_CANDIDATE = (
    "pytorch/test-infra de717a4fd60df2a566ca7b794a6eacdfb8d9164d '[Release 2.12] advance candidate version' "
    "(#7973), 2026-04-15"
)
GFX1103_LANDED = (
    "https://github.com/pytorch/pytorch/pull/179788, comment by jeffdaily of 2026-04-17: 'Now that "
    "https://github.com/pytorch/pytorch/pull/179653 landed'"
)
ROCM_29_NOTE = (
    "11 targets, without gfx950, gfx1150 and gfx1151: release/2.9 .ci/docker/manywheel/build.sh as quoted by "
    "huggingface/kernel-builder archs.nix (pytorch commit 21fec657) and uv's measured rocm6.4 list; consistent "
    "with pytorch/pytorch#167299 (2025-11-07, after the 2.9 release), which made gfx950/gfx1150/gfx1151 "
    "unconditional by removing a ROCm >= 7.0 check. The build script at the release commit was not read "
    "here (the pytorch/pytorch snapshot is over the fetch limit), so confirmed=false"
)


# get_arch_list() outputs read in a public source; used only to confirm the lists above.
_ISSUE_182250 = (
    "get_arch_list() of this wheel printed in https://github.com/pytorch/pytorch/issues/182250 "
    "(2026-05-03) matches"
)
MEASURED_CUDA = {
    ("2.10", "cu128"): (["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], _ISSUE_182250),
    ("2.11", "cu128"): (["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], _ISSUE_182250),
    ("2.11", "cu126"): (["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], _ISSUE_182250),
}


def cuda_archs(text: str) -> tuple[list[str], list[str], list[str]]:
    """'7.5;8.0;12.0+PTX (+PTX Linux only)' -> (['sm_75', ..., 'sm_120'], ['compute_120'], notes)."""
    notes = []
    m = re.search(r"\((.*)\)\s*$", text)
    if m:
        notes.append(m.group(1))
        text = text[: m.start()].strip()
    sms, ptx = [], []
    for part in text.split(";"):
        part = part.strip()
        code = part.replace("+PTX", "").replace(".", "")
        sms.append(f"sm_{code}")
        if part.endswith("+PTX"):
            ptx.append(f"compute_{code}")
    return sms, ptx, notes


def rocm_archs(torch_minor: str, variant: str, listed) -> tuple[list[str], bool, str | None]:
    """(archs, confirmed, note) with errata.md items 1 and 2 applied."""
    if torch_minor == "2.7":
        return (
            listed,
            True,
            f"{ERRATA} item 1: list confirmed (hf-nix archs.nix quoting release/2.7 build.sh; uv#14086)",
        )
    if torch_minor == "2.10":
        # ERRATA item 2 corrects the list but reads no get_arch_list of a 2.10.0+rocm7.x wheel and,
        # unlike item 1 for 2.7, does not call the row confirmed: the list rests on PR timing and
        # third-party quotes of release/2.10 build.sh, so it stays confirmed=false.
        return (
            ROCM_14,
            False,
            (
                f"{ERRATA} item 2 corrects matrices.md: 14 targets incl. gfx950, gfx1150, gfx1151 "
                "(pytorch/pytorch#167299 merged before the 2.10 branch cut, #170119; release/2.10 "
                "build.sh quoted by huggingface/kernel-builder archs.nix). Not measured on a 2.10 wheel."
            ),
        )
    if torch_minor == "2.11" and variant == "rocm7.1":
        return (
            ROCM_14,
            False,
            f"{ERRATA} item 2: inferred equal to 2.11 rocm7.2 (same build.sh list), not read",
        )
    if torch_minor == "2.12":
        # No gfx1103 (#29): it came with pytorch/pytorch#179653, which landed after release/2.12 was cut.
        return (
            ROCM_14,
            False,
            (
                f"{ERRATA} item 2: the 14-target list without gfx1103 (one third-party reading of release/2.12 "
                f"build.sh, unslothai/unsloth#9829). gfx1103 came with pytorch/pytorch#179653 (opened "
                f"2026-04-08, landed by 2026-04-17: {GFX1103_LANDED}); issue #29 reports it merged after "
                f"{TI_212_CANDIDATE}, i.e. after the release/2.12 cut (13 Apr 2026 in RELEASE.md's cadence "
                "table). release/2.12 build.sh not read here, so confirmed=false"
            ),
        )
    if torch_minor == "2.13":
        return (
            ROCM_15,
            False,
            (
                f"{ERRATA} item 2: release/2.13 build.sh per a third-party reading, and timing: "
                f"pytorch/pytorch#179653 (gfx1103) landed by 2026-04-17 ({GFX1103_LANDED}), before the "
                "release/2.13 cut (8 Jun 2026 in RELEASE.md's cadence table; test-infra names 2.13.0 the "
                "candidate only at 6d36e31f45e8, 2026-07-08). Not read from the branch, so confirmed=false"
            ),
        )
    if torch_minor == "2.14":
        if variant == "rocm7.2":
            return ROCM_15, False, ADD.ROCM_214_72_NOTE
        return [], False, ADD.ROCM_214_714_NOTE
    if torch_minor == "2.9" and variant in ("rocm6.3", "rocm6.4"):
        # #29: the 2.9 lists rest on a third-party quote of the release build script; the pytorch/pytorch
        # snapshot is too large to fetch here, so the script at the release commit was not read.
        return listed, False, ROCM_29_NOTE
    return listed, True, None


def build_torch(ref: dict) -> dict:
    releases = []
    # 2.14 was a candidate in the reference; it has been released since (#29), with its own sources.
    wheels = [ADD.TORCH_214 if w["torch"].startswith("2.14 ") else w for w in ref["torch_wheels"]]
    for w in wheels:
        minor = w["torch"].split(" ")[0]
        if minor not in TORCH_PATCHES:
            continue  # a candidate, not a release
        source = "; ".join(w["source"]) if isinstance(w["source"], list) else w["source"]
        variants = []
        for name in w["variants"]:
            entry: dict = {
                "variant": name,
                "index_url": f"https://download.pytorch.org/whl/{name}",
                "confirmed": True,
                "notes": [],
            }
            if name == "cpu":
                entry.update(stack="cpu", stack_version=None, archs=[], ptx=[])
            elif name.startswith("cu"):
                digits = name[2:]
                entry.update(stack="cuda", stack_version=f"{digits[:-1]}.{digits[-1]}")
                text = w["cuda_arch_list"][name]
                sms, ptx, notes = cuda_archs(text)
                entry.update(archs=sms, ptx=ptx)
                entry["notes"] += notes
                entry["archs_as_printed"] = text
                if any("third-party" in n for n in notes):
                    # The sources disagree (build script without +PTX, third-party get_arch_list
                    # with compute_120): keep the script's value but do not call it confirmed.
                    entry["confirmed"] = False
                    entry["notes"].append(
                        "sources disagree on a compute_120 PTX entry; ptx follows the release build "
                        "script (kernel-builder quote), so the variant is confirmed=false"
                    )
                measured = MEASURED_CUDA.get((minor, name))
                if measured is not None:
                    assert measured[0] == sms, (minor, name)  # a check, not a source of values
                    entry["notes"].append(measured[1])
            else:
                entry.update(stack="rocm", stack_version=name[4:], ptx=[])
                archs, confirmed, note = rocm_archs(minor, name, w["rocm_arch_list"][name])
                entry["archs"] = archs
                entry["confirmed"] = confirmed
                if note:
                    entry["notes"].append(note)
            variants.append(entry)
        confirmed = bool(w["confirmed"]) or minor == "2.7"  # ERRATA item 1 (item 2 leaves 2.10 open)
        releases.append(
            {
                "minor": minor,
                "versions": TORCH_PATCHES[minor],
                "released": w["release"],
                "python": [p for p in w["python"]],
                "pypi_default": w["pypi_default_linux_x86_64"],
                "variants": variants,
                "source": source,
                "confirmed": confirmed,
                "notes": [w["notes"]] if w.get("notes") else [],
            }
        )
    for r in releases:
        if r["minor"] == "2.10":
            r["notes"] = [
                f"{ERRATA} item 2: the ROCm lists have 14 targets (gfx950, gfx1150, gfx1151 included); "
                "uv's 12-target rows were not a measurement. No get_arch_list of a 2.10.0+rocm7.x wheel "
                "was read, so the ROCm variants (and the row) stay confirmed=false."
            ]
        if r["minor"] == "2.7":
            # Drop matrices.md's "ROCm arch list inferred ... build.sh itself was not read": errata
            # item 1 read the release/2.7 list (via hf-nix) and measured 2.7.1 wheels (uv#14086).
            stale = (
                " ROCm arch list inferred from PR merge dates (before the Mar 2025 branch cut) + uv's "
                "empirical lists; the release/2.7 build.sh itself was not read."
            )
            r["notes"] = [n.replace(stale, "") for n in r["notes"]]
            r["notes"].append(
                f"{ERRATA} item 1 confirms the 11-target ROCm list (release/2.7 build.sh as quoted by hf-nix "
                "archs.nix, pytorch commit 1341794745…#L100, plus get_arch_list of 2.7.1+rocm6.3/6.2.4 in "
                "astral-sh/uv#14086); row confirmed."
            )
    for r in releases:
        for v in r["variants"]:
            if r["minor"] == "2.7" and v["variant"] == "cu128":
                v["notes"].append(ADD.PTX_270_NOTE)
            mark_no_kernels(v)
        if r["minor"] in ADD.CU129:
            r["variants"].append(cu129_variant(r["minor"]))
    releases += old_torch_releases()
    return {
        "schema": "gpuenv.matrices.torch/1",
        "index_url_pattern": "https://download.pytorch.org/whl/<variant>",
        "facts": ref["torch_wheel_facts"],
        "releases": releases,
        "arch_notes": ADD.ARCH_NOTES,
        "gfx_overrides": ADD.GFX_OVERRIDES,
    }


def mark_no_kernels(v: dict) -> None:
    """Effective support: a ROCm variant whose bundled rocBLAS has no kernels for some listed targets."""
    if v["variant"] in ADD.NO_KERNELS_VARIANTS:
        missing = [a for a in ADD.NO_KERNELS_ARCHS if a in v["archs"]]
        if missing:
            v["archs_without_kernels"] = missing
            v["archs_without_kernels_source"] = ADD.NO_KERNELS_SOURCE
            v["archs_without_kernels_confirmed"] = False


def cu129_variant(minor: str) -> dict:
    caps, note = ADD.CU129[minor]
    sms = [f"sm_{c.replace('.', '')}" for c in caps] if caps else []
    return {
        "variant": "cu129",
        "index_url": "https://download.pytorch.org/whl/cu129",
        "confirmed": False,
        "notes": [
            "Built by PyTorch's own CD for this release although not on the default (getting-started) build "
            "matrix: " + ADD.CU129_SOURCE,
            note,
        ],
        "stack": "cuda",
        "stack_version": "12.9",
        "archs": sms,
        "ptx": [],
    }


def old_torch_releases() -> list[dict]:
    """Torch 1.8 - 2.3 (additions.OLD_TORCH): variants, index URLs, arch lists from the builder."""
    out = []
    for rel in ADD.OLD_TORCH:
        variants = []
        for name, caps in rel["variants"]:
            entry: dict = {
                "variant": name,
                "index_url": f"https://download.pytorch.org/whl/{name}",
                "confirmed": True,
                "notes": [],
            }
            if rel.get("find_links"):
                entry["find_links"] = rel["find_links"]
                entry["notes"].append(
                    ADD.OLD_INDEX_NOTE.format(
                        find_links=rel["find_links"], variant=name, upper=name.upper().replace(".", "")
                    )
                )
            if name == "cpu":
                entry.update(stack="cpu", stack_version=None, archs=[], ptx=[])
            elif name.startswith("cu"):
                digits = name[2:]
                sms = sorted({f"sm_{c.replace('.', '')}" for c in caps}, key=vtuple)
                entry.update(stack="cuda", stack_version=f"{digits[:-1]}.{digits[-1]}", archs=sms, ptx=[])
                entry["archs_as_printed"] = ";".join(caps)
            else:
                entry.update(stack="rocm", stack_version=name[4:], ptx=[])
                if caps is None:
                    entry["archs"] = list(ADD.ROCM_DEFAULT_ARCHS)
                    entry["confirmed"] = False
                    entry["notes"].append(ADD.ROCM_DEFAULT_NOTE)
                else:
                    entry["archs"] = list(caps)
            mark_no_kernels(entry)
            variants.append(entry)
        out.append(
            {
                "minor": rel["minor"],
                "versions": rel["versions"],
                "released": None,
                "python": rel["python"],
                "pypi_default": None,
                "variants": variants,
                "source": rel["source"],
                "confirmed": all(v["confirmed"] for v in variants),
                "notes": list(rel["notes"]),
            }
        )
    return out


def material_dated(text: str) -> str:
    """The reference's dating, with the newer releases added since (#29: torch 2.14)."""
    old = "PyTorch 2.13 stable"
    assert old in text, text  # the reference changed: revisit this line
    return text.replace(old, "PyTorch 2.14.0 released by 2026-09-03")


def main() -> None:
    ref = json.loads((REF / "matrices.json").read_text())
    dump("rocm.json", build_rocm(ref))
    dump("amd_gpus.json", build_amd(ref))
    dump("cuda.json", build_cuda(ref))
    dump("torch.json", build_torch(ref))
    dump(
        "bundle.json",
        {
            "schema": "gpuenv.matrices.bundle/1",
            "version": BUNDLE_VERSION,
            "material_dated_up_to": material_dated(ref["meta"]["material_dated_up_to"]),
            "files": ["amd_gpus.json", "nvidia_gpus.json", "rocm.json", "cuda.json", "torch.json"],
            "source": "compiled from shared/reference/matrices.json with errata.md applied and the sourced "
            "additions of matrices/tools/additions.py (matrices/tools/build.py); NVIDIA PCI ids from pci.ids, "
            "pciutils/pciids @ c1c12547d626 (matrices/tools/nvidia_pci.py)",
            "seed_checks": ref["seed_checks"],
        },
    )


if __name__ == "__main__":
    main()
