"""The real-world case corpus (tests/cases/): every case is well formed, and the doctor names the
confirmed root cause of (nearly) all of them without reporting a code the case rules out.

The recall test is a target for the doctor, not a check of the corpus: when it fails, fix the
doctor (or, if the thread really says otherwise, the case), never the expectation.
"""

from __future__ import annotations

import json

import pytest

from tests.case_form import assert_corpus_complete, assert_facts_valid, assert_well_formed
from tests.cases_score import (
    CASES_DIR,
    case_slugs,
    catalog_codes,
    score_all,
)

SLUGS = case_slugs()
CODES = catalog_codes()
RECALL_TARGET = 0.95
# At most this share of cases may carry a stray error: an error-severity finding that is neither the
# case's cause (must) nor one a careful engineer would add (should). Issue 43: "<= 1 report in 10".
MAX_STRAY_SHARE = 0.10


def test_corpus_is_big_enough():
    assert len(SLUGS) >= 99


def test_the_corpus_holds_healthy_machines():
    healthy = [s for s in SLUGS if json.loads((CASES_DIR / f"{s}.case.json").read_text()).get("healthy")]
    assert len(healthy) >= 15


def test_every_facts_file_has_a_case_file_and_the_readme_lists_every_case():
    assert_corpus_complete(CASES_DIR, SLUGS)


@pytest.mark.parametrize("slug", SLUGS)
def test_case_is_well_formed(slug):
    assert_well_formed(slug, json.loads((CASES_DIR / f"{slug}.case.json").read_text()), CODES)


@pytest.mark.parametrize("slug", SLUGS)
def test_facts_validate_against_the_contract(slug):
    assert_facts_valid(CASES_DIR, slug)


def test_doctor_names_the_confirmed_root_causes():
    score = score_all()
    missed = {r.slug: r.missed for r in score.results if r.missed}
    wrong = {r.slug: r.wrong for r in score.results if r.wrong}
    refused = {r.slug: r.refused or r.crashed for r in score.results if r.refused or r.crashed}
    assert not wrong, f"must_not codes reported: {wrong}"
    assert not refused, f"facts refused or doctor crashed: {refused}"
    assert score.recall >= RECALL_TARGET, (
        f"recall {score.must_found}/{score.must_total} = {score.recall:.3f} < {RECALL_TARGET}; missed: {missed}"
    )


def test_healthy_machines_get_no_error():
    score = score_all()
    erred = {r.slug: r.stray_errors or r.refused or r.crashed for r in score.healthy if r.stray_errors or r.refused or r.crashed}
    assert not erred, f"errors on machines that worked: {erred}"


def test_at_most_one_report_in_ten_carries_a_stray_error():
    score = score_all()
    stray = {r.slug: r.stray_errors or r.refused or r.crashed for r in score.cases_with_stray}
    assert score.stray_share <= MAX_STRAY_SHARE, (
        f"{len(stray)}/{len(score.results)} cases ({score.stray_share:.0%}) carry an error outside their "
        f"must/should (limit {MAX_STRAY_SHARE:.0%}): {stray}"
    )
