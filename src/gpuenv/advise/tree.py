"""Which files of a source tree `gpuenv advise` reads, and reading them safely.

Every file may be hostile or odd: it is read with ``rootpath.read_regular`` (a regular file
only: never a FIFO or device node), capped at MAX_BYTES, and a file with a NUL byte is binary.
Symbolic links are never followed: one that leaves the tree is counted, one that stays inside
is passed over (its target is read where it lies). None of this is fatal: each file passed over
is counted by why.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass

from gpuenv.rootpath import NotRegular, TooLarge, read_regular

MAX_BYTES = 4 << 20  # the largest hand-written source seen in real trees is ~1 MB; generated ones are skipped
BINARY_PROBE = 8192  # a NUL byte in the first 8 KiB: binary (git's own heuristic)

SOURCE_SUFFIXES = frozenset({".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".py"})
# HIP sources: not scanned for CUDA, but evidence that the project already builds for ROCm.
HIP_SUFFIXES = frozenset({".hip"})
# Directories that hold no project source: version control, caches, installed environments.
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".tox", ".nox", ".venv", "venv",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs",
})  # fmt: skip

_MANIFESTS = {
    "pyproject.toml": "pyproject",
    "setup.cfg": "setup.cfg",
    "setup.py": "setup.py",
    "environment.yml": "environment",
    "environment.yaml": "environment",
    "pipfile": "pipfile",
    "pipfile.lock": "pipfile.lock",
    "poetry.lock": "toml-lock",
    "uv.lock": "toml-lock",
    "pdm.lock": "toml-lock",
    "conda-lock.yml": "conda-lock",
    "conda-lock.yaml": "conda-lock",
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
}


def manifest_kind(name: str, parent: str) -> str | None:
    """What kind of manifest a file name is (None: not one)."""
    low = name.lower()
    kind = _MANIFESTS.get(low)
    if kind is not None:
        return kind
    if fnmatch.fnmatch(low, "requirements*.txt") or (parent.lower() == "requirements" and low.endswith(".txt")):
        return "requirements"
    if low.startswith(("dockerfile.", "containerfile.")) or low.endswith((".dockerfile", ".containerfile")):
        return "dockerfile"
    return None


@dataclass
class Counts:
    binary: int = 0
    unreadable: int = 0
    too_large: int = 0
    outside_tree: int = 0


@dataclass(frozen=True)
class File:
    path: str  # relative to the root, POSIX separators
    suffix: str  # ".cu", ... ("" for a manifest without one)
    manifest: str | None  # the manifest kind, or None
    source: bool  # a source file (scanned for calls and constructs)
    data: bytes


def walk(root: str, counts: Counts) -> Iterator[File]:
    """The files of the tree under ``root`` that advise reads, in a stable order."""
    root_real = os.path.realpath(root)
    todo = [""]
    while todo:
        rel_dir = todo.pop()
        here = os.path.join(root_real, rel_dir) if rel_dir else root_real
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            counts.unreadable += 1
            continue
        subdirs = []
        parent = os.path.basename(rel_dir)
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if target != root_real and not target.startswith(root_real + os.sep):
                        counts.outside_tree += 1
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        subdirs.append(rel)
                    continue
            except OSError:
                counts.unreadable += 1
                continue
            suffix = os.path.splitext(entry.name)[1].lower()
            manifest = manifest_kind(entry.name, parent)
            source = suffix in SOURCE_SUFFIXES
            if manifest is None and not source and suffix not in HIP_SUFFIXES:
                continue
            data = _read(entry.path, counts)
            if data is not None:
                yield File(rel, suffix, manifest, source, data)
        todo.extend(reversed(subdirs))


def _read(path: str, counts: Counts) -> bytes | None:
    try:
        data = read_regular(path, MAX_BYTES, nofollow=True)
    except TooLarge:
        counts.too_large += 1
        return None
    except (NotRegular, IsADirectoryError):
        counts.unreadable += 1  # a FIFO, socket or device node with a source's name
        return None
    except OSError:
        counts.unreadable += 1
        return None
    if b"\0" in data[:BINARY_PROBE]:
        counts.binary += 1
        return None
    return data
