"""`gpuenv advise`: can this source tree run on ROCm, and what would moving cost?

``advise(path)`` is the one entry point: it walks the tree once (``tree``), parses each
manifest statically (``deps``, ``images``), scans each source and build file once (``sources``,
``builds``), tells the project's own ROCm port apart (``regions``, ``asm``) and judges every hit
by the bundled, sourced table (``table``, matrices/advise.json) into findings and a verdict
(``verdict``). No printing and no rich here: ``gpuenv.render.advise`` renders.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from gpuenv.advise.model import Advice, Hit, Level, Skipped, Walked

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.advise.table import Table

_ROCM_SHOWN = 5  # pieces of evidence of an existing ROCm build listed


class AdviseError(ValueError):
    """Input advise cannot read (a missing path, a file): one line, exit status 2."""


def advise(path: str) -> Advice:
    from gpuenv.advise.table import load
    from gpuenv.advise.verdict import judge

    if not os.path.lexists(path):
        raise AdviseError(f"{path}: no such directory")
    if not os.path.isdir(path):
        raise AdviseError(f"{path}: not a directory (advise reads a source tree)")
    table = load()
    walked = Walked()
    return judge(path, _hits(path, table, walked), table, walked)


def _hits(path: str, table: Table, walked: Walked) -> Iterator[Hit]:
    """Every hit of the tree, file by file, as the walk reads it; ``walked`` counts the rest."""
    from gpuenv.advise.builds import is_cmake, scan_build_script, scan_cmake
    from gpuenv.advise.deps import PARSERS, Unparsable
    from gpuenv.advise.images import parse_dockerfile
    from gpuenv.advise.regions import is_auxiliary_file, is_rocm_file, is_test_file, twin_key
    from gpuenv.advise.sources import (
        C_SUFFIXES,
        DEVICE_MACROS,
        device_macros,
        lines_of,
        names_device_keyword,
        scan_file,
    )
    from gpuenv.advise.tree import Counts, walk

    counts = Counts()
    rocm = walked.rocm
    macros = set(DEVICE_MACROS)
    person_modules: dict[str, bool] = {}  # module -> whether the table calls it more than portable
    unparsable = 0
    for f in walk(path, counts):
        text = f.data.decode("utf-8", "replace")  # a latin-1 comment must not hide the code around it
        name = f.path.rsplit("/", 1)[-1]
        test = is_test_file(f.path)
        if f.manifest is not None and is_rocm_file(f.path):
            # requirements/rocm.txt, Dockerfile.rocm: the ROCm port's own install recipe. Evidence
            # of a ROCm build, a twin of its CUDA sibling (requirements/cuda.txt), and no work.
            walked.manifests += 1
            if not test:
                _note(rocm, f"{f.path}:1 (a ROCm manifest)")
            walked.twins.add(twin_key(f.path))
        elif f.manifest is not None:
            walked.manifests += 1
            try:
                if f.manifest == "dockerfile":
                    images, deps = parse_dockerfile(text)
                    yield from (Hit("image", i.reference, f.path, i.line, "image") for i in images)
                else:
                    deps = PARSERS[f.manifest](text)
            except Unparsable:
                unparsable += 1
                deps = []
            for d in deps:
                if d.kind == "index":
                    yield Hit("construct:torch-cuda-index", d.written, f.path, d.line, "dependency")
                else:
                    yield Hit("package", d.name, f.path, d.line, "dependency")
        if f.build:
            found, sign = scan_cmake(f.path, text) if is_cmake(name) else scan_build_script(f.path, text)
            walked.judged += 1
            if not f.source:
                walked.source_lines += lines_of(text)  # CMake lines needing a person are lines read too
            yield from found
            if sign and not test:
                _note(rocm, sign)
        if f.suffix == ".hip":
            walked.judged += 1
            _note(rocm, f"{f.path}:1 (a HIP source file)")
            walked.twins.add(twin_key(f.path))
            continue
        if not f.source:
            continue
        walked.source_files += 1
        walked.source_lines += lines_of(text)
        if f.manifest is None:
            walked.judged += 1
        rocm_file = is_rocm_file(f.path)
        if rocm_file and f.suffix in C_SUFFIXES:
            if not test:
                _note(rocm, f"{f.path}:1 (a source file of the ROCm port)")
            walked.twins.add(twin_key(f.path))
        keyword = None
        if f.suffix in C_SUFFIXES:
            keyword = names_device_keyword(text)
            macros |= device_macros(text, keyword)
        found, sign = scan_file(f.path, f.suffix, text, macros, keyword)
        if sign and not test:
            _note(rocm, sign)
        if rocm_file:
            continue  # csrc/rocm/, hip/, *_cdna3.cu: the ROCm port itself, not work
        if f.suffix == ".py" or f.suffix in (".pyx", ".pxd"):
            found = _optional_imports(found, text, table, is_auxiliary_file(f.path), person_modules)
        yield from found
    walked.skipped = Skipped(counts.binary, counts.unreadable, counts.too_large, counts.outside_tree, unparsable,
                             counts.ignored, counts.ignore_lines)  # fmt: skip


def _note(rocm: list[str], sign: str) -> None:
    if len(rocm) < _ROCM_SHOWN:
        rocm.append(sign)


def _optional_imports(found: list[Hit], text: str, table: Table, auxiliary: bool, person: dict[str, bool]) -> list[Hit]:
    """Imports of modules the table does not call portable, marked with what makes them
    optional (inside ``try:``/``if ...:``, or in a test, benchmark or example); the others as they
    are. Read only for such imports, so a tree of plain imports pays nothing; ``person`` caches
    the table's answer per module across files."""
    from gpuenv.advise.regions import guarded

    lines: list[str] | None = None
    out = []
    for hit in found:
        if hit.rule == "import":
            needs = person.get(hit.what)
            if needs is None:
                entry = table.module(hit.what)
                needs = person[hit.what] = entry is not None and entry.level is not Level.PORTABLE
            if needs and auxiliary:
                hit = hit._replace(optional="in a test, benchmark or example")
            elif needs:
                if lines is None:
                    lines = text.splitlines()
                if 0 < hit.line <= len(lines) and lines[hit.line - 1][:1] in (" ", "\t"):
                    why = guarded(lines, hit.line - 1)
                    if why:
                        hit = hit._replace(optional=why)
        out.append(hit)
    return out
