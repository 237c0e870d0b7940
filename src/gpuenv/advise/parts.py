"""Optional parts of a tree: code the project ships but does not need to run its core.

Four kinds, each found from what the walk recorded (``Parts``), never by running anything:

- a nested package: a directory below the top with its own setup.py or pyproject.toml (Liger's
  ``liger_cute_kernels/``, flash-attention's ``hopper/``): built and installed on its own;
- a ``contrib/`` directory (apex's ``apex/contrib/csrc``): extensions built only on request;
- a Python module reached only through imports that may not run: inside ``try:``/``if ...:``
  (``if implementation == "flash_attention_3":``), or inside a function (a backend loaded on
  demand), by no module-level import of a module that is itself core (``optional_modules``);
- an extra (``[project.optional-dependencies]``, ``extras_require``): see ``deps``.

Their CUDA-only findings are reported as optional parts and do not decide the verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from gpuenv.advise.regions import is_auxiliary_file

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.advise.switches import Reader

# from X import (\n a,\n b): the statement scan reads one line; the graph needs X all the same.
_FROM_PAREN = re.compile(r"^([ \t]*)from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]*\([ \t]*(?:#[^\n]*)?\n", re.MULTILINE)
_VENDORED = frozenset({"vendor", "vendored", "third_party", "third-party", "thirdparty", "3rdparty", "external"})
AUXILIARY = "in a test, benchmark or example"  # the label regions' optional imports give them too
_RELATIVE = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+\(?[ \t]*([\w \t,]+)", re.MULTILINE)


@dataclass
class Parts:
    """What the walk recorded for the optional-part rules."""

    packages: set[str] = field(default_factory=set)  # directories with their own setup.py/pyproject.toml
    roots: set[str] = field(default_factory=set)  # setup.py / pyproject.toml at the top of the tree
    modules: list[str] = field(default_factory=list)  # every .py file
    # importer path -> [(module as written, lazy)]: a lazy import is indented (try/if/def)
    imports: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)
    # module path -> the C/CUDA sources it names ("gemm/marlin.cuh"): compiled when it runs (JIT)
    loads: dict[str, list[str]] = field(default_factory=dict)
    # module path -> the environment switch that asks for its build ("DS_BUILD_EVOFORMER_ATTN")
    on_request: dict[str, str] = field(default_factory=dict)
    imported_by: dict[str, list[tuple[str, bool]]] | None = None  # ``importers``, once worked out
    # The packages the top pyproject.toml installs ([tool.setuptools.packages.find] include, as
    # dotted patterns: "megatron.core.*"); empty when it does not say (then every package is).
    installed: tuple[str, ...] = ()

    def not_installed(self, path: str) -> bool:
        """A module in a directory whose package the top pyproject.toml does not install
        (Megatron-LM installs megatron.core and megatron.training, not megatron/post_training/)."""
        if not self.installed or not path.endswith(".py"):
            return False
        directory = path.rpartition("/")[0]
        if not directory:
            return False  # a script at the top: an entry point, installed or not
        from fnmatch import fnmatchcase

        dotted = directory.replace("/", ".")
        return not any(fnmatchcase(dotted, pattern) for pattern in self.installed)

    def note_build_file(self, path: str) -> None:
        directory, _, name = path.rpartition("/")
        if not directory:
            self.roots.add(name.lower())
        elif name.lower() in ("setup.py", "pyproject.toml") and not is_auxiliary_file(path):
            self.packages.add(directory + "/")

    def note_python(self, path: str, text: str, absolute: list[tuple[str, int]]) -> None:
        """A .py file and its imports: ``absolute`` as the scan found them (module, line)."""
        self.modules.append(path)
        if is_auxiliary_file(path):
            return  # a test importing everything does not make it core
        name = path.rpartition("/")[2]
        if (".cu" in text or ".cpp" in text) and not name.startswith("setup"):
            # setup*.py names the sources its build compiles (the build model reads those), and
            # its BUILD_CUDA_EXT is a build switch, not a request for one extension.
            named = _LOADED.findall(text)
            if named:
                if any("{" in n for n in named):  # f'{src_dir}/attention.cpp', src_dir = 'csrc/x'
                    values = dict(_STRING_ASSIGN.findall(text))
                    named = [_PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group()), n) for n in named]
                self.loads[path] = [n for n in named if "{" not in n]
                switch = _BUILD_SWITCH.search(text)
                if switch is not None:
                    self.on_request[path] = switch.group(1)
        found: list[tuple[str, bool]] = []
        if absolute:
            indented = _indented_lines(text)
            found = [(module, line in indented) for module, line in absolute]
        if "import (" in text:
            found += [(m.group(2), bool(m.group(1))) for m in _FROM_PAREN.finditer(text)]
        if "from ." in text:
            for m in _RELATIVE.finditer(text):
                stem = _relative(path, len(m.group(1)), m.group(2))
                if stem is None:
                    continue
                lazy = m.group()[:1] in (" ", "\t")
                names = [n.strip().split()[0] for n in m.group(3).split(",") if n.strip()]
                found.append(("/".join(stem), lazy))  # a path: resolved as one
                found += [("/".join(stem + [n]), lazy) for n in names]
        if found:
            self.imports[path] = found


_LOADED = re.compile(r"[\"']([\w./{}-]+\.(?:cuh|cu|cpp|cc|cxx|hpp|h))[\"']")
_STRING_ASSIGN = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*[\"']([\w./-]+)[\"'][ \t]*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
# An environment switch that asks for an extension's build, assigned or read in the module that
# names its sources (DeepSpeed's op builders: BUILD_VAR = "DS_BUILD_FUSED_ADAM"): built on request.
_BUILD_SWITCH = re.compile(r"[\"']((?:[A-Z][A-Z0-9]*_)?BUILD_[A-Z0-9_]+)[\"']")


def jit_parts(parts: Parts, c_paths: list[str], includes: dict[str, list[tuple[str, bool]]],
              why_of: Callable[[str], str], reader: Reader) -> tuple[dict[str, str], dict[str, str]]:  # fmt: skip
    """C/CUDA sources compiled at run time by Python code (sglang's jit_kernel/hicache.py naming
    "hicache.cuh"): a source every module that names it is optional (``why_of`` says why, "" for
    core) is an optional part; so is one every naming module builds only on request, behind an
    environment switch of its own (DeepSpeed's op builders, ``BUILD_VAR = "DS_BUILD_..."``); and so
    is a header included only by such sources. A source no module names, or one a core module
    names without such a switch, is left as it is. Called only beside a ROCm build of the tree's
    own, where the project's core is known to run without them. ``reader``: a source whose core
    loaders the core uses only on the CUDA side of a platform switch (``switches``) is the CUDA
    build's, returned apart (the second dict: already handled by the ROCm build), with the
    headers only such sources include; one
    whose loaders are called only by modules the core imports for type annotations alone
    (``switches.dormant``: their one real import is inside ``if``/``try``/a function) is optional."""
    from gpuenv.advise.buildmodel import included_by

    by_name: dict[str, list[str]] = {}
    for c in c_paths:
        by_name.setdefault(c.rsplit("/", 1)[-1], []).append(c)
    loaders: dict[str, set[str]] = {}
    for module, named in parts.loads.items():
        for written in named:
            for c in by_name.get(written.rsplit("/", 1)[-1], ()):
                if c == written or c.endswith("/" + written):
                    loaders.setdefault(c, set()).add(module)
    out: dict[str, str] = {}
    cuda: dict[str, str] = {}
    judged: dict[str, tuple[str, str]] = {}  # loader -> run_time_callers: one judgement for all it names
    for c, modules in loaders.items():
        ordered = sorted(modules)
        whys = [why_of(m) for m in ordered]
        if all(whys):
            out[c] = f"compiled at run time only by optional code ({ordered[0]}: {whys[0]})"
        elif all(m in parts.on_request for m in ordered):
            switch = parts.on_request[ordered[0]]
            out[c] = f"an extension built on request ({switch}, {ordered[0]})"
        else:
            from gpuenv.advise.switches import run_time_callers

            for m, why in zip(ordered, whys, strict=True):
                if not why and m not in judged:
                    named = [n.rsplit("/", 1)[-1] for n in parts.loads[m]]
                    judged[m] = run_time_callers(reader, m, named, importers(parts), why_of)
            found = [(m, judged[m]) for m, why in zip(ordered, whys, strict=True) if not why]
            if all(kind for _, (kind, _) in found):
                optional = [(m, where) for m, (kind, where) in found if kind == "optional"]
                if optional:
                    out[c] = f"compiled at run time only by optional code ({optional[0][0]}, imported by {optional[0][1]})"
                else:
                    cuda[c] = f"compiled at run time only on the CUDA side of a platform switch ({found[0][1][1]})"
    if not out and not cuda:
        return out, cuda
    into = included_by(c_paths, includes)
    changed = True
    while changed:
        changed = False
        for header, includers in into.items():
            if header not in out and header not in cuda and header not in loaders and includers:
                if includers <= out.keys():
                    out[header] = out[min(includers)]
                    changed = True
                elif includers <= out.keys() | cuda.keys():
                    cuda[header] = cuda[min(includers & cuda.keys())]
                    changed = True
    return out, cuda


_INDENTED_IMPORT = re.compile(r"^[ \t]+(?:from|import)[ \t]", re.MULTILINE)


def _indented_lines(text: str) -> set[int]:
    """The lines of indented import statements (inside try/if/def): one regex pass, no split."""
    out = set()
    line, last = 1, 0
    for m in _INDENTED_IMPORT.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        out.add(line)
    return out


def _index(modules: list[str]) -> tuple[dict[tuple[str, ...], list[str]], set[str]]:
    """Dotted-name suffixes of every module file (liger_kernel.ops.x of src/liger_kernel/ops/x.py),
    and the paths without their suffix (for relative imports)."""
    index: dict[tuple[str, ...], list[str]] = {}
    for path in modules:
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for i in range(len(parts)):
            index.setdefault(tuple(parts[i:]), []).append(path)
    return index, set(modules)


def _targets(written: str, index: dict[tuple[str, ...], list[str]], files: set[str]) -> list[str]:
    """The module files an import names, and the packages (__init__.py) it imports on the way."""
    if "/" in written:  # a relative import, resolved to a path
        out = [c for c in (written + ".py", written + "/__init__.py") if c in files]
        steps = written.split("/")
        for n in range(1, len(steps)):
            init = "/".join(steps[:n]) + "/__init__.py"
            if init in files:
                out.append(init)
        return out
    dotted = tuple(written.split("."))
    found = list(index.get(dotted, []))
    for n in range(1, len(dotted)):
        found += [p for p in index.get(dotted[:n], []) if p.endswith("__init__.py")]
    return found


def importers(parts: Parts) -> dict[str, list[tuple[str, bool]]]:
    """Module path -> the modules importing it, each with whether that import is lazy (worked out
    once per tree: the optional-module and run-time-kernel rules both read it)."""
    if parts.imported_by is not None:
        return parts.imported_by
    index, files = _index(parts.modules)
    into: dict[str, list[tuple[str, bool]]] = {}
    for importer, found in parts.imports.items():
        for written, lazy in found:
            for target in _targets(written, index, files):
                if target != importer:
                    into.setdefault(target, []).append((importer, lazy))
    parts.imported_by = into
    return into


def resolver(parts: Parts) -> Callable[[str, str], list[str]]:
    """(module as written in an import, the importing file) -> the files it names exactly:
    ``pkg.mod`` or ``.mod`` to pkg/mod.py or pkg/mod/__init__.py, not the packages on the way."""
    index, files = _index(parts.modules)

    def resolve(written: str, importer: str) -> list[str]:
        dots = len(written) - len(written.lstrip("."))
        if not dots:
            return index.get(tuple(written.split(".")), [])
        segments = _relative(importer, dots, written[dots:])
        if segments is None:
            return []
        stem = "/".join(segments)
        return [c for c in (stem + ".py", stem + "/__init__.py") if c in files]

    return resolve


def _relative(importer: str, dots: int, dotted: str) -> list[str] | None:
    """The path segments ``from <dots><dotted> import`` names in ``importer``; None above the root."""
    package = importer.split("/")[:-1]
    if dots - 1 > len(package):
        return None
    return package[: len(package) - dots + 1] + [p for p in dotted.split(".") if p]


def optional_modules(parts: Parts, outside: set[str] | frozenset[str] = frozenset()) -> dict[str, str]:
    """Module path -> why it is optional: every import of it that runs at module level comes from
    a module that is optional itself (a greatest fixpoint, so a backend's modules importing each
    other stay optional together) or not core for another reason (``outside``: a CUDA twin
    directory, a backend named for CUDA, a package pyproject.toml does not install); a module
    nothing imports is core (an entry point)."""
    if not parts.imports:
        return {}
    into = importers(parts)
    optional = set(into)
    changed = True
    while changed:
        changed = False
        for target in list(optional):
            if any(not lazy and importer not in optional and importer not in outside for importer, lazy in into[target]):
                optional.discard(target)
                changed = True
    out = {}
    for target in optional:
        lazy_from = sorted(i for i, lazy in into[target] if lazy and i not in optional and i not in outside)
        how = (f"imported only inside try:/if:/a function ({lazy_from[0]})" if lazy_from
               else "imported only by optional or CUDA-only modules")  # fmt: skip
        out[target] = how
    return out


def package_dirs(parts: Parts) -> set[str]:
    """Directories that hold an __init__.py: the Python packages of the tree."""
    return {m[: -len("__init__.py")] for m in parts.modules if m.endswith("__init__.py")}


# A module named for a CUDA-only backend: CuTe DSL, cuTile, TensorRT-LLM, FlashInfer, NVIDIA, a
# Hopper/Blackwell target (vLLM's gdn_chunk_cutedsl/, cute_utils/, router_gemm_sm100.py).
_BACKEND = re.compile(r"(?:^|[/_.-])(?:cute|cutedsl|cutile|cuda|nvidia|trtllm|flashinfer|sm(?:90|100|103|110|120)a?)"
                      r"(?=[/_.-]|$)", re.IGNORECASE)  # fmt: skip
# Requirements lists of the core; the others (dev, test, kv_connectors, rubin-prerelease) are extras.
_CORE_REQUIREMENTS = frozenset({"", "common", "base", "runtime", "core", "main", "install", "prod", "production",
                                "cuda", "gpu", "build"})  # fmt: skip


_CONTAINER_DIRS = frozenset({"docker", "dockerfiles", "containers", "container"})


def is_backend(path: str) -> bool:
    """A Python module named for a CUDA-only backend (``_BACKEND``), or a CMake file in a directory
    named for one (TGI's backends/trtllm/CMakeLists.txt: that backend's build, not the core's)."""
    if path.endswith(".py"):
        return _BACKEND.search(path) is not None
    directory, _, name = path.rpartition("/")
    low = name.lower()
    return (low == "cmakelists.txt" or low.endswith(".cmake")) and _BACKEND.search(directory) is not None


def _inside(directory: str, packaged: set[str]) -> bool:
    """Whether a directory is a package or lies below one: a directory without __init__.py inside
    a package is a namespace subpackage (PEP 420), which setuptools' pyproject configuration finds
    by default and which the package's own modules import by its dotted name (sglang/srt/)."""
    while directory:
        if directory + "/" in packaged:
            return True
        directory = directory.rpartition("/")[0]
    return False


def optional_part(path: str, packages: set[str], modules: dict[str, str], packaged: set[str] | None = None,
                  backends: bool = False, parts_installed: Parts | None = None) -> str:  # fmt: skip
    """Why the file at ``path`` is an optional part ("" when it is core). ``packaged``: the
    package directories, given where the top of the tree is a package (its scripts elsewhere,
    container recipes below the top, and requirements lists other than the core's are not what it
    installs). ``backends``: the tree builds for ROCm itself, so a Python module named for a
    CUDA-only backend is one its ROCm path does not take."""
    if is_auxiliary_file(path):
        return AUXILIARY
    segments = path.split("/")
    for i, seg in enumerate(segments[:-1]):
        if seg.lower() in _VENDORED:
            return f"{'/'.join(segments[: i + 1])}/ (vendored third-party code)"
    for package in sorted(packages, key=len, reverse=True):  # the nearest: a set's order varies per run
        if path.startswith(package):
            return f"{package} (a package of its own: setup.py or pyproject.toml)"
    directory, _, name = path.rpartition("/")
    if parts_installed is not None and parts_installed.not_installed(path):
        return f"{directory}/ (not among the packages pyproject.toml installs)"
    if backends and is_backend(path):
        return f"{directory}/ (a CUDA-only backend, named for it, beside the project's ROCm build)"
    if packaged is not None and name.endswith(".txt") and (name.startswith("requirements") or directory.endswith(
            "requirements")):  # fmt: skip
        if any(seg.lower() in _CONTAINER_DIRS for seg in segments[:-1]):
            # Megatron-LM's docker/lts/requirements.txt: what an image installs, not the package
            return f"{directory}/ (a container recipe below the top of the tree)"
        stem = name[: -len(".txt")].removeprefix("requirements").strip("-_.")
        if stem.lower() not in _CORE_REQUIREMENTS:
            return f"{path} (a requirements list beside the core's)"
    if backends and packaged is not None and name.lower() in ("environment.yml", "environment.yaml"):
        # DeepSpeed's environment.yml (pytorch-cuda=11.8): a developer's conda environment; pip
        # installs the package from its own manifest, and the tree builds for ROCm itself.
        return f"{path} (a conda environment beside the package's own install)"
    if packaged is not None and directory:
        if path.endswith(".py") and not _inside(directory, packaged):
            return f"{directory}/ (scripts outside the Python package)"
        low = name.lower()
        if low.startswith(("dockerfile", "containerfile")) or low.endswith((".dockerfile", ".containerfile")):
            return f"{directory}/ (a container recipe below the top of the tree)"
    if "contrib" in segments[:-1]:
        at = segments.index("contrib")
        part = "/".join(segments[: at + 2]) if at + 2 < len(segments) else "/".join(segments[: at + 1])
        return f"{part}/ (a contrib extension, built on request)"
    why = modules.get(path)
    if why is not None:
        return f"{path.rsplit('/', 1)[0]}/ ({why})"
    return ""
