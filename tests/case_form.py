"""The form every real-world case has, in tests/cases/ and tests/heldout/ alike (tests/cases/README.md):
one rule, asserted by tests/test_cases.py and tests/test_heldout.py."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from urllib.parse import urlparse

import jsonschema

from tests.cases_score import CASE_KEYS, CONTRACTS, OPTIONAL_KEYS


def assert_well_formed(slug: str, case: dict, codes: set[str]) -> None:
    assert re.fullmatch(r"[a-z0-9]+(?:[-.][a-z0-9]+)*", slug), slug
    assert set(CASE_KEYS) <= set(case) <= set(CASE_KEYS) | set(OPTIONAL_KEYS), sorted(
        set(case) ^ set(CASE_KEYS)
    )
    healthy = case.get("healthy", False)
    uncoded = case.get("uncoded")
    assert isinstance(healthy, bool)
    assert uncoded is None or (isinstance(uncoded, str) and uncoded.strip()), uncoded
    assert not (healthy and uncoded), "a machine that worked has no cause to leave uncoded"
    should = case.get("should", [])
    assert isinstance(should, list) and not set(should) & (set(case["must"]) | set(case["must_not"]))

    url = urlparse(case["source"])
    assert url.scheme == "https" and url.netloc, case["source"]
    for key in ("title", "root_cause", "notes"):
        assert isinstance(case[key], str) and case[key].strip(), key
    assert "\n" not in case["title"]

    if healthy or uncoded:  # a machine that worked, or a cause no code names: nothing must be found
        assert case["must"] == [], case["must"]
    else:
        assert isinstance(case["must"], list) and 1 <= len(case["must"]) <= 3, case["must"]
    assert isinstance(case["must_not"], list)
    for code in case["must"] + case["must_not"] + should:
        assert code in codes, f"{code} is not in FINDINGS.md"
    assert not set(case["must"]) & set(case["must_not"])
    assert len(set(case["must"])) == len(case["must"]) and len(set(case["must_not"])) == len(case["must_not"])

    assert case["target"] is None or re.fullmatch(r"(rocm|cuda)(@\d+(\.\d+)*)?", case["target"]), case[
        "target"
    ]
    assert case["torch"] is None or re.fullmatch(r"\d+\.\d+(\.\d+)?", case["torch"]), case["torch"]


def assert_corpus_complete(cases_dir: Path, slugs: list[str]) -> None:
    """Every facts file has its case file, and the directory's README lists every case."""
    facts = sorted(p.name[: -len(".facts.json")] for p in cases_dir.glob("*.facts.json"))
    assert facts == slugs
    readme = (cases_dir / "README.md").read_text()
    missing = [s for s in slugs if f"`{s}`" not in readme]
    assert not missing, f"cases missing from {cases_dir.name}/README.md: {missing}"


def assert_facts_valid(cases_dir: Path, slug: str) -> None:
    doc = json.loads((cases_dir / f"{slug}.facts.json").read_text())
    jsonschema.validate(doc, _facts_schema(), cls=jsonschema.Draft202012Validator)


@cache
def _facts_schema() -> dict:
    return json.loads((CONTRACTS / "facts.schema.json").read_text())
