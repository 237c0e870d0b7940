"""Records: the value classes at gpuenv's seams (facts, findings, plans, matrices), frozen by default.

A small stand-in for ``dataclasses`` with the part gpuenv uses: fields from annotations with
defaults or ``field(default=, default_factory=, repr=, metadata=)``, keyword or positional
``__init__``, ``__post_init__``, ``__repr__``, ``__eq__``, ``__hash__`` of frozen records,
``fields()``, ``replace()``, ``is_record()``.

Why not ``dataclasses``: it writes and ``exec``s the source of every method of every class at
import time, and imports ``inspect``. With ~70 classes on gpuenv's paths that cost more than a
command's own work: about 2 ms a class here, where a record costs 30 us (bench/bench_all.py
measures the commands). The methods below are shared closures, built without ``exec``.
"""

from __future__ import annotations

# For the type checker only (it reads records as dataclasses); at run time typing is not
# imported: it is not on the commands' start-up path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from typing_extensions import dataclass_transform

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_kwargs: object) -> Callable[[_T], _T]:
        return lambda decorated: decorated


__all__ = ["MISSING", "Field", "FrozenError", "field", "fields", "is_record", "record", "replace"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


class FrozenError(AttributeError):
    """Assigning to a field of a frozen record."""


class Field:
    __slots__ = ("default", "default_factory", "metadata", "name", "repr", "type")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, repr: bool = True, metadata: Any = None) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("a field has a default or a default_factory, not both")
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.metadata = dict(metadata) if metadata else {}
        self.name = ""
        self.type: object = None

    def __repr__(self) -> str:
        return f"Field({self.name!r})"


def field(*, default: Any = MISSING, default_factory: Any = MISSING, repr: bool = True, metadata: Any = None) -> Any:
    return Field(default, default_factory, repr, metadata)


def fields(obj_or_cls: object) -> tuple[Field, ...]:
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    try:
        found: dict[str, Field] = cls.__record_fields__  # type: ignore[attr-defined]  # set by record()
        return tuple(found.values())
    except AttributeError:
        raise TypeError(f"{cls.__name__} is not a record") from None


def is_record(obj: object) -> bool:
    """A record class or instance."""
    return hasattr(obj, "__record_fields__")


def replace(obj: _T, **changes: object) -> _T:
    """A copy of ``obj`` with ``changes`` (an unknown name is a TypeError)."""
    values = {f.name: getattr(obj, f.name) for f in fields(obj)}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {sorted(unknown)[0]!r}")
    values.update(changes)
    return type(obj)(**values)


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")


_CLASSVAR = ("ClassVar", "typing.ClassVar")


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(_CLASSVAR)


def _collect(cls: type) -> dict[str, Field]:
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        found.update(base.__dict__.get("__record_fields__", {}))  # each base's own, in MRO order
    namespace = cls.__dict__
    for name, annotation in namespace.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = namespace.get(name, MISSING)
        if isinstance(value, Field):
            f = value
            if f.default is MISSING:
                delattr(cls, name)  # no class attribute posing as a default
            else:
                setattr(cls, name, f.default)
        else:
            f = Field(value)
        f.name, f.type = name, annotation
        found[name] = f
    seen_default = False
    for f in found.values():
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has_default:
            raise TypeError(f"{cls.__name__}: field {f.name!r} without a default follows one with a default")
        seen_default = seen_default or has_default
    return found


def _make_init(cls: type, found: dict[str, Field]) -> Callable[..., None]:
    """``__init__`` writing the instance's ``__dict__`` in bulk, in field order: every field's
    plain default (or MISSING) first, then what was given, then the factories of what is still
    missing. Records are built by the thousand on a doctor run (facts, matrices, findings), so
    this is a few ``dict.update`` calls instead of one ``__setattr__`` per field (3x faster);
    ``__setattr__`` is what keeps frozen records immutable from outside."""
    names = tuple(found)
    known = frozenset(names)
    count = len(names)
    template = {f.name: f.default for f in found.values()}  # MISSING where there is no plain default
    unfilled = tuple(
        (f.name, None if f.default_factory is MISSING else f.default_factory)
        for f in found.values()
        if f.default is MISSING
    )
    post_init = getattr(cls, "__post_init__", None)
    title = cls.__name__

    def __init__(self: object, *args: object, **kwargs: object) -> None:
        if kwargs and not known.issuperset(kwargs):
            name = next(n for n in kwargs if n not in known)
            raise TypeError(f"{title}() got an unexpected keyword argument {name!r}")
        values = self.__dict__
        values.update(template)
        if args:
            if len(args) > count:
                raise TypeError(f"{title}() takes {count} positional arguments but {len(args)} were given")
            given = names[: len(args)]
            if kwargs and not kwargs.keys().isdisjoint(given):
                name = next(n for n in given if n in kwargs)
                raise TypeError(f"{title}() got multiple values for argument {name!r}")
            values.update(zip(given, args, strict=True))
        if kwargs:
            values.update(kwargs)
        for name, factory in unfilled:
            if values[name] is MISSING:
                if factory is None:
                    raise TypeError(f"{title}() missing required argument: {name!r}")
                values[name] = factory()
        if post_init is not None:
            post_init(self)

    return __init__


def _make_methods(
    found: dict[str, Field],
) -> tuple[Callable[[object], str], Callable[[object, object], object], Callable[[object], int]]:
    names = tuple(found)
    shown = tuple(f.name for f in found.values() if f.repr)

    def __repr__(self: object) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self: object, other: object) -> object:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in names)

    def __hash__(self: object) -> int:
        return hash(tuple(getattr(self, n) for n in names))

    return __repr__, __eq__, __hash__


@dataclass_transform(field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """Class decorator: ``@record`` or ``@record(frozen=True)``."""

    def wrap(cls: type) -> type:
        found = _collect(cls)
        # Any: the type checker forbids assigning a class's methods, which is the point here.
        built: Any = cls
        built.__record_fields__ = found
        built.__match_args__ = tuple(found)  # type: ignore[misc]  # mypy refuses any such assignment
        built.__init__ = _make_init(cls, found)
        rep, eq, hsh = _make_methods(found)
        if "__repr__" not in cls.__dict__:
            built.__repr__ = rep
        if "__eq__" not in cls.__dict__:
            built.__eq__ = eq
        if frozen:
            if not cls.__dict__.get("__hash__"):
                built.__hash__ = hsh
            built.__setattr__ = _frozen_setattr
            built.__delattr__ = _frozen_delattr
        elif "__hash__" not in cls.__dict__:
            built.__hash__ = None  # mutable and compared by value: unhashable, as dataclasses do
        return cls

    return wrap if cls is None else wrap(cls)
