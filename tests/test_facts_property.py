"""Every document valid against the public facts schema is judged, never refused (issue: the
doctor on real-world reports). hypothesis-jsonschema writes the documents from the schema itself:
doctor, torch and the planner read each, and none refuses it or crashes a check."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema

from gpuenv.exitcodes import Exit
from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.plan import planner, repos
from gpuenv.plan.plan import Action, Request
from gpuenv.resolve.finding import Target
from gpuenv.resolve.registry import CRASHED
from gpuenv.resolve.report import diagnose
from gpuenv.resolve.torchpick import pick
from tests.schemas import CONTRACTS

SCHEMA = json.loads((CONTRACTS / "facts.schema.json").read_text())
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def matrices():
    return load()


@SETTINGS
@given(doc=from_schema(SCHEMA))
def test_doctor_judges_every_schema_valid_document(doc):
    m = load()
    facts = from_dict(doc)  # never a FactsError for a schema-valid document
    for target in (Target(), Target.parse("rocm"), Target.parse("cuda")):
        report = diagnose(facts, m, target)
        crashed = [f.detail for f in report.findings if f.code == CRASHED]
        assert crashed == [], crashed
        assert report.exit_code() in (Exit.OK, Exit.PROBLEMS, Exit.NOT_JUDGED)
    # The JSON it would print round-trips through the reader too.
    assert from_dict(json.loads(facts.to_json())).digest() == facts.digest()


@SETTINGS
@given(doc=from_schema(SCHEMA))
def test_torch_and_the_planner_judge_every_schema_valid_document(doc):
    m = load()
    facts = from_dict(doc)
    choice = pick(facts, m)
    both = bool(facts.gpus_of("nvidia")) and bool(facts.gpus_of("amd"))
    # Exit 2 is only ever "both vendors: say which" (a choice the user makes, not a refusal).
    assert choice.exit in (Exit.OK, Exit.PROBLEMS) or (choice.exit == Exit.USAGE and both)
    for vendor in ("nvidia", "amd"):
        assert pick(facts, m, vendor=vendor).exit in (Exit.OK, Exit.PROBLEMS)
    for stack in ("rocm", "cuda"):
        plan = planner.make_plan(facts, m, repos.load(), Request(action=Action.INSTALL, stack=stack))
        assert plan.steps
