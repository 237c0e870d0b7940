"""Parsed JSON into frozen records (gpuenv.standins.record), driven by the records' annotations:
the one generic walker behind gpuenv.facts' reader. It refuses only what the types refuse, with
the caller's error class and the path of the value (``facts.gpus[0].pci_id: ...``); fields a
producer added that the records lack are ignored, as the contracts allow."""

from __future__ import annotations

from gpuenv.standins import record as records

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _R = TypeVar("_R")

# Per record type, the fields whose "left out" differs from null, and the flag that remembers it.
LeftOut = dict[type, dict[str, str]]


def _hints(cls: type) -> dict[str, object]:
    cached = _HINTS.get(cls)
    if cached is None:
        import typing  # reading a document only: probe and doctor on a live box never pay for it

        cached = _HINTS[cls] = typing.get_type_hints(cls)
    return cached


_HINTS: dict[type, dict[str, object]] = {}


def build(cls: type[_R], doc: object, path: str, left_out: LeftOut, error: type[Exception]) -> _R:
    """A record of type ``cls`` from a parsed JSON document; ``error`` (with the path) for what the
    schema refuses. ``left_out`` names, per record type, the fields whose absence a flag remembers."""
    if not isinstance(doc, dict):
        raise error(f"{path}: expected an object, got {type(doc).__name__}")
    hints = _hints(cls)
    kwargs: dict[str, object] = {}
    for f in fields_of(cls):
        if f.metadata.get("internal"):
            continue
        if f.name not in doc:
            if f.default is records.MISSING and f.default_factory is records.MISSING:
                raise error(f"{path}.{f.name}: required field missing")
            flag = left_out.get(cls, {}).get(f.name)
            if flag:
                kwargs[flag] = True
            continue
        kwargs[f.name] = _convert(hints[f.name], doc[f.name], f"{path}.{f.name}", left_out, error)
    # Unknown fields are ignored: the contract lets producers add optional fields.
    return cls(**kwargs)


# Per-type answers of typing and gpuenv.standins.record, worked out once: `gpuenv doctor --facts DIR` converts
# thousands of documents per process.
_TYPES: dict[object, tuple[object, tuple[Any, ...], bool, bool]] = {}
_FIELDS: dict[type, tuple[records.Field, ...]] = {}


def fields_of(cls: type) -> tuple[records.Field, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = records.fields(cls)
    return found


def _convert(tp: Any, value: object, path: str, left_out: LeftOut, error: type[Exception]) -> object:  # tp: a type form (list[str], str | None)
    info = _TYPES.get(tp)
    if info is None:
        import types
        import typing

        origin = typing.get_origin(tp)
        union = origin in (typing.Union, types.UnionType)
        info = _TYPES[tp] = (origin, typing.get_args(tp), records.is_record(tp), union)
    origin, args, is_rec, union = info
    if union:
        if value is None:
            if type(None) in args:
                return None
            raise error(f"{path}: must not be null")
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, path, left_out, error)
    if value is None:
        raise error(f"{path}: must not be null")
    if is_rec:
        return build(tp, value, path, left_out, error)
    if origin is tuple:
        if not isinstance(value, list):
            raise error(f"{path}: expected a list, got {type(value).__name__}")
        return tuple(_convert(args[0], v, f"{path}[{i}]", left_out, error) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise error(f"{path}: expected an object, got {type(value).__name__}")
        return {str(k): _convert(args[1], v, f"{path}.{k}", left_out, error) for k, v in value.items()}
    if tp is bool:
        if not isinstance(value, bool):
            raise error(f"{path}: expected true or false, got {value!r}")
        return value
    if tp is int:
        # JSON Schema's integer includes 2.0; a bool is not one.
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise error(f"{path}: expected an integer, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise error(f"{path}: expected a string, got {value!r}")
        return value
    raise error(f"{path}: unsupported type {tp!r}")  # pragma: no cover - a bug in this module or its caller
