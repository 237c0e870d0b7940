"""Dockerfiles and Containerfiles: the base images a tree builds on, and what RUN installs.

A pure function of the file's text. ``FROM`` references are resolved through the ``ARG``
defaults declared before them (``FROM ${BASE}``); a stage built on an earlier stage, ``scratch``
and references still holding a variable are not images. ``RUN pip install ...`` (pip, pip3,
``python -m pip``, ``uv pip``) and ``conda/mamba install ...`` arguments are read as
requirements, so ``RUN pip install tensorrt`` counts like a requirements file would.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from gpuenv.advise.deps import CUDA_INDEX, Dep, requirement

_VAR = re.compile(r"\$\{([A-Za-z_]\w*)(?::?[-+][^}]*)?\}|\$([A-Za-z_]\w*)")
_INSTALL = re.compile(r"(?:^|[\s;&|(])(?:pip3?|python3?\s+-m\s+pip|uv\s+pip|conda|mamba|micromamba)\s+install\s+")
_STOP = frozenset({"&&", "||", ";", "|", "&", ")"})
# Options of pip/conda install that take a value (the next word is not a package).
_VALUED = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
    "--find-links", "-t", "--target", "--prefix", "--root", "--python", "-p", "--channel", "-n", "--name",
    "--platform", "--python-version", "--implementation", "--abi", "--cache-dir", "--src",
})  # fmt: skip
_INDEX = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links"})
_CONDA_PIN = re.compile(r"^([A-Za-z0-9._-]+)=(?!=)")


@dataclass(frozen=True)
class Image:
    reference: str  # as resolved: nvcr.io/nim/meta/llama3-8b-instruct:1.0.0
    line: int
    written: str


def instructions(text: str) -> list[tuple[int, str]]:
    """(first line, instruction text) with continuation lines joined and comments dropped."""
    out: list[tuple[int, str]] = []
    pending, first = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and pending):
            continue  # a comment (or blank) inside a continued instruction does not end it
        if stripped.endswith("\\"):
            pending, first = pending + stripped[:-1] + " ", first or number
            continue
        joined, start = (pending + stripped).strip(), first or number
        pending, first = "", 0
        if joined:
            out.append((start, joined))
    if pending.strip():
        out.append((first, pending.strip()))
    return out


def parse_dockerfile(text: str) -> tuple[list[Image], list[Dep]]:
    args: dict[str, str] = {}
    stages: set[str] = set()
    images: list[Image] = []
    deps: list[Dep] = []
    for line, inst in instructions(text):
        word, _, rest = inst.partition(" ")
        op = word.upper()
        if op == "ARG":
            name, eq, default = rest.strip().partition("=")
            if eq:
                args[name.strip()] = default.strip().strip("'\"")
        elif op == "FROM":
            parts = [p for p in rest.split() if not p.startswith("--")]
            if not parts:
                continue
            ref = _VAR.sub(lambda m: args.get(m.group(1) or m.group(2), m.group()), parts[0])
            if len(parts) >= 3 and parts[1].lower() == "as":
                stages.add(parts[2].lower())
            if "$" in ref or ref.lower() == "scratch" or ref.lower() in stages:
                continue
            images.append(Image(ref, line, inst))
        elif op == "RUN":
            deps.extend(_installs(rest, line))
    return images, deps


def _installs(command: str, line: int) -> list[Dep]:
    out: list[Dep] = []
    for m in _INSTALL.finditer(command):
        try:
            words = shlex.split(command[m.end() :], posix=True)
        except ValueError:  # an unbalanced quote: read it word by word instead
            words = command[m.end() :].split()
        option = None  # the option whose value the next word is
        for w in words:
            if w in _STOP or w.startswith(("&&", "||", ";")):
                break
            if option is not None:
                if option in _INDEX and CUDA_INDEX.match(w):
                    out.append(Dep("index", w, line, w))
                option = None
                continue
            if w.startswith("-"):
                name, eq, value = w.partition("=")
                if eq and name in _INDEX and CUDA_INDEX.match(value):
                    out.append(Dep("index", value, line, value))
                elif not eq and name in _VALUED:
                    option = name
                continue
            spec = w.split("::", 1)[-1]
            if "/" in spec or spec.startswith((".", "$")):
                continue  # a path, URL or variable, not a name
            spec = _CONDA_PIN.sub(r"\1==", spec)  # conda's name=version
            out.extend(requirement(spec, line))
    return out
