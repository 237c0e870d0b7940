"""`gpuenv report`: the fleet view of many hosts' facts, doctor, verify and status files.

``sources`` finds and reads the files (the only I/O here, through gpuenv's one JSON reader) and
distils each into small ``model.Entry`` objects as it goes, so that 10,000 files never sit in
memory as documents; ``model`` (pure) merges them per host and counts codes, machine groups,
stale hosts and unreadable files into a ``FleetReport``. Rendering is ``gpuenv.render.fleet``.
"""

from __future__ import annotations

import datetime

from gpuenv.fleet.model import FleetReport
from gpuenv.fleet.sources import NotFound

__all__ = ["build", "FleetReport", "NotFound"]


def build(paths: list[str], now: datetime.datetime | None = None, max_age_days: float = 7.0) -> FleetReport:
    """The report of every file in ``paths``; NotFound for a path that does not exist."""
    from gpuenv.fleet import sources
    from gpuenv.fleet.model import Unreadable, summarize

    try:
        from gpuenv.matrices import load

        matrices = load()
    except Exception:  # noqa: BLE001 - unreadable matrices: GPUs keep their pci.ids names
        matrices = None
    entries, unreadable = [], []
    for f in sources.find(paths):
        got = sources.read(f, matrices)
        if isinstance(got, Unreadable):
            unreadable.append(got)
        else:
            entries.extend(got)
    when = now or datetime.datetime.now(datetime.timezone.utc)
    return summarize(entries, unreadable, when, max_age_days)
