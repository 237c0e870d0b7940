"""Regenerate matrices/*.json from the gathered reference (matrices/sources/reference/matrices.json).

Run by hand when the reference changes: ``python3 matrices/tools/build.py [REFERENCE_DIR]``.
The committed JSON files are the product; this script only spares retyping and records, in
code, every place where errata.md overrides matrices.json (search for ERRATA). Facts the
reference lacks (CUDA 8.0-11.7, Tesla/Fermi/Kepler and new Blackwell capabilities, torch 1.8-2.3,
cu129, rocBLAS gaps, HSA overrides, AMD notes, ROCm 5.x, GCN 1-5 GPUs) are in ``additions.py``
beside this file, each with its source; the rows read from the ROCm 5.x documentation pages and the
pci.ids names of the older AMD GPUs are in ``legacy_data.json`` (written by ``legacy.py``).
nvidia_gpus.json is written by ``nvidia_pci.py`` from pci.ids.

The build is one module per output file (build_rocm, build_amd, build_cuda, build_torch) over
build_common; this one writes them, bundle.json and their indexes (build_index: rocm.index.json,
amd_gpus.index.json, torch.index.json, cuda.index.json: where each entry lies, so that gpuenv
parses only those a run asks about).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # -I leaves the script's directory off sys.path

from build_amd import build_amd  # noqa: E402
from build_common import OUT, dump  # noqa: E402
from build_cuda import build_cuda  # noqa: E402
from build_index import build_index  # noqa: E402
from build_rocm import build_rocm  # noqa: E402
from build_torch import build_torch  # noqa: E402

# The compiled reference (and the errata it is corrected by) is pinned in the repository
# (matrices/sources/reference, copied on 2026-12-05: matrices/sources/README.md), so that
# the bundle rebuilds from a clone byte for byte (tests/test_matrices_rebuild.py); another copy
# can still be named on the command line.
REF = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT / "sources" / "reference"

BUNDLE_VERSION = "2026.12.07"  # #42: corrected values; a bundle is versioned by its date


def material_dated(text: str) -> str:
    """The reference's dating, with the newer releases added since (#29: torch 2.14; ROCm Core SDK
    10.1.0, dated by ROCm/rocm-docs docs/release/versions.rst @ 9bcf25db1e77, therock.py VERSIONS)."""
    for old, new in (
        ("material up to ~2026-08/09", "material up to ~2026-10"),
        ("PyTorch 2.13 stable", "PyTorch 2.14.0 released by 2026-09-03"),
        ("ROCm 7.14 / 10.0 TheRock stream exists", "ROCm 7.14 / 10.0 / 10.1 TheRock stream, 10.1.0 released 2026-10-05"),
    ):
        assert old in text, text  # the reference changed: revisit this line
        text = text.replace(old, new)
    return text


def main() -> None:
    ref = json.loads((REF / "matrices.json").read_text())
    dump("rocm.json", build_rocm(ref))
    dump("amd_gpus.json", build_amd(ref))
    dump("cuda.json", build_cuda(ref))
    dump("torch.json", build_torch(ref))
    dump(
        "bundle.json",
        {
            "schema": "gpuenv.matrices.bundle/1",
            "version": BUNDLE_VERSION,
            "material_dated_up_to": material_dated(ref["meta"]["material_dated_up_to"]),
            "files": ["amd_gpus.json", "nvidia_gpus.json", "rocm.json", "cuda.json", "torch.json"],
            "source": "compiled from matrices/sources/reference/matrices.json with "
            "matrices/sources/reference/errata.md applied and the sourced additions of "
            "matrices/tools/additions.py (matrices/tools/build.py); NVIDIA PCI ids from pci.ids, "
            "pciutils/pciids @ c1c12547d626 (matrices/tools/nvidia_pci.py)",
            "seed_checks": ref["seed_checks"],
        },
    )
    for name, index in build_index().items():  # last: from the files as written above
        dump(name, index)


if __name__ == "__main__":
    main()
