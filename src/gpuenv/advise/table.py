"""The classification table of `gpuenv advise` (matrices/advise.json): loaded once, validated.

Read through ``gpuenv.standins.bundled`` like every bundled file, and checked with the matrices loader's
own field reader (``gpuenv.matrices.Reader``), so a malformed entry is one ``MatrixError`` line
naming the file and the JSON path, with or without jsonschema installed. The table holds the
judgements and their sources; the patterns that find things in code live in ``sources`` and
``deps``, and tests/test_advise.py checks that every rule they name is in the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from gpuenv.advise.model import CLASS_LEVEL, Level
from gpuenv.matrices import MatrixError, Reader

SCHEMA = "gpuenv.matrices.advise/1"
_ID = r"[a-z0-9][a-z0-9-]*"
_CLASS = r"official|via|cuda-only"
_LEVEL = r"portable|work|blocker"
_NAME = r"[a-z0-9][a-z0-9._-]*"
_MODULE = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"


@dataclass(frozen=True)
class Entry:
    rule: str  # "package:pytorch", "library:cublas", ...
    name: str  # how a person calls it
    level: Level
    why: str
    rocm_equivalent: str | None
    source: str
    confirmed: bool
    klass: str | None = None  # official / via / cuda-only (dependencies, images, modules)


@dataclass(frozen=True)
class Table:
    rules: dict[str, Entry]
    packages: dict[str, Entry]  # normalized distribution name -> entry
    package_patterns: tuple[tuple[re.Pattern[str], Entry], ...]
    modules: dict[str, Entry]  # dotted module name -> entry
    images: tuple[tuple[re.Pattern[str], Entry], ...] = field(default=())
    ports: dict[str, str] = field(default_factory=dict)  # normalized project name -> its ROCm port elsewhere
    ptx_counterparts: dict[str, tuple[str, str]] = field(default_factory=dict)  # instruction -> (AMD, source)

    def port(self, name: str) -> str | None:
        return self.ports.get(normalize(name))

    def ptx(self, instruction: str) -> tuple[str, str] | None:
        """The AMD counterpart of a PTX instruction as ``asm.instructions`` names it (mma.sync),
        or of its opcode alone (mma)."""
        return self.ptx_counterparts.get(instruction) or self.ptx_counterparts.get(instruction.split(".", 1)[0])

    def package(self, name: str) -> Entry | None:
        key = normalize(name)
        hit = self.packages.get(key)
        if hit is not None:
            return hit
        for pattern, entry in self.package_patterns:
            if pattern.fullmatch(key):
                return entry
        return None

    def module(self, dotted: str) -> Entry | None:
        """The entry of ``dotted`` or of the longest listed package above it (numba.cuda.jit)."""
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            hit = self.modules.get(".".join(parts[:n]))
            if hit is not None:
                return hit
        return None

    def image(self, reference: str) -> Entry | None:
        ref = reference.lower()
        for pattern, entry in self.images:  # in table order: the first that matches decides
            if pattern.fullmatch(ref):
                return entry
        return None


_SEPARATORS = re.compile(r"[-_.]+")


def normalize(name: str) -> str:
    """PEP 503 name normalization (Flash_Attn, flash.attn -> flash-attn)."""
    return _SEPARATORS.sub("-", name).lower()


def parse(doc: Any) -> Table:
    r = Reader("advise.json")
    schema = r.get(doc, "schema", "$", str)
    if schema != SCHEMA:
        raise r.fail("$.schema", f"expected {SCHEMA!r}, got {schema!r}")
    rules: dict[str, Entry] = {}
    packages: dict[str, Entry] = {}
    package_patterns: list[tuple[re.Pattern[str], Entry]] = []
    by_package_id: dict[str, Entry] = {}

    def described(row: dict[str, Any], p: str, rule: str, name: str, *, classed: bool) -> Entry:
        if rule in rules:
            raise r.fail(f"{p}.id", f"{rule} is listed twice")
        if classed:
            klass = r.text(row, "class", p, _CLASS)
            level = CLASS_LEVEL[klass]
        else:
            klass, level = None, Level(r.text(row, "level", p, _LEVEL))
        entry = Entry(
            rule=rule,
            name=name,
            level=level,
            why=r.get(row, "why", p, str),
            rocm_equivalent=r.get(row, "rocm_equivalent", p, str, optional=True),
            source=_source(r, row, p),
            confirmed=r.get(row, "confirmed", p, bool),
            klass=klass,
        )
        rules[rule] = entry
        return entry

    for p, row in r.items(doc, "packages", "$"):
        pid = r.text(row, "id", p, _ID)
        names = r.strs(row, "names", p, optional=True, pattern=_NAME)
        patterns = r.strs(row, "patterns", p, optional=True)
        if not names and not patterns:
            raise r.fail(p, "needs names or patterns")
        entry = described(row, p, f"package:{pid}", names[0] if names else pid, classed=True)
        by_package_id[pid] = entry
        for n in names:
            packages[normalize(n)] = entry
        for i, text in enumerate(patterns):
            package_patterns.append((_regex(r, text, f"{p}.patterns[{i}]"), entry))

    modules: dict[str, Entry] = {}
    for p, row in r.items(doc, "python_modules", "$"):
        mid = r.text(row, "id", p, _ID)
        names = r.strs(row, "modules", p, pattern=_MODULE)
        package = r.get(row, "package", p, str, optional=True)
        if package is not None:  # judged as the distribution that provides it
            base = by_package_id.get(package)
            if base is None:
                raise r.fail(f"{p}.package", f"{package!r} is not a package id of this table")
            entry = Entry(f"module:{mid}", base.name, base.level, base.why, base.rocm_equivalent,
                          base.source, base.confirmed, base.klass)  # fmt: skip
            if entry.rule in rules:
                raise r.fail(f"{p}.id", f"{entry.rule} is listed twice")
            rules[entry.rule] = entry
        else:
            entry = described(row, p, f"module:{mid}", names[0], classed=True)
        for n in names:
            modules[n] = entry

    images: list[tuple[re.Pattern[str], Entry]] = []
    for p, row in r.items(doc, "images", "$"):
        iid = r.text(row, "id", p, _ID)
        pattern = _regex(r, r.get(row, "pattern", p, str), f"{p}.pattern")
        name = r.get(row, "name", p, str, optional=True) or iid
        images.append((pattern, described(row, p, f"image:{iid}", name, classed=True)))

    for section, kind in (("libraries", "library"), ("constructs", "construct")):
        for p, row in r.items(doc, section, "$"):
            lid = r.text(row, "id", p, _ID)
            described(row, p, f"{kind}:{lid}", r.get(row, "name", p, str), classed=False)

    ports: dict[str, str] = {}
    for p, row in r.items(doc, "ports", "$", optional=True):
        port = f"{r.get(row, 'port', p, str)} (source: {_source(r, row, p)})"
        for n in r.strs(row, "names", p, pattern=_NAME):
            ports[normalize(n)] = port
    counterparts: dict[str, tuple[str, str]] = {}
    for p, row in r.items(doc, "ptx", "$", optional=True):
        r.text(row, "id", p, _ID)
        pair = (r.get(row, "rocm", p, str), _source(r, row, p))
        for ins in r.strs(row, "instructions", p, pattern=r"[a-z][a-z0-9_.]*"):
            if ins in counterparts:
                raise r.fail(f"{p}.instructions", f"{ins} is listed twice")
            counterparts[ins] = pair
    return Table(rules, packages, tuple(package_patterns), modules, tuple(images), ports, counterparts)


def _source(r: Reader, row: dict[str, Any], p: str) -> str:
    source = r.get(row, "source", p, str)
    if len(source) < 8:
        raise r.fail(f"{p}.source", "a source is a URL, or a repository and path")
    return source


def _regex(r: Reader, text: str, p: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as exc:
        raise r.fail(p, f"not a regular expression: {exc}") from None


@cache
def load() -> Table:
    """The bundled table (once per process); MatrixError when it is missing or malformed."""
    from gpuenv.standins import bundled
    from gpuenv.standins.jsoninput import InputError, read

    try:
        doc = read(bundled.path("matrices", "advise.json"), "advise table")
    except InputError as exc:
        raise MatrixError(str(exc)) from None
    return parse(doc)
