"""What the verify script's records mean: findings about an installed PyTorch stack (pure).

``judge(outcome, machine)`` takes what came back from the target interpreter (``Outcome``: its
standard output, the tail of its standard error, its exit status, whether it timed out) and what
the probe saw of the machine (``Machine``: its GPUs on the PCI bus; None when unknown), and
returns a ``Verification``: the torch build, each GPU torch sees with its architecture, whether
the build has code for it and its matmul's result, the ROCm device nodes, and the findings
(codes ``verify.*``, each listed in FINDINGS.md under "Verify"). Nothing here runs a process or
reads a file.

The rules:
- an architecture is in the build by gpuenv's one rule for each stack: ``wheelfit.covers`` for
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

from gpuenv.verify.codes import CODES
from gpuenv.verify.gpu_findings import arch_findings, device_access, matmul_findings, no_gpu, not_all_visible
from gpuenv.verify.records import arch_of, in_build, int_or_none, parse_records, str_or_none
from gpuenv.verify.results import TOLERANCE, GpuResult, Matmul, Node, Outcome, TorchBuild, Verification
from gpuenv.verify.run_findings import run_findings
from gpuenv.verify.torch_findings import cpu_build, no_torch, wrong_vendor

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from gpuenv.verify.machine import Machine



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

    findings = run_findings(outcome, records, other, by_step)
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
            no_torch(py, str_or_none(torch_rec.get("error")) or "unknown error", torch_rec.get("missing"), start)
        )
    elif torch_rec is not None:
        arch_list = torch_rec.get("arch_list")
        build = TorchBuild(
            version=str_or_none(torch_rec.get("version")),
            cuda=str_or_none(torch_rec.get("cuda")),
            hip=str_or_none(torch_rec.get("hip")),
            arch_list=tuple(a for a in arch_list if isinstance(a, str))
            if isinstance(arch_list, list)
            else None,
        )
        if build.stack is None:
            findings.append(cpu_build(py, build, seen))
    stack = build.stack if build else None
    wrong = wrong_vendor(py, build, seen) if build is not None and stack is not None else None
    if wrong is not None:
        findings.append(wrong)

    # -- the ROCm device nodes
    nodes_rec = _first(by_step, "nodes")
    nodes: tuple[Node, ...] = ()
    if nodes_rec is not None and isinstance(nodes_rec.get("results"), list):
        nodes = tuple(
            Node(path=str_or_none(r.get("path")) or "?", ok=r.get("ok") is True, error=str_or_none(r.get("error")))
            for r in nodes_rec["results"]
            if isinstance(r, dict)
        )
    access_failed = False
    if stack == "rocm" and nodes_rec is not None:
        bad = [n for n in nodes if not n.ok]
        renders = [n for n in nodes if "/renderD" in n.path]
        if bad or not renders:
            access_failed = True
            findings.append(device_access(bad, not renders, str_or_none(start.get("user"))))

    # -- the GPUs torch sees, against the machine's
    dev = _first(by_step, "devices")
    count = int_or_none(dev.get("count")) if dev is not None else None
    # (build is not None wherever stack is not None: said again for the type checker)
    if stack is not None and build is not None and dev is not None and not count and wrong is None:
        findings.append(no_gpu(py, build, dev, env, access_failed, seen))
    elif stack is not None and build is not None and count and seen is not None:
        expected = seen.compute_gpus("amd" if stack == "rocm" else "nvidia")
        if count < len(expected):
            findings.append(not_all_visible(py, build, count, expected, env))

    # -- each GPU
    matmuls = {int_or_none(r.get("index")): r for r in by_step.get("matmul", [])}
    inputs_error = next((str_or_none(r.get("error")) for r in by_step.get("inputs", [])), None)
    gpus: list[GpuResult] = []
    for r in by_step.get("gpu", []):
        index = int_or_none(r.get("index"))
        if index is None:
            continue
        arch = arch_of(r, stack)
        fits, entry = in_build(arch, build.arch_list if build else None, stack)
        gpus.append(
            GpuResult(
                index,
                str_or_none(r.get("name")),
                arch,
                fits,
                _matmul_of(matmuls.get(index), inputs_error),
                entry,
                int_or_none(r.get("memory_mib")),
            )
        )

    findings += arch_findings(py, build, gpus, env)
    findings += matmul_findings(gpus, stack, env)
    order = {c: i for i, c in enumerate(CODES)}
    findings.sort(key=lambda f: (f.severity.rank, order.get(f.code, len(order))))
    return Verification(
        python=py,
        executable=str_or_none(start.get("executable")),
        python_version=str_or_none(start.get("version")),
        user=str_or_none(start.get("user")),
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
    if str_or_none(m.get("error")):
        return Matmul(ok=False, max_abs_err=None, error=str_or_none(m.get("error")))
    err = m.get("max_abs_err")
    err = float(err) if isinstance(err, int | float) and not isinstance(err, bool) else None
    ok = (
        err is not None
        and m.get("finite") is not False
        and m.get("shape_ok") is not False
        and err <= TOLERANCE
    )
    return Matmul(ok=ok, max_abs_err=err)

