"""Python package versions (PEP 440) ordered as pip and ``packaging.version`` order them, for the
torch versions a machine has installed (``2.5.0rc1``, ``2.9.1.post1``,
``2.10.0.dev20250929+rocm7.0``), without importing ``packaging`` at run time.

A pre-release and a development release come before their release (``2.8.0.dev1 < 2.8.0rc1 <
2.8.0``), a post-release after it; ``2.5`` is ``2.5.0``; a local version (``+cu128``) sorts after
the same version without one.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

_VERSION = (
    r"v?(?:(\d+)!)?(\d+(?:\.\d+)*)"
    r"(?:[-_.]?(alpha|beta|preview|pre|a|b|c|rc)[-_.]?(\d+)?)?"
    r"(?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d+)?)?"
    r"(?:[-_.]?(dev)[-_.]?(\d+)?)?"
    r"(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?"
)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}

# What key() gives back: tuples that compare as packaging's versions do (its infinities become
# a leading 0 or 1, so no two kinds of value ever meet in one comparison). Their parts differ in
# kind, hence tuple[Any, ...].


def key(version: str) -> tuple[Any, ...] | None:
    """A sort key, or None for a string that is no PEP 440 version."""
    m = re.fullmatch(_VERSION, version.strip(), re.IGNORECASE)
    if not m:
        return None
    epoch, release, pre_l, pre_n, post_implicit, post_l, post_n, dev_l, dev_n, local = m.groups()
    numbers = [int(n) for n in release.split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()  # 2.5 is 2.5.0
    has_post = post_implicit is not None or post_l is not None
    if pre_l is not None:
        pre: tuple[int, ...] = (1, _PRE[pre_l.lower()], int(pre_n or 0))
    elif dev_l is not None and not has_post:
        pre = (0,)  # 2.8.0.dev1 comes before 2.8.0a1
    else:
        pre = (2,)
    post = (1, int(post_implicit or post_n or 0)) if has_post else (0,)
    dev = (0, int(dev_n or 0)) if dev_l is not None else (1,)
    parts: tuple[Any, ...] = (0,)
    if local:
        parts = (1, tuple((1, int(p), "") if p.isdigit() else (0, 0, p.lower()) for p in re.split(r"[-_.]", local)))
    return int(epoch or 0), tuple(numbers), pre, post, dev, parts


def older(a: str | None, b: str | None) -> bool:
    """a < b, both PEP 440 versions (anything else never compares as older)."""
    ka, kb = key(a or ""), key(b or "")
    return ka is not None and kb is not None and ka < kb
