"""Loads the JSON schemas that gpuenv's outputs claim: the copies shipped in the installed
gpuenv (``gpuenv.standins.bundled``), and the public contracts the tests keep (tests/contracts/)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from gpuenv.standins import bundled

SCHEMAS = Path(bundled.directory("schemas"))
CONTRACTS = Path(__file__).resolve().parent / "contracts"


@cache
def load_schema(name: str) -> dict:
    """``load_schema("facts")`` -> the shipped facts.schema.json."""
    path = SCHEMAS / f"{name}.schema.json"
    if not path.exists():
        path = SCHEMAS / f"{name}.json"
    return json.loads(path.read_text())


def validate(doc: object, name: str) -> None:
    import jsonschema

    jsonschema.validate(doc, load_schema(name), cls=jsonschema.Draft202012Validator)
