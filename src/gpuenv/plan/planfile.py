"""Saved plans: `gpuenv plan --out FILE` writes one, `gpuenv apply FILE` reads it back.

A plan file is the plan's JSON and nothing else; loading refuses anything that does not parse
into a valid Plan (``PlanError``), so a truncated or hand-mangled file is never half-applied.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from gpuenv.plan.plan import Plan, PlanError, from_dict
from gpuenv.standins import jsonout
from gpuenv.standins.checksum import sha256_hex


def dumps(plan: Plan) -> str:
    return jsonout.dumps(plan.to_dict()) + "\n"


MAX_BYTES = 4 << 20  # a plan is a few KB


def loads(text: str | bytes) -> Plan:
    """A plan from JSON, through the one JSON input reader (UTF-8, depth limit)."""
    from gpuenv.standins.jsoninput import InputError, parse

    try:
        doc = parse(text.encode() if isinstance(text, str) else text, "plan")
    except InputError as exc:
        raise PlanError(str(exc)) from None
    return from_dict(doc)


def digest(plan: Plan) -> str:
    """sha256 of the canonical plan: what the journal records, so --resume continues only the
    plan it started (created_at is part of it: two plans made at different times are two plans)."""
    canonical = json.dumps(plan.to_dict(), sort_keys=True, separators=(",", ":"))
    return "sha256:" + sha256_hex(canonical.encode())


def save(plan: Plan, path: str | os.PathLike[str]) -> None:
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(dumps(plan))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | os.PathLike[str]) -> Plan:
    """A saved plan; PlanError (one line) for a file that is not one."""
    from gpuenv.standins.jsoninput import InputError, read_bytes

    try:
        data = read_bytes(str(path), "plan", MAX_BYTES)
    except InputError as exc:
        raise PlanError(str(exc)) from None
    try:
        return loads(data)
    except PlanError as exc:
        raise PlanError(f"plan {path}: {str(exc).removeprefix('plan: ')}") from None
