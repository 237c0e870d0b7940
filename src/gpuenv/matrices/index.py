"""Entries of the shipped data not even read yet (``Located``: their bytes, found by index.json).

index.json, written by matrices/tools/build.py beside the files it indexes, says where each
release of rocm.json and torch.json and each GPU of amd_gpus.json lies in its file (byte offset
and length, with the key it is looked up by: its version or versions, its PCI id), and where
rocm.json's ``default`` and torch.json's notes, overrides and AMD wheels lie (and cuda.json's
toolkits, for their versions alone: ``Matrices.cuda_versions``). A doctor run on an
AMD box then parses one release and one GPU of the largest files it reads, not all of them:
reading them whole was most of what it spent on the data. The index
holds no value of its own: the key is checked against the entry when the entry is parsed, and
an index that does not fit its file (the file is another size, as after an edit without a
rebuild) is not used: the file is then read whole. An installed bundle (``gpuenv matrix
update``) carries no index, and is parsed whole before use anyway.
"""

from __future__ import annotations

import os

from gpuenv.matrices.reader import Reader, _show
from gpuenv.matrices.records import MatrixError

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (start-up time)
if TYPE_CHECKING:
    from typing import Any, overload

INDEX = "index.json"


class Located:
    """One entry of a matrices file, not parsed yet: the file's bytes and where the entry lies."""

    __slots__ = ("data", "end", "label", "start")

    def __init__(self, data: bytes, start: int, end: int, label: str) -> None:
        self.data, self.start, self.end, self.label = data, start, end, label

    def read(self) -> object:
        """The entry, through the one JSON reader; MatrixError where these bytes are no JSON value."""
        from gpuenv.standins.jsoninput import InputError, parse

        try:
            return parse(self.data[self.start : self.end], self.label, max_depth=None)
        except InputError as exc:
            raise MatrixError(f"{exc} ({INDEX} does not fit it: rebuild with matrices/tools/build.py)") from None

    def entry(self, r: Reader, p: str, field: str, key: str | tuple[str, ...], pattern: str = "") -> dict[str, Any]:
        """The entry at ``p``, an object whose ``field`` is the key index.json gives it: a string
        well formed by ``pattern``, or a list of strings (a torch release's versions)."""
        doc = self.read()
        if not isinstance(doc, dict):
            raise r.fail(p, "expected an object")
        given = r.text(doc, field, p, pattern) if isinstance(key, str) else r.strs(doc, field, p)
        if given != key:
            raise r.fail(f"{p}.{field}", f"{_show(given)} where {INDEX} has {_show(key)} (rebuild it: matrices/tools/build.py)")
        return doc


class Section:
    """index.json's part for one file, with that file's bytes: its located entries."""

    def __init__(self, name: str, part: dict[str, Any], data: bytes, label: str) -> None:
        self.name, self.part, self.data, self.label = name, part, data, label

    def _fail(self, key: str, msg: str) -> MatrixError:
        return MatrixError(f"{INDEX}: $.{self.name}.{key}: {msg}")

    def _span(self, key: str, span: object) -> Located:
        if not (type(span) is list and len(span) == 2 and type(span[0]) is int and type(span[1]) is int):
            raise self._fail(key, "expected [offset, length]")
        start, length = span
        if start < 0 or length <= 0 or start + length > len(self.data):
            raise self._fail(key, f"[{start}, {length}] is not within the file's {len(self.data)} bytes")
        return Located(self.data, start, start + length, f"{self.label} at byte {start}")

    def value(self, key: str) -> Located:
        """A top-level value of the file (rocm.json's ``default``)."""
        return self._span(key, self.part.get(key))

    if TYPE_CHECKING:

        @overload
        def entries(self, key: str) -> list[tuple[str, Located]]: ...

        @overload
        def entries(self, key: str, kind: type[list[Any]]) -> list[tuple[list[Any], Located]]: ...

    def entries(self, key: str, kind: type = str) -> list[tuple[Any, Located]]:
        """The entries of a top-level list of the file, in the file's order: (lookup key, entry);
        the key a string, or of ``kind`` list (a torch release's versions, checked by its reader)."""
        rows = self.part.get(key)
        if type(rows) is not list:
            raise self._fail(key, "expected a list of [key, offset, length]")
        out = []
        for i, row in enumerate(rows):
            if not (type(row) is list and len(row) == 3 and type(row[0]) is kind):
                raise self._fail(f"{key}[{i}]", "expected [key, offset, length]")
            out.append((row[0], self._span(f"{key}[{i}]", row[1:])))
        return out


_INDEXES: dict[str, object] = {}  # directory -> its index.json (None where it has none)


def section(directory: str, name: str) -> Section | None:
    """index.json's part for the file ``name`` of ``directory``, with the file's bytes; None
    where the directory has no index.json or the file is not the size it records (then the
    file is read whole)."""
    from gpuenv.matrices.reader import _parse, _read_bytes

    if directory not in _INDEXES:
        has = os.path.isfile(os.path.join(directory, INDEX))
        _INDEXES[directory] = _parse(_read_bytes(directory, INDEX), directory, INDEX) if has else None
    index = _INDEXES[directory]
    if index is None:
        return None
    files = index.get("files") if type(index) is dict else None
    part = files.get(name) if type(files) is dict else None
    if part is None:
        raise MatrixError(f"{INDEX}: $.files.{name}: missing")
    if type(part) is not dict or type(part.get("bytes")) is not int:
        raise MatrixError(f"{INDEX}: $.files.{name}: expected an object with the file's size in bytes")
    data = _read_bytes(directory, name)
    if len(data) != part["bytes"]:
        return None
    return Section(name, part, data, f"matrices file {os.path.join(directory, name)}")
