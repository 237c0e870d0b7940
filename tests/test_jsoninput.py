"""gpuenv.standins.jsoninput, the one JSON reader: the depth limit at its boundary, and the readers that
leave the depth to their own walk (the matrices)."""

from __future__ import annotations

import pytest

from gpuenv.standins.jsoninput import MAX_DEPTH, InputError, parse


def _nested(levels: int) -> bytes:
    return b"[" * levels + b"1" + b"]" * levels


def test_the_depth_limit_is_exact():
    assert parse(_nested(MAX_DEPTH), "x") is not None
    with pytest.raises(InputError, match=f"^x: nested deeper than {MAX_DEPTH} levels$"):
        parse(_nested(MAX_DEPTH + 1), "x")


def test_objects_count_as_levels_too():
    doc = b'{"a": ' * (MAX_DEPTH + 1) + b"1" + b"}" * (MAX_DEPTH + 1)
    with pytest.raises(InputError, match="nested deeper"):
        parse(doc, "x")


def test_a_limit_of_the_callers_own():
    assert parse(_nested(3), "x", max_depth=3) == [[[1]]]
    with pytest.raises(InputError, match="^x: nested deeper than 3 levels$"):
        parse(_nested(4), "x", max_depth=3)


def test_no_limit_leaves_the_depth_to_the_caller_and_recursion_to_json():
    assert parse(_nested(MAX_DEPTH + 10), "x", max_depth=None) is not None
    with pytest.raises(InputError, match="^x: nested too deeply$"):
        parse(_nested(100_000), "x", max_depth=None)
