"""AMD PCI ids named in pci.ids or libdrm's amdgpu.ids that the reference lacked (#29), merged
into amd_gpus.json by build.py (build_amd.py).

Names: pci.ids (pciutils/pciids @ c1c12547d626, Version 2026.08.22), vendor 1002, and libdrm's
data/amdgpu.ids (pinned in matrices/sources/amdgpu.ids: AMDGPU_IDS below), both read from the
repositories themselves. gfx targets: the codename's target as Mesa's ac_get_llvm_processor_name
maps it (NAVI10 gfx1010, NAVI12 gfx1011, NAVI14 gfx1012, NAVI21 gfx1030, NAVI23 gfx1032, NAVI24
gfx1034, NAVI33 gfx1102, RENOIR gfx90c, REMBRANDT gfx1035, RAVEN gfx902: the source the bundle's
other entries cite); left null where no source read settles it (Picasso/Raven 2 is gfx902 or
gfx909 by silicon revision; MI308X, as for 1002:74a2).

The revisions 7551 C8 (Radeon AI PRO R9600D) and 7590 C1 (RX 9060 XT LP) named in #29 first appear
in amdgpu.ids @ bd856bed / 15cdcfe9 (2026-02, "From ROCm 7.2"); build_amd.py gives every entry that
carries revisions the pinned file's full table (``revisions``), so those entries name them.
"""

from __future__ import annotations

PCIIDS = "pci.ids (pciutils/pciids @ c1c12547d626, Version 2026.08.22), vendor 1002"
# The newest revision of the file readable here: gitlab.freedesktop.org/mesa/drm, read in its mirror
# github.com/sailfishos-mirror/drm (main, snapshot of 2026-07-28; no later commit touches the file).
AMDGPU_IDS = "libdrm data/amdgpu.ids (mesa/drm, mirror sailfishos-mirror/drm @ 15cdcfe9e1c4, 2026-02-25)"
# How the reference (matrices/sources/reference/matrices.json) cites the revision it was read from.
AMDGPU_IDS_REFERENCE = "libdrm data/amdgpu.ids (freedesktop drm mirror X11Libre/mirror.fdo.drm, branch main @ 369990d9660a, 2025-12-19)"
MESA = (
    "Mesa src/amd/common/amd_family.c ac_get_llvm_processor_name (codename -> gfx: NAVI10->gfx1010, "
    "NAVI12->gfx1011, NAVI14->gfx1012, NAVI21->gfx1030, NAVI23->gfx1032, NAVI24->gfx1034, NAVI33->gfx1102, "
    "RENOIR->gfx90c, REMBRANDT->gfx1035, RAVEN->gfx902)"
)
VF_NOTE = (
    "A virtual function (SR-IOV) of the MI350X/MI355X (amdgpu.ids); its target is taken to be the physical "
    "GPU's gfx950 (1002:75a0/75a3), which no source read states for the VF id itself."
)
MI308X_NOTE = (
    "MI308X gfx target left null, as for 1002:74a2: no AMD document read names it (secondary sources report "
    "gfx942); on a live system the KFD topology gives the target."
)
UNNAMED_NOTE = (
    "Named by amdgpu.ids only (pci.ids has no codename for it under vendor 1002): chip, architecture and gfx "
    "target left null."
)
# AMD's own device table (GPUOpen-Tools/device_info, AMD's developer-tools library: PCI id and revision ->
# gfx target and marketing name), read 2026-12-07.
DEVICE_INFO = "GPUOpen-Tools/device_info DeviceInfo.cpp @ a44c00c0c5f83acbda444ac500c8b0e627b05fa1 (v0.44, 2026-01-29)"
# The amdgpu kernel driver's pciidlist (0x15d8: CHIP_RAVEN) and its KFD, which reports every Raven-family
# GPU (GC 9.1.0 Raven, 9.2.2 Raven2/Picasso) as gfx_target_version 90002: what ROCm sees.
RAVEN_KFD = (
    "torvalds/linux drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c @ 005440066f92 (pciidlist: 0x15d8 CHIP_RAVEN|AMD_IS_APU); "
    "drivers/gpu/drm/amd/amdkfd/kfd_device.c @ 002c6ca75289 kgd2kfd_probe ('/* Raven */ case IP_VERSION(9, 1, 0): "
    "case IP_VERSION(9, 2, 2): gfx_target_version = 90002')"
)
PICASSO_NOTE = (
    "gfx902: AMD's device table gives gfx902 for all 52 revisions of 15D8 it lists, and the KFD reports every "
    "Raven-family GPU (Raven, Raven2, Picasso) as 90002 (gfx902). LLVM's gfx909 ('raven2') is a compiler target "
    "the KFD never reports (#42: the bundle had no target)."
)
# #42: values the audit found missing, each from the source named beside it. Applied by build_amd.py over
# whatever entry the reference or IDS gives for the id.
FIXES = {
    "1002:75a8": {
        "gfx_target": "gfx950",
        "architecture": "CDNA4",
        "gfx_source": "ROCm/rocm-docs docs/data/gpus.yaml @ 793e0c2edf9cef63d320ef0e985f52c81e666ecb ('AMD Instinct "
        "MI350P: gfx: gfx950, arch: CDNA 4'; the product -> target table AMD's compatibility pages render), read "
        "2026-12-07; the PCI id -> product name from pci.ids ('Aqua Vanjaram [Instinct MI350P]')",
        "confirmed": True,
        "notes": [
            "gfx950, as the MI350X and MI355X (#42: the bundle had no target, so the doctor could not judge an "
            "MI350P). AMD's device table (GPUOpen-Tools/device_info @ a44c00c0c5f8) has no 75A8 row; the id is "
            "named by pci.ids only."
        ],
    },
    "1002:15d8": {
        "gfx_target": "gfx902",
        "gfx_source": f"{DEVICE_INFO} (0x15D8, every revision: gfx902); {RAVEN_KFD}",
        "confirmed": True,
        # The second audit of 2026-12: the pinned amdgpu.ids names 38 revisions of 15D8 (41 lines: 91, 92 and DB
        # twice); the entry carried none though its note counted them. A non-empty table here is replaced by the
        # file's whole table for the id (build_amd.follow_amdgpu_ids), as for 1002:1902.
        "revisions": {"00": "AMD Radeon RX Vega 8 Graphics WS"},
        "notes": [
            PICASSO_NOTE,
            "amdgpu.ids names 38 revisions on 41 lines (Radeon Vega 1-11 Graphics, Ryzen Embedded R1000); the entry "
            "carries them (the second audit of 2026-12: it carried none).",
        ],
    },
    "1002:1902": {
        "name": "Krackan2 iGPU: Radeon 840M / 820M",
        "gfx_target": "gfx1153",
        "gfx_source": f"{DEVICE_INFO} (0x1902, 25 revisions C0-E8: gfx1153, 'AMD Radeon(TM) 840M Graphics' / "
        "'AMD Radeon(TM) 820M Graphics' / 'AMD Radeon(TM) Graphics')",
        "confirmed": True,
        # The third audit (2026-12-07): the pinned amdgpu.ids (matrices/sources/amdgpu.ids @ 15cdcfe9e1c4) names 13
        # revisions of 1902 (C0-C3, C6-CA, D1, D3, D7, D8); the entry carried none. Any non-empty table here is
        # replaced by the file's whole table for the id (build_amd.follow_amdgpu_ids), as for every other entry.
        "revisions": {"C0": "AMD Radeon 840M Graphics"},
        "notes": [
            "gfx1153's PCI id (#42): AMD's device table lists 25 revisions of 0x1902, C0-E8, as gfx1153 (GFX11_5_3), named "
            "Radeon 840M, 820M or Radeon Graphics by revision; pci.ids names the id 'Krackan2'. The revision names "
            "are the pinned amdgpu.ids' (13 revisions, Radeon 840M or 820M Graphics; the third audit: the entry "
            "carried none, though the file names them)."
        ],
    },
    # The second audit (2026-12-07): targets AMD's device table gives that the bundle lacked.
    "1002:13c0": {
        "gfx_target": "gfx1036",
        "gfx_source": f"{DEVICE_INFO} (0x13C0, all 36 revisions listed, C1-EA: gfx1036, GDT_GFX10_3_6 APU, "
        "'AMD Radeon(TM) Graphics' / 'AMD Radeon(TM) 610M')",
        "confirmed": True,
        "notes": [
            "gfx1036 (the second audit: the bundle had no target, so the doctor could not judge a Granite Ridge "
            "iGPU): AMD's device table gives gfx1036 for every 0x13C0 row; the reference's guess and "
            "torchruntime's gfx1030 are superseded."
        ],
    },
    "1002:731e": {
        "gfx_target": "gfx1010",
        "architecture": "RDNA1",
        "gfx_source": f"{DEVICE_INFO} (0x731E, revisions C6 '731E:C6' and C7 'AMD Radeon RX 5700B': gfx1010, "
        "GDT_GFX10_1_0)",
        "confirmed": True,
        "notes": [
            "gfx1010 (the second audit: the bundle had no target): AMD's device table gives gfx1010 for both "
            "revisions amdgpu.ids names (C6 RX 5700XTB, C7 RX 5700B); RDNA1 is gfx1010's architecture, as for "
            "the bundle's other gfx1010 ids. pci.ids has no name for the id, so no codename is carried."
        ],
    },
    "1002:73ff": {
        "gfx_target_by_revision": {"DF": "gfx1031"},
        "gfx_source": f"{MESA.split(' (')[0]} (NAVI23->gfx1032); {DEVICE_INFO} (0x73FF: revision DF 'AMD Radeon RX "
        "6750 GRE 10GB' gfx1031, GDT_GFX10_3_1; revisions C1, C3, C7, CB, D7, EF, 40-43 gfx1032, GDT_GFX10_3_2_XT)",
        "confirmed": True,
        "notes": [
            "not in ROCm lists / wheel arch lists",
            "One id, two targets (the second audit): AMD's device table gives revision DF (RX 6750 GRE 10GB) "
            "gfx1031 and every other revision it lists gfx1032 (gfx_target_by_revision). amdgpu.ids' CF "
            "(RX 6600 LE), which that table lacks, keeps the entry's gfx1032 (its Navi 23 codename); no source "
            "read gives CF's own. The doctor reads the revision from the facts; without it, it takes gfx1032 and "
            "says the target depends on the revision.",
        ],
    },
    # The second audit of 2026-12 (audit-2026-12-second.md): 1002:6997 (Radeon Pro WX 2100, named by amdgpu.ids
    # only) is CHIP_POLARIS12 in the amdgpu pciidlist the GCN entries cite (additions.GCN_IDS["POLARIS12"]), and
    # AMD's device table gives it GDT_GFX8_0_4 as it gives 0x6995: the KFD reports Polaris 12 as 80003 (gfx803),
    # the target 1002:6995 (the same product) carries. It was left null only because pci.ids has no line for it.
    "1002:6997": {
        "gfx_target": "gfx803",
        "architecture": "GCN GFX8 (Volcanic Islands)",
        "chip": "POLARIS12",
        "kernel_drivers": ["amdgpu"],
        "kernel_drivers_source": "torvalds/linux drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c @ 005440066f92 (Polaris 12 is "
        "neither SI nor CIK: amdgpu only, as for 1002:6995)",
        "kfd": "supported",
        "kfd_source": "torvalds/linux drivers/gpu/drm/amd/amdkfd/kfd_device.c @ 002c6ca75289 kgd2kfd_probe "
        "(FIJI/POLARIS10/11/12/VEGAM 80003)",
        "gfx_source": "torvalds/linux drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c @ 005440066f92 (pciidlist: 0x6997 "
        "CHIP_POLARIS12); drivers/gpu/drm/amd/amdkfd/kfd_device.c @ 002c6ca75289 kgd2kfd_probe (POLARIS12 80003, "
        f"gfx803); {DEVICE_INFO} (0x6997 rev 00 'Radeon Pro WX 2100': GDT_GFX8_0_4, as 0x6995)",
        "confirmed": True,
        "notes": [
            "gfx803, as 1002:6995 (the same product, Polaris 12): the amdgpu pciidlist makes 0x6997 CHIP_POLARIS12 and "
            "the KFD reports Polaris 12 as 80003; AMD's device table lists it beside 0x6995 (GDT_GFX8_0_4). The second "
            "audit of 2026-12: the entry had no target, so the doctor could not judge it. pci.ids has no line for the "
            "id, so no codename is carried."
        ],
    },
    "1002:163f": {
        "name": "AMD Custom GPU 0405",
        "codename": "VanGogh",
        "revisions": {"AE": "AMD Custom GPU 0405", "E1": "AMD Custom GPU 0405"},
        "notes": [
            "Named as pci.ids ('VanGogh [AMD Custom GPU 0405]') and amdgpu.ids (revisions AE, E1) name it (#42: the "
            "bundle had no marketing name, only '(Steam Deck)', which no source read states). AMD's device table "
            f"({DEVICE_INFO}) names revisions 00 and E1 'AMD Radeon(TM) Navi Graphics Custom Made for Magic Leap' "
            "and AF 'AMD Radeon(TM) Graphics', all gfx1033: the id is more than one product."
        ],
    },
}

# (id, pci.ids line, name, codename, gfx, architecture, integrated, amdgpu.ids revisions, notes)
IDS = [
    ("7310", "Navi 10 [Radeon Pro W5700X]", "AMD Radeon Pro W5700X", "Navi 10", "gfx1010", "RDNA1", False, None, ()),
    ("7312", "Navi 10 [Radeon Pro W5700]", "AMD Radeon Pro W5700", "Navi 10", "gfx1010", "RDNA1", False,
     {"00": "AMD Radeon Pro W5700"}, ()),
    ("7341", "Navi 14 [Radeon Pro W5500]", "AMD Radeon Pro W5500", "Navi 14", "gfx1012", "RDNA1", False,
     {"00": "AMD Radeon Pro W5500"}, ()),
    ("7360", "Navi 12 [Radeon Pro 5600M/V520/BC-160]", "AMD Radeon Pro 5600M (41) / Pro V520 (C3)", "Navi 12",
     "gfx1011", "RDNA1", False, {"41": "AMD Radeon Pro 5600M", "C3": "AMD Radeon Pro V520"},
     ("The Radeon Pro V520 is the GPU of AWS g4ad instances.",)),
    ("7362", "Navi 12 [Radeon Pro V520/V540]", "AMD Radeon Pro V540 (C1) / Pro V520 (C3)", "Navi 12", "gfx1011",
     "RDNA1", False, {"C1": "AMD Radeon Pro V540", "C3": "AMD Radeon Pro V520"}, ()),
    ("73a2", "Navi 21 Pro-XTA [Radeon Pro W6900X]", "AMD Radeon Pro W6900X", "Navi 21", "gfx1030", "RDNA2", False,
     None, ()),
    ("73ab", "Navi 21 Pro-XLA [Radeon Pro W6800X/Radeon Pro W6800X Duo]", "AMD Radeon Pro W6800X / W6800X Duo",
     "Navi 21", "gfx1030", "RDNA2", False, None, ()),
    ("73ae", "Navi 21 [Radeon Pro V620 MxGPU]", "AMD Radeon Pro V620 MxGPU", "Navi 21", "gfx1030", "RDNA2", False,
     {"00": "AMD Radeon Pro V620 MxGPU"}, ("The SR-IOV virtual function of the V620 (MxGPU).",)),
    ("73e1", "Navi 23 WKS-XM [Radeon PRO W6600M]", "AMD Radeon Pro W6600M", "Navi 23", "gfx1032", "RDNA2", False,
     {"00": "AMD Radeon Pro W6600M"}, ()),
    ("73e3", "Navi 23 WKS-XL [Radeon PRO W6600]", "AMD Radeon Pro W6600", "Navi 23", "gfx1032", "RDNA2", False,
     {"00": "AMD Radeon Pro W6600"}, ()),
    ("7422", "Navi 24 [Radeon PRO W6400]", "AMD Radeon Pro W6400", "Navi 24", "gfx1034", "RDNA2", False,
     {"00": "AMD Radeon Pro W6400"}, ()),
    ("7423", "Navi 24 [Radeon PRO W6300/W6300M]", "AMD Radeon Pro W6300M (00) / W6300 (01)", "Navi 24", "gfx1034",
     "RDNA2", False, {"00": "AMD Radeon Pro W6300M", "01": "AMD Radeon Pro W6300"}, ()),
    ("7424", "Navi 24 [Radeon RX 6300]", "AMD Radeon RX 6300", "Navi 24", "gfx1034", "RDNA2", False,
     {"00": "AMD Radeon RX 6300"}, ()),
    ("73f0", "Navi 33 [Radeon RX 7600M XT]", "AMD Radeon RX 7600M XT", "Navi 33", "gfx1102", "RDNA3", False, None, ()),
    ("7483", "Navi 33 [Radeon RX 7600M/7600M XT]", "AMD Radeon RX 7600M / 7600M XT", "Navi 33", "gfx1102", "RDNA3",
     False, {"CF": "AMD Radeon RX 7600M"}, ()),
    ("749f", "Navi 33 [Radeon RX 7500]", "AMD Radeon RX 7500", "Navi 33", "gfx1102", "RDNA3", False, None, ()),
    ("15dd", "Raven Ridge [Radeon Vega Series / Radeon Vega Mobile Series]", "Raven Ridge iGPU: Radeon Vega 3-11",
     "Raven Ridge", "gfx902", "GCN5", True, None,
     ("amdgpu.ids names 30 revisions (Radeon Vega 3/6/8/10/11 Graphics, Ryzen Embedded V1000).",)),
    ("15d8", "Picasso/Raven 2 [Radeon Vega Series / Radeon Vega Mobile Series]", "Picasso / Raven 2 iGPU: Radeon Vega 1-11",
     "Picasso", None, "GCN5", True, None,
     (PICASSO_NOTE, "amdgpu.ids names 40 revisions (Radeon Vega 1-11 Graphics, Ryzen Embedded R1000).")),
    ("164c", "Lucienne", "Lucienne iGPU", "Lucienne", "gfx90c", "GCN5", True, None,
     ("Lucienne is a Renoir-family APU (Mesa: CHIP_RENOIR).",)),
    ("15e7", "Barcelo", "Barcelo iGPU", "Barcelo", "gfx90c", "GCN5", True, None,
     ("Barcelo is a Renoir-family APU (Mesa: CHIP_RENOIR).",)),
    ("164d", "Rembrandt", "Rembrandt iGPU", "Rembrandt", "gfx1035", "RDNA2", True, None, ()),
    ("74a8", None, "AMD Instinct MI308X HF", "Aqua Vanjaram", None, "CDNA3", False,
     {"00": "AMD Instinct MI308X HF"}, (MI308X_NOTE,)),
    ("74b6", None, "AMD Instinct MI308X", "Aqua Vanjaram", None, "CDNA3", False,
     {"00": "AMD Instinct MI308X"}, (MI308X_NOTE,)),
    ("75b0", None, "AMD Instinct MI350X VF", "Aqua Vanjaram", "gfx950", "CDNA4", False,
     {"00": "AMD Instinct MI350X VF"}, (VF_NOTE,)),
    ("75b3", None, "AMD Instinct MI355X VF", "Aqua Vanjaram", "gfx950", "CDNA4", False,
     {"00": "AMD Instinct MI355X VF"}, (VF_NOTE,)),
    # The rest of amdgpu.ids (then @ 369990d9660a) that had no entry; targets only where the codename is named.
    ("7347", "Navi 14 [Radeon Pro W5500M]", "AMD Radeon Pro W5500M", "Navi 14", "gfx1012", "RDNA1", False,
     {"00": "AMD Radeon Pro W5500M"}, ()),
    ("73e0", "Navi 23", "AMD Radeon RX 6600M", "Navi 23", "gfx1032", "RDNA2", False, {"00": "AMD Radeon RX 6600M"}, ()),
    ("7421", "Navi 24 [Radeon PRO W6500M]", "AMD Radeon Pro W6500M", "Navi 24", "gfx1034", "RDNA2", False,
     {"00": "AMD Radeon Pro W6500M"}, ()),
    ("7481", "Navi 33 [Steam Machine]", "AMD Steam Machine", "Navi 33", "gfx1102", "RDNA3", False,
     {"C7": "AMD Steam Machine"}, ()),
    ("731e", None, "AMD Radeon RX 5700XTB (C6) / RX 5700B (C7)", None, None, None, False,
     {"C6": "AMD Radeon RX 5700XTB", "C7": "AMD Radeon RX 5700B"}, (UNNAMED_NOTE,)),
    ("1435", "Sephiroth [AMD Custom GPU 0405]", "AMD Custom GPU 0932", "Sephiroth", None, None, True,
     {"AE": "AMD Custom GPU 0932"}, (UNNAMED_NOTE,)),
    ("6666", None, "AMD Radeon R5 M200 Series", None, None, None, False, {"00": "AMD Radeon R5 M200 Series"}, (UNNAMED_NOTE,)),
    ("6799", None, "AMD Radeon HD 7900 Series", None, None, None, False, {"00": "AMD Radeon HD 7900 Series"}, (UNNAMED_NOTE,)),
    ("6830", None, "AMD Radeon 7800M Series", None, None, None, False, {"00": "AMD Radeon 7800M Series"}, (UNNAMED_NOTE,)),
    ("6831", None, "AMD Radeon 7700M Series", None, None, None, False, {"00": "AMD Radeon 7700M Series"}, (UNNAMED_NOTE,)),
    ("684c", None, "ATI FirePro V (FireGL V) Graphics Adapter", None, None, None, False,
     {"00": "ATI FirePro V (FireGL V) Graphics Adapter"}, (UNNAMED_NOTE,)),
    ("6902", None, "AMD Radeon Series", None, None, None, False, {"00": "AMD Radeon Series"}, (UNNAMED_NOTE,)),
    ("6997", None, "AMD Radeon Pro WX 2100", None, None, None, False, {"00": "AMD Radeon Pro WX 2100"}, (UNNAMED_NOTE,)),
]  # fmt: skip


def revisions(path) -> dict[str, dict[str, str]]:
    """amdgpu.ids as {short id: {revision: marketing name}}, in the file's order ('7551,\tC8,\tName')."""
    out: dict[str, dict[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = [p.strip() for p in line.split(",", 2)]
        if len(parts) == 3 and len(parts[0]) == 4 and len(parts[1]) == 2 and not line.startswith("#"):
            out.setdefault(parts[0].lower(), {})[parts[1].upper()] = parts[2]
    return out


def entries() -> list[dict]:
    out = []
    for short, printed, name, codename, gfx, arch, integrated, revisions, notes in IDS:
        sources = []
        if printed:
            sources.append(f"{PCIIDS} ('{printed}')")
        if revisions:
            sources.append(AMDGPU_IDS)
        out.append(
            {
                "pci_id": f"1002:{short}",
                "name": name,
                "codename": codename,
                "gfx_target": gfx,
                "architecture": arch,
                "integrated": integrated,
                "revisions": revisions,
                "source": "; ".join(sources),
                "gfx_source": (MESA if short not in ("75b0", "75b3") else "the physical GPU's entry (1002:75a0/75a3)")
                if gfx
                else None,
                "confirmed": gfx is not None and short not in ("75b0", "75b3"),
                "notes": list(notes),
            }
        )
    return out
