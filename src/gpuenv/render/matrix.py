"""Human rendering of the matrices (``gpuenv matrix show``): one table per subject.

``tables(m, subject)`` is pure (title, columns, rows), so it is tested without a terminal."""

from __future__ import annotations

from gpuenv.matrices import Matrices

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from rich.console import Console

SUBJECTS = ("rocm", "cuda", "torch", "gpus")
Table = tuple[str, list[str], list[list[str]]]


def _yes(flag: bool) -> str:
    return "" if flag else "unconfirmed"


def _rocm(m: Matrices) -> list[Table]:
    rows = []
    default = m.default_rocm().version
    for r in m.rocm_releases():
        oses = ", ".join(
            f"{o.id} {'/'.join(o.point_releases) or o.version}"
            + (f" ({'/'.join(o.kernels)})" if o.kernels else "")
            for o in r.os
        )
        gpus = ", ".join(
            f"{g}{'' if lvl == 'full' else '*'}" + (" (unconfirmed)" if g in r.gpus_unconfirmed else "")
            for g, lvl in r.gpus.items()
        )
        version = r.version + (" (default)" if r.version == default else "")
        torch = ", ".join(t + (" (Instinct only)" if t in r.torch_instinct_only else "") for t in r.torch)
        rows.append([version, oses, gpus, torch, r.amdgpu_driver or "", _yes(r.confirmed)])
    return [("ROCm releases (* = Radeon/Radeon PRO support level)",
             ["ROCm", "OS (kernel series)", "GPUs", "PyTorch (AMD)", "amdgpu", ""], rows)]  # fmt: skip


def _cuda(m: Matrices) -> list[Table]:
    toolkits = [
        [t.version, t.name, t.min_driver or "not found", t.minor_compat_driver or "",
         f"{t.compute_capabilities[0]}-{t.compute_capabilities[-1]}" if t.compute_capabilities else "", _yes(t.confirmed)]
        for t in m.cuda_toolkits()
    ]  # fmt: skip
    archs = [
        [a.architecture, ", ".join(a.compute_capabilities), a.first_cuda or "", a.last_cuda or "current",
         a.last_driver or "current", a.module]
        for a in m.nvidia_archs()
    ]  # fmt: skip
    branches = [
        [b.branch, b.designation or "", b.max_cuda or "", "yes" if b.legacy_gpus else "no",
         "open" if b.open_default else "proprietary", _yes(b.confirmed)]
        for b in m.driver_branches()
    ]  # fmt: skip
    return [
        ("CUDA toolkits", ["version", "release", "min driver", "minor-compat floor", "compute cap.", ""], toolkits),
        ("NVIDIA architectures", ["architecture", "compute cap.", "first CUDA", "last CUDA", "last driver", "kernel module"], archs),
        ("NVIDIA driver branches", ["branch", "designation", "max CUDA", "Maxwell-Volta", "default module", ""], branches),
    ]  # fmt: skip


def _torch(m: Matrices) -> list[Table]:
    rows = []
    for version in m.torch_versions():
        for v in m.torch_variants(version):
            archs = ", ".join(v.archs + v.ptx) if v.archs else ""
            rows.append([version, v.variant, v.index_url, archs, " ".join(v.python), _yes(v.confirmed)])
    return [("PyTorch wheels", ["torch", "variant", "index URL", "compiled for", "Python", ""], rows)]


def _gpus(m: Matrices) -> list[Table]:
    amd = [
        [
            g.pci_id,
            g.name,
            g.gfx_target or "?",
            g.architecture or "?",
            "iGPU" if g.integrated else "",
            _yes(g.confirmed),
        ]
        for g in m.amd_gpus()
    ]
    nvidia = [[g.pci_id, g.name, g.chip or "", g.architecture, g.compute_capability] for g in m.nvidia_gpus()]
    return [
        ("AMD GPUs", ["PCI id", "product", "gfx", "architecture", "", ""], amd),
        ("NVIDIA GPUs", ["PCI id", "product", "chip", "architecture", "compute cap."], nvidia),
    ]


def tables(m: Matrices, subject: str) -> list[Table]:
    return {"rocm": _rocm, "cuda": _cuda, "torch": _torch, "gpus": _gpus}[subject](m)


def _bundle_line(m: Matrices, today: str) -> str:
    """The summary's first line (#42): the bundle, its date and age, and the newest release of each
    vendor it knows: what a user needs to see to tell whether the world has moved past it."""
    b = m.bundle
    date, age = b.dated(), b.age_days(today)
    dated = f"dated {date}" + (f", {age} days old" if age is not None and age >= 0 else "") if date else "undated"
    newest_of = "; ".join(f"{vendor} {release}" for vendor, release in newest(m))
    return f"{b.version} ({dated}); newest known: {newest_of}"


def _unconfirmed_count(m: Matrices) -> int:
    """Entries no vendor page confirms, each marked 'unconfirmed' in the tables."""
    torch = [v for t in m.torch_versions() for v in m.torch_variants(t)]
    groups = (m.rocm_releases(), m.cuda_toolkits(), m.driver_branches(), torch, m.amd_gpus(), m.nvidia_gpus())
    return sum(1 for group in groups for item in group if not item.confirmed)


def _dated(version: str, date: str | None) -> str:
    return f"{version} ({date})" if date else f"{version} (date not in the data)"


def newest(m: Matrices) -> list[tuple[str, str]]:
    """The newest release of each vendor the bundle knows, with its date where the data has one:
    anything released after these is unknown to this bundle (#29: staleness made visible)."""
    rocm = m.rocm_releases()
    newest_rocm = _dated(rocm[-1].version, rocm[-1].release_date)
    legacy = [r for r in rocm if r.stream is None]
    if legacy and legacy[-1] is not rocm[-1]:  # the newest of the legacy stream, once TheRock is newer
        newest_rocm += f", legacy stream {_dated(legacy[-1].version, legacy[-1].release_date)}"
    out = [("ROCm", newest_rocm), ("CUDA", _dated(m.cuda_toolkits()[-1].version, None))]
    torch = m.torch_versions()[-1]
    variants = m.torch_variants(torch)
    out.append(("PyTorch", _dated(torch, variants[0].released if variants else None)))
    return out


def summary(m: Matrices, today: str | None = None, keys: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """The rows of `gpuenv matrix show` without a subject; ``today`` (YYYY-MM-DD, default the
    clock's) dates the bundle's age, ``keys`` are the repository keys' lines (their confirmation)."""
    import datetime

    b = m.bundle
    torch = m.torch_versions()
    rocm = m.rocm_releases()
    cuda = m.cuda_toolkits()
    return [
        ("bundle", _bundle_line(m, today or datetime.date.today().isoformat())),
        ("from", f"{b.origin}, {b.path}"),
        ("data", b.material or "the bundle does not date its material"),
        *([("note", b.skipped)] if b.skipped else []),
        ("marked", f"{_unconfirmed_count(m)} entries no vendor page confirms (marked 'unconfirmed' in the tables)"),
        *(("key", line) for line in keys),
        ("ROCm", f"{rocm[0].version} .. {rocm[-1].version}, default {m.default_rocm().version}"),
        ("CUDA", f"{cuda[0].version} .. {cuda[-1].version}"),
        ("PyTorch", f"{torch[0]} .. {torch[-1]}"),
        ("GPUs", f"{len(m.amd_gpus())} AMD, {len(m.nvidia_gpus())} NVIDIA PCI ids"),
    ]


def render_show(m: Matrices, subject: str | None, console: Console, keys: tuple[str, ...] = ()) -> None:
    from rich.table import Table as RichTable

    from gpuenv.render.term import markup_safe

    if subject is None:
        for label, value in summary(m, keys=keys):
            console.print(f"[bold]{label:8}[/bold] {markup_safe(value)}", highlight=False)
        console.print("\ngpuenv matrix show rocm|cuda|torch|gpus prints the tables.")
        return
    for title, columns, rows in tables(m, subject):
        widths = word_widths(columns, rows)
        if table_width(widths) > console.width:
            _print_list(console, title, columns, rows)
            continue
        table = RichTable(title=title, title_justify="left", show_lines=False)
        for col, width in zip(columns, widths, strict=True):
            table.add_column(col, overflow="fold", min_width=width)
        for row in rows:
            table.add_row(*map(markup_safe, row))  # an installed bundle's text: never markup
        console.print(table)


def word_widths(columns: list[str], rows: list[list[str]]) -> list[int]:
    """Each column's longest word: narrower, a cell would cut a word in two."""
    return [
        max((len(word) for cell in (col, *(r[i] for r in rows)) for word in cell.split()), default=0)
        for i, col in enumerate(columns)
    ]


def table_width(widths: list[int]) -> int:
    """The width of a rich table whose columns are ``widths`` wide: a space either side of each
    cell and a border between and around them."""
    return sum(widths) + 3 * len(widths) + 1


def _print_list(console: Console, title: str, columns: list[str], rows: list[list[str]]) -> None:
    """A table too wide for the terminal, as a list: each row's first cell (and its unnamed
    cells: flags), then one indented line per named cell, wrapped at words."""
    from rich.table import Table as RichTable
    from rich.text import Text

    console.print(Text(title, style="italic"))
    named = [i for i, col in enumerate(columns) if col and i > 0]
    label = max((len(columns[i]) for i in named), default=0)
    for row in rows:
        flags = [row[i] for i, col in enumerate(columns) if not col and row[i]]
        console.print(Text.assemble((row[0], "bold"), *(f"  {flag}" for flag in flags)))
        grid = RichTable.grid(padding=(0, 2))
        grid.add_column(no_wrap=True, min_width=2 + label)
        grid.add_column(overflow="fold")
        for i in named:
            if row[i]:
                grid.add_row(Text(f"  {columns[i]}", style="dim"), Text(row[i]))
        console.print(grid)
