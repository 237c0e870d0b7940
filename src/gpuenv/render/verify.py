"""Human rendering of `gpuenv verify`: the verdict, one line per GPU torch sees, then each finding
with its fix (errors first), in the doctor's style."""

from __future__ import annotations

from gpuenv.verify.results import GpuResult, Verification

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.render.term import Term


def gpu_line(g: GpuResult) -> str:
    """'GPU 0  NVIDIA H200  sm_90 (in build: sm_90)  matmul ok (largest difference 0)'; pure."""
    build = (
        f"in build: {g.covered_by}"
        if g.in_build and g.covered_by
        else "in build"
        if g.in_build
        else "NOT in build"
        if g.in_build is False
        else "build unknown"
    )
    if g.matmul is None:
        mm = "matmul not run"
    elif g.matmul.error:
        mm = "matmul failed"
    elif g.matmul.ok:
        mm = f"matmul ok (largest difference {g.matmul.max_abs_err:.2g})"
    else:
        mm = "matmul WRONG"
    return f"GPU {g.index}  {g.name or '?'}  {g.arch or '?'} ({build})  {mm}"


def headline(result: Verification) -> str:
    where = result.python + (f" (Python {result.python_version})" if result.python_version else "")
    what = result.torch.label if result.torch is not None else "torch"
    return f"{what} in {where}"


def render_verification(result: Verification, term: Term) -> None:
    """On a ``gpuenv.render.term.Term``."""
    from gpuenv.render.report import print_finding

    s = result.summary()
    if result.passed:
        verdict = [("✓ PyTorch works", "bold green")]
        if s["warning"]:
            verdict.append((f" ({s['warning']} warning{'s' if s['warning'] != 1 else ''})", "yellow"))
    else:
        parts = [f"{n} {k}{'s' if n != 1 else ''}" for k, n in s.items() if n]
        verdict = [("✗ " + ", ".join(parts), "bold red")]
    term.line(*verdict, f" — {headline(result)}")
    for g in result.gpus:
        term.line(f"  {gpu_line(g)}")
    for n in result.nodes:
        state = ("opens", "green") if n.ok else (n.error or "cannot be opened", "red")
        term.line(f"  {n.path}: ", state)
    for f in result.findings:
        term.line()
        print_finding(term, f)
