"""The records of one verification: what came back from the run (``Outcome``), the torch build,
each GPU's result, the device nodes, and the ``Verification`` the command renders (pure values)."""

from __future__ import annotations

from gpuenv.exitcodes import Exit
from gpuenv.resolve.finding import Finding, Severity
from gpuenv.standins.record import record
from gpuenv.verify.machine import Machine

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

SCHEMA = "gpuenv.verify/1"

# The matmul's tolerance, in absolute terms. Inputs are uniform in [-1, 1) and K = 64, so the
# products' entries are about 2.7 in size and at most ~15. Any correct float32 kernel (whatever
# its order of summation or blocking) stays within K * 2^-24 * 15 ~= 6e-5 of the CPU's result,
# and typically within 1e-6; TF32 (10-bit mantissa, what Ampere and later use for float32
# matmuls when allowed) is off by ~3e-3 somewhere among the 4096 entries. 1e-3 passes every
# correct float32 result and fails TF32 leaking through (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1),
# a kernel built for another GPU (HSA_OVERRIDE_GFX_VERSION) and results that are simply wrong.
TOLERANCE = 1e-3


@record(frozen=True)
class Outcome:
    """What came back from one run of the script (``gpuenv.verify.run`` makes it)."""

    python: str  # the interpreter run
    stdout: str
    stderr: str
    returncode: int | None  # None: it could not start, or could not be reaped
    timeout: float
    timed_out: bool = False
    seconds: float | None = None
    start_error: str | None = None  # why the interpreter could not be started
    nodes: tuple[str, ...] = ()  # the device nodes it was asked to open (on a ROCm build)


@record(frozen=True)
class TorchBuild:
    version: str | None
    cuda: str | None
    hip: str | None
    arch_list: tuple[str, ...] | None

    @property
    def stack(self) -> str | None:
        return "rocm" if self.hip else "cuda" if self.cuda else None

    @property
    def label(self) -> str:
        build = (
            f"ROCm build, HIP {self.hip}"
            if self.hip
            else f"CUDA {self.cuda} build"
            if self.cuda
            else "CPU-only"
        )
        return f"torch {self.version or '(unknown version)'} ({build})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "cuda": self.cuda,
            "hip": self.hip,
            "arch_list": None if self.arch_list is None else list(self.arch_list),
        }


@record(frozen=True)
class Matmul:
    ok: bool
    max_abs_err: float | None  # None: not finite, or it raised
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "max_abs_err": self.max_abs_err, "tolerance": TOLERANCE}
        if self.error is not None:
            out["error"] = self.error
        return out


@record(frozen=True)
class GpuResult:
    index: int
    name: str | None
    arch: str | None  # "sm_120", "gfx1201"
    in_build: bool | None  # None: the build's list or the GPU's arch is unknown
    matmul: Matmul | None  # None: not run (the script ended before it)
    covered_by: str | None = None  # the build entry that runs on it ("sm_86", "compute_90")
    memory_mib: int | None = None

    @property
    def label(self) -> str:
        what = ", ".join(x for x in (self.name, self.arch) if x)
        return f"GPU {self.index}" + (f" ({what})" if what else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "arch": self.arch,
            "in_build": self.in_build,
            "covered_by": self.covered_by,
            "memory_mib": self.memory_mib,
            "matmul": None if self.matmul is None else self.matmul.to_dict(),
        }


@record(frozen=True)
class Node:
    path: str
    ok: bool
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "ok": self.ok}
        if self.error is not None:
            out["error"] = self.error
        return out


@record(frozen=True)
class Verification:
    python: str
    executable: str | None
    python_version: str | None
    user: str | None
    torch: TorchBuild | None
    gpus: tuple[GpuResult, ...]
    nodes: tuple[Node, ...]
    findings: tuple[Finding, ...]
    complete: bool  # the script ran to its end
    machine: Machine | None = None
    host: str | None = None
    collected_at: str | None = None
    gpuenv_version: str | None = None
    seconds: float | None = None

    def summary(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Severity}
        for f in self.findings:
            counts[f.severity.value] += 1
        return counts

    @property
    def passed(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    def exit_code(self) -> Exit:
        return Exit.OK if self.passed else Exit.PROBLEMS

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "passed": self.passed,
            "complete": self.complete,
            "host": self.host,
            "collected_at": self.collected_at,
            "gpuenv_version": self.gpuenv_version,
            "seconds": self.seconds,
            "python": {"path": self.python, "executable": self.executable, "version": self.python_version},
            "user": self.user,
            "torch": None if self.torch is None else self.torch.to_dict(),
            "machine": None if self.machine is None else self.machine.to_dict(),
            "gpus": [g.to_dict() for g in self.gpus],
            "devices": [n.to_dict() for n in self.nodes],
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
        }
        return out

