"""The one memo idiom of the resolve layer: answers about the object last asked about.

The checks, the target choice and the planner ask the same questions of one facts document or
one ``Matrices`` many times (a fleet run asks thousands of machines' questions of one bundle).
Those objects are frozen, so an answer cannot go stale while its object is the one asked about;
a memo holds the answers for that one object, by identity, and drops them when another object
is asked about. Nothing is kept alive but the last object and its answers.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any


class LastAsked:
    """``answers(obj)``: the dict of answers kept for ``obj``, empty when another object was
    asked about last. Callers add answers to it and never change one they read from it."""

    __slots__ = ("_of", "_answers")

    def __init__(self) -> None:
        self._of: object = None
        self._answers: dict[Any, Any] = {}

    def answers(self, of: object) -> dict[Any, Any]:
        if self._of is not of:
            self._of, self._answers = of, {}
        return self._answers
