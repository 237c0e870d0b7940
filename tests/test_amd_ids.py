"""AMD PCI ids against the pinned pci.ids / amdgpu.ids extracts in matrices/sources (#29): every
id of amdgpu.ids has an entry, and every id added for #29 says what those files say."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from gpuenv.matrices import load

SOURCES = Path(__file__).resolve().parents[1] / "matrices" / "sources"
sys.path.insert(0, str(SOURCES.parent / "tools"))
import amd_ids  # noqa: E402 - matrices/tools/amd_ids.py, the build's module of added ids


def pci_names() -> dict[str, str]:
    out = {}
    for line in (SOURCES / "pci.ids.1002").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\t([0-9a-f]{4})  (.+)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def amdgpu_ids() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for line in (SOURCES / "amdgpu.ids").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([0-9A-F]{4}),\s*([0-9A-F]{2}),\s*(.+)$", line)
        if m:
            out.setdefault(m.group(1).lower(), {})[m.group(2)] = m.group(3).strip()
    return out


@pytest.fixture(scope="module")
def gpus():
    return {g.pci_id: g for g in load().amd_gpus()}


def test_the_extracts_are_the_pinned_revisions():
    assert (SOURCES / "pci.ids.1002").read_text(encoding="utf-8").startswith("1002  Advanced Micro Devices")
    assert "# List of AMDGPU IDs" in (SOURCES / "amdgpu.ids").read_text(encoding="utf-8")
    assert len(pci_names()) > 1000 and len(amdgpu_ids()) > 200


def test_every_amdgpu_ids_device_has_an_entry(gpus):
    missing = sorted(i for i in amdgpu_ids() if f"1002:{i}" not in gpus)
    assert missing == []


def test_the_ids_of_the_issue_are_there(gpus):
    for short in ("7360 7362 7310 7312 7341 73a2 73ab 73ae 73e3 73e1 7422 7423 7424 73f0 7483 749f "
                  "15dd 15d8 164c 15e7 164d 74a8 74b6 75b0 75b3").split():  # fmt: skip
        assert f"1002:{short}" in gpus, short
    assert gpus["1002:7362"].gfx_target == "gfx1011"  # Navi 12, the GPU of AWS g4ad
    assert gpus["1002:73ae"].gfx_target == "gfx1030"  # V620 MxGPU
    assert gpus["1002:74b6"].gfx_target is None  # MI308X: no AMD document names it


@pytest.mark.parametrize("row", amd_ids.IDS, ids=lambda r: r[0])
def test_each_added_id_says_what_the_pinned_files_say(row, gpus):
    short, printed, _name, codename, gfx, _arch, _integrated, revisions, _notes = row
    names, revs = pci_names(), amdgpu_ids()
    if printed is not None:
        assert names.get(short) == printed  # the pci.ids line, verbatim
        assert codename and printed.startswith(codename.split()[0])
    else:
        assert short not in names or not names[short].startswith(("Navi", "Aqua"))
    if revisions:
        assert {k: v for k, v in revs[short].items() if k in revisions} == revisions
    entry = gpus[f"1002:{short}"]
    assert entry.gfx_target == amd_ids.FIXES.get(f"1002:{short}", {}).get("gfx_target", gfx)  # #42's fixes win
    assert "pci.ids" in entry.source or "amdgpu.ids" in entry.source


def test_every_entry_with_revisions_carries_the_pinned_table(gpus):
    revs = amdgpu_ids()
    carrying = {pci: g for pci, g in gpus.items() if g.revisions}
    assert len(carrying) > 70
    for pci, g in carrying.items():
        assert g.revisions == revs[pci[5:]], pci


def test_the_revisions_of_the_issue_name_their_cards(gpus):
    # amdgpu.ids @ 15cdcfe9e1c4 ("From ROCm 7.2"); the older pin named neither revision
    assert gpus["1002:7551"].product("c8") == "AMD Radeon AI PRO R9600D"
    assert gpus["1002:7551"].product("c0") == "AMD Radeon AI PRO R9700"
    assert gpus["1002:7590"].product("c1") == "AMD Radeon RX 9060 XT LP"
    assert gpus["1002:7590"].product("c7") == "AMD Radeon RX 9060"
    assert "15cdcfe9e1c4" in gpus["1002:7551"].source and "369990d9660a" not in gpus["1002:7551"].source


def test_no_note_says_the_pinned_amdgpu_ids_lacks_an_id_it_names(gpus):
    # The third audit: 1002:1902 (gfx1153) said "the pinned amdgpu.ids has no 1902 line" and carried no
    # revisions, though the file names 13 (Radeon 840M / 820M Graphics)
    revs = amdgpu_ids()
    for pci, g in gpus.items():
        if pci[5:] in revs:
            assert not any("amdgpu.ids has no" in n for n in g.notes), pci
    krackan2 = gpus["1002:1902"]
    assert krackan2.gfx_target == "gfx1153" and krackan2.revisions == revs["1902"]
    assert krackan2.product("c2") == "AMD Radeon 820M Graphics" and krackan2.product("d8") == "AMD Radeon 840M Graphics"
