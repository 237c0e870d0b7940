"""gpuenv.standins.jsonout writes what json.dumps(obj, indent=2) writes, byte for byte: every document
gpuenv prints or saves goes through it."""

from __future__ import annotations

import enum
import json
import math
from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuenv.standins import jsonout

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # any code point, surrogates included: json escapes them as \udXXX
    | st.sampled_from(["", "\x00\x1f\x7f", '"\\/', "\u2028ü€😀", "\ud800"])
)
KEYS = st.text(max_size=8) | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
DOCS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.tuples(inner, inner)
    | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=600, deadline=None)
@given(DOCS)
def test_the_same_text_as_json_dumps_indent_2(doc):
    assert jsonout.dumps(doc) == json.dumps(doc, indent=2)


class Level(enum.IntEnum):
    HIGH = 3


class Word(str, enum.Enum):
    ERROR = "error"


class Items(list):
    pass


class Shown(int):
    def __str__(self) -> str:
        return "not the number"


@pytest.mark.parametrize(
    "doc",
    [
        {},
        [],
        {"a": {}, "b": [], "c": [[]], "d": [{}]},
        {"n": math.nan, "i": math.inf, "m": -math.inf, "f": 1e-310, "g": -0.0},
        {7: "int key", 2.5: "float key", True: "bool key", False: "false key", None: "null key"},
        OrderedDict([("z", 1), ("a", 2)]),
        {"level": Level.HIGH, "word": Word.ERROR, Word.ERROR: [Level.HIGH]},
        ("a", ("b", None), []),
        {"items": Items(["a", 1]), "none": Items(), "n": Shown(5)},
    ],
    ids=["empty-dict", "empty-list", "empty-nested", "floats", "key-kinds", "ordered", "enums", "tuples", "subclasses"],
)
def test_the_same_text_for_the_kinds_json_takes(doc):
    assert jsonout.dumps(doc) == json.dumps(doc, indent=2)


@pytest.mark.parametrize("doc", [{1, 2}, {"x": object()}, [b"bytes"], {(1, 2): "tuple key"}])
def test_what_json_refuses_is_a_type_error_here_too(doc):
    with pytest.raises(TypeError):
        json.dumps(doc, indent=2)
    with pytest.raises(TypeError):
        jsonout.dumps(doc)


def test_a_probe_document_reads_back_as_it_was_written(tmp_path):
    from gpuenv.probe import collect

    facts = collect(str(tmp_path))
    assert json.loads(facts.to_json()) == facts.to_dict()
    assert facts.to_json() == json.dumps(facts.to_dict(), indent=2)
