"""Regenerate matrices/tools/legacy_data.json: ROCm 5.x support pages and older AMD GPU names.

    git clone https://github.com/ROCm/ROCm rocm          # needs the docs/5.x branches (or their commits)
    git -C pciids show c1c12547d626ebf05fd0223144ad87fab5e95d06:pci.ids > /tmp/pci.ids
    python3 matrices/tools/legacy.py rocm /tmp/pci.ids            # writes legacy_data.json
    python3 matrices/tools/legacy.py rocm /tmp/pci.ids --check    # exit 1 if it would change

(pciids = a clone of https://github.com/pciutils/pciids.) Read from the pinned commits in
additions.py, so the output is the same whatever the branches have moved on to:

- ROCM5_PAGES: per ROCm 5.x release, the rows of docs/release/gpu_os_support.md at the head of
  the ROCm repository's docs/<version> branch (what https://rocm.docs.amd.com/en/docs-<version>/
  renders): the supported Linux distributions with their validated kernel, and the GPU tables
  (tab, product, architecture, LLVM target, support mark). Rows are kept as printed.
- ROCM5_TORCH: the PyTorch column of docs/release/3rd_party_support_matrix.md at the docs/5.7.1
  head (the last 5.x edition of AMD's framework table).
- AMD_PCI_NAMES: the pci.ids device name of every PCI id in additions.AMDGPU_PCIIDLIST (the
  amdgpu driver's id -> chip table); ids pci.ids does not name are left out.

build.py reads legacy_data.json (not the git clone) so that the build needs neither input.
"""

from __future__ import annotations

import json
import re
import subprocess  # noqa: S404 - git show of pinned commits, no shell
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import additions as ADD  # noqa: E402

OUT = HERE / "legacy_data.json"
TABS = {
    "AMD Instinct™": "instinct",
    "Instinct™": "instinct",
    "Radeon Pro™": "radeon_pro",
    "Radeon™": "radeon",
}


def git_show(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(  # noqa: S603
        ["git", "-C", git_dir, "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_page(text: str) -> dict:
    """The distributions AMD marks supported and every GPU row, as printed."""
    os_rows: list[list[str]] = []
    gpu_rows: list[list[str]] = []
    section = None
    tab = None
    header: list[str] | None = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("## "):
            title = s[3:].lower()
            section = "os" if "distributions" in title else "gpu" if "gpu" in title else None
            header = None
            continue
        m = re.match(r":{3,}\{tab-item\}\s*(.+)$", s)
        if m:
            tab = TABS.get(m.group(1).strip(), m.group(1).strip())
            header = None
            continue
        if not s.startswith("|"):
            header = None if not s else header
            continue
        row = cells(s)
        if header is None:
            header = [h.lower() for h in row]
            continue
        if set("".join(row)) <= set(":- "):
            continue  # the |:---|:---:| rule under the header
        if section == "os" and tab in (None, "Supported"):
            kernel = row[header.index("validated kernel")] if "validated kernel" in header else ""
            support = row[header.index("support")] if "support" in header else ""
            if "❌" in support:
                continue
            os_rows.append([row[0], kernel])
        elif section == "gpu":
            target = next(c for c in row if re.fullmatch(r"gfx[0-9a-f]+", c))
            gpu_rows.append([tab or "", row[0], row[1], target, row[-1]])
    return {"os": os_rows, "gpus": gpu_rows}


def parse_torch(text: str) -> dict[str, list[str]]:
    """'| 5.2.x | 1.10, 1.11, 1.12 | ...' -> {'5.2.x': ['1.10', '1.11', '1.12']}."""
    out = {}
    column = None  # the PyTorch column of the current table, None outside the Deep Learning table
    for line in text.splitlines():
        if not line.strip().startswith("|"):
            column = None
            continue
        row = cells(line)
        if row[0] == "ROCm":
            names = [c.lower() for c in row]
            column = next((i for i, c in enumerate(names) if "pytorch" in c), None)
        elif column is not None and re.fullmatch(r"5\.\d+(\.\d+|\.x)?", row[0]):
            out[row[0]] = [v.strip() for v in row[column].split(",") if v.strip()]
    return out


def amd_names(pci_ids: str) -> dict[str, str]:
    names: dict[str, str] = {}
    vendor = False
    for line in Path(pci_ids).read_text(encoding="utf-8", errors="replace").splitlines():
        if re.match(r"^[0-9a-f]{4}\s", line):
            vendor = line.startswith("1002 ")
            continue
        m = re.match(r"^\t([0-9a-f]{4})\s+(.*)$", line)
        if vendor and m:
            names[m.group(1)] = m.group(2).strip()
    wanted = {pci for ids in ADD.AMDGPU_PCIIDLIST.values() for pci in ids.split()}
    return {f"1002:{pci}": names[pci] for pci in sorted(wanted) if pci in names}


def generate(git_dir: str, pci_ids: str) -> str:
    pages = {
        version: parse_page(git_show(git_dir, commit, "docs/release/gpu_os_support.md"))
        for version, commit in ADD.ROCM5_DOCS.items()
    }
    torch = parse_torch(git_show(git_dir, ADD.ROCM5_TORCH_COMMIT, "docs/release/3rd_party_support_matrix.md"))
    doc = {
        "generated_by": "matrices/tools/legacy.py from the pinned commits in additions.py; do not edit",
        "ROCM5_PAGES_source": "ROCm/ROCm docs/release/gpu_os_support.md at additions.ROCM5_DOCS[version]; "
        "os: [distribution, validated kernel], gpus: [tab, product, architecture, LLVM target, support]",
        "ROCM5_PAGES": pages,
        "ROCM5_TORCH_source": "ROCm/ROCm docs/release/3rd_party_support_matrix.md at additions.ROCM5_TORCH_COMMIT "
        "(PyTorch column of the Deep Learning table)",
        "ROCM5_TORCH": torch,
        "AMD_PCI_NAMES_source": "pci.ids (pciutils/pciids @ c1c12547d626) device names of the ids in "
        "additions.AMDGPU_PCIIDLIST",
        "AMD_PCI_NAMES": amd_names(pci_ids),
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    text = generate(argv[0], argv[1])
    if "--check" in argv:
        same = OUT.is_file() and OUT.read_text() == text
        print("legacy_data.json is up to date" if same else "legacy_data.json differs from the sources")
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
