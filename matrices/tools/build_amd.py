"""amd_gpus.json: the reference's AMD GPUs, the older chips of pci.ids (legacy_data.json with
additions.py's driver facts) and the ids amd_ids.py adds."""

from __future__ import annotations

import re

import additions as ADD  # the sourced additions (matrices/tools/additions.py)
import amd_ids as AMD_IDS  # AMD PCI ids the reference lacked (matrices/tools/amd_ids.py)
from build_common import LEGACY, OUT


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
    apply_fixes(gpus)
    follow_amdgpu_ids(gpus)
    return {"schema": "gpuenv.matrices.amd_gpus/1", "gpus": gpus}


def apply_fixes(gpus: list[dict]) -> None:
    """#42's corrections (amd_ids.FIXES): each replaces the fields it names, its notes replace the
    entry's, and the entry's source gains the citation of what was added."""
    by_pci = {g["pci_id"]: g for g in gpus}
    assert set(AMD_IDS.FIXES) <= set(by_pci), set(AMD_IDS.FIXES) - set(by_pci)
    for pci, fix in AMD_IDS.FIXES.items():
        g = by_pci[pci]
        g.update(fix)
        if "revisions" in fix and AMD_IDS.AMDGPU_IDS not in g["source"]:
            g["source"] = f"{g['source']}; {AMD_IDS.AMDGPU_IDS}"


def follow_amdgpu_ids(gpus: list[dict]) -> None:
    """Revision names come from the pinned amdgpu.ids (matrices/sources/amdgpu.ids): an entry that
    carries revisions gets the file's whole table for its id (the reference kept a few revisions of
    an older revision of the file), and the citation names the pinned revision."""
    table = AMD_IDS.revisions(OUT / "sources" / "amdgpu.ids")
    for g in gpus:
        g["source"] = g["source"].replace(AMD_IDS.AMDGPU_IDS_REFERENCE, AMD_IDS.AMDGPU_IDS)
        if g["revisions"]:
            g["revisions"] = table[g["pci_id"][5:]]


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
