"""Regenerate matrices/nvidia_gpus.json from pci.ids.

``python3 matrices/tools/nvidia_pci.py [/usr/share/misc/pci.ids]``

pci.ids names carry the chip code (GH100, AD102, GB202, ...), and the chip fixes the architecture
and the compute capability (NVIDIA's CUDA GPUs page). Debian's pci.ids on the build machine is
from 2023, so every named line of ids 0x2080-0x2fff (GA100 through Blackwell) that it lacks or names
differently (NEWER) was copied from pciutils/pciids pci.ids @ 006181e2c5d5 (vendor 10de section):
besides Hopper refresh and Blackwell, that adds e.g. RTX 4060 (2882, 2808), RTX 4060 Ti (2788),
RTX 5000/4500/4000 Ada and the Blackwell laptop parts, and corrects three stale 2023 names (20fd,
24c7, 26b1). Ids below 0x2080 come from the 2023 file only. Chips whose compute capability only
secondary sources give (GB110 = 10.3, GB20B = 12.1, Tegra parts) are left out.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "nvidia_gpus.json"
PCI_IDS = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/usr/share/misc/pci.ids")
DEBIAN_SOURCE = "pci.ids (Debian package pci.ids 0.0~2023.04.11-1, Version 2023.04.10), vendor 10de"
NEWER_SOURCE = "pci.ids (pciutils/pciids @ 006181e2c5d5b9a3b57d252aa5b3d827971d41a9), vendor 10de"
CC_SOURCE = (
    "chip -> compute capability: NVIDIA CUDA GPUs page https://developer.nvidia.com/cuda-gpus and "
    "'CUDA Toolkit, Driver, and Architecture Matrix' "
    "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html"
)

# chip code (without GL/M/B suffixes) -> (architecture, compute capability)
CHIPS = {
    "GM107": ("Maxwell", "5.0"),
    "GM108": ("Maxwell", "5.0"),
    "GM200": ("Maxwell", "5.2"),
    "GM204": ("Maxwell", "5.2"),
    "GM206": ("Maxwell", "5.2"),
    "GP100": ("Pascal", "6.0"),
    "GP102": ("Pascal", "6.1"),
    "GP104": ("Pascal", "6.1"),
    "GP106": ("Pascal", "6.1"),
    "GP107": ("Pascal", "6.1"),
    "GP108": ("Pascal", "6.1"),
    "GV100": ("Volta", "7.0"),
    "TU102": ("Turing", "7.5"),
    "TU104": ("Turing", "7.5"),
    "TU106": ("Turing", "7.5"),
    "TU116": ("Turing", "7.5"),
    "TU117": ("Turing", "7.5"),
    "GA100": ("Ampere", "8.0"),
    "GA102": ("Ampere", "8.6"),
    "GA103": ("Ampere", "8.6"),
    "GA104": ("Ampere", "8.6"),
    "GA106": ("Ampere", "8.6"),
    "GA107": ("Ampere", "8.6"),
    "AD102": ("Ada", "8.9"),
    "AD103": ("Ada", "8.9"),
    "AD104": ("Ada", "8.9"),
    "AD106": ("Ada", "8.9"),
    "AD107": ("Ada", "8.9"),
    "GH100": ("Hopper", "9.0"),
    "GB100": ("Blackwell", "10.0"),
    "GB102": ("Blackwell", "10.0"),
    "GB202": ("Blackwell", "12.0"),
    "GB203": ("Blackwell", "12.0"),
    "GB205": ("Blackwell", "12.0"),
    "GB206": ("Blackwell", "12.0"),
    "GB207": ("Blackwell", "12.0"),
}

# Lines from the newer pci.ids (see the module docstring) for ids 0x2080-0x2fff the 2023 file lacks
# or names differently; lines without a product name are dropped by the parser.
NEWER = """
\t20bd  GA100 [A800 SXM4 40GB]
\t20fd  GA100 [AX800 Converged Accelerator]
\t20fe  GA100 [INT SKU]
\t2186  TU116 [PG160 SKU18]
\t230c  GH100 [H20 NVL16]
\t230e  GH100 [H20 NVL16]
\t2321  GH100 [H100L 94GB]
\t2328  GH100 [H20B]
\t2329  GH100 [H20]
\t232c  GH100 [H20 HBM3e]
\t2330  GH100 [H100 SXM5 80GB]
\t2335  GH100 [H200 SXM 141GB]
\t2337  GH100 [H100 SXM5 64GB]
\t2338  GH100 [H100 SXM5 96GB]
\t2339  GH100 [H100 SXM5 94GB]
\t233a  GH100 [H800L 94GB]
\t233b  GH100 [H200 NVL]
\t233d  GH100 [H100 96GB]
\t2342  GH100 [GH200 120GB / 480GB]
\t2345  GH100 [GH100-88K-A1]
\t2348  GH100 [GH200 144G HBM3e]
\t237e  GH100 [H100 GH3]
\t237f  GH100 [Skinny Joe]
\t248c  GA104 [GeForce RTX 3070 Ti]
\t248d  GA104 [GeForce RTX 3070]
\t248e  GA104 [GeForce RTX 3060 Ti]
\t24c7  GA104 [GeForce RTX 3060 8GB]
\t2584  GA107 [GeForce RTX 3050 6GB]
\t25ac  GA107BM / GN20-P0-R-K2 [GeForce RTX 3050 6GB Laptop GPU]
\t25b0  GA107GL [RTX A1000]
\t25b2  GA107GL [RTX A400]
\t25ec  GA107BM / GN20-P0-R-K2 [GeForce RTX 3050 6GB Laptop GPU]
\t2685  AD102 [GeForce RTX 4090 D]
\t2689  AD102 [GeForce RTX 4070 Ti SUPER]
\t26af  AD102 [PG137]
\t26b1  AD102GL [RTX 6000 Ada Generation]
\t26b2  AD102GL [RTX 5000 Ada Generation]
\t26b3  AD102GL [RTX 5880 Ada Generation]
\t26b7  AD102GL [L20]
\t26b9  AD102GL [L40S]
\t26ba  AD102GL [L20]
\t26bb  AD102GL [L30]
\t2702  AD103 [GeForce RTX 4080 SUPER]
\t2703  AD103 [GeForce RTX 4080 SUPER]
\t2705  AD103 [GeForce RTX 4070 Ti SUPER]
\t2709  AD103 [GeForce RTX 4070]
\t2717  AD103M / GN21-X11 [GeForce RTX 4090 Laptop GPU]
\t2757  AD103M / GN21-X11 [GeForce RTX 4090 Laptop GPU]
\t2770  AD103GLM [RTX 5000 Ada Generation Embedded GPU]
\t2783  AD104 [GeForce RTX 4070 SUPER]
\t2785  AD104 [AC AD104 20GB]
\t2788  AD104 [GeForce RTX 4060 Ti]
\t27b1  AD104GL [RTX 4500 Ada Generation]
\t27b2  AD104GL [RTX 4000 Ada Generation]
\t27b6  AD104GL [L2]
\t27fa  AD104GLM [RTX 4000 Ada Generation Embedded GPU]
\t27fb  AD104GLM [RTX 3500 Ada Generation Embedded GPU]
\t2805  AD106 [GeForce RTX 4060 Ti 16GB]
\t2808  AD106 [GeForce RTX 4060]
\t2822  AD106M [GeForce RTX 3050 A Laptop GPU]
\t2878  AD106GLM [RTX 3000 Ada Generation Embedded GPU]
\t2882  AD107 [GeForce RTX 4060]
\t28a3  AD107M [GeForce RTX 3050 A Laptop GPU]
\t28b0  AD107GL [RTX 2000 / 2000E Ada Generation]
\t28b9  AD107GLM [RTX 1000 Ada Generation Laptop GPU]
\t28ba  AD107GLM [RTX 500 Ada Generation Laptop GPU]
\t28bb  AD107GLM [RTX 500 Ada Generation Laptop GPU]
\t28e3  AD107M [GeForce RTX 3050 A Laptop GPU]
\t28f8  AD107GLM [RTX 2000 Ada Generation Embedded GPU]
\t2901  GB100 [B200]
\t2909  GB100 [HGX B200 168GB]
\t2920  GB100 [TS4 / B100]
\t2941  GB100 [HGX GB200]
\t29bb  GB102 [DRIVE P2021]
\t29bc  GB102 [B100]
\t2b85  GB202 [GeForce RTX 5090]
\t2b87  GB202 [GeForce RTX 5090 D]
\t2b8c  GB202 [GeForce RTX 5090 D V2]
\t2bb1  GB202GL [RTX PRO 6000 Blackwell Workstation Edition]
\t2bb2  GB202GL [RTX PRO 6000D Blackwell Workstation Edition]
\t2bb3  GB202GL [RTX PRO 5000 Blackwell / RTX PRO 5000 72GB Blackwell]
\t2bb4  GB202GL [RTX PRO 6000 Blackwell Max-Q Workstation Edition]
\t2bb5  GB202GL [RTX PRO 6000 Blackwell Server Edition]
\t2bb9  GB202GL [RTX 6000D]
\t2bbc  GB202GL [RTX PRO 6000D Blackwell Max-Q Workstation Edition]
\t2c02  GB203 [GeForce RTX 5080]
\t2c05  GB203 [GeForce RTX 5070 Ti]
\t2c18  GB203M / GN22 [GeForce RTX 5090 Max-Q / Mobile]
\t2c19  GB203M / GN22 [GeForce RTX 5080 Max-Q / Mobile]
\t2c31  GB203GL [RTX PRO 4500 Blackwell]
\t2c33  GB203GL [RTX PRO 4000 Blackwell SFF Edition]
\t2c34  GB203GL [RTX PRO 4000 Blackwell]
\t2c38  GB203GLM [RTX PRO 5000 Blackwell Generation Laptop GPU]
\t2c39  GB203GLM [RTX PRO 4000 Blackwell Generation Laptop GPU]
\t2c3a  GB203GL [RTX PRO 4500 Blackwell Server Edition]
\t2c58  GB203M / GN22-X11 [GeForce RTX 5090 Max-Q / Mobile]
\t2c59  GB203M / GN22-X9 [GeForce RTX 5080 Max-Q / Mobile]
\t2c77  GB203GLM [RTX PRO 5000 Blackwell Embedded GPU]
\t2c79  GB203GLM [RTX PRO 4000 Blackwell Embedded GPU]
\t2d04  GB206 [GeForce RTX 5060 Ti]
\t2d05  GB206 [GeForce RTX 5060]
\t2d18  GB206M [GeForce RTX 5070 Max-Q / Mobile]
\t2d19  GB206M [GeForce RTX 5060 Max-Q / Mobile]
\t2d30  GB206GL [RTX PRO 2000 Blackwell]
\t2d39  GB206GLM [RTX PRO 2000 Blackwell Generation Laptop GPU]
\t2d58  GB206M [GeForce RTX 5070 Max-Q / Mobile]
\t2d59  GB206M [GeForce RTX 5060 Max-Q / Mobile]
\t2d79  GB206GLM [RTX PRO 2000 Blackwell Embedded GPU]
\t2d83  GB207 [GeForce RTX 5050]
\t2d98  GB207M [GeForce RTX 5050 Max-Q / Mobile]
\t2db8  GB207GLM [RTX PRO 1000 Blackwell Generation Laptop GPU]
\t2db9  GB207GLM [RTX PRO 500 Blackwell Generation Laptop GPU]
\t2dd8  GB207M [GeForce RTX 5050 Max-Q / Mobile]
\t2df9  GB207GLM [RTX PRO 500 Blackwell Embedded GPU]
\t2f04  GB205 [GeForce RTX 5070]
\t2f06  GB205 [GeForce RTX 5060]
\t2f18  GB205M [GeForce RTX 5070 Ti Mobile]
\t2f38  GB205GLM [RTX PRO 3000 Blackwell Generation Laptop GPU]
\t2f58  GB205M [GeForce RTX 5070 Ti Mobile]
"""

_LINE = re.compile(r"^\t([0-9a-f]{4})  ((?:GM|GP|GV|TU|GA|AD|GH|GB)\d{3})[A-Z]*\b[^\[]*\[(.+)\]\s*$")
_SKIP = re.compile(r"Audio|Engineering Sample|Reserved|Initial Dev|NVSwitch|ES\b|Root Complex", re.I)


def nvidia_lines(text: str) -> list[str]:
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("10de "):
            inside = True
            continue
        if inside and line and not line.startswith(("\t", "#")):
            break
        if inside:
            out.append(line)
    return out


def entries(lines: list[str], source: str) -> dict[str, dict]:
    out = {}
    for line in lines:
        m = _LINE.match(line)
        if not m or _SKIP.search(line):
            continue
        device, chip, name = m.groups()
        if chip not in CHIPS:
            continue
        arch, cc = CHIPS[chip]
        out[f"10de:{device}"] = {
            "pci_id": f"10de:{device}",
            "name": f"NVIDIA {name.strip()}",
            "chip": chip,
            "architecture": arch,
            "compute_capability": cc,
            "source": f"{source}; {CC_SOURCE}",
            "confirmed": True,
        }
    return out


def main() -> None:
    gpus = entries(nvidia_lines(PCI_IDS.read_text(encoding="utf-8", errors="replace")), DEBIAN_SOURCE)
    gpus.update(entries(NEWER.splitlines(), NEWER_SOURCE))
    doc = {
        "schema": "gpuenv.matrices.nvidia_gpus/1",
        "gpus": sorted(gpus.values(), key=lambda g: g["pci_id"]),
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} ({len(gpus)} GPUs)")


if __name__ == "__main__":
    main()
