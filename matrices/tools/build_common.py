"""What the build modules share: where the tools and the bundle live, the errata's name, the
legacy rows (legacy_data.json), the version key and the one JSON writer."""

from __future__ import annotations

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent


class _Legacy:
    """matrices/tools/legacy_data.json (ROCm 5.x pages, AMD PCI names), written by legacy.py."""

    def __init__(self, path: Path) -> None:
        doc = json.loads(path.read_text())
        self.ROCM5_PAGES = doc["ROCM5_PAGES"]
        self.ROCM5_TORCH = doc["ROCM5_TORCH"]
        self.AMD_PCI_NAMES = doc["AMD_PCI_NAMES"]


LEGACY = _Legacy(HERE / "legacy_data.json")

ERRATA = "matrices/sources/reference/errata.md"


def vtuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def dump(name: str, doc: dict) -> None:
    path = OUT / name
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path.relative_to(OUT.parent)}")

