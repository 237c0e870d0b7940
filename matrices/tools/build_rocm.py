"""rocm.json: the ROCm releases (the reference, errata.md, ROCm 5.x from legacy_data.json and
TheRock's 7.14 / 10.0 stream from therock.py)."""

from __future__ import annotations

import json
import re

import additions as ADD  # the sourced additions (matrices/tools/additions.py)
import rocm_dates as DATES  # every release date, from AMD's release history (#42)
import therock as THEROCK  # ROCm 7.14 / Core SDK 10.0 (matrices/tools/therock.py)
from build_common import ERRATA, LEGACY, OUT, vtuple

ROCM_MIN = ADD.ROCM_MIN  # 6.0.x and 6.1.x are in the reference; earlier bundles started at 6.2
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

# AMD's footnotes to the 7.0.x columns of its compatibility matrix that limit an OS to named
# Instinct GPUs: the terms an entry's gpus_only holds. Read in alanina/ROCm, a fork of ROCm/ROCm
# (the repository the reference's 7.0.x rows cite): the 7.0.1 release-notes revision for the
# '7.0.1/7.0.0' column, the post-7.0.2 revision for 7.0.2 (its column adds Oracle Linux 10 and
# Debian 13). Azure Linux 3.0's footnote names a Radeon model (MI300X and the Radeon PRO V710),
# which gpus_only cannot hold: it stays a note. The per-GPU footnotes (MI350X, MI325X, MI300A,
# MI200, MI100, the Radeon GPUs) are in products[].os_limits as prose only.
COMPAT_701 = (
    "alanina/ROCm docs/compatibility/compatibility-matrix.rst @ 7603fed08001716a8b968e7a3a2ec9b6c54c49d9 "
    "('7.0.1/7.0.0' column footnotes)"
)
COMPAT_702 = (
    "alanina/ROCm docs/compatibility/compatibility-matrix.rst @ 245d53a021979f24eea1b6c7e0f366bea8ead3cb "
    "('7.0.2' column footnotes)"
)
_SLES_DB_700 = ["MI300X", "MI300A", "MI250X", "MI250", "MI210"]
FOOTNOTES_700 = {  # (os id, major) -> (footnote, its note, the Instinct models; None: not expressible)
    ("rhel", "8"): ("rhel-700", "RHEL 8.10 is supported only on AMD Instinct MI300X, MI300A, MI250X, MI250, MI210 "
                    "and MI100 GPUs.", ["MI300X", "MI300A", "MI250X", "MI250", "MI210", "MI100"]),
    ("sles", "15"): ("sles-db-700", "SLES 15 SP7 is supported only on AMD Instinct MI300X, MI300A, MI250X, MI250 and "
                     "MI210 GPUs.", _SLES_DB_700),
    ("debian", "12"): ("sles-db-700", "Debian 12 is supported only on AMD Instinct MI300X, MI300A, MI250X, MI250 and "
                       "MI210 GPUs.", _SLES_DB_700),
    ("ol", "10"): ("ol-700-mi300x", "Oracle Linux 10 is supported only on AMD Instinct MI355X, MI350X and MI300X GPUs.",
                   ["MI355X", "MI350X", "MI300X"]),
    ("ol", "9"): ("ol-700-mi300x", "Oracle Linux 9 is supported only on AMD Instinct MI355X, MI350X and MI300X GPUs.",
                  ["MI355X", "MI350X", "MI300X"]),
    ("ol", "8"): ("ol-700-mi300x", "Oracle Linux 8 is supported only on AMD Instinct MI300X GPUs.", ["MI300X"]),
    ("debian", "13"): ("db-mi300x", "Debian 13 is supported only on AMD Instinct MI300X GPUs (7.0.2).", ["MI300X"]),
    ("rocky", "9"): ("rl-700", "Rocky Linux 9 is supported only on AMD Instinct MI300X and MI300A GPUs.",
                     ["MI300X", "MI300A"]),
    ("azurelinux", "3.0"): ("az-mi300x", "Azure Linux 3.0 is supported only on AMD Instinct MI300X and AMD Radeon PRO "
                            "V710 GPUs (a Radeon model: not judged by gpus_only).", None),
}  # fmt: skip


def footnotes_700(version: str, oses: list[dict]) -> None:
    """Puts the 7.0.x footnotes on the OS entries they limit (7.0.0, 7.0.1, 7.0.2)."""
    source = COMPAT_702 if version == "7.0.2" else COMPAT_701
    for e in oses:
        found = FOOTNOTES_700.get((e["id"], e["version"]))
        if found is None:
            continue
        name, note, models = found
        e["notes"] = [*e["notes"], f"{note} Compatibility-matrix footnote {name}."]
        e["source"] = f"{e['source']}; per-GPU limit: {source}"
        if models is not None:
            e["gpus_only"] = THEROCK.instinct_only(models)




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
                "by AMD; AMD's 7.2.x quick start pins amdgpu/30.30.1 "
                "(matrices/sources/reference/installers.md B1 'Version data'). repos.json carries "
                "30.30.4 with confirmed=false."
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
                e["gpus_only"] = THEROCK.instinct_only(["MI325X", "MI300X", "MI300A", "MI250X", "MI250", "MI210"])
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
    if vtuple(v) >= ADD.RYZEN_LEGACY_FROM:
        out["gpus"].update({gfx: "radeon" for gfx in ADD.RYZEN_LEGACY})
        # Marked per target (#42): the release's other targets are AMD's, these only secondary.
        out["gpus_unconfirmed"] = list(ADD.RYZEN_LEGACY)
        out["notes"].append(
            ADD.RYZEN_LEGACY_NOTE.format(pages=ADD.RYZEN_LEGACY_PAGES, secondary=ADD.RYZEN_LEGACY_SECONDARY)
        )
    for e in out["os"]:
        e.setdefault("source", rel.get("kernels_source") or rel["source"])
        e.setdefault("confirmed", out["kernels_confirmed"] or not e["kernels"])
        e.setdefault("notes", [])
    if v in ("7.0.0", "7.0.1", "7.0.2"):
        footnotes_700(v, out["os"])
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
    # A line between two listed ones that the list skips (#42: every list is a range, or says why not).
    lines = sorted({_series_x(x) for x in ADD.ROCM5_DOCS} | set(ADD.ROCM5_KFD), key=vtuple)
    low, high = vtuple(compat[-1]), vtuple(compat[0])
    skipped = [x for x in lines if low < vtuple(x) < high and x not in compat]
    if skipped:
        notes.append(
            f"amdgpu_driver_compat skips {', '.join(skipped)}: the support matrix read has KFD rows from "
            f"{min(ADD.ROCM5_KFD, key=vtuple)} on only, none for {', '.join(skipped)}, so whether that driver pairs "
            f"with {v} is not stated (not that it does not)."
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
    for rel in releases:
        # One named source for every date (#42): AMD's release history. The reference's own dates
        # (7.2.1 and 7.2.3 a day off) are replaced; therock.py's must already agree with it.
        date = DATES.iso(rel["version"])
        assert rel["release_date"] in (None, date) or rel.get("stream") != "therock", rel["version"]
        rel["release_date"] = date
    routes = repository_routes(json.loads((OUT / "repos.json").read_text()))
    for rel in releases:
        if rel["version"] in routes:
            rel["repository"] = routes[rel["version"]]
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
            "see the OS entry's gpus_only and notes, and products[].os_limits)",
            "radeon": "Radeon / Radeon PRO (RDNA) target: supported, on the narrower OS list AMD gives per GPU",
            "preview": "technology-preview stream only (TheRock 7.9-7.12); no production release 6.2-7.2.4 uses it",
            # 7.14 and 10.0 list Ryzen APUs (gfx115x, gfx1103) on Radeon-like terms: Ubuntu only, inbox driver.
            "deprecated": "listed with '⚠️ Deprecated: existing features and capabilities are maintained, no new "
            "features or optimizations; a future release removes support' (gfx906 in 6.0-6.3: " + GFX906_SOURCE + ")",
        },
        "levels_source": "ROCm system-requirements.rst per-GPU OS limits; "
        "matrices/sources/reference/matrices.md section 1c; 5.x: the Instinct tab of gpu_os_support.md is full, the Radeon Pro and Radeon tabs radeon",
        "release_dates_source": DATES.SOURCE,
        "repository_source": REPOSITORY_SOURCE,
        "releases": releases,
        "products": products,
    }


REPOSITORY_SOURCE = (
    "matrices/repos.json (maintained by hand: the routes the planner installs from, each key with its source "
    "and whether a first-party source confirms its fingerprint), copied by matrices/tools/build_rocm.py so that "
    "the doctor judges a bare box against the release `install auto` plans without reading the planner's file (#42)"
)


def repository_routes(repos: dict) -> dict[str, dict]:
    """Per ROCm release, what of its repository route decides whether `install auto` may plan it:
    the key's fingerprint, whether a first-party source confirms it, and (new stream) the OS
    releases AMD's repository has a directory for. gpuenv.matrices.routes reads it; matrix update
    refuses a bundle whose copy disagrees with its repos.json."""
    key = repos["amd"]["key"]
    out = {
        rel["rocm"]: {"fingerprint": key["fingerprint"], "key_confirmed": key["confirmed"] is True}
        for rel in repos["amd"]["releases"]
    }
    for rel in repos.get("amd_therock", {}).get("releases", ()):
        out[rel["rocm"]] = {
            "fingerprint": rel["key"].get("fingerprint"),
            "key_confirmed": rel["key"].get("confirmed") is True,
            "distros": [{"os": d["os"], "version": d["version"]} for d in rel["distros"]],
        }
    return out


# ----------------------------------------------------------------------------------- AMD GPUs

