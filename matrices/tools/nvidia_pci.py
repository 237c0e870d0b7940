"""Regenerate matrices/nvidia_gpus.json from pci.ids.

    git -C pciids show c1c12547d626ebf05fd0223144ad87fab5e95d06:pci.ids > /tmp/pci.ids
    python3 matrices/tools/nvidia_pci.py /tmp/pci.ids

(pciids = a clone of https://github.com/pciutils/pciids.) The committed nvidia_gpus.json is the
output for that file (Version 2026.08.22); run on it, the script reproduces it byte for byte. Given
another pci.ids it still works, but records the version that file prints instead of the commit.

pci.ids names carry the chip code (GK110, GH100, GB202, ...), and the chip fixes the architecture
and the compute capability (CHIPS below, with its source per generation). Every NVIDIA device line
whose first word is a known GPU chip and that names a product in brackets is kept (audio, USB, bridge,
nForce chipset and reserved/engineering lines are not GPUs and are skipped). Left out, so that the
doctor says "unknown" for them: pre-CUDA GPUs (NV1x-NV4x, G7x: no compute capability), chipset
IGPs (C7x/MCP7x/MCP89 "ION": their capability is not in the sources read) and chips whose capability
no source read gives (GB112, GB120, GR100/GR102 Rubin).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "nvidia_gpus.json"
# The header and vendor 10de block of pci.ids @ PCIIDS_COMMIT, pinned in the repository
# (matrices/sources/pci.ids.10de) so that nvidia_gpus.json rebuilds from a clone; another pci.ids
# can be named on the command line.
PCI_IDS = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "sources" / "pci.ids.10de"
PCIIDS_COMMIT = "c1c12547d626ebf05fd0223144ad87fab5e95d06"
PCIIDS_VERSION = "2026.08.22"

CC_CURRENT = (
    "NVIDIA CUDA GPUs page https://developer.nvidia.com/cuda-gpus (and its legacy page "
    "https://developer.nvidia.com/cuda-legacy-gpus) matched by product name to the pci.ids chip, and the "
    "'CUDA Toolkit, Driver, and Architecture Matrix' "
    "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html"
)
CC_OLD = (
    "product -> compute capability rows of NVIDIA's CUDA GPUs page as kept in copies of its older revisions "
    "(e.g. https://gist.github.com/zachnicoll/f404a070611ccffda607bc65e4636d8f: GTX 780/780 Ti/TITAN 3.5, "
    "GT 730 3.5, GTX 680/770/690/660/650 and GT 740 3.0, Tesla K80 3.7, GTX 580/570/480/470 2.0, GTX 560 "
    "Ti/550 Ti/460/GTS 450 2.1), matched by product name to the pci.ids chip; NVIDIA's current legacy page "
    "was read only down to 5.0"
)
CC_TESLA = (
    "Tesla-generation chips: CUDA C Programming Guide (major revision 1 = Tesla architecture; minor "
    "revisions 1.0 G80, 1.1 G84/G86/G9x, 1.2 GT21x, 1.3 GT200 as tabulated in copies of the guide's "
    "appendix), not read from NVIDIA's page"
)
CC_THOR = (
    "https://developer.nvidia.com/cuda-gpus (11.0: Jetson T5000, T4000); pci.ids names the chip "
    "'GB10B [Jetson AGX Thor]', and that the AGX Thor module is the T5000 is not stated in the pages read"
)

# Where each chip's compute capability comes from: written once under "sources" in the JSON; each
# entry names its key.
SOURCES = {
    "cuda-gpus": CC_CURRENT,
    "cuda-gpus-copies": CC_OLD,
    "programming-guide": CC_TESLA,
    "thor": CC_THOR,
}

# chip code -> (architecture, compute capability, confirmed, key into SOURCES)
CHIPS: dict[str, tuple[str, str, bool, str]] = {}
for _chips, _arch, _cc, _ok, _src in (
    (("G80",), "Tesla", "1.0", False, "programming-guide"),
    (("G84", "G86", "G92", "G94", "G96", "G96C", "G98"), "Tesla", "1.1", False, "programming-guide"),
    (("GT215", "GT216", "GT218"), "Tesla", "1.2", False, "programming-guide"),
    (("GT200",), "Tesla", "1.3", False, "programming-guide"),
    (("GF100", "GF110"), "Fermi", "2.0", False, "cuda-gpus-copies"),
    (
        ("GF104", "GF106", "GF108", "GF114", "GF116", "GF117", "GF119"),
        "Fermi",
        "2.1",
        False,
        "cuda-gpus-copies",
    ),
    (("GK104", "GK106", "GK107"), "Kepler", "3.0", False, "cuda-gpus-copies"),
    (("GK110", "GK110B", "GK180", "GK208", "GK208B"), "Kepler", "3.5", False, "cuda-gpus-copies"),
    (("GK210",), "Kepler", "3.7", False, "cuda-gpus-copies"),
    (("GM107", "GM108"), "Maxwell", "5.0", True, "cuda-gpus"),
    (("GM200", "GM204", "GM206"), "Maxwell", "5.2", True, "cuda-gpus"),
    (("GP100",), "Pascal", "6.0", True, "cuda-gpus"),
    (("GP102", "GP104", "GP106", "GP107", "GP108"), "Pascal", "6.1", True, "cuda-gpus"),
    (("GV100",), "Volta", "7.0", True, "cuda-gpus"),
    (("TU102", "TU104", "TU106", "TU116", "TU117"), "Turing", "7.5", True, "cuda-gpus"),
    (("GA100",), "Ampere", "8.0", True, "cuda-gpus"),
    (("GA102", "GA103", "GA104", "GA106", "GA107"), "Ampere", "8.6", True, "cuda-gpus"),
    (("AD102", "AD103", "AD104", "AD106", "AD107"), "Ada", "8.9", True, "cuda-gpus"),
    (("GH100",), "Hopper", "9.0", True, "cuda-gpus"),
    (("GB100", "GB102"), "Blackwell", "10.0", True, "cuda-gpus"),
    (("GB110",), "Blackwell", "10.3", True, "cuda-gpus"),  # the page: 10.3 = NVIDIA GB300, B300
    (("GB10B",), "Blackwell", "11.0", False, "thor"),
    (("GB202", "GB203", "GB205", "GB206", "GB207"), "Blackwell", "12.0", True, "cuda-gpus"),
    (("GB20B",), "Blackwell", "12.1", True, "cuda-gpus"),  # 12.1 = NVIDIA GB10; pci.ids 'GB20B [GB10]'
):
    for _chip in _chips:
        CHIPS[_chip] = (_arch, _cc, _ok, _src)

# The first word of a device name is the chip plus a variant suffix (GL: Quadro/Tesla, M: mobile,
# GLM, BM, b: GT200b); exact chip codes (GK110B, GB10B, GB20B, G96C) are matched first.
_SUFFIXES = ("GLM", "GL", "BM", "GM", "M", "b")
_LINE = re.compile(r"^\t([0-9a-f]{4})  ([A-Za-z0-9]+)\b[^\[]*\[(.+)\]\s*$")
_SKIP = re.compile(r"Audio|Engineering Sample|Reserved|Initial Dev|NVSwitch|ES\b|Root Complex", re.I)


def chip_of(word: str) -> str | None:
    if word in CHIPS:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and word[: -len(suffix)] in CHIPS:
            return word[: -len(suffix)]
    return None


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


def pci_ids_of(text: str) -> dict[str, str]:
    """What the file is: the pinned commit when its Version matches, else only the version it prints."""
    m = re.search(r"^#\s*Version:\s*(\S+)", text, re.M)
    version = m.group(1) if m else "unknown"
    if version == PCIIDS_VERSION:
        return {"repository": "pciutils/pciids", "commit": PCIIDS_COMMIT, "version": version}
    print(
        f"note: pci.ids Version {version}, not {PCIIDS_VERSION}; recording the version only", file=sys.stderr
    )
    return {"version": version}


def source_label(pci_ids: dict[str, str]) -> str:
    if "commit" in pci_ids:
        return f"pciutils/pciids pci.ids @{pci_ids['commit'][:12]}"
    return f"pci.ids Version {pci_ids['version']}"


def entries(lines: list[str], source: str) -> dict[str, dict]:
    out = {}
    for line in lines:
        m = _LINE.match(line)
        if not m or _SKIP.search(line):
            continue
        device, word, name = m.groups()
        chip = chip_of(word)
        if chip is None:
            continue
        arch, cc, confirmed, cc_key = CHIPS[chip]
        out[f"10de:{device}"] = {
            "pci_id": f"10de:{device}",
            "name": f"NVIDIA {name.strip()}",
            "chip": chip,
            "architecture": arch,
            "compute_capability": cc,
            "source": f"{source}; cc: sources.{cc_key}",
            "confirmed": confirmed,
        }
    return out


def main() -> None:
    text = PCI_IDS.read_text(encoding="utf-8", errors="replace")
    pci_ids = pci_ids_of(text)
    gpus = entries(nvidia_lines(text), source_label(pci_ids))
    doc = {
        "schema": "gpuenv.matrices.nvidia_gpus/1",
        "pci_ids": pci_ids,
        "sources": SOURCES,
        "gpus": sorted(gpus.values(), key=lambda g: g["pci_id"]),
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} ({len(gpus)} GPUs)")


if __name__ == "__main__":
    main()
