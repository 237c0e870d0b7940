"""What `gpuenv advise` answers, as frozen values: findings, the verdict, and their JSON form.

A finding's ``level`` says what it costs to move to ROCm: ``portable`` (an official ROCm build
exists, or HIPIFY translates it mechanically), ``work`` (a person changes it, or swaps it for
the ROCm package), ``blocker`` (CUDA-only as written: no ROCm build, or a kernel a person must
rewrite for AMD hardware). The tree's verdict is the worst level found, with two exceptions
(``verdict``): a tree that builds for ROCm itself is not cuda-only, and a tree with nothing to
judge is ``unknown``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple

SCHEMA = "gpuenv.advise/1"


class Level(str, enum.Enum):
    PORTABLE = "portable"
    WORK = "work"
    BLOCKER = "blocker"


class Verdict(str, enum.Enum):
    PORTABLE = "portable"
    WORK = "portable-with-work"
    CUDA_ONLY = "cuda-only"
    UNKNOWN = "unknown"  # no source and no dependency to judge: neither portable nor not


# The three classes of the dependency table (matrices/advise.json) and what each costs.
CLASS_LEVEL = {"official": Level.PORTABLE, "via": Level.WORK, "cuda-only": Level.BLOCKER}


class Hit(NamedTuple):
    """One thing a scanner saw: a table entry (``rule``), as written (``what``), at a line.

    ``rule`` names an entry of the table: "library:<id>" or "construct:<id>", or says how to
    look one up: "package" (``what`` is a distribution name), "image" (an image reference),
    "import" (a dotted module name). A NamedTuple, not a frozen dataclass: a large tree has
    tens of thousands of hits, and a frozen dataclass costs 5x more to build."""

    rule: str
    what: str
    path: str  # relative to the tree, POSIX separators
    line: int
    kind: str  # dependency, image, import, api, library, construct, extension
    source_line: bool = False  # a line of source code (counts toward the share needing a person)
    span: int = 1  # lines it covers from ``line`` on (a multi-line asm() statement)
    optional: str = ""  # what makes an import optional ("inside try:"): it lowers the finding
    covered: bool = False  # on the CUDA side of the project's own HIP/ROCm conditional


@dataclass(frozen=True)
class Finding:
    level: Level
    what: str
    where: str  # "path:line" (the first occurrence for aggregated portable findings)
    why: str
    rocm_equivalent: str | None
    source: str
    kind: str
    rule: str  # the table entry that judged it: "package:tensorrt", "construct:inline-ptx", ...
    name: str  # that entry's name: "package:tensorrt" is "tensorrt", "construct:inline-ptx" is "inline PTX"
    count: int = 1  # uses this finding stands for
    lines: tuple[int, ...] = ()  # work and blocker findings: every line of ``where``'s file it covers
    optional: str = ""  # the optional part it is in ("inside try:", "hopper/ (a package of its own ...)")
    covered: bool = False  # the project's own ROCm path has an alternative (a HIP branch or twin file)
    handled: str = ""  # how the ROCm build handles a covered finding (a HIP branch, a twin, not compiled)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.level.value,
            "what": self.what,
            "where": self.where,
            "why": self.why,
            "rocm_equivalent": self.rocm_equivalent,
            "source": self.source,
            "kind": self.kind,
            "rule": self.rule,
            "name": self.name,
            "count": self.count,
            "lines": list(self.lines),
            "optional": self.optional or None,
            "covered": self.covered,
            "handled": self.handled or None,
        }


@dataclass(frozen=True)
class Skipped:
    """Files passed over, never fatal: NUL bytes, unreadable, over the size cap, links that
    leave the tree (or FIFOs, devices), manifests that do not parse, and what is not the
    project's own source (what .gitignore ignores, build and venv directories)."""

    binary: int = 0
    unreadable: int = 0
    too_large: int = 0
    outside_tree: int = 0
    unparsable: int = 0
    ignored: int = 0
    ignore_lines: int = 0  # .gitignore lines that do not compile: skipped as git skips them (not files)

    def to_dict(self) -> dict[str, int]:
        return {
            "binary": self.binary,
            "unreadable": self.unreadable,
            "too_large": self.too_large,
            "outside_tree": self.outside_tree,
            "unparsable": self.unparsable,
            "ignored": self.ignored,
        } | ({"ignore_lines": self.ignore_lines} if self.ignore_lines else {})

    @property
    def total(self) -> int:
        return self.binary + self.unreadable + self.too_large + self.outside_tree + self.unparsable + self.ignored


@dataclass
class Walked:
    """What the walk of a tree counted, filled in as its hits stream past ``verdict.judge`` (who
    reads it once the hits are spent: the hits of a large tree are never all held at once)."""

    source_files: int = 0
    manifests: int = 0
    source_lines: int = 0
    # Code there was to judge: source, build and HIP files. With none, and no dependency or image
    # the table knows (a stub sdist whose pyproject names only setuptools), the verdict is unknown.
    judged: int = 0
    skipped: Skipped = Skipped()
    rocm: list[str] = field(default_factory=list)  # evidence of the project's own ROCm build
    twins: set[str] = field(default_factory=set)  # names of the ROCm port's files (regions.twin_key)
    # The build model (``buildmodel``) and what resolves it: C/CUDA source paths, and what each
    # file #includes in quotes.
    build: Any = None
    c_paths: list[str] = field(default_factory=list)
    cython_paths: list[str] = field(default_factory=list)  # .pyx/.pxd: bindings beside twin directories
    build_paths: list[str] = field(default_factory=list)  # CMakeLists.txt, *.cmake, setup*.py
    includes: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)  # (written, on the CUDA side)
    parts: Any = None  # ``parts.Parts``: what the optional-part rules read
    ptx: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)  # (path, line) -> PTX opcodes
    ported: set[str] = field(default_factory=set)  # files with HIP branches of their own (the port adapts them)
    stub: str = ""  # a setup.py that only raises ("setup.py:3 raises: ..."): not a source tree
    name: str = ""  # the distribution's own name (PKG-INFO, pyproject, setup.py name=)
    # cute/cutlass namespaces the tree nests in its own -> the top directories that define them
    own_ns: dict[str, set[str]] = field(default_factory=dict)
    ns_only: dict[str, set[str]] = field(default_factory=dict)  # file -> those it uses, including no CUTLASS header


@dataclass(frozen=True)
class Advice:
    path: str
    verdict: Verdict
    reasons: tuple[str, ...]
    findings: tuple[Finding, ...]
    source_files: int
    manifests: int
    source_lines: int
    person_lines: int  # distinct source lines with a work or blocker finding
    skipped: Skipped
    next_command: str
    rocm_path: tuple[str, ...] = ()  # evidence of the project's own ROCm build ("file:line what")
    looked_for: str = ""  # unknown: what advise looked for and did not find
    ptx: tuple[dict[str, Any], ...] = ()  # the PTX inventory: one row per distinct instruction
    port: str = ""  # a ROCm port of this project maintained elsewhere (matrices/advise.json ports)

    @property
    def share(self) -> float:
        return self.person_lines / self.source_lines if self.source_lines else 0.0

    @property
    def exit(self) -> int:
        from gpuenv.exitcodes import Exit

        if self.verdict is Verdict.UNKNOWN:
            return int(Exit.NOT_JUDGED)
        if self.verdict is Verdict.CUDA_ONLY:
            return int(Exit.CUDA_ONLY)
        return int(Exit.OK) if self.verdict is Verdict.PORTABLE else int(Exit.PROBLEMS)

    def optional_parts(self) -> list[dict[str, Any]]:
        """One row per optional part with work or blockers: its worst level, uses, and entries."""
        rows: dict[str, dict[str, Any]] = {}
        for f in self.findings:
            if not f.optional or f.level is Level.PORTABLE:
                continue
            row = rows.setdefault(f.optional, {"part": f.optional, "verdict": "work", "count": 0, "names": []})
            if f.level is Level.BLOCKER:
                row["verdict"] = "blocker"
            row["count"] += f.count
            if f.name not in row["names"]:
                row["names"].append(f.name)
        return sorted(rows.values(), key=lambda r: (r["verdict"] != "blocker", r["part"]))

    def summary(self) -> list[dict[str, Any]]:
        """One row per table entry, worst first: its level, uses, files, and how many of them
        the project's ROCm path covers or are optional imports."""
        rows: dict[str, dict[str, Any]] = {}
        for f in self.findings:
            row = rows.setdefault(f.rule, {"rule": f.rule, "name": f.name, "verdict": f.level.value, "count": 0,
                                           "files": 0, "covered": 0, "optional": 0})  # fmt: skip
            row["count"] += f.count
            row["files"] += 1
            row["covered"] += f.count if f.covered else 0
            row["optional"] += f.count if f.optional else 0
        return list(rows.values())

    def rocm_build(self) -> dict[str, Any]:
        blockers = [f for f in self.findings if f.level is Level.BLOCKER] if self.rocm_path else []
        return {
            "evidence": list(self.rocm_path),
            "covers": sorted({f"{f.name} ({f.where})" for f in blockers if f.covered}),
            "leaves": sorted({f"{f.name} ({f.where})" for f in blockers if not f.covered}),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "path": self.path,
            "verdict": self.verdict.value,
            "reasons": list(self.reasons),
            "summary": self.summary(),
            "findings": [f.to_dict() for f in self.findings],
            "lines": {
                "source": self.source_lines,
                "need_person": self.person_lines,
                "share": round(self.share, 6),
            },
            "files": {
                "sources": self.source_files,
                "manifests": self.manifests,
                "skipped": self.skipped.to_dict(),
            },
            "next": self.next_command,
            "rocm_path": list(self.rocm_path),
            "rocm_build": self.rocm_build(),
            "looked_for": self.looked_for or None,
            "optional_parts": self.optional_parts(),
            "ptx": list(self.ptx),
            "port": self.port or None,
        }
