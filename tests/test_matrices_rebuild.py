"""The bundled matrices rebuild from the repository alone, byte for byte (#29): the build tools read
only what lives under matrices/ (tools/, sources/), and their output equals the shipped files."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

MATRICES = Path(__file__).resolve().parents[1] / "matrices"
BUILT = ("rocm.json", "amd_gpus.json", "cuda.json", "torch.json", "bundle.json", "nvidia_gpus.json",
         "rocm.index.json", "amd_gpus.index.json", "torch.index.json", "cuda.index.json")  # fmt: skip


def test_the_bundle_rebuilds_byte_for_byte_from_the_repository(tmp_path):
    copy = tmp_path / "clone" / "matrices"
    shutil.copytree(MATRICES / "tools", copy / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(MATRICES / "sources", copy / "sources")
    shutil.copy(MATRICES / "repos.json", copy / "repos.json")  # hand-kept; rocm.json copies its routes (#42)
    assert not any((copy / name).exists() for name in BUILT)  # nothing built is carried over
    env = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    for tool in ("build.py", "nvidia_pci.py"):
        done = subprocess.run(
            [sys.executable, "-I", str(copy / "tools" / tool)], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    for name in BUILT:
        assert (copy / name).read_bytes() == (MATRICES / name).read_bytes(), name


def test_the_build_reads_no_path_outside_matrices():
    tools = sorted(MATRICES.glob("tools/build*.py")) + [MATRICES / "tools" / "nvidia_pci.py"]
    assert len(tools) >= 6  # build.py and its modules: one per output file, and what they share
    for path in tools:
        tool, text = path.name, path.read_text()
        assert "shared" + '" / "reference' not in text and "/usr/share/misc/pci.ids" not in text, tool


def test_no_citation_points_into_a_private_search_index():
    """Ids of the search tool the data was read with are private to it: a reader of the repository
    cannot follow them, so every citation names a public repository, commit or URL instead (#29)."""
    cited = sorted(MATRICES.glob("tools/*.py")) + sorted(MATRICES.glob("*.json"))
    for path in cited:
        text = path.read_text(encoding="utf-8")
        assert "code index id" not in text, path.name
        assert re.search(r"\bindex id \d{6,}", text) is None, path.name
