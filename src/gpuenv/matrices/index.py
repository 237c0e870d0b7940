"""Entries of the shipped data not even read yet (``Located``: their bytes, found by the file's
index).

An index (rocm.index.json beside rocm.json, and so on: ``index_of``), written by
matrices/tools/build.py beside the file it indexes, says where each release of rocm.json and
torch.json and each GPU of amd_gpus.json lies in its file (byte offset and length, with the key
it is looked up by: its version or versions, its PCI id), and where rocm.json's ``default`` and
torch.json's notes, overrides and AMD wheels lie (and cuda.json's toolkits, for their versions
alone: ``Matrices.cuda_versions``). A doctor run on an AMD box then parses one release and one
GPU of the largest files it reads, not all of them: reading them whole was most of what it spent
on the data. An index holds no value of its own: the key is checked against the entry when the
entry is parsed, and an index that does not fit its file (the file is another size, as after an
edit without a rebuild, or a span's bytes are no whole object there) is not used: the file is
then read whole. An installed bundle (``gpuenv matrix update``) carries no index, and is parsed
whole before use anyway.
"""

from __future__ import annotations

import os

from gpuenv.matrices.reader import Reader, _show
from gpuenv.matrices.records import MatrixError

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (start-up time)
if TYPE_CHECKING:
    from typing import Any, overload


def index_of(name: str) -> str:
    """The index of a matrices file: rocm.json's is rocm.index.json."""
    return name.removesuffix(".json") + ".index.json"


class Located:
    """One entry of a matrices file, not parsed yet: the file's bytes and where the entry lies."""

    __slots__ = ("data", "end", "file", "index", "start")

    def __init__(self, data: bytes, start: int, end: int, file: str, index: str) -> None:
        self.data, self.start, self.end, self.file, self.index = data, start, end, file, index

    def read(self) -> object:
        """The entry, through the one JSON reader; MatrixError where these bytes are no JSON value."""
        from gpuenv.standins.jsoninput import InputError, parse

        try:
            return parse(self.data[self.start : self.end], f"{self.file} at byte {self.start}", max_depth=None)
        except InputError as exc:
            raise MatrixError(f"{exc} ({self.index} does not fit it: rebuild with matrices/tools/build.py)") from None

    def entry(self, r: Reader, p: str, field: str, key: str | tuple[str, ...], pattern: str = "") -> dict[str, Any]:
        """The entry at ``p``, an object whose ``field`` is the key its index gives it: a string
        well formed by ``pattern``, or a list of strings (a torch release's versions)."""
        doc = self.read()
        if not isinstance(doc, dict):
            raise r.fail(p, "expected an object")
        given = r.text(doc, field, p, pattern) if isinstance(key, str) else r.strs(doc, field, p)
        if given != key:
            raise r.fail(f"{p}.{field}", f"{_show(given)} where {self.index} has {_show(key)} (rebuild it: matrices/tools/build.py)")
        return doc


_CLOSING = {ord("{"): ord("}"), ord("["): ord("]"), ord('"'): ord('"')}


class Section:
    """A file's index, with the file's bytes: where its entries lie. ``fits`` is False where a
    span is not within the file, or its first and last bytes do not open and close one object,
    list or string there (an index older than its file)."""

    def __init__(self, index: str, part: dict[str, Any], data: bytes, label: str) -> None:
        self.index, self.data, self.label = index, data, label
        self.fits = True
        self._values: dict[str, Located] = {}
        self._rows: dict[str, list[tuple[Any, Located]]] = {}
        for key, value in part.items():
            if type(value) is not list:
                continue  # the size, or something that is no span: refused when asked for
            if len(value) == 2 and type(value[0]) is int:
                self._values[key] = self._span(key, value)
                continue
            rows = []
            for i, row in enumerate(value):
                if not (type(row) is list and len(row) == 3 and type(row[0]) in (str, list)):
                    raise self._fail(f"{key}[{i}]", "expected [key, offset, length]")
                rows.append((row[0], self._span(f"{key}[{i}]", row[1:])))
            self._rows[key] = rows

    def _fail(self, key: str, msg: str) -> MatrixError:
        return MatrixError(f"{self.index}: $.{key}: {msg}")

    def _span(self, key: str, span: list[Any]) -> Located:
        start, length = span if len(span) == 2 else (None, None)
        if type(start) is not int or type(length) is not int:
            raise self._fail(key, "expected [offset, length]")
        end = start + length
        data = self.data
        if not (0 <= start < end <= len(data) and _CLOSING.get(data[start]) == data[end - 1]):
            self.fits = False
        return Located(data, start, end, self.label, self.index)

    def value(self, key: str) -> Located:
        """A top-level value of the file (rocm.json's ``default``)."""
        if key not in self._values:
            raise self._fail(key, "expected [offset, length]")
        return self._values[key]

    if TYPE_CHECKING:

        @overload
        def entries(self, key: str) -> list[tuple[str, Located]]: ...

        @overload
        def entries(self, key: str, kind: type[list[Any]]) -> list[tuple[list[Any], Located]]: ...

    def entries(self, key: str, kind: type = str) -> list[tuple[Any, Located]]:
        """The entries of a top-level list of the file, in the file's order: (lookup key, entry);
        the key a string, or of ``kind`` list (a torch release's versions, checked by its reader)."""
        if key not in self._rows:
            raise self._fail(key, "expected a list of [key, offset, length]")
        rows = self._rows[key]
        for i, (found, _) in enumerate(rows):
            if type(found) is not kind:
                raise self._fail(f"{key}[{i}]", "expected [key, offset, length]")
        return rows

    def has(self, key: str) -> bool:
        """Whether the index locates a top-level value ``key`` (torch.json's notes: optional)."""
        return key in self._values


def section(directory: str, name: str) -> Section | None:
    """The index of the file ``name`` of ``directory`` (``index_of``), with the file's bytes;
    None where the directory has no such index, or it does not fit the file (the file is not the
    size it records, or an entry is not where it says): then the file is read whole. A malformed
    index is a MatrixError."""
    from gpuenv.matrices.reader import _parse, _read_bytes

    index = index_of(name)
    if not os.path.isfile(os.path.join(directory, index)):
        return None
    part = _parse(_read_bytes(directory, index), directory, index)
    if type(part) is not dict or type(part.get("bytes")) is not int:
        raise MatrixError(f"{index}: expected an object with the size of {name} in bytes")
    data = _read_bytes(directory, name)
    if len(data) != part["bytes"]:
        return None
    found = Section(index, part, data, f"matrices file {os.path.join(directory, name)}")
    return found if found.fits else None
