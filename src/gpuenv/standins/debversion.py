"""Debian package versions ordered as dpkg orders them (``dpkg --compare-versions``).

``[epoch:]upstream[-revision]``: the epoch decides first (``1:570.133.07-1`` is newer than
``580.65.06-1``), then the upstream version, then the revision, each compared as dpkg's
``verrevcmp`` does: runs of non-digits character by character (``~`` before everything, even
the end; letters before other characters), runs of digits as numbers. A version dpkg would warn
about is still ordered, as dpkg still orders it.
"""

from __future__ import annotations

from functools import cmp_to_key


def _split(version: str) -> tuple[int, str, str]:
    version = version.strip()
    epoch_text, colon, rest = version.partition(":")
    epoch = 0
    if not colon or not (epoch_text.isascii() and epoch_text.isdigit()):
        rest = version  # no epoch (or not a number, which dpkg refuses): compared whole
    else:
        epoch = int(epoch_text)
    upstream, hyphen, revision = rest.rpartition("-")
    return (epoch, upstream, revision) if hyphen else (epoch, rest, "")


def _order(c: str) -> int:
    if c.isascii() and c.isalpha():
        return ord(c)
    if c == "~":
        return -1
    return ord(c) + 256


def _isdigit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _verrevcmp(a: str, b: str) -> int:
    i = j = 0
    while i < len(a) or j < len(b):
        while (i < len(a) and not _isdigit(a, i)) or (j < len(b) and not _isdigit(b, j)):
            ac = 0 if i >= len(a) or _isdigit(a, i) else _order(a[i])
            bc = 0 if j >= len(b) or _isdigit(b, j) else _order(b[j])
            if ac != bc:
                return -1 if ac < bc else 1
            i, j = i + 1, j + 1
        start_a, start_b = i, j
        while _isdigit(a, i):
            i += 1
        while _isdigit(b, j):
            j += 1
        na, nb = int(a[start_a:i] or 0), int(b[start_b:j] or 0)
        if na != nb:
            return -1 if na < nb else 1
    return 0


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is older than, the same as or newer than ``b`` to dpkg."""
    ea, ua, ra = _split(a)
    eb, ub, rb = _split(b)
    if ea != eb:
        return -1 if ea < eb else 1
    return _verrevcmp(ua, ub) or _verrevcmp(ra, rb)


key = cmp_to_key(compare)  # sorted(versions, key=debversion.key), max(..., key=debversion.key)
