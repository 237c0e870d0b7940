"""The fleet report: many hosts' documents, summarised (pure: entries in, a ``FleetReport`` out).

An ``Entry`` is what one document says about one host, distilled as it is read (``sources``):
its findings, its machine (GPUs, driver, stack), its torch, when it was collected. ``summarize``
merges a host's entries (the newest of each kind wins: a fresh status.json beats last month's
doctor.json), and counts:

- for each finding code, which hosts have it (the worst severity seen, one title as an example);
- machines grouped by GPU model, driver and stack (``gpuenv.verify.machine`` labels);
- hosts whose data is older than ``max_age`` (stale) and files that could not be read.

``FleetReport.exit_code()`` is the one place where that becomes an exit status: 1 when a host
has an error finding, a file could not be read or a host is stale; else 0.
"""

from __future__ import annotations

import datetime
import re

from gpuenv.exitcodes import Exit
from gpuenv.standins.record import record
from gpuenv.verify.machine import Machine

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

SCHEMA = "gpuenv.fleet/1"
KINDS = ("facts", "doctor", "verify")
SEVERITIES = ("error", "warning", "info")
UNKNOWN = "unknown"


@record(frozen=True)
class Seen:
    """A finding as the fleet counts it."""

    code: str
    severity: str  # error | warning | info
    title: str
    cause: str = ""  # the code it follows from in the same report (doctor's `cause`), "" for none


@record(frozen=True)
class Entry:
    path: str
    host: str
    kind: str  # facts | doctor | verify
    collected_at: str | None = None  # "2026-05-01T10:00:00Z"; None: the document does not say
    findings: tuple[Seen, ...] = ()
    machine: Machine | None = None
    stack: str | None = None  # a doctor report's judged stack, for hosts without facts
    torch: str | None = None  # "2.7.0+cu128"
    passed: bool | None = None  # a verify result's verdict
    state: str | None = None  # a bootstrap status.json's state (done | reboot-pending | failed)


@record(frozen=True)
class Unreadable:
    path: str
    host: str
    error: str  # one line


@record(frozen=True)
class HostView:
    name: str
    files: tuple[str, ...]
    kinds: tuple[str, ...]
    collected_at: str | None  # the oldest timestamp of the documents kept
    gpu_model: str
    driver: str
    stack: str
    torch: str | None
    verify: str | None  # passed | failed | None (no verify result)
    state: str | None
    findings: tuple[Seen, ...]

    def count(self, severity: str) -> int:
        """Findings of a severity; one that follows from another is not counted as its own."""
        return sum(1 for f in self.findings if f.severity == severity and not f.cause)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "files": list(self.files),
            "kinds": list(self.kinds),
            "collected_at": self.collected_at,
            "gpu_model": self.gpu_model,
            "driver": self.driver,
            "stack": self.stack,
            "torch": self.torch,
            "verify": self.verify,
            "state": self.state,
            "summary": {s: self.count(s) for s in SEVERITIES},
            "codes": [f.code for f in self.findings],
        }


@record(frozen=True)
class CodeCount:
    code: str
    severity: str  # the worst seen on any host
    title: str  # one host's title, as an example
    hosts: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "title": self.title,
            "count": len(self.hosts),
            "hosts": list(self.hosts),
        }


@record(frozen=True)
class Group:
    gpu_model: str
    driver: str
    stack: str
    hosts: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpu_model": self.gpu_model,
            "driver": self.driver,
            "stack": self.stack,
            "count": len(self.hosts),
            "hosts": list(self.hosts),
        }


@record(frozen=True)
class Stale:
    host: str
    collected_at: str
    age_days: float
    files: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "collected_at": self.collected_at,
            "age_days": self.age_days,
            "files": list(self.files),
        }


@record(frozen=True)
class FleetReport:
    generated_at: str
    max_age_days: float
    files_read: int
    hosts: tuple[HostView, ...]
    codes: tuple[CodeCount, ...]
    groups: tuple[Group, ...]
    stale: tuple[Stale, ...]
    unreadable: tuple[Unreadable, ...]

    def summary(self) -> dict[str, int]:
        names = {h.name for h in self.hosts} | {u.host for u in self.unreadable}
        errors = sum(1 for h in self.hosts if h.count("error"))
        warnings = sum(1 for h in self.hosts if not h.count("error") and h.count("warning"))
        # A host known only from its facts was never judged: not "ok", just described.
        facts_only = sum(1 for h in self.hosts if h.kinds == ("facts",))
        return {
            "hosts": len(names),
            "files": self.files_read + len(self.unreadable),
            "files_unreadable": len(self.unreadable),
            "hosts_unreadable": len({u.host for u in self.unreadable}),
            "hosts_stale": len(self.stale),
            "hosts_with_errors": errors,
            "hosts_with_warnings": warnings,
            "hosts_ok": len(self.hosts) - errors - warnings - facts_only,
            "hosts_facts_only": facts_only,
            "verify_failed": sum(1 for h in self.hosts if h.verify == "failed"),
        }

    def exit_code(self) -> Exit:
        s = self.summary()
        return (
            Exit.PROBLEMS if s["hosts_with_errors"] or s["files_unreadable"] or s["hosts_stale"] else Exit.OK
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "generated_at": self.generated_at,
            "max_age_days": self.max_age_days,
            "summary": self.summary(),
            "codes": [c.to_dict() for c in self.codes],
            "groups": [g.to_dict() for g in self.groups],
            "stale": [s.to_dict() for s in self.stale],
            "unreadable": [{"path": u.path, "host": u.host, "error": u.error} for u in self.unreadable],
            "hosts": [h.to_dict() for h in self.hosts],
        }


# -- time ---------------------------------------------------------------------------------------


def parse_time(text: str | None) -> datetime.datetime | None:
    """'2026-05-01T10:00:00Z' (or with an offset) -> an aware datetime; None for anything else."""
    if not isinstance(text, str) or not text:
        return None
    try:
        when = datetime.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=datetime.timezone.utc)


def format_time(when: datetime.datetime) -> str:
    return when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def host_key(name: str) -> tuple[tuple[int, int, str], ...]:
    """Natural order: gpu2 before gpu10."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name) if p)


# -- the summary --------------------------------------------------------------------------------


def summarize(
    entries: list[Entry],
    unreadable: list[Unreadable],
    now: datetime.datetime,
    max_age_days: float = 7.0,
) -> FleetReport:
    by_host: dict[str, list[Entry]] = {}
    for e in entries:
        by_host.setdefault(e.host, []).append(e)
    cutoff = now - datetime.timedelta(days=max_age_days)
    hosts: list[HostView] = []
    stale: list[Stale] = []
    for name in sorted(by_host, key=host_key):
        view, old = _host(name, by_host[name], cutoff)
        hosts.append(view)
        if old:
            oldest = min(old, key=_stamp)
            age = round((now - _stamp(oldest)).total_seconds() / 86400, 1)
            stale.append(Stale(name, oldest.collected_at or "", age, tuple(dict.fromkeys(e.path for e in old))))
    return FleetReport(
        generated_at=format_time(now),
        max_age_days=max_age_days,
        files_read=len({e.path for e in entries}),
        hosts=tuple(hosts),
        codes=_codes(hosts),
        groups=_groups(hosts),
        stale=tuple(stale),
        unreadable=tuple(sorted(unreadable, key=lambda u: (host_key(u.host), u.path))),
    )


def _newest(entries: list[Entry]) -> Entry:
    # A document that says when it was made beats one that does not; among equals, the last read.
    def key(item: tuple[int, Entry]) -> tuple[bool, datetime.datetime, int]:
        index, e = item
        when = parse_time(e.collected_at)
        return (when is not None, when or datetime.datetime.min.replace(tzinfo=datetime.timezone.utc), index)

    return max(enumerate(entries), key=key)[1]


def _host(name: str, entries: list[Entry], cutoff: datetime.datetime) -> tuple[HostView, list[Entry]]:
    kept = {
        kind: _newest([e for e in entries if e.kind == kind])
        for kind in KINDS
        if any(e.kind == kind for e in entries)
    }
    facts, doctor, verify = kept.get("facts"), kept.get("doctor"), kept.get("verify")
    machine = (facts.machine if facts else None) or (verify.machine if verify else None)
    findings: dict[str, Seen] = {}
    for e in (doctor, verify):
        for f in e.findings if e else ():
            if f.code not in findings or SEVERITIES.index(f.severity) < SEVERITIES.index(
                findings[f.code].severity
            ):
                findings[f.code] = f
    stamped = [e for e in kept.values() if parse_time(e.collected_at) is not None]
    oldest = min(stamped, key=_stamp) if stamped else None
    stack = machine.stack if machine is not None else (doctor.stack if doctor and doctor.stack else UNKNOWN)
    view = HostView(
        name=name,
        files=tuple(dict.fromkeys(e.path for e in entries)),
        kinds=tuple(k for k in KINDS if k in kept),
        collected_at=oldest.collected_at if oldest else None,
        gpu_model=machine.model if machine is not None else UNKNOWN,
        driver=machine.driver if machine is not None else UNKNOWN,
        stack=stack,
        torch=(facts.torch if facts else None) or (verify.torch if verify else None),
        verify=None if verify is None or verify.passed is None else "passed" if verify.passed else "failed",
        state=next((e.state for e in (doctor, verify) if e and e.state), None),
        findings=tuple(sorted(findings.values(), key=lambda f: (SEVERITIES.index(f.severity), f.code))),
    )
    return view, [e for e in stamped if _stamp(e) < cutoff]


def _stamp(e: Entry) -> datetime.datetime:
    """When an entry that says when it was made was made (only such entries are asked)."""
    when = parse_time(e.collected_at)
    assert when is not None
    return when


def _codes(hosts: list[HostView]) -> tuple[CodeCount, ...]:
    seen: dict[str, list[Any]] = {}  # code -> [severity, title, host names]
    for h in hosts:
        for f in h.findings:
            slot = seen.setdefault(f.code, [f.severity, f.title, []])
            if SEVERITIES.index(f.severity) < SEVERITIES.index(slot[0]):
                slot[0], slot[1] = f.severity, f.title
            slot[2].append(h.name)
    out = [CodeCount(code, sev, title, tuple(names)) for code, (sev, title, names) in seen.items()]
    out.sort(key=lambda c: (-len(c.hosts), SEVERITIES.index(c.severity), c.code))
    return tuple(out)


def _groups(hosts: list[HostView]) -> tuple[Group, ...]:
    groups: dict[tuple[str, str, str], list[str]] = {}
    for h in hosts:
        groups.setdefault((h.gpu_model, h.driver, h.stack), []).append(h.name)
    out = [Group(m, d, s, tuple(names)) for (m, d, s), names in groups.items()]
    out.sort(key=lambda g: (-len(g.hosts), g.gpu_model, g.driver, g.stack))
    return tuple(out)
