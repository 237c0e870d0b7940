"""Plan and Step: what `gpuenv install|uninstall` will do, as data (contract: gpuenv.plan/1).

The plan that is shown is the object that is applied: the executor reads nothing but these
fields. ``to_dict``/``from_dict`` follow ``schemas/plan.schema.json`` (the public contract,
held by ``tests/contracts/plan.schema.json``); ``from_dict`` refuses a malformed plan with a
``PlanError`` naming the offending field, so a hand-edited or truncated plan file never
half-applies.
"""

from __future__ import annotations

import enum
import re

from gpuenv.standins.record import fields, record, replace

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

SCHEMA = "gpuenv.plan/1"
_STEP_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
_PACKAGE = re.compile(r"[a-z0-9][a-z0-9.+-]*(:[a-z0-9]+)?")
_MODE = re.compile(r"0[0-7]{3}")
_ACCOUNT = re.compile(r"[a-z_][a-z0-9_.-]{0,31}")  # a user or group name; never an option


class PlanError(ValueError):
    """A plan document that does not fit gpuenv.plan/1, or a plan that cannot be made."""


class KeyNotTrusted(PlanError):
    """A repository key whose fingerprint no first-party page confirms, and which the request did
    not trust by repeating it (--trust-unconfirmed-key): the plan is refused, exit 3 (#42)."""


def trusted_fingerprint(text: str) -> str:
    """--trust-unconfirmed-key's value as a fingerprint: 40 hex digits, spaces allowed as gpg
    prints them, upper-cased; anything else is a PlanError."""
    fpr = text.replace(" ", "").upper()
    if not re.fullmatch(r"[0-9A-F]{40}", fpr):
        raise PlanError(f"--trust-unconfirmed-key {text!r}: expected a key's full fingerprint (40 hex digits)")
    return fpr


class Action(str, enum.Enum):
    INSTALL = "install"
    UNINSTALL = "uninstall"


class Kind(str, enum.Enum):
    CHECK = "check"
    APT_PURGE = "apt-purge"
    APT_UPDATE = "apt-update"
    APT_INSTALL = "apt-install"
    APT_SOURCE = "apt-source"
    APT_KEY = "apt-key"
    APT_PIN = "apt-pin"
    WRITE_FILE = "write-file"
    REMOVE_FILE = "remove-file"
    GROUP_ADD = "group-add"
    COMMAND = "command"
    PIP_INSTALL = "pip-install"
    REBOOT = "reboot"


# Kinds whose step writes a file from ``content`` (apt-key writes the verified download instead).
FILE_KINDS = (Kind.APT_SOURCE, Kind.APT_PIN, Kind.WRITE_FILE)


@record(frozen=True)
class Step:
    id: str
    kind: Kind
    title: str
    why: str | None = None
    argv: tuple[str, ...] | None = None
    packages: tuple[str, ...] | None = None
    path: str | None = None
    content: str | None = None
    mode: str | None = None
    sha256: str | None = None
    fingerprint: str | None = None
    reboot_after: bool = False
    skip_if: str | None = None
    # Optional fields gpuenv adds to the contract:
    url: str | None = None  # apt-key: where the key is fetched from
    user: str | None = None  # group-add: the account
    groups: tuple[str, ...] | None = None  # group-add: the groups
    only_if_exists: str | None = None  # command: skipped when this path is absent in the root
    creates: str | None = None  # command: skipped when this path already exists in the root
    after: tuple[str, ...] | None = None  # command: runs only when one of these steps changed something
    autoremove: bool = False  # apt-purge: apt's autoremove, narrowed to ``allow``
    # apt-purge with autoremove: anchored regexes of the packages it may remove; "!^...$" excludes
    allow: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        where = f"step {self.id!r}"
        if not isinstance(self.id, str) or not _STEP_ID.fullmatch(self.id):
            raise PlanError(f"{where}: id must match {_STEP_ID.pattern}")
        if not isinstance(self.kind, Kind):
            raise PlanError(f"{where}: kind {self.kind!r} is not a Kind")
        if not self.title:
            raise PlanError(f"{where}: title is empty")
        for pkg in self.packages or ():
            if not _PACKAGE.fullmatch(pkg):
                raise PlanError(f"{where}: {pkg!r} is not a package name (globs and options are refused)")
        for name in ("path", "only_if_exists", "creates"):
            value = getattr(self, name)
            if value is not None and not _safe_path(value):
                raise PlanError(
                    f"{where}: {name} {value!r} must be an absolute path below /, without '..' or NUL"
                )
        if self.argv is not None and (not self.argv or not self.argv[0] or any("\0" in a for a in self.argv)):
            raise PlanError(f"{where}: argv must be a non-empty list of strings, without NUL")
        for account in (self.user, *(self.groups or ())):
            if account is not None and not _ACCOUNT.fullmatch(account):
                raise PlanError(f"{where}: {account!r} is not a user or group name")
        if self.mode is not None and not _MODE.fullmatch(self.mode):
            raise PlanError(f"{where}: mode {self.mode!r} must be octal like 0644")
        need = {
            Kind.APT_PURGE: ("packages",) if not self.autoremove else ("allow",),
            Kind.APT_INSTALL: ("packages",),
            Kind.APT_KEY: ("url", "fingerprint", "path"),
            Kind.REMOVE_FILE: ("path",),
            Kind.GROUP_ADD: ("user", "groups"),
            Kind.COMMAND: ("argv",),
            Kind.PIP_INSTALL: ("argv",),
        }.get(self.kind, ())
        if self.kind in FILE_KINDS:
            need = ("path", "content", "mode")
        for name in need:
            if not getattr(self, name):
                raise PlanError(f"{where}: a {self.kind.value} step needs {name}")
        if self.fingerprint is not None and not re.fullmatch(r"[0-9A-F]{40}", self.fingerprint):
            raise PlanError(f"{where}: fingerprint must be 40 upper-case hex digits")


def _safe_path(path: str) -> bool:
    parts = path.split("/")
    return (
        path.startswith("/")
        and "\0" not in path
        and ".." not in parts
        and any(p not in ("", ".") for p in parts)  # not the root itself
    )


@record(frozen=True)
class TorchPick:
    version: str
    index_url: str
    variant: str | None = None
    venv: str | None = None


@record(frozen=True)
class PlanTarget:
    stack: str  # rocm | cuda
    version: str | None = None
    driver: str | None = None
    torch: TorchPick | None = None

    def __post_init__(self) -> None:
        if self.stack not in ("rocm", "cuda"):
            raise PlanError(f"target.stack must be rocm or cuda, not {self.stack!r}")


@record(frozen=True)
class Request:
    """What the user asked for. A saved plan records it (``Plan.request``): at apply it is shown
    again and confirmed, and the plan is made again from it and the facts probed then."""

    action: Action
    stack: str  # rocm | cuda
    version: str | None = None
    torch: str | None = None
    venv: str | None = None
    user: str | None = None  # the account given render/video and owning the torch venv
    # The fingerprint of a repository key no first-party page confirms, repeated by the user to
    # have it pinned anyway (--trust-unconfirmed-key, #42); upper-case, no spaces.
    trust_key: str | None = None
    created_at: str | None = None
    gpuenv_version: str | None = None

    def __post_init__(self) -> None:
        if self.stack not in ("rocm", "cuda"):
            raise PlanError(f"stack must be rocm or cuda, not {self.stack!r}")
        if self.user is not None and not _ACCOUNT.fullmatch(self.user):
            raise PlanError(f"{self.user!r} is not a user name")
        if self.venv is not None and not _safe_path(self.venv):
            raise PlanError(f"--venv {self.venv!r} must be an absolute path, without '..' or NUL")
        if self.trust_key is not None and trusted_fingerprint(self.trust_key) != self.trust_key:
            raise PlanError(f"--trust-unconfirmed-key {self.trust_key!r}: expected 40 upper-case hex digits")

    def words(self) -> list[str]:
        """The request as the options that make it."""
        words = [self.action.value, self.stack]
        for flag, value in (("--version", self.version), ("--torch", self.torch), ("--venv", self.venv),
                            ("--user", self.user), ("--trust-unconfirmed-key", self.trust_key)):  # fmt: skip
            if value is not None:
                words += [flag, value]
        return words

    def line(self) -> str:
        """``words`` as one line, quoted as a shell quotes them: what `gpuenv apply --expect`
        repeats. Quoted, no other request reads the same (a --venv "/opt/t --user alice" is not
        --venv /opt/t --user alice); a request of plain words reads as it always did."""
        import shlex

        return shlex.join(self.words())

    def named_by(self, expect: str) -> bool:
        """Whether ``expect`` (what --expect was given) names this request, word for word."""
        import shlex

        try:
            return shlex.split(expect) == self.words()
        except ValueError:  # an unclosed quote names nothing
            return False

    def to_dict(self) -> dict[str, Any]:
        out = {"action": self.action.value, "stack": self.stack, "version": self.version,
               "torch": self.torch, "venv": self.venv, "user": self.user}  # fmt: skip
        if self.trust_key is not None:  # absent otherwise: plans saved before #42 read the same
            out["trust_key"] = self.trust_key
        return out


def _request_from_dict(doc: Any, plan_doc: dict[str, Any]) -> Request | None:
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise PlanError("plan.request: expected an object")
    try:
        action = Action(doc.get("action"))
    except ValueError:
        raise PlanError(f"plan.request.action: {doc.get('action')!r} is not install or uninstall") from None
    return Request(
        action=action,
        stack=_typed(doc, "stack", str, "plan.request", ""),
        version=_typed(doc, "version", str, "plan.request"),
        torch=_typed(doc, "torch", str, "plan.request"),
        venv=_typed(doc, "venv", str, "plan.request"),
        user=_typed(doc, "user", str, "plan.request"),
        trust_key=_typed(doc, "trust_key", str, "plan.request"),
        created_at=_typed(plan_doc, "created_at", str, "plan"),
        gpuenv_version=_typed(plan_doc, "gpuenv_version", str, "plan"),
    )


@record(frozen=True)
class Plan:
    action: Action
    target: PlanTarget
    facts_digest: str
    steps: tuple[Step, ...]
    created_at: str | None = None
    gpuenv_version: str | None = None
    blockers: tuple[str, ...] = ()
    # gpuenv's additions: why each blocker stops the plan, and what the host or user must do.
    notes: tuple[str, ...] = ()
    user: str | None = None
    request: Request | None = None  # what it was made from (plans of gpuenv 0.1.0 have none)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"sha256:[0-9a-f]{64}", self.facts_digest or ""):
            raise PlanError("facts_digest must be sha256:<64 hex digits>")
        seen: set[str] = set()
        for step in self.steps:
            if step.id in seen:
                raise PlanError(f"step id {step.id!r} appears twice")
            seen.add(step.id)

    @property
    def reboot_required(self) -> bool:
        return any(s.reboot_after or s.kind is Kind.REBOOT for s in self.steps)

    @property
    def changes(self) -> bool:
        return any(s.kind is not Kind.CHECK for s in self.steps)

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def with_steps(self, steps: tuple[Step, ...]) -> Plan:
        return replace(self, steps=steps)

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)


# --------------------------------------------------------------------------------------------
_STEP_TUPLES = ("argv", "packages", "groups", "allow", "after")


def _step_to_dict(step: Step) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(Step):
        value = getattr(step, f.name)
        if f.name == "kind":
            value = value.value
        elif f.name in _STEP_TUPLES and value is not None:
            value = list(value)
        elif value is None or (value is False and f.name in ("autoremove",)):
            continue  # optional, absent means the default
        out[f.name] = value
    return out


def to_dict(plan: Plan) -> dict[str, Any]:
    target: dict[str, Any] = {
        "stack": plan.target.stack,
        "version": plan.target.version,
        "driver": plan.target.driver,
        "torch": None,
    }
    if plan.target.torch:
        t = plan.target.torch
        target["torch"] = {k: v for k, v in vars(t).items() if v is not None}
    return {
        "schema": SCHEMA,
        "action": plan.action.value,
        "target": target,
        "facts_digest": plan.facts_digest,
        "created_at": plan.created_at,
        "gpuenv_version": plan.gpuenv_version,
        "reboot_required": plan.reboot_required,
        "blockers": list(plan.blockers),
        "notes": list(plan.notes),
        "user": plan.user,
        **({"request": plan.request.to_dict()} if plan.request else {}),
        "steps": [_step_to_dict(s) for s in plan.steps],
    }


def _typed(doc: dict[str, Any], key: str, types: type | tuple[type, ...], path: str, default: Any = None) -> Any:
    if key not in doc or doc[key] is None:
        return default
    value = doc[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
        raise PlanError(f"{path}.{key}: expected {_names(types)}, got {value!r}")
    return value


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _names(types: type | tuple[type, ...]) -> str:
    return " or ".join(t.__name__ for t in _as_tuple(types))


def _strings(doc: dict[str, Any], key: str, path: str) -> tuple[str, ...] | None:
    value = _typed(doc, key, list, path)
    if value is None:
        return None
    if not all(isinstance(v, str) for v in value):
        raise PlanError(f"{path}.{key}: expected a list of strings")
    return tuple(value)


def _step_from_dict(doc: Any, path: str) -> Step:
    if not isinstance(doc, dict):
        raise PlanError(f"{path}: expected an object")
    try:
        kind = Kind(doc.get("kind"))
    except ValueError:
        raise PlanError(f"{path}.kind: {doc.get('kind')!r} is not a step kind") from None
    kwargs: dict[str, Any] = {"kind": kind}
    for f in fields(Step):
        if f.name == "kind":
            continue
        if f.name in _STEP_TUPLES:
            kwargs[f.name] = _strings(doc, f.name, path)
        elif f.name in ("reboot_after", "autoremove"):
            kwargs[f.name] = _typed(doc, f.name, bool, path, False)
        else:
            kwargs[f.name] = _typed(doc, f.name, str, path)
    if kwargs["id"] is None or kwargs["title"] is None:
        raise PlanError(f"{path}: id and title are required")
    return Step(**kwargs)


def from_dict(doc: Any) -> Plan:
    if not isinstance(doc, dict):
        raise PlanError("plan: expected a JSON object at the top level")
    if doc.get("schema") != SCHEMA:
        raise PlanError(f"plan: schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    for key in ("action", "target", "facts_digest", "steps"):
        if key not in doc:
            raise PlanError(f"plan.{key}: required field missing")
    try:
        action = Action(doc["action"])
    except ValueError:
        raise PlanError(f"plan.action: {doc['action']!r} is not install or uninstall") from None
    tdoc = doc["target"]
    if not isinstance(tdoc, dict):
        raise PlanError("plan.target: expected an object")
    torch_doc = _typed(tdoc, "torch", dict, "plan.target")
    torch = None
    if torch_doc is not None:
        if not isinstance(torch_doc.get("version"), str) or not isinstance(torch_doc.get("index_url"), str):
            raise PlanError("plan.target.torch: version and index_url are required strings")
        torch = TorchPick(
            version=torch_doc["version"],
            index_url=torch_doc["index_url"],
            variant=_typed(torch_doc, "variant", str, "plan.target.torch"),
            venv=_typed(torch_doc, "venv", str, "plan.target.torch"),
        )
    target = PlanTarget(
        stack=_typed(tdoc, "stack", str, "plan.target", ""),
        version=_typed(tdoc, "version", str, "plan.target"),
        driver=_typed(tdoc, "driver", str, "plan.target"),
        torch=torch,
    )
    steps_doc = doc["steps"]
    if not isinstance(steps_doc, list):
        raise PlanError("plan.steps: expected a list")
    steps = tuple(_step_from_dict(s, f"plan.steps[{i}]") for i, s in enumerate(steps_doc))
    plan = Plan(
        action=action,
        target=target,
        facts_digest=_typed(doc, "facts_digest", str, "plan", ""),
        steps=steps,
        created_at=_typed(doc, "created_at", str, "plan"),
        gpuenv_version=_typed(doc, "gpuenv_version", str, "plan"),
        blockers=_strings(doc, "blockers", "plan") or (),
        notes=_strings(doc, "notes", "plan") or (),
        user=_typed(doc, "user", str, "plan"),
        request=_request_from_dict(doc.get("request"), doc),
    )
    declared = doc.get("reboot_required")
    if declared is not None and declared is not plan.reboot_required:
        raise PlanError("plan.reboot_required does not match the steps' reboot points")
    return plan


__all__ = ["SCHEMA", "Action", "Kind", "Plan", "PlanError", "PlanTarget", "Request", "Step", "TorchPick"]
