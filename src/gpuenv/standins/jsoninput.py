"""The one reader of JSON input files: facts, plans, matrices bundles, the journal.

Every one of them may be hostile (a user's report, a plan edited after review, a bundle from the
network, a journal in a chroot), so each goes through the same limits before any of gpuenv
looks at it: a regular file only (never a FIFO or a device node: ``rootpath.read_regular``), a
size cap, strict UTF-8, valid JSON, and a nesting depth no real document comes near. A failure
is an ``InputError`` with one line that names the file and what is wrong; the caller turns it
into its exit status (2 for facts, plans and bundles, 3 for the journal).
"""

from __future__ import annotations

import json
import sys

from gpuenv.rootpath import NotRegular, TooLarge, read_regular

MAX_BYTES = 16 << 20  # facts of a large machine are ~200 KB; a bundle file ~300 KB
MAX_DEPTH = 64  # the deepest gpuenv document is about 6 levels


class InputError(ValueError):
    """An input file that cannot be read as gpuenv JSON; the message is one line."""


def read(path: str, what: str, limit: int = MAX_BYTES, *, max_depth: int | None = MAX_DEPTH) -> object:
    """The JSON document in ``path`` ("-" is standard input), checked as described above
    (``max_depth``: see ``parse``)."""
    return parse(read_bytes(path, what, limit), f"{what} {path}", max_depth=max_depth)


def read_bytes(path: str, what: str, limit: int = MAX_BYTES) -> bytes:
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limit + 1)
            if len(data) > limit:
                raise TooLarge(f"standard input: larger than {limit} bytes")
            return data
        return read_regular(path, limit)
    except TooLarge:
        raise InputError(f"{what} {path}: larger than {limit} bytes; not a {what} file") from None
    except NotRegular:
        raise InputError(f"{what} {path}: not a regular file") from None
    except IsADirectoryError:
        raise InputError(f"{what} {path}: is a directory") from None
    except OSError as exc:
        raise InputError(f"{what} {path}: cannot read: {exc.strerror or exc}") from None


def parse(data: bytes, label: str, *, max_depth: int | None = MAX_DEPTH) -> object:
    """JSON from bytes: strict UTF-8, no NaN/Infinity, depth at most ``max_depth``.

    ``max_depth=None`` leaves the depth to json.loads' own recursion limit, for a reader that
    walks only the shape it expects and refuses anything else where it looks (the matrices'
    Reader): their bundled files are read on every doctor run, and the walk would double the
    cost of reading them."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label}: not UTF-8 text (byte {exc.start})") from None
    try:
        if text.startswith("\ufeff"):  # as json.loads says it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        doc = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{label}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"{label}: nested too deeply") from None
    except ValueError as exc:  # _no_constant
        raise InputError(f"{label}: {exc}") from None
    if max_depth is not None and _depth(doc, max_depth) > max_depth:
        raise InputError(f"{label}: nested deeper than {max_depth} levels")
    return doc


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


# json.loads with an argument builds a decoder for each document; the matrices' entries are read
# one at a time (gpuenv.matrices.index), dozens a run: one decoder serves them all.
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def _depth(doc: object, limit: int = MAX_DEPTH) -> int:
    """Nesting depth, without recursion (a hostile document must not exhaust the stack); the
    walk stops past ``limit``."""
    deepest = 0
    todo = [(doc, 1)]
    while todo:
        node, level = todo.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        if level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        todo.extend((child, level + 1) for child in node if isinstance(child, dict | list))
    return deepest

