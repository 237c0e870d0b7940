"""Reading a matrices file: the one JSON read (``_read``), the field reader (``Reader``) and the
patterns its values must match.

The parser is the run-time check of a bundle, with or without jsonschema installed
(the JSON schemas in gpuenv/schemas validate the shipped data in the tests): every field it
reads must be there with the right type, versions and targets must be well formed, and torch
index URLs must be https://download.pytorch.org/whl/... exactly, since root later pip-installs
from them (AMD's own wheel indexes, which gpuenv only names, https://repo.amd.com/rocm/... or
https://stable.repo.amd.com/rocm/...). Any slip is one MatrixError line naming the file and the path. Patterns are kept as
text: _fullmatch compiles each when first used and keeps it, so a run pays only for the files it
reads.
"""

from __future__ import annotations

import os
import re

from gpuenv.matrices.records import MatrixError

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal, TypeVar, overload

    _T = TypeVar("_T")

MAX_FILE = 16 << 20  # the largest shipped file is under half a megabyte

_VERSION = r"\d+(?:\.\d+)*"  # "7.2.4", "570.133.07", "13.5"
_TORCH_VERSION = r"\d+\.\d+\.\d+"
_SERIES = r"\d+\.(?:\d+|x)"  # "12.9", "12.x"
_CC = r"\d+\.\d"
_PY = r"3\.\d+t?"
_GFX = r"gfx[0-9a-f]{3,4}"
_CUDA_CODE = r"sm_\d{2,3}[a-z]?"
_PTX_CODE = r"compute_\d{2,3}"
_VARIANT = r"cpu|cu\d{3}|rocm\d+\.\d+(?:\.\d+)?"
_BRANCH = r"R\d{3}"
_BUNDLE_VERSION = r"\d{4}\.\d{2}\.\d{2}(?:\.\d+)?"
_PCI = r"[0-9a-f]{4}:[0-9a-f]{4}"
_REVISION = r"[0-9A-F]{2}"  # a PCI revision as amdgpu.ids writes it: "DF"
_CHIP = r"[A-Z][A-Z0-9_]*"  # amdgpu's CHIP_* name: "PITCAIRN", "POLARIS10"
_KERNEL_DRIVERS = ("amdgpu", "radeon")
_KFD = ("supported", "experimental", "unsupported")
# The one host and scheme gpuenv hands to pip: no other host, no http, no userinfo or port, no
# query, fragment, whitespace or "." / ".." path segments. Compiled when torch.json is first
# read (re keeps them): most doctor runs never read it.
_INDEX = r"https://download\.pytorch\.org/whl/[A-Za-z0-9_-][A-Za-z0-9._-]*(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)*/?"
# AMD's wheel indexes for ROCm's new stream, held to the same rules: shown to the user, never
# handed to pip by gpuenv.
_AMD_INDEX = r"https://(?:stable\.)?repo\.amd\.com/rocm/[A-Za-z0-9_-][A-Za-z0-9._-]*/?"
_FIND_LINKS = r"https://download\.pytorch\.org/whl/(?:[A-Za-z0-9_-][A-Za-z0-9._-]*/)*[A-Za-z0-9_-]+\.html"
_STACKS = ("cuda", "rocm", "cpu")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_FULLMATCH: dict[str, Callable[[str], re.Match[str] | None]] = {}


def _fullmatch(pattern: str) -> Callable[[str], re.Match[str] | None]:
    """The compiled ``fullmatch`` of a pattern, compiled once: a matrix file checks thousands
    of values against a dozen patterns, and ``re``'s own cache costs a look-up each time."""
    found = _FULLMATCH.get(pattern)
    if found is None:
        found = _FULLMATCH[pattern] = re.compile(pattern).fullmatch
    return found


class Reader:
    """Typed field access for one bundled data file: every malformed value is one MatrixError
    naming the file and the path (the matrices and advise.json share it)."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, path: str, msg: str) -> MatrixError:
        return MatrixError(f"{self.file}: {path}: {msg}")

    if TYPE_CHECKING:
        # What get() and text() return is the type asked for, and None only where optional.

        @overload
        def get(self, obj: object, key: str, path: str, kind: type[_T], optional: Literal[False] = False) -> _T: ...

        @overload
        def get(self, obj: object, key: str, path: str, kind: type[_T], optional: bool) -> _T | None: ...

    def get(
        self, obj: object, key: str, path: str, kind: type | tuple[type, ...], optional: bool = False
    ) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(path, "expected an object")
        if key not in obj:
            if optional:
                return None
            raise self.fail(f"{path}.{key}", "required field missing")
        value = obj[key]
        if value is None and optional:
            return None
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(f"{path}.{key}", f"expected {want}, got {type(value).__name__}")
        return value

    if TYPE_CHECKING:

        @overload
        def text(self, obj: object, key: str, path: str, pattern: str, optional: Literal[False] = False) -> str: ...

        @overload
        def text(self, obj: object, key: str, path: str, pattern: str, optional: bool) -> str | None: ...

    def text(self, obj: object, key: str, path: str, pattern: str, optional: bool = False) -> Any:
        """A string field that must match ``pattern`` in full."""
        value = self.get(obj, key, path, str, optional)
        if value is not None and not _fullmatch(pattern)(value):
            raise self.fail(f"{path}.{key}", f"{_show(value)} is not well formed")
        return value

    def strs(
        self, obj: object, key: str, path: str, optional: bool = False, pattern: str | None = None
    ) -> tuple[str, ...]:
        value = self.get(obj, key, path, list, optional)
        if value is None:
            return ()
        full = None if pattern is None else _fullmatch(pattern)
        # The common case in one C-level pass each (every bundled list is well formed); the
        # loop below runs only to name the first bad element.
        if {*map(type, value)} <= {str} and (full is None or all(map(full, value))):
            return tuple(value)
        for i, v in enumerate(value):
            if not isinstance(v, str):
                raise self.fail(f"{path}.{key}[{i}]", "expected a string")
            if full is not None and not full(v):
                raise self.fail(f"{path}.{key}[{i}]", f"{_show(v)} is not well formed")
        return tuple(value)

    def str_map(
        self,
        obj: object,
        key: str,
        path: str,
        optional: bool = False,
        keys: str | None = None,
        values: str | None = None,
    ) -> dict[str, str]:
        value = self.get(obj, key, path, dict, optional)
        if value is None:
            return {}
        key_ok = None if keys is None else _fullmatch(keys)
        value_ok = None if values is None else _fullmatch(values)
        for k, v in value.items():
            if not isinstance(v, str):
                raise self.fail(f"{path}.{key}.{k}", f"expected str, got {type(v).__name__}")
            if key_ok is not None and not key_ok(k):
                raise self.fail(f"{path}.{key}", f"key {_show(k)} is not well formed")
            if value_ok is not None and not value_ok(v):
                raise self.fail(f"{path}.{key}.{k}", f"{_show(v)} is not well formed")
        return dict(value)

    def items(
        self, obj: object, key: str, path: str, optional: bool = False
    ) -> list[tuple[str, dict[str, Any]]]:
        value = self.get(obj, key, path, list, optional)
        out: list[tuple[str, dict[str, Any]]] = []
        for i, v in enumerate(value or ()):
            if not isinstance(v, dict):
                raise self.fail(f"{path}.{key}[{i}]", "expected an object")
            out.append((f"{path}.{key}[{i}]", v))
        return out


def _read(directory: str, name: str) -> object:
    """One matrices file, through the one JSON reader: a regular file (an installed bundle may
    be hostile: never a FIFO or a device), at most MAX_FILE bytes, strict UTF-8, valid JSON.
    The depth is left to the Reader, which looks only where it expects a value."""
    return _parse(_read_bytes(directory, name), directory, name)


def _read_bytes(directory: str, name: str) -> bytes:
    from gpuenv.standins.jsoninput import InputError, read_bytes

    try:
        return read_bytes(os.path.join(directory, name), "matrices file", MAX_FILE)
    except InputError as exc:
        raise MatrixError(str(exc)) from None


def _parse(data: bytes, directory: str, name: str) -> object:
    from gpuenv.standins.jsoninput import InputError, parse

    try:
        return parse(data, f"matrices file {os.path.join(directory, name)}", max_depth=None)
    except InputError as exc:
        raise MatrixError(str(exc)) from None
