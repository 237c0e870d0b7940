"""The NVIDIA-only table of advise (matrices/advise.json: the packages and images of class ``cuda-only``) as the
freshness tool sees it: each entry cites the page that says it has no ROCm build (the first URL of
its ``source``) and the day that page was read (``checked``, YYYY-MM-DD); an entry no page could be
found for carries ``unsourced`` with the reason instead, and is listed, never silently kept.

Offline, ``problems`` is the consistency rule (an entry with neither a cited page and a date, nor a
reason it has none) and ``oldest`` the entry checked longest ago; with the network, ``recheck``
reads each cited page again (whether it is still there; reading what it says stays a person's).
Reads only advise.json (like build.py): no gpuenv import, no write.
"""

from __future__ import annotations

import datetime
import re

_URL = re.compile(r"https?://[^\s;,()']+")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def cuda_only(advise: dict) -> list[dict]:
    """The entries of class cuda-only: packages, then container images (NIM, NGC's TensorRT)."""
    return [e for key in ("packages", "images") for e in advise.get(key, []) if e.get("class") == "cuda-only"]


def _label(advise: dict, entry: dict) -> str:
    key = "images" if any(e is entry for e in advise.get("images", [])) else "packages"
    return f"advise.json {key} {entry.get('id', '?')}"


def cited(entry: dict) -> str | None:
    """The page that says the entry has no ROCm build: the first URL of its source."""
    m = _URL.search(str(entry.get("source") or ""))
    return m.group() if m else None


def _day(text: object) -> datetime.date | None:
    if not isinstance(text, str) or not _DAY.fullmatch(text):
        return None
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return None


def problems(advise: dict, today: datetime.date | None = None) -> list[str]:
    """One line per NVIDIA-only entry the table cannot stand behind."""
    out = []
    for e in cuda_only(advise):
        name = _label(advise, e)
        reason = e.get("unsourced")
        if reason is not None:
            if not isinstance(reason, str) or not reason.strip():
                out.append(f"{name}: 'unsourced' must say why no page could be cited")
            continue
        if cited(e) is None:
            out.append(f"{name}: no page cited that says it has no ROCm build (source has no URL)")
        day = _day(e.get("checked"))
        if day is None:
            out.append(f"{name}: no 'checked' date (YYYY-MM-DD) for its cited page")
        elif today is not None and day > today:
            out.append(f"{name}: checked {day} is after today ({today})")
    return out


def oldest(advise: dict) -> tuple[str, datetime.date] | None:
    """(id, date) of the entry checked longest ago; None when none is dated."""
    dated = [(d, str(e.get("id"))) for e in cuda_only(advise) if (d := _day(e.get("checked"))) is not None]
    if not dated:
        return None
    day, ident = min(dated)
    return ident, day


def summary(advise: dict, today: datetime.date) -> str:
    entries = cuda_only(advise)
    unsourced = [str(e.get("id")) for e in entries if e.get("unsourced") is not None]
    first = oldest(advise)
    line = f"{len(entries)} entries"
    if first is not None:
        line += f"; oldest checked: {first[0]} on {first[1]} ({(today - first[1]).days} days ago)"
    if unsourced:
        line += f"; unsourced: {', '.join(unsourced)}"
    return line


def recheck(advise: dict, get) -> list[str]:  # noqa: ANN001 (freshness's _get: url -> text)
    """With the network: each cited page fetched again; one line per entry, reached or not."""
    out = []
    for e in cuda_only(advise):
        url = cited(e)
        if url is None:
            continue
        try:
            text = get(url)
        except (OSError, ValueError) as exc:  # URLError is an OSError
            out.append(f"{e.get('id')}: {url} not reached ({type(exc).__name__})")
            continue
        out.append(f"{e.get('id')}: {url} reached ({len(text):,} characters); read it again to confirm")
    return out
