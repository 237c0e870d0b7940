"""Which files of a source tree `gpuenv advise` reads, and reading them safely.

Every file may be hostile or odd: it is read with ``rootpath.read_regular`` (a regular file
only: never a FIFO or device node), capped at MAX_BYTES, and a file with a NUL byte is binary.
Symbolic links are never followed: one that leaves the tree is counted, one that stays inside
is passed over (its target is read where it lies). None of this is fatal: each file passed over
is counted by why.

What is not the project's own source is not read: what the tree's .gitignore files ignore (git's
rules, ``Ignore``), and build output and environments (BUILD_DIRS: the ``build/`` that ``pip
install .`` leaves is a second copy of every source), each counted as ignored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpuenv.rootpath import NotRegular, TooLarge, read_regular

MAX_BYTES = 4 << 20  # the largest hand-written source seen in real trees is ~1 MB; generated ones are skipped
BINARY_PROBE = 8192  # a NUL byte in the first 8 KiB: binary (git's own heuristic)

SOURCE_SUFFIXES = frozenset({".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".py", ".pyx", ".pxd"})
# HIP sources: not scanned for CUDA, but evidence that the project already builds for ROCm.
HIP_SUFFIXES = frozenset({".hip"})
# Directories that hold no project source: version control, caches, installed environments.
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".tox", ".nox", ".venv", "venv",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs",
})  # fmt: skip
# Build output and environments: copies of the sources, or other projects' code. Counted.
BUILD_DIRS = frozenset({"build", "dist"})
BUILD_SUFFIXES = (".egg-info",)
BUILD_PREFIXES = (".venv",)
GITIGNORE_MAX = 1 << 20

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
    "pkg-info": "pkg-info",  # an sdist's metadata: its name (read only when its setup.py is a stub)
}


def manifest_kind(name: str, parent: str) -> str | None:
    """What kind of manifest a file name is (None: not one)."""
    low = name.lower()
    kind = _MANIFESTS.get(low)
    if kind is not None:
        return kind
    if low.startswith(("pyproject_", "pyproject-")) and low.endswith(".toml"):
        return "pyproject"  # sglang's pyproject_other.toml: one platform's manifest beside pyproject.toml
    if (low.startswith("requirements") and low.endswith(".txt") and len(low) >= 16) or (  # requirements*.txt
        parent.lower() == "requirements" and low.endswith(".txt")
    ):
        return "requirements"
    if low.startswith(("dockerfile.", "containerfile.", "dockerfile_", "dockerfile-", "containerfile_", "containerfile-")) \
            or low.endswith((".dockerfile", ".containerfile")):
        # Dockerfile_amd, Dockerfile-rocm: a platform's recipe beside the plain Dockerfile (TGI's
        # Dockerfile_amd, Dockerfile_trtllm), its twin when it names ROCm.
        return "dockerfile"
    return None


@dataclass
class Counts:
    binary: int = 0
    unreadable: int = 0
    too_large: int = 0
    outside_tree: int = 0
    ignored: int = 0  # files and directories .gitignore ignores, and build or venv directories
    ignore_lines: int = 0  # .gitignore lines whose pattern does not compile (skipped, as git does)


@dataclass(frozen=True)
class File:
    path: str  # relative to the root, POSIX separators
    suffix: str  # ".cu", ... ("" for a manifest without one)
    manifest: str | None  # the manifest kind, or None
    source: bool  # a source file (scanned for calls and constructs)
    data: bytes
    build: bool = False  # a build file: CMakeLists.txt, *.cmake, setup*.py


def walk(root: str, counts: Counts) -> Iterator[File]:
    """The files of the tree under ``root`` that advise reads, in a stable order."""
    root_real = os.path.realpath(root)
    todo: list[tuple[str, Ignore]] = [("", Ignore())]
    while todo:
        rel_dir, ignore = todo.pop()
        here = os.path.join(root_real, rel_dir) if rel_dir else root_real
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            counts.unreadable += 1
            continue
        ignore = ignore.below(rel_dir, _read_gitignore(os.path.join(here, ".gitignore")), counts)
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
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                counts.unreadable += 1
                continue
            if is_dir and entry.name in SKIP_DIRS:
                continue
            if (is_dir and _build_dir(entry.name)) or ignore.ignores(rel, is_dir):
                counts.ignored += 1
                continue
            if is_dir:
                subdirs.append((rel, ignore))
                continue
            suffix = os.path.splitext(entry.name)[1].lower()
            manifest = manifest_kind(entry.name, parent)
            source = suffix in SOURCE_SUFFIXES
            build = is_build_file(entry.name)
            if manifest is None and not source and not build and suffix not in HIP_SUFFIXES:
                continue
            data = _read(entry.path, counts)
            if data is not None:
                yield File(rel, suffix, manifest, source, data, build)
        todo.extend(reversed(subdirs))


def is_build_file(name: str) -> bool:
    """CMakeLists.txt, *.cmake, and Python build scripts (setup.py, setup_rocm.py)."""
    low = name.lower()
    return low == "cmakelists.txt" or low.endswith(".cmake") or (low.startswith("setup") and low.endswith(".py"))


def _build_dir(name: str) -> bool:
    return name in BUILD_DIRS or name.endswith(BUILD_SUFFIXES) or name.startswith(BUILD_PREFIXES)


def _read_gitignore(path: str) -> str:
    try:
        return read_regular(path, GITIGNORE_MAX, nofollow=True, truncate=True).decode("utf-8", "replace")
    except (OSError, NotRegular, TooLarge):
        return ""  # none, or not a file git would read either


# -- .gitignore ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    base: str  # the directory of the .gitignore it comes from, relative to the tree ("": the top)
    regex: re.Pattern[str]  # matched against the path relative to base (name_only: its last component)
    negate: bool  # "!pattern": re-includes
    dir_only: bool  # "pattern/": directories only
    name_only: bool = False  # a pattern without a slash: it matches a name at any depth


@dataclass(frozen=True)
class Ignore:
    """The rules of the .gitignore files from the top of the tree down to one directory, as git
    reads them (gitignore(5)): the last rule that matches decides, a deeper file's rules after a
    higher one's; a pattern with a slash before its end is anchored to its file's directory,
    one without matches at any depth; ``*``, ``?`` and ``[...]`` never match a slash, ``**``
    spans directories. What is under an ignored directory is never looked at (git cannot
    re-include it either)."""

    rules: tuple[Rule, ...] = ()
    # Each .gitignore's rules as one pattern per kind of path, deepest file first: one regex
    # call per file and path, not one per rule (a .gitignore of 250 lines with negations).
    files: tuple[_Compiled, ...] = ()

    def below(self, rel_dir: str, text: str, counts: Counts | None = None) -> Ignore:
        """These rules and those of ``rel_dir``'s .gitignore (its text). A line whose pattern
        does not compile (``[z-a]``: a reversed range) is skipped, as git skips it, and counted."""
        more = []
        for line in text.splitlines():
            try:
                rule = parse_rule(rel_dir, line)
            except re.error:
                if counts is not None:
                    counts.ignore_lines += 1
                continue
            if rule is not None:
                more.append(rule)
        return self._with(rel_dir, tuple(more))

    def _with(self, rel_dir: str, more: tuple[Rule, ...]) -> Ignore:
        if not more:
            return self
        return Ignore(self.rules + more, (_compile(rel_dir, more),) + self.files)

    def ignores(self, rel: str, is_dir: bool) -> bool:
        for rules in self.files:
            if rules.prefix:
                if not rel.startswith(rules.prefix):
                    continue
                rel_here = rel[len(rules.prefix) :]
            else:
                rel_here = rel
            (paths, path_rules), (names, name_rules) = rules.dirs if is_dir else rules.others
            last = _NO_RULE
            if paths is not None and (m := paths.fullmatch(rel_here)) is not None:
                last = path_rules[m.lastindex or 0]
            if names is not None and (m := names.fullmatch(rel_here[rel_here.rfind("/") + 1 :])) is not None:
                last = max(last, name_rules[m.lastindex or 0])
            if last is not _NO_RULE:
                return not last[1]
        return False


# Some of one .gitignore's rules as one alternation with a group per rule, the last rule first:
# the group that matches is the last of them that does; and by group number, (the rule's place
# in its file, whether it re-includes). None: no rule.
_Alternation = tuple["re.Pattern[str] | None", tuple[tuple[int, bool], ...]]
_NO_RULE = (-1, False)


@dataclass(frozen=True)
class _Compiled:
    """One .gitignore's rules, for directories and for files (the rules without a trailing "/"),
    each split in those matched against the path and those matched against its name: two regex
    calls per file and path, whatever its length (one per rule was most of the walk)."""

    prefix: str  # the .gitignore's directory and "/" ("": the top of the tree)
    dirs: tuple[_Alternation, _Alternation]
    others: tuple[_Alternation, _Alternation]


def _compile(base: str, rules: tuple[Rule, ...]) -> _Compiled:
    def split(keep: list[tuple[int, Rule]]) -> tuple[_Alternation, _Alternation]:
        return _alternation([(n, r) for n, r in keep if not r.name_only]), _alternation([(n, r) for n, r in keep if r.name_only])

    numbered = list(enumerate(rules))
    return _Compiled(f"{base}/" if base else "", split(numbered), split([(n, r) for n, r in numbered if not r.dir_only]))


def _alternation(rules: list[tuple[int, Rule]]) -> _Alternation:
    if not rules:
        return None, ()
    last_first = rules[::-1]
    pattern = "|".join(f"({r.regex.pattern})" for _, r in last_first)  # a rule's own pattern holds no group
    return re.compile(pattern, re.DOTALL), (_NO_RULE,) + tuple((n, r.negate) for n, r in last_first)


def parse_rule(base: str, line: str) -> Rule | None:
    """One line of a .gitignore as a rule; None for a blank line or a comment."""
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]  # trailing spaces are not part of a pattern unless escaped
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    body = _glob_regex(line.lstrip("/"))
    if not anchored and line != "**" and "[" not in line:
        # One segment that never matches a slash (a class could, through a range): matching the
        # last component is matching the whole path with any directories before it.
        return Rule(base, re.compile(body, re.DOTALL), negate, dir_only, name_only=True)
    return Rule(base, re.compile(body if anchored else f"(?:.*/)?{body}", re.DOTALL), negate, dir_only)


def _glob_regex(pattern: str) -> str:
    segments = pattern.split("/")
    out = []
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "**":
            out.append(".+" if last else "(?:[^/]*/)*")
        else:
            out.append(_segment_regex(seg) + ("" if last else "/"))
    return "".join(out)


def _segment_regex(seg: str) -> str:
    out, i = [], 0
    while i < len(seg):
        c = seg[i]
        if c == "\\" and i + 1 < len(seg):
            out.append(re.escape(seg[i + 1]))
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := _class_end(seg, i)) > 0:
            body = seg[i + 1 : end]
            negated = body[:1] in ("!", "^")
            body = body[1:] if negated else body
            members = "".join(f"\\{m}" if m in "\\[]&~|" else m for m in body)
            out.append(f"[^/{members}]" if negated else f"[{members}]")  # a class never matches a slash
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _class_end(seg: str, start: int) -> int:
    """Where the ``[...]`` opened at ``start`` closes (a ``]`` first in it is a member); -1: it
    does not, and the ``[`` is itself."""
    i = start + 1
    if i < len(seg) and seg[i] in ("!", "^"):
        i += 1
    if i < len(seg) and seg[i] == "]":
        i += 1
    end = seg.find("]", i)
    return end


def read_text(path: str) -> str | None:
    """A file's text, read as the walk reads it (a regular file, no link followed, within
    MAX_BYTES, not binary); None when that fails now."""
    data = _read(path, Counts())
    return data.decode("utf-8", "replace") if data is not None else None


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
