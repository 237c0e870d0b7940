"""Finding and reading the fleet's files: facts, doctor, verify and bootstrap status documents.

``find(paths)`` lists the *.json files of the paths given (directories walked, hidden names and
symbolic links to directories left alone) with the directory each was found under; ``read(file)``
reads one through the one JSON reader with limits (``gpuenv.standins.jsoninput``) and distils it into
``model.Entry`` objects, or one ``model.Unreadable``: a broken host never stops the report.
``entries_of`` (pure) is the distillation, shared by every kind.

Which host a file belongs to, in this order (whatever directory is given on the command line):
1. HOST.KIND.json (KIND: facts, doctor, verify, status, probe): HOST, the layout the Ansible role
   fetches into one directory;
2. KIND.json: the directory it is in (DIR/HOST/doctor.json), or for the bootstrap's status file
   as Ansible's fetch lays it out, DIR/HOST/var/lib/gpuenv/status.json, the directory above var;
3. the host the document names (facts: host.hostname; verify: host);
4. the file's name without .json.
"""

from __future__ import annotations

import os

from gpuenv.fleet.model import Entry, Seen, Unreadable
from gpuenv.standins.record import record

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from gpuenv.matrices import Matrices

KIND_NAMES = ("facts", "doctor", "verify", "status", "probe")
STATUS_DIR = ("var", "lib", "gpuenv")  # where bootstrap.sh writes status.json
SEVERITIES = ("error", "warning", "info")
SCHEMAS = {
    "gpuenv.facts/1": "facts",
    "gpuenv.report/1": "doctor",
    "gpuenv.verify/1": "verify",
    "gpuenv.status/1": "status",
}


@record(frozen=True)
class File:
    path: str
    under: str | None = None  # the directory argument it was found under; None: named itself


class NotFound(ValueError):
    """A path given that does not exist (a usage error, unlike a file that cannot be read)."""


def find(paths: list[str]) -> list[File]:
    out: list[File] = []
    seen: set[str] = set()
    for p in paths:
        if os.path.isdir(p):
            for top, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    if name.endswith(".json") and not name.startswith("."):
                        _add(out, seen, File(os.path.join(top, name), p))
        elif os.path.lexists(p):
            _add(out, seen, File(p, None))
        else:
            raise NotFound(f"{p}: no such file or directory")
    return out


def _add(out: list[File], seen: set[str], f: File) -> None:
    key = os.path.realpath(f.path)
    if key not in seen:  # the same file named twice (a directory and a file in it) counts once
        seen.add(key)
        out.append(f)


def host_of(f: File, named: str | None = None) -> str:
    """The host ``f`` belongs to, by the rules above; ``named``: the host its document names."""
    path = os.path.abspath(f.path)
    name = os.path.basename(path)
    stem = name[: -len(".json")] if name.endswith(".json") else name
    head, dot, kind = stem.rpartition(".")
    if dot and head and kind in KIND_NAMES:
        return head
    if stem in KIND_NAMES:
        parts = os.path.dirname(path).split(os.sep)
        if len(parts) > 4 and parts[-3:] == list(STATUS_DIR):
            return parts[-4]
        return parts[-1] or stem
    return named or stem


def read(f: File, matrices: Matrices | None) -> list[Entry] | Unreadable:
    from gpuenv.standins.jsoninput import InputError
    from gpuenv.standins.jsoninput import read as read_json

    try:
        doc = read_json(f.path, "file")
    except InputError as exc:
        return Unreadable(f.path, host_of(f), str(exc))
    try:
        return entries_of(f, doc, matrices)
    except ValueError as exc:
        return Unreadable(f.path, host_of(f), f"file {f.path}: {exc}")
    except Exception as exc:  # noqa: BLE001 - one odd file must not end a report of thousands
        return Unreadable(
            f.path, host_of(f), f"file {f.path}: could not be summarised ({type(exc).__name__}: {exc})"
        )


# -- distilling one document (pure) -------------------------------------------------------------


def entries_of(f: File, doc: object, matrices: Matrices | None) -> list[Entry]:
    """The entries of one document; ValueError (one line) for what is no gpuenv document."""
    if not isinstance(doc, dict):
        raise ValueError("not a gpuenv document (expected a JSON object)")
    schema = doc.get("schema")
    kind = SCHEMAS.get(schema) if isinstance(schema, str) else None  # a list or an object is no name either
    if kind is None:
        raise ValueError(
            f"schema {doc.get('schema')!r} is not a gpuenv facts, doctor, verify or status document "
            f"({', '.join(SCHEMAS)})"
        )
    if kind == "facts":
        return [_facts(f, doc, matrices)]
    if kind == "doctor":
        return [_doctor(f, doc, None, None)]
    if kind == "verify":
        return [_verify(f, doc, None, None)]
    return _status(f, doc)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _facts(f: File, doc: dict[str, Any], matrices: Matrices | None) -> Entry:
    from gpuenv.facts import FactsError, from_dict
    from gpuenv.verify.machine import machine_of

    try:
        facts = from_dict(doc)
    except FactsError as exc:
        raise ValueError(str(exc)) from None
    torch = facts.python.torch if facts.python is not None else None
    return Entry(
        path=f.path,
        host=host_of(f, facts.host.hostname),
        kind="facts",
        collected_at=facts.collected_at,
        machine=machine_of(facts, matrices),
        torch=torch.version if torch is not None else None,
    )


def _findings(doc: dict[str, Any], what: str) -> tuple[Seen, ...]:
    items = doc.get("findings")
    if not isinstance(items, list):
        raise ValueError(f"a {what} document without its findings list")
    out = []
    for item in items:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("code"), str)
            or item.get("severity") not in SEVERITIES
        ):
            raise ValueError(f"a {what} finding without a code and a severity")
        cause = item.get("cause")
        out.append(
            Seen(
                item["code"],
                item["severity"],
                _str(item.get("title")) or item["code"],
                cause if isinstance(cause, str) else "",
            )
        )
    return tuple(out)


def _doctor(f: File, doc: dict[str, Any], when: str | None, state: str | None) -> Entry:
    if "error" in doc and "findings" not in doc:  # doctor's line for a facts file it could not read
        raise ValueError(f"a doctor report of an unreadable facts file: {_str(doc.get('error')) or '?'}")
    given = doc.get("target")
    target: dict[str, Any] = given if isinstance(given, dict) else {}
    stack = None
    if target.get("basis") == "installed" and target.get("stack") in ("cuda", "rocm"):
        label = "CUDA" if target["stack"] == "cuda" else "ROCm"
        stack = f"{label} {target['version']}" if _str(target.get("version")) else label
    return Entry(
        path=f.path,
        host=host_of(f),
        kind="doctor",
        collected_at=when,
        findings=_findings(doc, "doctor"),
        stack=stack,
        state=state,
    )


def _verify(f: File, doc: dict[str, Any], when: str | None, state: str | None) -> Entry:
    from gpuenv.verify.machine import machine_from_dict

    given = doc.get("torch")
    torch: dict[str, Any] = given if isinstance(given, dict) else {}
    passed = doc.get("passed")
    return Entry(
        path=f.path,
        host=host_of(f, _str(doc.get("host"))),
        kind="verify",
        collected_at=_str(doc.get("collected_at")) or when,
        findings=_findings(doc, "verify"),
        machine=machine_from_dict(doc.get("machine")),
        torch=_str(torch.get("version")),
        passed=passed if isinstance(passed, bool) else None,
        state=state,
    )


def _status(f: File, doc: dict[str, Any]) -> list[Entry]:
    """A bootstrap's status.json (gpuenv.status/1): the doctor and verify results it holds,
    dated when the bootstrap finished."""
    when, state = _str(doc.get("finished_at")), _str(doc.get("state"))
    out = []
    if isinstance(doc.get("doctor"), dict):
        out.append(_doctor(f, doc["doctor"], when, state))
    if isinstance(doc.get("verify"), dict):
        out.append(_verify(f, doc["verify"], when, state))
    if not out:
        raise ValueError(f"a status document (state {state or '?'}) holding no doctor or verify result")
    return out
