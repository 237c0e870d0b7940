"""`gpuenv advise`: can this source tree run on ROCm, and what would moving cost?

``advise(path)`` is the one entry point: it walks the tree once (``tree``), parses each
manifest statically (``deps``, ``images``), scans each source file once (``sources``) and
judges every hit by the bundled, sourced table (``table``, matrices/advise.json) into findings
and a verdict (``verdict``). No printing and no rich here: ``gpuenv.render.advise`` renders.
"""

from __future__ import annotations

import os

from gpuenv.advise.model import Advice, Hit, Skipped

_ROCM_SHOWN = 5  # signs of an existing ROCm build listed; one is enough to tell


class AdviseError(ValueError):
    """Input advise cannot read (a missing path, a file): one line, exit status 2."""


def advise(path: str) -> Advice:
    from gpuenv.advise.deps import PARSERS, Unparsable
    from gpuenv.advise.images import parse_dockerfile
    from gpuenv.advise.sources import lines_of, rocm_path, scan
    from gpuenv.advise.table import load
    from gpuenv.advise.tree import Counts, walk
    from gpuenv.advise.verdict import judge

    if not os.path.lexists(path):
        raise AdviseError(f"{path}: no such directory")
    if not os.path.isdir(path):
        raise AdviseError(f"{path}: not a directory (advise reads a source tree)")
    table = load()
    counts = Counts()
    hits: list[Hit] = []
    rocm: list[str] = []  # the first signs of the project's own ROCm build
    source_files = manifests = source_lines = unparsable = 0
    for f in walk(path, counts):
        text = f.data.decode("utf-8", "replace")  # a latin-1 comment must not hide the code around it
        if f.manifest is not None:
            manifests += 1
            try:
                if f.manifest == "dockerfile":
                    images, deps = parse_dockerfile(text)
                    hits += [Hit("image", i.reference, f.path, i.line, "image") for i in images]
                else:
                    deps = PARSERS[f.manifest](text)
            except Unparsable:
                unparsable += 1
                deps = []
            for d in deps:
                if d.kind == "index":
                    hits.append(Hit("construct:torch-cuda-index", d.written, f.path, d.line, "dependency"))
                else:
                    hits.append(Hit("package", d.name, f.path, d.line, "dependency"))
        if len(rocm) < _ROCM_SHOWN and (f.source or f.suffix == ".hip") and (sign := rocm_path(f.path, f.suffix, text)):
            rocm.append(sign)
        if f.source:
            source_files += 1
            source_lines += lines_of(text)
            hits += scan(f.path, f.suffix, text)
    skipped = Skipped(counts.binary, counts.unreadable, counts.too_large, counts.outside_tree, unparsable, counts.ignored)
    return judge(path, hits, table, source_files=source_files, manifests=manifests,
                 source_lines=source_lines, skipped=skipped, rocm_path=tuple(rocm))  # fmt: skip
