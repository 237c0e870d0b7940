"""The one memo idiom of the resolve layer: answers about the object last asked about.

The checks, the target choice and the planner ask the same questions of one facts document or
one ``Matrices`` many times (a fleet run asks thousands of machines' questions of one bundle).
Those objects are frozen, so an answer cannot go stale while its object is the one asked about;
a memo holds the answers for that one object, by identity, and drops them when another object
is asked about. Nothing is kept alive but the last object and its answers.

An answer that depends on two objects (what a facts document's GPUs are depends on the matrices
that name the GPUs the facts leave unnamed) is kept for the pair: asking with another facts
document or another bundle, even an equal one, starts afresh.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any


class LastAsked:
    """``answers(obj)``: the dict of answers kept for ``obj`` (with ``also``, for the pair), empty
    when another object was asked about last. Callers add answers to it and never change one
    they read from it."""

    __slots__ = ("_of", "_also", "_answers")

    def __init__(self) -> None:
        self._of: object = None
        self._also: object = None
        self._answers: dict[Any, Any] = {}

    def answers(self, of: object, also: object = None) -> dict[Any, Any]:
        if self._of is not of or self._also is not also:
            self._of, self._also, self._answers = of, also, {}
        return self._answers

    def kept(self, also: object) -> dict[Any, Any] | None:
        """The answers kept for the object last asked about with ``also``, whichever it was; None
        when it was asked with another (an answer about a part of that object, a GPU of the facts
        document, is looked up here by the part's identity: the memo keeps the object alive, so
        no other object can have that identity while the answers are kept)."""
        return self._answers if self._also is also and self._of is not None else None
