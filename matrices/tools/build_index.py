"""The indexes (rocm.index.json beside rocm.json, ...): where each release of rocm.json and
torch.json, each GPU of amd_gpus.json and each toolkit of cuda.json lies in its file (byte offset
and length, with the key it is looked up by), and where rocm.json's default and torch.json's
notes, overrides and AMD wheels lie, so that gpuenv parses only the entries a run asks about
(gpuenv.matrices.index). Written from the files as build.py wrote them; no value of their own."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from build_common import OUT

# What is indexed: per file, the top-level lists (with the field each entry is looked up by)
# and the top-level values.
INDEXED = {
    "rocm.json": ({"releases": "version"}, ("default",)),
    "amd_gpus.json": ({"gpus": "pci_id"}, ()),
    "torch.json": ({"releases": "versions"}, ("arch_notes", "gfx_overrides", "amd_wheels")),
    "cuda.json": ({"toolkits": "version"}, ()),  # the versions alone: the doctor's staleness check
}
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, i: int, expect: str = "") -> int:
    i = _WS.match(text, i).end()
    if expect:
        assert text[i] == expect, (i, text[i : i + 20])
        i = _WS.match(text, i + 1).end()
    return i


def _items(text: str, i: int, opening: str, read: Callable[[int], tuple[Any, int]]) -> list[Any]:
    """What ``read`` makes of each item of the object or list that opens at ``i``: it takes the
    item's first index and returns (what it made, the index after the item)."""
    out = []
    i = _skip(text, i, opening)
    while text[i] != {"{": "}", "[": "]"}[opening]:
        item, i = read(i)
        out.append(item)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return out


def _members(text: str) -> list[tuple[str, int, int]]:
    """(key, start, end) of each value of the document's top-level object, as character indices."""

    def member(i: int) -> tuple[tuple[str, int, int], int]:
        key, i = _DECODER.raw_decode(text, i)
        start = _skip(text, i, ":")
        end = _DECODER.raw_decode(text, start)[1]
        return (key, start, end), end

    return _items(text, 0, "{", member)


def _elements(text: str, start: int) -> list[tuple[Any, int, int]]:
    """(value, start, end) of each element of the list at ``start``, as character indices."""

    def element(i: int) -> tuple[tuple[Any, int, int], int]:
        value, end = _DECODER.raw_decode(text, i)
        return (value, i, end), end

    return _items(text, start, "[", element)


def index_of(name: str) -> str:
    """rocm.json's index is rocm.index.json (gpuenv.matrices.index.index_of)."""
    return name.removesuffix(".json") + ".index.json"


def build_index() -> dict[str, dict]:
    """Each indexed file's index, by the index's name."""
    out = {}
    for name, (lists, values) in INDEXED.items():
        raw = (OUT / name).read_bytes()
        text = raw.decode("utf-8")
        at = _Bytes(text)
        members = {key: (start, end) for key, start, end in _members(text)}
        doc: dict = {
            "schema": "gpuenv.matrices.index/1",
            "about": f"where each entry of {name} lies in it ([key, byte offset, length]), written by "
            "matrices/tools/build.py (build_index.py) from the file it wrote: gpuenv parses only the entries a run "
            "asks about; no value of its own",
            "bytes": len(raw),
        }
        for key in values:
            start, end = members[key]
            doc[key] = [at(start), at(end) - at(start)]
        for key, field in lists.items():
            doc[key] = [
                [value[field], at(start), at(end) - at(start)] for value, start, end in _elements(text, members[key][0])
            ]
        out[index_of(name)] = doc
    return out


class _Bytes:
    """Character index -> byte offset in the UTF-8 text, for indices asked in rising order."""

    def __init__(self, text: str) -> None:
        self.text, self.char, self.byte = text, 0, 0

    def __call__(self, char: int) -> int:
        if char < self.char:
            self.char, self.byte = 0, 0
        self.byte += len(self.text[self.char : char].encode("utf-8"))
        self.char = char
        return self.byte
