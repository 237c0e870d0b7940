"""Human rendering of facts: a compact summary (OS, kernel, GPUs and drivers, stacks, torch)."""

from __future__ import annotations

from gpuenv.facts import Facts, Gpu
from gpuenv.osreleases import label as os_label

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from rich.console import Console

_STACK_PREFIXES = (
    "nvidia-driver",
    "cuda-toolkit",
    "cuda-drivers",
    "rocm",
    "amdgpu-dkms",
    "amdgpu-install",
    "hip-runtime",
)


def _gpu_line(g: Gpu) -> str:
    name = g.name or "unknown name"
    parts = [f"{g.pci_slot or '?'}  {name} [{g.pci_id}]"]
    extra = [x for x in (g.gfx_target, f"sm {g.compute_capability}" if g.compute_capability else None) if x]
    if extra:
        parts.append("(" + ", ".join(extra) + ")")
    parts.append(f"driver: {g.kernel_driver or 'none'}")
    return "  ".join(parts)


def _vm(kind: str) -> str:
    # "vm": a hypervisor is there (the CPU says so) but nothing this user could read names it.
    return "virtual machine (hypervisor not identified)" if kind == "vm" else f"VM: {kind}"


def summary_rows(facts: Facts) -> list[tuple[str, str]]:
    """(label, value) rows of the summary; pure, so it is tested without a terminal."""
    rows: list[tuple[str, str]] = []
    os_ = facts.os
    rows.append(("OS", os_label(os_)))  # a derivative with its base: "Linux Mint 22 (Ubuntu 24.04 base)"
    k = facts.kernel
    kernel = k.release
    if k.secure_boot:
        kernel += "  (Secure Boot on)"
    rows.append(("Kernel", kernel))
    p = facts.platform
    where = [x for x in (f"container: {p.container}" if p.container else None, "WSL 2" if p.wsl else None,
                         _vm(p.virtualization) if p.virtualization else None) if x]  # fmt: skip
    rows.append(("Platform", ", ".join(where) or "bare metal"))
    if facts.gpus:
        for i, g in enumerate(facts.gpus):
            rows.append(("GPUs" if i == 0 else "", _gpu_line(g)))
    else:
        rows.append(("GPUs", "none found on the PCI bus"))
    nv = facts.nvidia
    if nv and (nv.driver_version or nv.module_version or facts.gpus_of("nvidia")):
        bits = [f"driver {nv.driver_version or nv.module_version or 'not installed'}"]
        if nv.kernel_module:
            bits.append(f"{nv.kernel_module} module")
        if nv.cuda_driver_version:
            bits.append(f"CUDA {nv.cuda_driver_version}")
        if nv.nvml:  # omitted (unknown) in facts files that did not ask NVML
            bits.append(f"NVML {nv.nvml.replace('_', ' ')}")
        rows.append(("NVIDIA", ", ".join(bits)))
    amd = facts.amd
    if amd and (amd.driver_version or amd.kfd or facts.gpus_of("amd")):
        bits = [
            f"amdgpu {amd.driver_version or 'in-kernel'}",
            "/dev/kfd present" if amd.kfd else "no /dev/kfd" if amd.kfd is False else "/dev/kfd unknown",
        ]
        rows.append(("AMD", ", ".join(bits)))
    stacks = [f"CUDA {t.version}" for t in facts.toolkits.cuda] + [
        f"ROCm {t.version}" for t in facts.toolkits.rocm
    ]
    if facts.packages:
        pkgs = [f"{n} {v}" for n, v in facts.packages.installed.items() if n.startswith(_STACK_PREFIXES)]
        stacks += pkgs[:6] + ([f"... {len(pkgs) - 6} more"] if len(pkgs) > 6 else [])
        if facts.packages.unconfigured:
            stacks.append("unconfigured: " + ", ".join(facts.packages.unconfigured))
    rows.append(("Stacks", "; ".join(stacks) or "none installed"))
    py = facts.python
    if py is not None:
        t = py.torch
        torch = "not installed"
        if t is not None:
            build = f"CUDA {t.cuda}" if t.cuda else f"ROCm/HIP {t.hip}" if t.hip else "CPU"
            torch = f"{t.version} ({build})"
        rows.append(("Python", f"{py.executable or '?'} {py.version or ''}".strip()))
        rows.append(("torch", torch))
    if facts.user is not None:
        rows.append(("User", f"{facts.user.name} (groups: {', '.join(facts.user.groups) or 'none'})"))
    if facts.downloads is not None:
        set_ = [name for name, on in facts.downloads.items() if on]
        rows.append(("Downloads", f"set: {', '.join(set_)} (values not shown)" if set_
                     else "no proxy, CA or pip index variable set"))  # fmt: skip
    for e in facts.errors:
        rows.append(("Unknown", f"{e.probe}: {e.message}"))
    for n in facts.notes or ():
        rows.append(("Note", f"{n.probe}: {n.message}"))
    return rows


def render_facts(facts: Facts, console: Console) -> None:
    from rich.table import Table

    from gpuenv.render.term import markup_safe

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for label, value in summary_rows(facts):
        table.add_row(markup_safe(label), markup_safe(value))  # a host's names: never markup
    console.print(table)


# -- markdown (a report people paste into an issue; no ANSI, no rich) ---------------------------


def md_text(text: str) -> str:
    """Text for a markdown paragraph: '<host-1>' would be swallowed as an HTML tag by GitHub, and
    a control character (U+009B, a one-byte CSI) is shown escaped, as in every output."""
    from gpuenv.render.term import inert

    return inert(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_cell(text: str) -> str:
    return md_text(text).replace("|", "\\|").replace("\n", " ")


def md_fence(text: str, lang: str = "") -> str:
    """A fenced block that no backtick run inside ``text`` can close."""
    import re

    from gpuenv.render.term import inert

    text = inert(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def md_summary_table(facts: Facts) -> str:
    lines = ["| | |", "|---|---|"]
    for label, value in summary_rows(facts):
        lines.append(f"| {md_cell(label)} | {md_cell(value)} |")
    return "\n".join(lines)


def md_details(summary: str, body: str) -> str:
    return f"<details><summary>{md_text(summary)}</summary>\n\n{body}\n\n</details>"


def facts_markdown(facts: Facts, notice: str) -> str:
    """`gpuenv probe --format markdown`: a summary line, the summary table, the facts JSON folded.
    ``facts`` is already redacted when redaction is on; ``notice`` says which way it went."""
    from gpuenv.standins import jsonout

    gpus = [g for g in facts.gpus if g.vendor in ("nvidia", "amd")]
    head = (
        f"**gpuenv probe**: {os_label(facts.os)}, kernel {facts.kernel.release}, "
        f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''}"
        + (f" ({', '.join(sorted({g.name or g.pci_id for g in gpus}))})" if gpus else "")
    )
    parts = [
        md_text(head),
        f"> {md_text(notice)}",
        md_summary_table(facts),
        md_details("Facts (gpuenv probe --json)", md_fence(jsonout.dumps(facts.to_dict()), "json")),
    ]
    return "\n\n".join(parts) + "\n"
