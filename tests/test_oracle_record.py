"""gpuenv.standins.record against what it stands in for, dataclasses: the same class declared both ways
behaves the same wherever gpuenv relies on it (construction, defaults, repr, equality, hashing,
frozenness, replace, field order, inheritance, __post_init__, match), on every supported Python."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from gpuenv.standins import record as R


def _pair(frozen: bool):
    """The same declarations, once as records and once as dataclasses."""

    def build(deco, fld):
        class Base:
            x: int
            y: int = 2
            kind: ClassVar[str] = "base"
            tags: tuple[str, ...] = ()
            notes: list = fld(default_factory=list)
            hidden: str = fld(default="h", repr=False)

        Base.__qualname__ = "Base"
        Base = deco(Base)

        class Child(Base):
            z: str = "z"

            def __post_init__(self):
                if self.x < 0:
                    raise ValueError("negative x")

        Child.__qualname__ = "Child"
        return Base, deco(Child)

    return (
        build(R.record(frozen=frozen), R.field),
        build(dataclasses.dataclass(frozen=frozen), dataclasses.field),
    )


CALLS = [
    ((1,), {}),
    ((1, 3), {}),
    ((), {"x": 4, "tags": ("a", "b")}),
    ((1, 2, ("t",), [1]), {"hidden": "s"}),
    ((), {}),  # missing x
    ((1,), {"x": 2}),  # x twice
    ((1,), {"nope": 1}),  # unknown keyword
    ((1, 2, (), [], "h", "zz", "extra"), {}),  # too many positionals
]


def _outcome(cls, args, kwargs):
    try:
        obj = cls(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        return type(exc)
    return obj


@pytest.mark.parametrize("frozen", [True, False])
@pytest.mark.parametrize("which", [0, 1], ids=["base", "child"])
@pytest.mark.parametrize("args, kwargs", CALLS)
def test_construction_repr_and_equality_match_dataclasses(frozen, which, args, kwargs):
    (ours, theirs) = (pair[which] for pair in _pair(frozen))
    a, b = _outcome(ours, args, kwargs), _outcome(theirs, args, kwargs)
    if isinstance(b, type):
        assert a is b, (a, b)
        return
    assert repr(a) == repr(b)
    assert [f.name for f in R.fields(a)] == [f.name for f in dataclasses.fields(b)]
    assert [getattr(a, f.name) for f in R.fields(a)] == [getattr(b, f.name) for f in dataclasses.fields(b)]
    assert (a == _outcome(ours, args, kwargs)) is (b == _outcome(theirs, args, kwargs)) is True
    assert type(a).kind == type(b).kind == "base"  # a ClassVar is no field
    assert ours.__match_args__ == theirs.__match_args__


@pytest.mark.parametrize("frozen", [True, False])
def test_hashing_frozenness_and_replace_match_dataclasses(frozen):
    (ours, _), (theirs, _) = _pair(frozen)
    a, b = ours(1, tags=("t",)), theirs(1, tags=("t",))
    if frozen:
        a2, b2 = ours(1, tags=("t",), notes=[]), theirs(1, tags=("t",), notes=[])
        with pytest.raises(TypeError):
            hash(a)  # a list field: unhashable in both
        with pytest.raises(TypeError):
            hash(b)
        with pytest.raises(dataclasses.FrozenInstanceError):
            b.x = 5
        with pytest.raises(AttributeError):  # FrozenError is an AttributeError, as FrozenInstanceError is
            a.x = 5
        assert (a2 == a) is (b2 == b)
    else:
        assert type(a).__hash__ is None and type(b).__hash__ is None  # compared by value: unhashable
        a.x, b.x = 7, 7
        assert (a.x, b.x) == (7, 7)
    ra, rb = R.replace(a, y=9), dataclasses.replace(b, y=9)
    assert repr(ra) == repr(rb) and ra.notes == rb.notes
    with pytest.raises(TypeError):
        R.replace(a, nope=1)
    with pytest.raises(TypeError):
        dataclasses.replace(b, nope=1)


def test_a_default_before_a_required_field_is_refused_by_both():
    with pytest.raises(TypeError):
        R.record(type("Bad", (), {"__annotations__": {"a": int, "b": int}, "a": 1}))
    with pytest.raises(TypeError):
        dataclasses.dataclass(type("Bad", (), {"__annotations__": {"a": int, "b": int}, "a": 1}))


def test_post_init_runs_in_both():
    (_, ours), (_, theirs) = _pair(True)
    for cls in (ours, theirs):
        with pytest.raises(ValueError, match="negative x"):
            cls(-1)
