"""gpuenv.standins.record: the value classes' behaviour that the rest of gpuenv relies on."""

from __future__ import annotations

import copy
import pickle

import pytest

from gpuenv.standins.record import FrozenError, field, fields, is_record, record, replace


@record(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    notes: list = field(default_factory=list, repr=False, metadata={"omit": True})


@record
class Counter:
    n: int = 0
    seen: list = field(default_factory=list)


def test_positional_keyword_and_defaults():
    p = Point(1, tags=("a",))
    assert (p.x, p.y, p.tags, p.notes) == (1, 0, ("a",), [])
    assert Point(1).notes is not Point(1).notes  # a fresh default per instance


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: Point(), "missing required argument: 'x'"),
        (lambda: Point(1, 2, (), {}, 5), "takes 4 positional arguments but 5 were given"),
        (lambda: Point(1, z=2), "unexpected keyword argument 'z'"),
        (lambda: Point(1, x=2), "multiple values for argument 'x'"),
    ],
)
def test_bad_calls_are_type_errors(call, words):
    with pytest.raises(TypeError, match=words):
        call()


def test_fields_land_in_declaration_order_and_a_given_value_skips_its_factory():
    calls = []

    @record(frozen=True)
    class Made:
        a: int
        b: list = field(default_factory=lambda: calls.append("b") or [])
        c: int = 3

    m = Made(c=9, a=1, b=[2])
    assert list(vars(m)) == ["a", "b", "c"]  # what vars()-based writers (plan, journal) emit
    assert (m.a, m.b, m.c) == (1, [2], 9) and calls == []
    assert Made(1).b == [] and calls == ["b"]


def test_frozen_records_refuse_assignment_and_hash_by_value():
    p = Point(1, 2, notes=None)
    with pytest.raises(FrozenError):
        p.x = 3
    with pytest.raises(FrozenError):
        del p.y
    assert p == Point(1, 2, notes=None) and hash(p) == hash(Point(1, 2, notes=None))
    assert p != Point(1, 3, notes=None) and p != (1, 2)
    assert {Point(1, 2, notes=None), Point(1, 2, notes=None)} == {p}


def test_mutable_records_assign_and_are_unhashable():
    c = Counter()
    c.n += 1
    c.seen.append("x")
    assert c == Counter(1, ["x"])
    with pytest.raises(TypeError):
        hash(c)


def test_repr_leaves_out_repr_false_fields():
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=())"


def test_fields_replace_and_is_record():
    assert [f.name for f in fields(Point)] == ["x", "y", "tags", "notes"]
    assert fields(Point(1))[3].metadata == {"omit": True}
    q = replace(Point(1, 2), y=5)
    assert q == Point(1, 5)
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(q, z=1)
    assert is_record(Point) and is_record(q) and not is_record(object())
    with pytest.raises(TypeError, match="not a record"):
        fields(object)


def test_post_init_runs_after_the_fields_are_set():
    @record(frozen=True)
    class Checked:
        n: int

        def __post_init__(self):
            if self.n < 0:
                raise ValueError("negative")

    assert Checked(1).n == 1
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_subclass_fields_follow_the_base_fields():
    @record(frozen=True)
    class Base:
        a: int

    @record(frozen=True)
    class Child(Base):
        b: int = 2

    assert [f.name for f in fields(Child)] == ["a", "b"]
    assert Child(1) == Child(1, 2) and Child(1) != Base(1)


def test_a_required_field_after_a_default_is_refused():
    with pytest.raises(TypeError, match="without a default follows"):

        @record
        class Bad:
            a: int = 0
            b: int


def test_copy_and_pickle_keep_the_value():
    p = Point(1, 2, ("t",), ["k"])
    assert copy.deepcopy(p) == p and copy.copy(p) == p
    assert pickle.loads(pickle.dumps(p)) == p


def test_classvars_are_not_fields_and_field_defaults_are_class_attributes():
    from typing import ClassVar

    @record
    class Kind:
        LIMIT: ClassVar[int] = 3
        c: str = field()  # a required field spelled with field()
        a: int = field(default=5)
        b: list = field(default_factory=list)

    assert [f.name for f in fields(Kind)] == ["c", "a", "b"]
    assert Kind.LIMIT == 3 and Kind.a == 5  # a field's plain default stays a class attribute
    assert not hasattr(Kind, "b") and not hasattr(Kind, "c")  # no Field object posing as a default
    k = Kind(c="x")
    assert (k.a, k.b, k.c) == (5, [], "x") and "c='x'" in repr(k) and "b=[]" in repr(k)


def test_field_refuses_a_default_and_a_factory_and_shows_its_name():
    with pytest.raises(ValueError, match="a default or a default_factory, not both"):
        field(default=1, default_factory=list)
    assert repr(fields(Point)[0]) == "Field('x')"
    from gpuenv.standins.record import MISSING

    assert repr(MISSING) == "MISSING"
