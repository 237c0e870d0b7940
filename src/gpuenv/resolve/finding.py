"""Findings: what a doctor check reports (the public codes: FINDINGS.md)."""

from __future__ import annotations

import enum

from gpuenv.standins.record import field, record


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


@record(frozen=True)
class Finding:
    severity: Severity
    title: str  # one line
    detail: str  # what was seen: versions, paths, GPUs
    fix: str  # what to do, with commands where they exist
    gpus: tuple[str, ...] = ()  # PCI slots concerned
    refs: tuple[str, ...] = ()  # source URLs
    # The fix's runnable command lines, in order, each also a line of `fix` (which keeps the prose
    # around them): what a tool can offer to run. Empty where the fix is not a command today.
    commands: tuple[str, ...] = ()
    # The stable public code (FINDINGS.md). A check leaves it empty: the registry stamps the code
    # the check is registered under, so each code is written once, in its @check.
    code: str = ""
    # The code of the finding this one follows from (nvidia.gpu-dropped for the gpu.no-driver of
    # the GPU it dropped): the registry sets it where the cause stands in the same report
    # (@check(follows=...)); a report shows it under its cause and counts it apart.
    cause: str = ""

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "code": self.code,
            "severity": self.severity.value,
            "title": self.title,
            "detail": self.detail,
            "fix": self.fix,
        }
        if self.commands:
            out["commands"] = list(self.commands)
        if self.gpus:
            out["gpus"] = list(self.gpus)
        if self.refs:
            out["refs"] = list(self.refs)
        if self.cause:
            out["cause"] = self.cause
        return out


@record(frozen=True)
class Target:
    """What the checks judge against: an install target, or the installed stack (stack=None)."""

    stack: str | None = None  # "rocm" | "cuda" | None
    version: str | None = None  # "7.2.4", "12.8"; None: the default for the stack
    torch: str | None = None  # "2.7.0"
    explicit: bool = False  # asked for by the user (--target), not inferred
    extra: dict[str, str] = field(default_factory=dict)  # "basis", "installed" (gpuenv.resolve.target)

    @classmethod
    def parse(cls, text: str | None, torch: str | None = None) -> Target:
        """'rocm', 'rocm@7.2.4', 'cuda@12.8' -> Target; raises ValueError on anything else."""
        if not text:
            return cls(torch=torch)
        stack, _, version = text.partition("@")
        stack = stack.strip().lower()
        if stack not in ("rocm", "cuda"):
            raise ValueError(f"target must be rocm[@VERSION] or cuda[@VERSION], not {text!r}")
        return cls(stack=stack, version=version.strip() or None, torch=torch, explicit=True)
