"""resolve/memo.py: answers are kept for the object last asked about, by identity, and dropped
when another object is asked about."""

from __future__ import annotations

from gpuenv.resolve.memo import LastAsked


def test_answers_are_kept_for_the_same_object_and_dropped_for_another():
    memo = LastAsked()
    first, second = ["equal"], ["equal"]  # equal, not the same object
    memo.answers(first)["q"] = 1
    assert memo.answers(first) == {"q": 1}
    assert memo.answers(second) == {}
    memo.answers(second)["q"] = 2
    assert memo.answers(first) == {}  # only the last object's answers are kept


def test_two_memos_keep_their_own_answers_of_one_object():
    a, b, obj = LastAsked(), LastAsked(), object()
    a.answers(obj)["q"] = "a"
    assert b.answers(obj) == {}
    assert a.answers(obj) == {"q": "a"}


def test_answers_for_a_pair_are_dropped_when_either_object_changes():
    memo = LastAsked()
    facts, bundle, other_bundle = object(), ["equal"], ["equal"]
    memo.answers(facts, bundle)["q"] = 1
    assert memo.answers(facts, bundle) == {"q": 1}
    assert memo.answers(facts, other_bundle) == {}  # an equal bundle is another bundle
    assert memo.answers(facts) == {}  # and none is another again
    memo.answers(facts, bundle)["q"] = 2
    assert memo.answers(object(), bundle) == {}


def test_kept_gives_the_answers_of_whatever_was_asked_last_with_that_object():
    memo = LastAsked()
    bundle = object()
    assert memo.kept(bundle) is None  # nothing asked yet
    memo.answers("facts", bundle)["q"] = 1
    assert memo.kept(bundle) == {"q": 1}
    assert memo.kept(object()) is None
    memo.answers("facts", object())
    assert memo.kept(bundle) is None
