"""nvidia_gpus.json's two parsers held equal: the fast pass (``_parse_nvidia``, on every NVIDIA
doctor run) accepts exactly what the checked one (``_parse_nvidia_checked``) accepts and builds
the same GPUs, on every shipped entry and on entries edited field by field; where the checked one
refuses, the fast one refuses with the same line (it hands any doubt to the checked one)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gpuenv.matrices import MatrixError, NvidiaGpu, bundled_dir
from gpuenv.matrices.parsers import _parse_nvidia, _parse_nvidia_checked

SHIPPED = json.loads((Path(bundled_dir()) / "nvidia_gpus.json").read_text())
FIELDS = ("pci_id", "name", "chip", "architecture", "compute_capability", "source", "confirmed")
MISSING = object()


class Text(str):
    """A str that is not exactly str: the fast pass checks ``type() is``, the Reader isinstance."""


def _built(parsed: dict) -> dict[str, NvidiaGpu]:
    # The fast pass keeps NvidiaGpu's fields as a tuple until a GPU is looked up.
    return {k: NvidiaGpu(*v) if type(v) is tuple else v for k, v in parsed.items()}


def _outcome(parse, doc: object) -> tuple[str, object]:
    try:
        return "ok", _built(parse(doc))
    except MatrixError as exc:
        return "refused", str(exc)


def _same(doc: object) -> tuple[str, object]:
    fast, checked = _outcome(_parse_nvidia, copy.deepcopy(doc)), _outcome(_parse_nvidia_checked, copy.deepcopy(doc))
    assert fast == checked
    return fast


def test_the_fast_pass_builds_every_shipped_gpu_as_the_checked_one_does():
    fast = _parse_nvidia(SHIPPED)
    assert all(type(v) is tuple for v in fast.values())  # it did take the fast pass
    assert len(fast) > 1000 and _built(fast) == _parse_nvidia_checked(SHIPPED)


def test_each_shipped_entry_alone_parses_the_same_both_ways():
    for g in SHIPPED["gpus"]:
        kind, gpus = _same({"gpus": [g]})
        assert kind == "ok" and list(gpus) == [g["pci_id"]]


# Values each field is given in turn: right and wrong types, malformed text, None and absence.
VALUES = (
    MISSING, None, True, False, 0, 1, 1.5, "", " ", "x", [], {}, ["10de:2684"], Text("10de:2684"), Text("8.9"),
    "10de:2684", "10DE:2684", "10de:268", "10de:26845", "10de-2684", " 10de:2684", "10de:2684\n",
    "8.9", "8.10", "8", "8.9 ", "8.9\n", "sm_89", "Ada", "AD102",
)  # fmt: skip


@pytest.mark.parametrize("field", FIELDS)
def test_an_entry_edited_field_by_field_parses_the_same_both_ways(field):
    base = SHIPPED["gpus"][:3]
    outcomes = set()
    for position in range(len(base)):
        for value in VALUES:
            gpus = copy.deepcopy(base)
            if value is MISSING:
                gpus[position].pop(field, None)
            else:
                gpus[position][field] = value
            outcomes.add(_same({"gpus": gpus})[0])
    assert outcomes == {"ok", "refused"}  # the edits reached both verdicts: the test can tell them apart


@pytest.mark.parametrize(
    "doc",
    [
        None, [], {}, {"gpus": None}, {"gpus": {}}, {"gpus": []}, {"gpus": [None]}, {"gpus": [[]]},
        {"gpus": ["10de:2684"]}, {"gpus": SHIPPED["gpus"][:2] + [1]},
        {"gpus": SHIPPED["gpus"][:2] + [{}]}, {"gpus": SHIPPED["gpus"][:2] + [SHIPPED["gpus"][0]]},
        {"gpus": [{**SHIPPED["gpus"][0], "extra": 1}]},
    ],
)  # fmt: skip
def test_a_malformed_or_odd_document_parses_the_same_both_ways(doc):
    _same(doc)
