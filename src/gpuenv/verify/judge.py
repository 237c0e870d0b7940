"""What the verify script's records mean: findings about an installed PyTorch stack (pure).

``judge(outcome, machine)`` takes what came back from the target interpreter (``Outcome``: its
standard output, the tail of its standard error, its exit status, whether it timed out) and what
the probe saw of the machine (``Machine``: its GPUs on the PCI bus; None when unknown), and
returns a ``Verification``: the torch build, each GPU torch sees with its architecture, whether
the build has code for it and its matmul's result, the ROCm device nodes, and the findings
(codes ``verify.*``, each listed in FINDINGS.md under "Verify"). Nothing here runs a process or
reads a file.

The rules:
- an architecture is in the build by gpuenv's one rule for each stack: ``torchpick.covers`` for
  CUDA (cubins forward-compatible within a major version, PTX within its major), membership of
  the gfx target (before any ``:sramecc+:xnack-`` feature suffix) for ROCm, as the doctor judges;
- a matmul is right when the GPU's product differs from the CPU's by at most ``TOLERANCE`` in
  every entry (see below);
- "each GPU is visible" compares torch's device count with the machine's GPUs of the build's
  vendor that can compute (``Machine.compute_gpus``); a machine whose PCI bus shows no NVIDIA or
  AMD GPU at all (WSL, a container without sysfs) is not compared: torch's view is all there is;
- the device nodes count on ROCm builds only (a CUDA build never opens /dev/kfd);
- a run that did not finish (timeout, crash, not the script's output) is a finding naming the
  step it was in; what it reported before that is judged as usual.
"""

from __future__ import annotations

import signal

from gpuenv.exitcodes import Exit
from gpuenv.record import record
from gpuenv.resolve.finding import Finding, Severity
from gpuenv.verify.machine import Machine
from gpuenv.verify.script import SIZE

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from gpuenv.verify.machine import MachineGpu

SCHEMA = "gpuenv.verify/1"

# The matmul's tolerance, in absolute terms. Inputs are uniform in [-1, 1) and K = 64, so the
# products' entries are about 2.7 in size and at most ~15. Any correct float32 kernel (whatever
# its order of summation or blocking) stays within K * 2^-24 * 15 ~= 6e-5 of the CPU's result,
# and typically within 1e-6; TF32 (10-bit mantissa, what Ampere and later use for float32
# matmuls when allowed) is off by ~3e-3 somewhere among the 4096 entries. 1e-3 passes every
# correct float32 result and fails TF32 leaking through (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1),
# a kernel built for another GPU (HSA_OVERRIDE_GFX_VERSION) and results that are simply wrong.
TOLERANCE = 1e-3

# Every code verify reports, in the order findings are listed within a severity.
CODES = (
    "verify.crashed",
    "verify.timeout",
    "verify.torch-missing",
    "verify.torch-import-failed",
    "verify.cpu-build",
    "verify.wrong-vendor",
    "verify.device-access",
    "verify.no-gpu-visible",
    "verify.gpu-not-visible",
    "verify.arch-missing",
    "verify.matmul-failed",
    "verify.matmul-wrong",
    "verify.arch-unknown",
    "verify.unclean-exit",
)
VISIBILITY = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


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


# -- reading the records ----------------------------------------------------------------------


def parse_records(stdout: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(records, lines that are not records) of the script's output: one JSON object per line,
    read with gpuenv's JSON input rules (strict UTF-8, no NaN, bounded depth): the interpreter
    is the user's, and whatever it printed is input like any file."""
    from gpuenv.jsoninput import InputError, parse

    records: list[dict[str, Any]] = []
    other: list[str] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            doc = parse(line.encode("utf-8", "surrogateescape"), "verify output")
        except InputError:
            other.append(line)
            continue
        if isinstance(doc, dict) and isinstance(doc.get("step"), str):
            records.append(doc)
        else:
            other.append(line)
    return records, other


def _s(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def arch_of(gpu: dict[str, Any], stack: str | None) -> str | None:
    """The GPU's architecture as the build lists them: "sm_120" (CUDA), "gfx1201" (ROCm)."""
    if stack == "rocm":
        gcn = _s(gpu.get("gcn_arch"))
        return (gcn.split(":", 1)[0].strip() or None) if gcn else None
    cap = gpu.get("capability")
    if isinstance(cap, list) and len(cap) == 2 and all(_int(v) is not None and v >= 0 for v in cap):
        return f"sm_{cap[0]}{cap[1]}"
    return None


def in_build(
    arch: str | None, arch_list: tuple[str, ...] | None, stack: str | None
) -> tuple[bool | None, str | None]:
    """(whether the build has code for ``arch``, the entry that covers it), by gpuenv's rule."""
    if arch is None or not arch_list or stack is None:
        return None, None
    if stack == "rocm":
        targets = {a.split(":", 1)[0] for a in arch_list}
        return (arch in targets), (arch if arch in targets else None)
    from gpuenv.torchpick import covers

    entry = covers(list(arch_list), arch)
    return entry is not None, entry


# -- the judgement ----------------------------------------------------------------------------


def judge(
    outcome: Outcome,
    machine: Machine | None = None,
    host: str | None = None,
    collected_at: str | None = None,
    gpuenv_version: str | None = None,
) -> Verification:
    records, other = parse_records(outcome.stdout)
    py = outcome.python
    by_step: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_step.setdefault(r["step"], []).append(r)
    start = (by_step.get("start") or [{}])[0]
    given_env = start.get("env")
    env: dict[str, Any] = given_env if isinstance(given_env, dict) else {}
    complete = "done" in by_step and outcome.start_error is None and not outcome.timed_out

    findings = _run_findings(outcome, records, other, by_step)
    # No NVIDIA or AMD GPU on the bus at all (WSL's paravirtual GPU, a container without sysfs):
    # nothing to compare torch's view with, rather than "every GPU is missing".
    seen = (
        machine if machine is not None and any(g.vendor in ("nvidia", "amd") for g in machine.gpus) else None
    )

    # -- torch and its build
    torch_rec = _first(by_step, "torch")
    build: TorchBuild | None = None
    if torch_rec is not None and torch_rec.get("ok") is not True:
        findings.append(
            _no_torch(py, _s(torch_rec.get("error")) or "unknown error", torch_rec.get("missing"), start)
        )
    elif torch_rec is not None:
        arch_list = torch_rec.get("arch_list")
        build = TorchBuild(
            version=_s(torch_rec.get("version")),
            cuda=_s(torch_rec.get("cuda")),
            hip=_s(torch_rec.get("hip")),
            arch_list=tuple(a for a in arch_list if isinstance(a, str))
            if isinstance(arch_list, list)
            else None,
        )
        if build.stack is None:
            findings.append(_cpu_build(py, build, seen))
    stack = build.stack if build else None
    wrong = _wrong_vendor(py, build, seen) if build is not None and stack is not None else None
    if wrong is not None:
        findings.append(wrong)

    # -- the ROCm device nodes
    nodes_rec = _first(by_step, "nodes")
    nodes: tuple[Node, ...] = ()
    if nodes_rec is not None and isinstance(nodes_rec.get("results"), list):
        nodes = tuple(
            Node(path=_s(r.get("path")) or "?", ok=r.get("ok") is True, error=_s(r.get("error")))
            for r in nodes_rec["results"]
            if isinstance(r, dict)
        )
    access_failed = False
    if stack == "rocm" and nodes_rec is not None:
        bad = [n for n in nodes if not n.ok]
        renders = [n for n in nodes if "/renderD" in n.path]
        if bad or not renders:
            access_failed = True
            findings.append(_device_access(bad, not renders, _s(start.get("user"))))

    # -- the GPUs torch sees, against the machine's
    dev = _first(by_step, "devices")
    count = _int(dev.get("count")) if dev is not None else None
    # (build is not None wherever stack is not None: said again for the type checker)
    if stack is not None and build is not None and dev is not None and not count and wrong is None:
        findings.append(_no_gpu(py, build, dev, env, access_failed, seen))
    elif stack is not None and build is not None and count and seen is not None:
        expected = seen.compute_gpus("amd" if stack == "rocm" else "nvidia")
        if count < len(expected):
            findings.append(_not_all_visible(py, build, count, expected, env))

    # -- each GPU
    matmuls = {_int(r.get("index")): r for r in by_step.get("matmul", [])}
    inputs_error = next((_s(r.get("error")) for r in by_step.get("inputs", [])), None)
    gpus: list[GpuResult] = []
    for r in by_step.get("gpu", []):
        index = _int(r.get("index"))
        if index is None:
            continue
        arch = arch_of(r, stack)
        fits, entry = in_build(arch, build.arch_list if build else None, stack)
        gpus.append(
            GpuResult(
                index,
                _s(r.get("name")),
                arch,
                fits,
                _matmul_of(matmuls.get(index), inputs_error),
                entry,
                _int(r.get("memory_mib")),
            )
        )

    findings += _arch_findings(py, build, gpus, env)
    findings += _matmul_findings(gpus, stack, env)
    order = {c: i for i, c in enumerate(CODES)}
    findings.sort(key=lambda f: (f.severity.rank, order.get(f.code, len(order))))
    return Verification(
        python=py,
        executable=_s(start.get("executable")),
        python_version=_s(start.get("version")),
        user=_s(start.get("user")),
        torch=build,
        gpus=tuple(gpus),
        nodes=nodes,
        findings=tuple(findings),
        complete=complete,
        machine=machine,
        host=host,
        collected_at=collected_at,
        gpuenv_version=gpuenv_version,
        seconds=outcome.seconds,
    )


def _first(by_step: dict[str, list[dict[str, Any]]], step: str) -> dict[str, Any] | None:
    """The first record of ``step``, or None when the script wrote none."""
    found = by_step.get(step)
    return found[0] if found else None


def _matmul_of(m: dict[str, Any] | None, inputs_error: str | None) -> Matmul | None:
    if m is None:
        if inputs_error:
            return Matmul(
                ok=False, max_abs_err=None, error=f"the CPU inputs could not be made: {inputs_error}"
            )
        return None
    if _s(m.get("error")):
        return Matmul(ok=False, max_abs_err=None, error=_s(m.get("error")))
    err = m.get("max_abs_err")
    err = float(err) if isinstance(err, int | float) and not isinstance(err, bool) else None
    ok = (
        err is not None
        and m.get("finite") is not False
        and m.get("shape_ok") is not False
        and err <= TOLERANCE
    )
    return Matmul(ok=ok, max_abs_err=err)


# -- the run itself ----------------------------------------------------------------------------


def _run_findings(
    outcome: Outcome, records: list[dict[str, Any]], other: list[str], by_step: dict[str, list[dict[str, Any]]]
) -> list[Finding]:
    py = outcome.python
    begun = [_s(r.get("what")) for r in by_step.get("begin", [])]
    step = begun[-1] if begun else None
    if outcome.start_error is not None:
        return [_crashed(py, f"{py} could not be started: {outcome.start_error}.", None)]
    if outcome.timed_out:
        where = f"during: {step}" if step else "before the script's first step"
        return [
            Finding(
                code="verify.timeout",
                severity=Severity.ERROR,
                title=f"The check did not finish within {outcome.timeout:g} s ({step or 'start-up'})",
                detail=f"{py} was stopped after {outcome.timeout:g} s {where}; a hung GPU or driver "
                "initialisation is the usual cause." + _stderr_tail(outcome.stderr),
                fix="Look at the GPU and driver state: `nvidia-smi` or `rocm-smi`, and `sudo dmesg | tail -50` "
                "(Xid, amdgpu or GPU reset messages).\n"
                "A GPU stuck in a bad state usually needs a reboot.\n"
                "If the first run is only slow (a cold disk, PTX JIT compilation), allow more time: "
                "gpuenv verify --timeout 600",
            )
        ]
    if not records:
        said = f"; it printed: {other[0][:200]!r}" if other else "; it printed nothing"
        return [
            _crashed(
                py,
                f"{py} did not run the verify script ({_status(outcome.returncode)}{said})."
                + _stderr_tail(outcome.stderr),
                None,
            )
        ]
    if "done" not in by_step:
        return [
            _crashed(
                py,
                f"{py} ended {_status(outcome.returncode)} during: {step or 'start-up'}; the steps before "
                "it are judged below." + _stderr_tail(outcome.stderr),
                step,
            )
        ]
    if outcome.returncode not in (0, None):
        return [
            Finding(
                code="verify.unclean-exit",
                severity=Severity.WARNING,
                title="The interpreter failed on exit after every check had run",
                detail=f"{py} finished the checks, then exited {_status(outcome.returncode)}."
                + _stderr_tail(outcome.stderr),
                fix=f"Every step completed; run `{py} -c 'import torch; torch.zeros(1).cuda()'` to see the "
                "exit-time failure (often a driver or library teardown problem).",
            )
        ]
    return []


def _status(returncode: int | None) -> str:
    if returncode is None:
        return "without an exit status"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"with exit status {returncode}"


def _stderr_tail(stderr: str, lines: int = 3) -> str:
    tail = [line.strip() for line in stderr.strip().splitlines() if line.strip()][-lines:]
    return (" Its last output on stderr: " + " | ".join(t[:300] for t in tail)) if tail else ""


def _crashed(py: str, detail: str, step: str | None) -> Finding:
    return Finding(
        code="verify.crashed",
        severity=Severity.ERROR,
        title="The check did not run to its end" + (f" (it stopped during: {step})" if step else ""),
        detail=detail,
        fix=f"Run the step by hand to see the failure: {py} -c 'import torch; print(torch.cuda.is_available())'\n"
        "A crash in a matmul on ROCm is often a GPU the build has no kernels for: see verify.arch-missing "
        "and gpuenv torch.\n"
        "gpuenv doctor    # the machine's driver and stack",
    )


# -- torch and its build -----------------------------------------------------------------------


def _no_torch(py: str, error: str, missing: object, start: dict[str, Any]) -> Finding:
    version = _s(start.get("version"))
    where = f"{py}" + (f" (Python {version})" if version else "")
    if missing is True:
        return Finding(
            code="verify.torch-missing",
            severity=Severity.ERROR,
            title="PyTorch is not installed in this interpreter",
            detail=f"{where}: {error}.",
            fix="gpuenv torch    # prints the build this machine needs, with its --index-url\n"
            f"{py} -m pip install torch==VERSION --index-url URL    # the command it printed, with this interpreter\n"
            "Or verify the interpreter that has it: gpuenv verify --python /path/to/venv/bin/python",
        )
    return Finding(
        code="verify.torch-import-failed",
        severity=Severity.ERROR,
        title="PyTorch is installed but does not import",
        detail=f"{where}: import torch raised {error}.",
        fix="A library torch loads is missing or shadowed: gpuenv doctor torch.ld-library-path; try again with "
        "LD_LIBRARY_PATH unset.\n"
        f"Reinstall the build gpuenv torch prints: {py} -m pip install --force-reinstall torch==VERSION "
        "--index-url URL",
    )


def _cpu_build(py: str, build: TorchBuild, machine: Machine | None) -> Finding:
    gpus = [g for g in (machine.gpus if machine else ()) if g.compute]
    seen = f" The machine has {machine.model}." if machine is not None and gpus else ""
    return Finding(
        code="verify.cpu-build",
        severity=Severity.ERROR,
        title=f"PyTorch {build.version or '(unknown version)'} is a CPU-only build: it uses no GPU",
        detail=f"{py} imports torch {build.version} with torch.version.cuda and torch.version.hip both None."
        + seen,
        fix=f"{py} -m pip uninstall -y torch\n"
        "gpuenv torch    # prints the GPU build this machine needs, with its --index-url\n"
        f"{py} -m pip install torch==VERSION --index-url URL    # the command it printed",
    )


def _wrong_vendor(py: str, build: TorchBuild, machine: Machine | None) -> Finding | None:
    """A CUDA build on a machine whose only GPUs are AMD, or a ROCm build on an NVIDIA-only one."""
    if machine is None:
        return None
    nvidia, amd = machine.compute_gpus("nvidia"), machine.compute_gpus("amd")
    if build.stack == "cuda" and not nvidia and amd:
        have, want = amd, "ROCm"
    elif build.stack == "rocm" and not amd and nvidia:
        have, want = nvidia, "CUDA"
    else:
        return None
    return Finding(
        code="verify.wrong-vendor",
        severity=Severity.ERROR,
        title=f"This is a {'ROCm' if build.stack == 'rocm' else 'CUDA'} build of PyTorch; the machine's GPUs "
        f"need {want}",
        detail=f"{build.label} in {py}; the machine has {Machine(gpus=have).model}, which this build cannot use.",
        fix=f"{py} -m pip uninstall -y torch\n"
        "gpuenv torch    # prints the build for these GPUs, with its --index-url\n"
        f"{py} -m pip install torch==VERSION --index-url URL    # the command it printed",
        gpus=tuple(g.pci_slot for g in have if g.pci_slot),
    )


def _device_access(bad: list[Node], no_render: bool, user: str | None) -> Finding:
    who = user or "this user"
    seen = [f"{n.path}: {n.error or 'not openable'}" for n in bad]
    if no_render:
        seen.append("no /dev/dri/renderD* node exists")
    return Finding(
        code="verify.device-access",
        severity=Severity.ERROR,
        title=f"{who} cannot open the ROCm device nodes read-write",
        detail="; ".join(seen)
        + f" (opened as {who}). ROCm needs /dev/kfd and the GPUs' /dev/dri/renderD* nodes.",
        fix="sudo usermod -aG render,video $USER    # then log out and back in (or: newgrp render)\n"
        "In a container: docker run --device=/dev/kfd --device=/dev/dri --group-add render ...\n"
        "gpuenv doctor amd.no-device-access amd.kfd-missing    # what the machine shows",
    )


def _env_note(env: dict[str, Any], keys: tuple[str, ...]) -> str:
    set_ = [f"{k}={env[k]!r}" for k in keys if isinstance(env.get(k), str)]
    return f" Set in the environment: {', '.join(set_)}." if set_ else ""


def _listed(gpus: Iterable[MachineGpu]) -> str:
    return ", ".join(f"{g.name} ({g.pci_slot or '?'}, driver: {g.driver or 'none'})" for g in gpus)


def _no_gpu(
    py: str, build: TorchBuild, dev: dict[str, Any], env: dict[str, Any], access_failed: bool,
    machine: Machine | None,
) -> Finding:
    why = _s(dev.get("warning")) or _s(dev.get("init_error")) or _s(dev.get("error"))
    detail = (
        f"{build.label} in {py} sees no GPU: torch.cuda.device_count() is {_int(dev.get('count')) or 0}"
        + (f"; torch said: {why}" if why else "")
        + "."
    )
    vendor = "amd" if build.stack == "rocm" else "nvidia"
    expected = machine.compute_gpus(vendor) if machine is not None else ()
    if expected:
        detail += f" The machine has {_listed(expected)}."
    if build.stack == "rocm":
        detail += _env_note(env, VISIBILITY)
        if access_failed:
            detail += " The device nodes cannot be opened (verify.device-access): that is the likely cause."
        fix = (
            "gpuenv doctor    # driver bound? /dev/kfd present? user in render?\n"
            "rocminfo | grep -i gfx    # ROCm must list the GPU as an agent\n"
            "Unset HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES if they hide the GPUs."
        )
    else:
        detail += _env_note(env, ("CUDA_VISIBLE_DEVICES",))
        fix = (
            "nvidia-smi    # must list the GPU; if it fails, the driver is not working\n"
            "gpuenv doctor    # what is wrong with the driver (e.g. torch.driver-too-old), and the fix\n"
            "Unset CUDA_VISIBLE_DEVICES if it is empty or names no GPU."
        )
    return Finding(
        code="verify.no-gpu-visible",
        severity=Severity.ERROR,
        title=f"PyTorch sees no GPU ({'ROCm' if build.stack == 'rocm' else 'CUDA'} build)",
        detail=detail,
        fix=fix,
        gpus=tuple(g.pci_slot for g in expected if g.pci_slot),
    )


def _not_all_visible(
    py: str, build: TorchBuild, count: int, expected: tuple[MachineGpu, ...], env: dict[str, Any]
) -> Finding:
    hidden = [k for k in VISIBILITY if isinstance(env.get(k), str)]
    # A visibility variable is how a user gives a job some of the GPUs: then fewer is a choice,
    # worth a warning (verify did not check the others), not a failure.
    severity = Severity.WARNING if hidden else Severity.ERROR
    return Finding(
        code="verify.gpu-not-visible",
        severity=severity,
        title=f"PyTorch sees {count} of the machine's {len(expected)} GPUs",
        detail=f"{build.label} in {py} counts {count} GPU(s); the PCI bus has {len(expected)}: "
        f"{_listed(expected)}." + _env_note(env, VISIBILITY),
        fix=(
            "Unset " + " / ".join(hidden) + " to verify every GPU (gpuenv doctor gpu.hidden-by-env).\n"
            if hidden
            else ""
        )
        + (
            "rocm-smi ; rocminfo | grep -i gfx    # which GPUs ROCm lists"
            if build.stack == "rocm"
            else "nvidia-smi -L    # which GPUs the driver lists; a missing one: sudo dmesg | grep -i -e xid -e nvrm"
        )
        + "\ngpuenv doctor    # a GPU without its driver, or fallen off the bus",
        gpus=tuple(g.pci_slot for g in expected if g.pci_slot),
    )


# -- each GPU ----------------------------------------------------------------------------------


def _arch_findings(py: str, build: TorchBuild | None, gpus: list[GpuResult], env: dict[str, Any]) -> list[Finding]:
    if build is None or build.stack is None:
        return []
    out = []
    missing = [g for g in gpus if g.in_build is False]
    if missing:
        archs = sorted({g.arch for g in missing if g.arch})
        built = ", ".join(build.arch_list or ()) or "none"
        detail = (
            f"{build.label} in {py} has no code for "
            + "; ".join(g.label for g in missing)
            + (f". It was built for: {built}.")
        )
        if build.stack == "rocm":
            detail += _env_note(env, ("HSA_OVERRIDE_GFX_VERSION",))
        out.append(
            Finding(
                code="verify.arch-missing",
                severity=Severity.ERROR,
                title=f"This PyTorch build has no code for {', '.join(archs)}",
                detail=detail,
                fix="gpuenv torch    # prints a build with code for this GPU, with its --index-url\n"
                f"{py} -m pip install --force-reinstall torch==VERSION --index-url URL    # the command it printed",
            )
        )
    unknown = [g for g in gpus if g.in_build is None]
    if unknown:
        why = (
            "the build's architecture list (torch.cuda.get_arch_list()) is empty or unreadable"
            if not build.arch_list
            else "the GPU's architecture could not be read"
        )
        out.append(
            Finding(
                code="verify.arch-unknown",
                severity=Severity.WARNING,
                title="Whether the build has code for "
                + ("these GPUs" if len(unknown) > 1 else f"GPU {unknown[0].index}")
                + " could not be told",
                detail=f"{'; '.join(g.label for g in unknown)}: {why}. The matmul result still shows "
                "whether the GPU works.",
                fix="gpuenv doctor torch.arch-missing    # judges the installed wheel from its metadata",
            )
        )
    return out


def _matmul_findings(gpus: list[GpuResult], stack: str | None, env: dict[str, Any]) -> list[Finding]:
    out = []
    for g in gpus:
        if g.matmul is None or g.matmul.error is None:
            continue
        hint = (
            f" The build has no code for {g.arch} (verify.arch-missing): that is the cause."
            if g.in_build is False
            else ""
        )
        out.append(
            Finding(
                code="verify.matmul-failed",
                severity=Severity.ERROR,
                title=f"A matmul on {g.label} failed",
                detail=f"{g.matmul.error}.{hint}",
                fix="gpuenv doctor    # the driver, the stack and the torch build\n"
                "For details, rerun with CUDA_LAUNCH_BLOCKING=1"
                + (" AMD_LOG_LEVEL=3" if stack == "rocm" else "")
                + " gpuenv verify",
            )
        )
    for g in gpus:
        if g.matmul is None or g.matmul.error is not None or g.matmul.ok:
            continue
        err = g.matmul.max_abs_err
        seen = (
            "NaN or infinite entries"
            if err is None
            else f"a largest difference of {err:.3g}"
            if err > TOLERANCE
            else "a result of the wrong shape"
        )
        out.append(
            Finding(
                code="verify.matmul-wrong",
                severity=Severity.ERROR,
                title=f"{g.label} computes a wrong matmul",
                detail=f"A {SIZE}x{SIZE} float32 matmul on {g.label} differs from the CPU's with {seen}; "
                f"at most {TOLERANCE:g} is right."
                + _env_note(env, ("HSA_OVERRIDE_GFX_VERSION", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")),
                fix="Unset HSA_OVERRIDE_GFX_VERSION if set (it runs code built for another GPU) and "
                "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE (it forces TF32).\n"
                "gpuenv doctor    # a driver or library mismatch\n"
                + (
                    "rocm-smi --showerrors ; sudo dmesg | grep -i amdgpu    # hardware errors"
                    if stack == "rocm"
                    else "nvidia-smi -q -d ECC ; sudo dmesg | grep -i xid    # hardware errors"
                ),
            )
        )
    return out
