"""gpuenv's JSON documents as text: exactly what ``json.dumps(obj, indent=2)`` writes, in less
time and without importing json.

Every document gpuenv prints or saves (facts, reports, plans, the journal) is indented by two
spaces. The standard library writes indented JSON with its pure-Python encoder (its C encoder
writes only compact JSON), and ``import json`` compiles the decoder's and scanner's regexes as
well: on ``gpuenv probe --json``, which reads no JSON, that was about a millisecond of a 30 ms
run. Strings are escaped by the same C function json uses. Reading JSON stays with json.loads.

Not carried over from json.dumps: its check for a container inside itself (gpuenv's documents are
trees built from records; a cycle ends in RecursionError here, ValueError there).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    from _json import encode_basestring_ascii as _string
except ImportError:  # pragma: no cover - a Python built without json's C accelerator
    from json.encoder import py_encode_basestring_ascii as _string

__all__ = ["dumps"]

_INF = float("inf")


def dumps(obj: object) -> str:
    """``json.dumps(obj, indent=2)``: ASCII, NaN and Infinity written as json writes them, keys
    in their order. TypeError for what json cannot write either."""
    parts: list[str] = []
    _write(obj, "\n", parts.append)
    return "".join(parts)


def _write(o: Any, newline: str, out: Callable[[str], object]) -> None:
    """``o`` at a nesting whose lines start with ``newline`` (a newline, then the indent)."""
    kind = type(o)
    if kind is str:
        out(_string(o))
    elif kind is dict:
        if not o:
            out("{}")
            return
        inner = newline + "  "
        sep = "{" + inner
        for key, value in o.items():
            kind = type(value)
            head = sep + (_string(key) if type(key) is str else _key(key)) + ": "
            if kind is str:
                out(head + _string(value))
            elif value is None:
                out(head + "null")
            else:
                out(head)
                _write(value, inner, out)
            sep = "," + inner
        out(newline + "}")
    elif kind is list or kind is tuple:
        if not o:
            out("[]")
            return
        inner = newline + "  "
        sep = "[" + inner
        for value in o:
            if type(value) is str:
                out(sep + _string(value))
            else:
                out(sep)
                _write(value, inner, out)
            sep = "," + inner
        out(newline + "]")
    elif o is None:
        out("null")
    elif o is True:
        out("true")
    elif o is False:
        out("false")
    elif isinstance(o, str):  # subclasses, as json writes them (an Enum of str: its value)
        out(_string(o))
    elif isinstance(o, int):
        out(int.__repr__(o))  # an IntEnum as its number, as json writes it
    elif isinstance(o, float):
        out(_float(o))
    elif isinstance(o, dict):
        _write(dict(o), newline, out)
    elif isinstance(o, (list, tuple)):
        _write(list(o), newline, out)
    else:
        raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


def _key(key: object) -> str:
    """A key that is not a plain string, as json writes it: a str subclass as its text, a
    scalar as its JSON text, quoted."""
    if isinstance(key, str):
        return _string(key)
    if key is None or isinstance(key, (bool, int, float)):
        text = "null" if key is None else dumps(key)
        return f'"{text}"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")
