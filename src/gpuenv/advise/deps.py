"""Dependency manifests, parsed statically: what a tree asks to install, and where it says so.

Pure functions of a file's text returning ``Dep`` records (a distribution name, or a CUDA wheel
index of PyTorch), each with the line it is written on. Nothing is executed: setup.py is read
with ``ast`` (only literal lists, dicts and names bound to them), TOML with tomllib (tomli
before 3.11), JSON lock files with ``gpuenv.standins.jsoninput``; requirements files, environment.yml
and conda-lock files line by line (no YAML parser is needed for their shapes). A manifest that
does not parse raises ``Unparsable``; the caller counts it and goes on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class Unparsable(ValueError):
    """A manifest that cannot be read as its format (one line)."""


@dataclass(frozen=True)
class Dep:
    kind: str  # "package" (a distribution name) or "index" (a CUDA build of PyTorch pinned)
    name: str  # the distribution name as written, or the index URL / version
    line: int
    written: str
    extra: str = ""  # the extra that asks for it ([project.optional-dependencies], extras_require)

    def _replace_extra(self, extra: str) -> Dep:
        return Dep(self.kind, self.name, self.line, self.written, extra)


_REQ = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)")
_EGG = re.compile(r"#egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
CUDA_INDEX = re.compile(r"https?://download\.pytorch\.org/whl/(?:nightly/|test/)?cu\d+\S*")
_CUDA_LOCAL = re.compile(r"\+cu\d+\b")
_TORCH = frozenset({"torch", "torchvision", "torchaudio"})
_INDEX_OPTIONS = ("--index-url", "--extra-index-url", "-i", "--find-links", "-f")


def requirement(text: str, line: int, written: str | None = None) -> list[Dep]:
    """Deps of one PEP 508 requirement string ("torch==2.4.0+cu121; python_version>'3.9'")."""
    written = (written if written is not None else text).strip()
    text = text.strip()
    egg = _EGG.search(text)
    if egg is not None:
        return [Dep("package", egg.group(1), line, written)]
    m = _REQ.match(text)
    if m is None or "://" in m.group(1):
        return []
    name, rest = m.group(1), m.group(3)
    out = [Dep("package", name, line, written)]
    if name.lower() in _TORCH:
        local = _CUDA_LOCAL.search(rest.split(";", 1)[0])
        index = CUDA_INDEX.search(rest)
        found = index or local
        if found:
            out.append(Dep("index", found.group(), line, written))
    return out


def parse_requirements(text: str) -> list[Dep]:
    out: list[Dep] = []
    pending, first = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if line.endswith("\\"):  # a continued line: judged where it starts
            pending, first = pending + line[:-1] + " ", first or number
            continue
        line, start = (pending + line).strip(), first or number
        pending, first = "", 0
        if not line:
            continue
        if line.startswith("-"):
            option, _, value = line.partition(" ")
            if "=" in option:  # --index-url=URL
                option, value = option.split("=", 1)
            if option in _INDEX_OPTIONS and CUDA_INDEX.match(value.strip()):
                out.append(Dep("index", value.strip(), start, line))
            elif option in ("-e", "--editable"):
                egg = _EGG.search(value)
                if egg:
                    out.append(Dep("package", egg.group(1), start, line))
            continue
        out.extend(requirement(line, start))
    return out


def _toml(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        # no-redef where tomli is installed (a 3.10 venv: pytest needs it), unused where it is not
        import tomli as tomllib  # type: ignore[no-redef,unused-ignore]
    try:
        doc: dict[str, Any] = tomllib.loads(text)
        return doc
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise Unparsable(f"not valid TOML: {exc}") from None


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tables(value: Any) -> list[Any]:
    return list(value.values()) if isinstance(value, dict) else []


def parse_pyproject(text: str) -> list[Dep]:
    doc = _toml(text)
    project = _table(doc.get("project"))
    tool = _table(doc.get("tool"))
    reqs: list[str] = _strings(project.get("dependencies"))
    extras = _table(project.get("optional-dependencies"))
    build = doc.get("build-system")
    if isinstance(build, dict):
        reqs += _strings(build.get("requires"))
    for group in _tables(doc.get("dependency-groups")):  # PEP 735
        reqs += _strings(group)
    uv = _table(tool.get("uv"))
    for key in ("dev-dependencies", "constraint-dependencies", "override-dependencies"):
        reqs += _strings(uv.get(key))
    names: list[str] = []
    poetry = _table(tool.get("poetry"))
    for table in [poetry.get("dependencies"), poetry.get("dev-dependencies")] + [
        g.get("dependencies") for g in _tables(poetry.get("group")) if isinstance(g, dict)
    ]:
        if isinstance(table, dict):
            names += [k for k in table if k.lower() != "python"]
    urls = [s.get("url") for s in (uv.get("index") or []) + (poetry.get("source") or []) if isinstance(s, dict)]
    out = _located(text, reqs, names, [u for u in urls if isinstance(u, str)])
    for extra, values in extras.items():
        out += [d._replace_extra(str(extra)) for d in _located(text, _strings(values), [], [])]
    return out


def parse_setup_cfg(text: str) -> list[Dep]:
    import configparser

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise Unparsable(f"not a valid setup.cfg: {str(exc).splitlines()[0]}") from None
    reqs: list[str] = []
    if parser.has_section("options"):
        for key in ("install_requires", "setup_requires", "tests_require"):
            reqs += _cfg_list(parser.get("options", key, fallback=""))
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            reqs += _cfg_list(value)
    return _located(text, reqs, [], [])


def _cfg_list(value: str) -> list[str]:
    return [p.strip() for part in value.splitlines() for p in part.split(";;") if p.strip() and not p.startswith("#")]


_SETUP_KEYWORDS = ("install_requires", "setup_requires", "tests_require", "extras_require")


def parse_setup_py(text: str) -> list[Dep]:
    """Requirements setup() is given as literals: install_requires, extras_require, ... (never run)."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise Unparsable(f"not Python 3 source: {exc.__class__.__name__}") from None
    if not any(key in text for key in _SETUP_KEYWORDS):
        return []  # parsed (a setup.py that does not parse is counted), but no walk: nothing to find
    bound: dict[str, ast.AST] = {}
    for stmt in tree.body:  # NAME = [...] at module level: the lists setup() is often given
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            bound[stmt.targets[0].id] = stmt.value
    out: list[Dep] = []

    def strings(node: ast.AST, depth: int = 0) -> list[ast.Constant]:
        if depth > 8:
            return []
        if isinstance(node, ast.Name) and node.id in bound:
            return strings(bound[node.id], depth + 1)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return [c for e in node.elts for c in strings(e, depth + 1)]
        if isinstance(node, ast.Dict):
            return [c for v in node.values if v is not None for c in strings(v, depth + 1)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return strings(node.left, depth + 1) + strings(node.right, depth + 1)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node]
        return []

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg == "extras_require" and isinstance(kw.value, ast.Dict):
                for key, value in zip(kw.value.keys, kw.value.values, strict=True):
                    extra = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else "?"
                    for const in strings(value):
                        out += [d._replace_extra(extra) for d in requirement(str(const.value), const.lineno)]
            elif kw.arg in _SETUP_KEYWORDS:
                for const in strings(kw.value):
                    out.extend(requirement(str(const.value), const.lineno))  # strings() keeps str constants only
    return out


def setup_py_facts(text: str) -> tuple[str, str]:
    """(":LINE raises: MESSAGE" when the setup.py is a stub, else ""; the name setup() is given).
    A stub raises at module level, or raises and never calls setup(): TensorRT-LLM's sdist, which
    points to NVIDIA's own index. Never run."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "", ""
    name = ""
    calls_setup = False
    # Module-level string constants: setup(name=_PACKAGE_NAME) with _PACKAGE_NAME = "megablocks"
    strings = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
               and isinstance(n.value.value, str) for t in n.targets if isinstance(t, ast.Name)}  # fmt: skip
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "setup":
            calls_setup = True
            for kw in node.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    name = kw.value.value
                elif kw.arg == "name" and isinstance(kw.value, ast.Name) and kw.value.id in strings:
                    name = strings[kw.value.id]
    raises = [n for n in tree.body if isinstance(n, ast.Raise)]
    if not raises and not calls_setup:
        raises = [n for n in ast.walk(tree) if isinstance(n, ast.Raise)]
    if not raises:
        return "", name
    said = next((c.value for c in ast.walk(raises[0]) if isinstance(c, ast.Constant) and isinstance(c.value, str)), "")
    said = " ".join(said.split())
    return f":{raises[0].lineno} raises" + (f": {said[:100]}" if said else ""), name


_CONDA_NAME_END = re.compile(r"[=<>!~ \[]")


def parse_environment(text: str) -> list[Dep]:
    """conda environment.yml: dependencies (channel::name=version) and its "- pip:" list."""
    out: list[Dep] = []
    section, pip_indent = None, None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0 and not line.startswith("-"):
            section, pip_indent = line.split(":", 1)[0].strip(), None
            continue
        item = line.strip()
        if section != "dependencies" or not item.startswith("-"):
            continue
        spec = item[1:].strip().strip("'\"")
        if pip_indent is not None and indent > pip_indent:
            out.extend(requirement(spec, number, item))  # an item of the pip list
            continue
        pip_indent = None
        if spec.rstrip(":") == "pip" and spec.endswith(":"):
            pip_indent = indent
            continue
        spec = spec.split("::", 1)[-1]
        name = _CONDA_NAME_END.split(spec, maxsplit=1)[0]
        if name:
            out.append(Dep("package", name, number, item))
            if name.lower() in _TORCH and _CUDA_LOCAL.search(spec):
                out.append(Dep("index", spec, number, item))
    return out


def parse_pipfile(text: str) -> list[Dep]:
    doc = _toml(text)
    names: list[str] = []
    for key in ("packages", "dev-packages"):
        table = doc.get(key)
        if isinstance(table, dict):
            names += list(table)
    urls = [s.get("url") for s in doc.get("source") or [] if isinstance(s, dict)]
    return _located(text, [], names, [u for u in urls if isinstance(u, str)])


def parse_pipfile_lock(text: str) -> list[Dep]:
    from gpuenv.standins.jsoninput import InputError, parse

    try:
        doc = parse(text.encode(), "Pipfile.lock")
    except InputError as exc:
        raise Unparsable(str(exc)) from None
    names: list[str] = []
    if isinstance(doc, dict):
        for key in ("default", "develop"):
            if isinstance(doc.get(key), dict):
                names += list(doc[key])
    return _located(text, [], names, [])


def parse_toml_lock(text: str) -> list[Dep]:
    """poetry.lock, uv.lock, pdm.lock: every [[package]] name (the whole resolved set). Where the
    lock names the project itself (uv's ``source = { editable = "." }``), what only its extras and
    dev groups reach is marked as theirs: Megatron-LM's uv.lock resolves quack-kernels for [dev]."""
    doc = _toml(text)
    packages = doc.get("package")
    entries = [p for p in packages if isinstance(p, dict) and isinstance(p.get("name"), str)] if isinstance(
        packages, list) else []  # fmt: skip
    deps = _located(text, [], [p["name"] for p in entries], [])
    core = _lock_core(entries)
    if core is None:
        return deps
    return [d if normalize_name(d.name) in core else d._replace_extra(LOCK_EXTRAS) for d in deps]


# The "extra" of a locked package that only the project's extras or dev groups reach.
LOCK_EXTRAS = "(locked for an extra or a dev group only)"


def _lock_core(entries: list[dict[str, Any]]) -> set[str] | None:
    """The packages the project's own entry reaches through plain ``dependencies`` (never through
    ``optional-dependencies`` or ``dev-dependencies``); None without such an entry."""
    roots = [p for p in entries if isinstance(p.get("source"), dict)
             and (p["source"].get("editable") == "." or p["source"].get("virtual") == ".")]  # fmt: skip
    if len(roots) != 1:
        return None
    by_name = {normalize_name(p["name"]): p for p in entries}
    core = {normalize_name(roots[0]["name"])}
    todo = [roots[0]]
    while todo:
        for dep in todo.pop().get("dependencies") or ():
            name = normalize_name(dep.get("name", "")) if isinstance(dep, dict) else ""
            if name and name not in core:
                core.add(name)
                if name in by_name:
                    todo.append(by_name[name])
    return core


def normalize_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_CONDA_LOCK_NAME = re.compile(r"^\s*-?\s*name:\s*['\"]?([A-Za-z0-9][A-Za-z0-9._-]*)", re.MULTILINE)


def parse_conda_lock(text: str) -> list[Dep]:
    out = []
    for m in _CONDA_LOCK_NAME.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append(Dep("package", m.group(1), line, m.group().strip()))
    return out


def _located(text: str, reqs: list[str], names: list[str], urls: list[str]) -> list[Dep]:
    """Deps of values a structured parser returned, each placed on the first line that names it."""
    out: list[Dep] = []
    finder = _LineFinder(text)
    for req in reqs:
        out.extend(requirement(req, finder.find(req)))
    for name in names:
        out.append(Dep("package", name, finder.name(name), name))
    for url in urls:
        if CUDA_INDEX.match(url):
            out.append(Dep("index", url, finder.find(url), url))
    return out


# A word: a run of [\w.-] that starts with an ASCII letter or digit (a run that starts otherwise,
# _private or -flag, holds none).
_RUN = re.compile(r"[\w.-]+")
_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


class _LineFinder:
    """The line a value is written on (1 when the text does not spell it plainly). Names are
    found through an index of the text's words built once (a uv.lock names hundreds of
    packages: one search of the whole text per name was most of advise's time on such trees)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._names: dict[str, int] | None = None

    def find(self, value: str) -> int:
        pos = self.text.find(value)
        if pos >= 0:
            return self.text.count("\n", 0, pos) + 1
        m = _REQ.match(value)
        return self.name(m.group(1)) if m else 1

    def name(self, name: str) -> int:
        if self._names is None:
            self._names = self._index()
        return self._names.get(_normal(name), 1)

    def _index(self) -> dict[str, int]:
        """Normalized word (and each dotted prefix of it: torch of torch.cuda) -> its first line."""
        out: dict[str, int] = {}
        seen: set[str] = set()  # a word seen again is on a later line: nothing to add
        line, last = 1, 0
        text = self.text
        for m in _RUN.finditer(text):
            word = m.group()
            if word in seen:
                continue
            seen.add(word)
            if word[0] not in _WORD_START:
                continue
            word = word.rstrip(".-")
            if len(word) > 100:
                continue  # a hash, not a name
            start = m.start()
            line += text.count("\n", last, start)
            last = start
            if "." in word:
                parts = word.split(".")
                for n in range(1, len(parts)):
                    out.setdefault(_normal(".".join(parts[:n])), line)
            out.setdefault(_normal(word), line)
        return out


_SEPARATORS = re.compile(r"[-_.]+")


def _normal(name: str) -> str:
    low = name.lower()
    return _SEPARATORS.sub("-", low) if ("-" in low or "_" in low or "." in low) else low


PARSERS: dict[str, Callable[[str], list[Dep]]] = {
    "requirements": parse_requirements,
    "pyproject": parse_pyproject,
    "setup.cfg": parse_setup_cfg,
    "setup.py": parse_setup_py,
    "environment": parse_environment,
    "pipfile": parse_pipfile,
    "pipfile.lock": parse_pipfile_lock,
    "toml-lock": parse_toml_lock,
    "conda-lock": parse_conda_lock,
}
