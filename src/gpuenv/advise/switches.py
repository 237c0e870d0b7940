"""Python's run-time platform switches: code a ROCm build of PyTorch never runs.

A kernel compiled at run time (a Python module that names a .cu/.cuh and compiles it when one of
its functions is called) runs only where the project calls that module. When every call the core
makes sits on the CUDA side of a platform switch (``if _is_cuda:``, ``_is_cuda and load()``, the
``else:`` of ``if is_hip():``, after ``if is_hip(): return ...``), the ROCm build never compiles
it: the other branch is the ROCm path, and the kernel is already handled by the ROCm build.

A switch is recognised from how it is defined, never from its name: a test is read for its value
under a ROCm build of PyTorch, where ``torch.version.hip`` is a version string and
``torch.version.cuda`` is None (PyTorch's HIP build, torch/version.py). A name, ``self.x``
attribute or call takes the value of its definition: an assignment in the same file (every
assignment of the name, or of an attribute of that name on any object, must agree), or a
function whose body is one ``return`` (``def is_cuda(): return torch.cuda.is_available() and
torch.version.cuda is not None``), found in the same file or through the module-level imports
that bring it in (``from pkg.utils import *`` followed). Anything else is unknown, and unknown
is never the CUDA side: ``torch.cuda.is_available()`` alone holds on ROCm too. Nothing is
executed; files are parsed with ``ast``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

# A value under ROCm: (truthy, is None), each True, False or None (unknown).
Value = tuple[bool | None, bool | None]
_UNKNOWN: Value = (None, None)
_ATOMS: dict[str, Value] = {"torch.version.hip": (True, False), "torch.version.cuda": (False, True)}
_TREES_KEPT = 4
_DEPTH = 4  # imports followed to a definition (a package's __init__ re-exporting a module's names)


@dataclass
class _Module:
    """One parsed file: what each name is assigned, its one-return functions, and the
    modules its names come from (``from X import n`` / ``from X import *``)."""

    assigned: dict[str, list[ast.expr | None]] = field(default_factory=dict)  # None: a non-simple binding
    returns: dict[str, ast.expr | None] = field(default_factory=dict)  # function -> its one return, None: more
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module as written, name)
    stars: list[str] = field(default_factory=list)


class Reader:
    """Parses the tree's Python files on demand (``read`` gives their text, None when unreadable)
    and resolves imports with ``resolve`` (module as written, importer path -> file paths)."""

    def __init__(self, read: Callable[[str], str | None], resolve: Callable[[str, str], list[str]]) -> None:
        self._read, self.resolve = read, resolve
        self._modules: dict[str, _Module | None] = {}  # the definitions of every file read
        self._values: dict[tuple[str, str], Value] = {}
        self._trees: dict[str, ast.Module | None] = {}  # the last _TREES_KEPT parsed, oldest first
        self._texts: dict[str, str | None] = {}  # the last _TREES_KEPT read: a file is read once for both

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            if len(self._texts) >= _TREES_KEPT:
                del self._texts[next(iter(self._texts))]
            self._texts[path] = self._read(path)
        return self._texts[path]

    def tree(self, path: str) -> ast.Module | None:
        """The file parsed (its definitions indexed on the way), None when it cannot be. The last
        few trees are kept: an importer of several loaders is read for each."""
        if path in self._trees:
            return self._trees[path]
        text = self.text(path)
        try:
            tree = ast.parse(text) if text is not None else None
        except (SyntaxError, ValueError, RecursionError):
            tree = None
        if path not in self._modules:
            self._modules[path] = _index(tree, ":=" in text) if tree is not None and text is not None else None
        if len(self._trees) >= _TREES_KEPT:
            del self._trees[next(iter(self._trees))]
        self._trees[path] = tree
        return tree

    def module(self, path: str) -> _Module | None:
        if path not in self._modules:
            self.tree(path)
        return self._modules[path]

    def value(self, path: str, expr: ast.expr, seen: frozenset[tuple[str, str]] = frozenset()) -> Value:
        """What ``expr``, written in ``path``, is under a ROCm build of PyTorch."""
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            truth = self.value(path, expr.operand, seen)[0]
            return (None if truth is None else not truth), False
        if isinstance(expr, ast.BoolOp):
            truths = [self.value(path, v, seen)[0] for v in expr.values]
            stop = isinstance(expr.op, ast.Or)  # the value that decides: True for or, False for and
            if stop in truths:
                return stop, None
            return (not stop if all(t is not None for t in truths) else None), None
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], ast.Is | ast.IsNot | ast.Eq | ast.NotEq):
            right = expr.comparators[0]
            if isinstance(right, ast.Constant) and right.value is None:
                none = self.value(path, expr.left, seen)[1]
                if none is None:
                    return _UNKNOWN
                return (none if isinstance(expr.ops[0], ast.Is | ast.Eq) else not none), False
            return _UNKNOWN
        if isinstance(expr, ast.Call) and not expr.args and not expr.keywords and isinstance(expr.func, ast.Name):
            return self._named(path, expr.func.id, True, seen)
        if isinstance(expr, ast.Call) and len(expr.args) == 1 and isinstance(expr.func, ast.Name) and expr.func.id == "bool":
            return self.value(path, expr.args[0], seen)[0], False
        dotted = _dotted(expr)
        if dotted is None:
            return _UNKNOWN
        if dotted in _ATOMS:
            return _ATOMS[dotted]
        if "." not in dotted:
            return self._named(path, dotted, False, seen)
        if dotted.startswith("self.") and dotted.count(".") == 1:
            return self._named(path, dotted[4:], False, seen)
        return _UNKNOWN

    def _named(self, path: str, name: str, called: bool, seen: frozenset[tuple[str, str]], depth: int = 0) -> Value:
        """A name's value (or, ``called``, its function's return) from its definition."""
        key = (path, name + "()" * called)
        if key in self._values:
            return self._values[key]
        module = self.module(path)
        if module is None or key in seen or depth > _DEPTH:
            return _UNKNOWN
        got = self._values[key] = self._definition(module, path, name, called, seen | {key}, depth)
        return got

    def _definition(self, module: _Module, path: str, name: str, called: bool, seen: frozenset[tuple[str, str]],
                    depth: int) -> Value:  # fmt: skip
        if called:
            if name in module.returns:
                body = module.returns[name]
                return self.value(path, body, seen) if body is not None else _UNKNOWN
        elif name in module.assigned and name not in module.imported:
            values = [self.value(path, v, seen) if v is not None else _UNKNOWN for v in module.assigned[name]]
            return values[0] if all(v == values[0] for v in values) else _UNKNOWN
        if name in module.assigned or name in module.returns or name.startswith("."):
            # bound here some other way (a function's value, or imported and assigned both)
            return _UNKNOWN
        if name in module.imported:
            written, original = module.imported[name]
            found = [self._named(p, original, called, seen, depth + 1) for p in self.resolve(written, path)]
            return found[0] if len(found) == 1 else _UNKNOWN
        stars = {self._named(p, name, called, seen, depth + 1) for w in module.stars for p in self.resolve(w, path)}
        stars.discard(_UNKNOWN)  # modules that do not define it (or not knowably)
        return stars.pop() if len(stars) == 1 else _UNKNOWN


def _dotted(expr: ast.expr) -> str | None:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def _statements(body: list[ast.stmt], parent: ast.AST | None = None) -> Iterator[tuple[ast.stmt, ast.AST | None]]:
    """Every statement, nested ones too (in try handlers and match cases), with what holds it:
    walking statements only, not every expression node, is what keeps this fast."""
    for stmt in body:
        yield stmt, parent
        for _, value in ast.iter_fields(stmt):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield from _statements(value, stmt)
            elif isinstance(value, list) and value and isinstance(value[0], ast.excepthandler | ast.match_case):
                for holder in value:
                    yield from _statements(holder.body, stmt)


def _index(tree: ast.Module, walrus: bool) -> _Module:
    """The definitions of a file. Names bound inside expressions (lambda and comprehension
    variables) are local to them; only ``:=`` binds outside, and only then is every node read."""
    module = _Module()
    nodes = ast.walk(tree) if walrus else (stmt for stmt, _ in _statements(tree.body))
    for node in nodes:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                name = _key(t)
                if name is not None and (len(targets) == 1 and node.value is not None):
                    module.assigned.setdefault(name, []).append(node.value)
                elif name is not None:
                    module.assigned.setdefault(name, []).append(None)
                else:
                    _unknown_targets(t, module)
        elif isinstance(node, ast.AugAssign | ast.For | ast.AsyncFor | ast.NamedExpr):
            _unknown_targets(node.target, module)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    _unknown_targets(item.optional_vars, module)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x is not None)]:
                module.assigned.setdefault(arg.arg, []).append(None)
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            one = body[0] if len(body) == 1 and isinstance(body[0], ast.Return) else None
            known = node.name not in module.returns
            module.returns[node.name] = one.value if one is not None and known else None
        elif isinstance(node, ast.ImportFrom) and node.col_offset == 0:
            written = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    module.stars.append(written)
                else:
                    module.imported[alias.asname or alias.name] = (written, alias.name)
    return module


def _key(target: ast.AST) -> str | None:
    """What an assignment binds: a name, or an attribute by its name alone (``self.use_jit`` and
    ``pool.use_jit = True`` are one attribute: the object is not followed)."""
    if isinstance(target, ast.Name):
        return target.id
    return "." + target.attr if isinstance(target, ast.Attribute) else None


def _unknown_targets(target: ast.expr, module: _Module) -> None:
    for n in ast.walk(target):
        name = _key(n)
        if name is not None:
            module.assigned.setdefault(name, []).append(None)


def _uses(tree: ast.Module, text: str, names: set[str]) -> tuple[list[ast.Name], dict[ast.AST, ast.AST]] | None:
    """The uses of ``names`` in a file (loaded, as a name or the base of an attribute) and the
    parents of the nodes read; None when a name is never used (it may be passed on). Only the
    statements on lines that spell a name are read node by node."""
    spelled = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    lines, line, last = set(), 1, 0
    for m in spelled.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        lines.add(line)
    parents: dict[ast.AST, ast.AST] = {}
    uses = []
    for stmt, holder in _statements(tree.body, tree):
        parents[stmt] = holder if holder is not None else tree
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        if not any(n in lines for n in range(start, (stmt.end_lineno or stmt.lineno) + 1)):
            continue
        for _, value in ast.iter_fields(stmt):  # the statement's own expressions, not its body
            for part in value if isinstance(value, list) else [value]:
                if not isinstance(part, ast.AST) or isinstance(part, ast.stmt | ast.excepthandler | ast.match_case):
                    continue
                parents[part] = stmt
                for node in ast.walk(part):
                    for child in ast.iter_child_nodes(node):
                        parents[child] = node
                    if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
                        uses.append(node)
    return (uses, parents) if {u.id for u in uses} == names else None


def _annotation(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` sits in a type annotation (of an argument, a return, a variable): code
    there names a class, and never calls into its module."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if (isinstance(parent, ast.arg | ast.AnnAssign) and child is parent.annotation
                or isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef) and child is parent.returns):  # fmt: skip
            return True
        child, parent = parent, parents.get(parent)
    return False


def _cuda_side(reader: Reader, path: str, node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether only the CUDA side of a switch reaches ``node``: the branch of an ``if`` (or ``x if
    t else y``) that ROCm does not take, an operand of ``and``/``or`` after one that decides it
    there, or a statement after ``if <true on ROCm>: return/raise`` in its block."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.If | ast.IfExp) and child is not parent.test:
            taken = child in parent.body if isinstance(parent, ast.If) else child is parent.body
            truth = reader.value(path, parent.test)[0]
            if truth is (not taken):
                return True
        elif isinstance(parent, ast.BoolOp):
            stop = isinstance(parent.op, ast.Or)  # and: a False before it; or: a True
            before = parent.values[: parent.values.index(child)]  # type: ignore[arg-type]
            if any(reader.value(path, v)[0] is stop for v in before):
                return True
        if isinstance(child, ast.stmt):
            for _, block in ast.iter_fields(parent):
                if isinstance(block, list) and child in block and any(_returns_on_rocm(reader, path, s)
                                                                     for s in block[: block.index(child)]):
                    return True
        child, parent = parent, parents.get(parent)
    return False


def _returns_on_rocm(reader: Reader, path: str, stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], ast.Return | ast.Raise)
            and reader.value(path, stmt.test)[0] is True)  # fmt: skip


_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)", re.MULTILINE)


def _spelled_call(text: str, module: str) -> bool:
    """Whether ``text`` calls, or reads an attribute of, a name it takes with ``from ... <module's
    name> import`` (a quick look before parsing: a comment that spells one only costs the rule)."""
    stem = module[: -len("/__init__.py")] if module.endswith("/__init__.py") else module[: -len(".py")]
    stem = stem.rsplit("/", 1)[-1]
    names = set()
    for m in _FROM_IMPORT.finditer(text):
        if m.group(1).rsplit(".", 1)[-1] == stem:
            for item in m.group(2).strip("()").split(","):
                words = item.split("#", 1)[0].split()
                if words:
                    names.add(words[-1])
    return bool(names) and re.search(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")[ \t]*[(.]", text) is not None
Users = dict[str, list[tuple[str, bool]]]  # module path -> (importer, lazy) of each import of it


def run_time_callers(reader: Reader, loader: str, named: list[str], users: Users,
                     why_of: Callable[[str], str]) -> tuple[str, str]:  # fmt: skip
    """``_run_time_callers``; a test nested past the interpreter's recursion limit (a hostile or
    generated file) is no switch, and the kernel stays core."""
    try:
        return _run_time_callers(reader, loader, named, users, why_of)
    except RecursionError:
        return "", ""


def _run_time_callers(reader: Reader, loader: str, named: list[str], users: Users,
                      why_of: Callable[[str], str]) -> tuple[str, str]:  # fmt: skip
    """Whether the core ever calls ``loader``, a module that compiles its kernel only when called
    (``named``: the sources it names), judged by each core module importing it: ("cuda", where)
    when every use sits on the CUDA side of a platform switch; ("optional", why) when the rest of
    the importers are themselves run only by optional code (``dormant``); ("", "") otherwise (no
    core importer: an entry point; an ``__init__`` passing names on; a star import; a use outside
    a switch; a file that cannot be read)."""
    core = sorted({i for i, _ in users.get(loader, ()) if not why_of(i)})
    if not core or any(i.endswith("__init__.py") for i in core):
        return "", ""
    tree = reader.tree(loader)
    module = reader.module(loader)
    if tree is None or module is None or not _compiles_when_called(tree, module, tuple(named)):
        return "", ""
    kind, where = "cuda", ""
    for importer in core:
        found = _read_uses(reader, importer, loader)
        if found is None:
            return "", ""
        uses, parents = found
        if all(_cuda_side(reader, importer, u, parents) for u in uses):
            where = where or f"{importer}:{min(u.lineno for u in uses)}"
            continue
        why = dormant(reader, importer, users, why_of)
        if not why:
            return "", ""
        kind, where = "optional", f"{importer}: {why}"
    return kind, where


def _read_uses(reader: Reader, importer: str, module: str) -> tuple[list[ast.Name], dict[ast.AST, ast.AST]] | None:
    text = reader.text(importer)
    tree = reader.tree(importer)
    names = _bound(reader, tree, importer, module) if tree is not None else None
    return _uses(tree, text, names) if tree is not None and text and names else None


def dormant(reader: Reader, module: str, users: Users, why_of: Callable[[str], str]) -> str:
    """Why no core code runs the functions of ``module``, a core module by the import graph: every
    core module importing it at module level uses what it takes only in type annotations
    (``x: Optional[Coordinator] = None``), so only its lazy importers (inside ``if``/``try``/a
    function) can call it; "" when one uses it otherwise, or nothing imports it."""
    found = users.get(module, ())
    eager = sorted({i for i, lazy in found if not lazy and not why_of(i)})
    if not eager or any(i.endswith("__init__.py") for i in eager):
        return ""
    if any(_spelled_call(reader.text(i) or "", module) for i in eager):
        return ""  # a call or attribute of a name taken from it, spelled out: no parse needed to know
    if not all(_annotations_only(reader, importer, module) for importer in eager):
        return ""
    for importer in sorted({i for i, lazy in found if lazy and not why_of(i)} - set(eager)):
        if not _annotations_only(reader, importer, module):
            return f"called only where imported inside try:/if:/a function ({importer}); {eager[0]} imports it for annotations only"
    return f"called by no core module: {eager[0]} imports it for annotations only"


def _annotations_only(reader: Reader, importer: str, module: str) -> bool:
    """Whether ``importer`` uses what it takes from ``module`` in type annotations alone."""
    got = _read_uses(reader, importer, module)
    return got is not None and all(_annotation(u, got[1]) for u in got[0])


def _compiles_when_called(tree: ast.Module, module: _Module, named: tuple[str, ...]) -> bool:
    """Whether the loader names its sources only inside functions, and runs none of its own
    functions at import (module level, class bodies and decorators run then)."""
    own = set(module.returns)

    def runs_at_import(node: ast.AST) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith(named):
                return True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in own:
                return True
        return False

    def clean(body: list[ast.stmt]) -> bool:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if any(runs_at_import(d) for d in stmt.decorator_list):
                    return False
                if isinstance(stmt, ast.ClassDef) and not clean(stmt.body):
                    return False
            elif runs_at_import(stmt):
                return False
        return True

    return clean(tree.body)


def _bound(reader: Reader, tree: ast.Module, importer: str, loader: str) -> set[str] | None:
    """The names ``importer`` binds to ``loader`` or to what it imports from it; None for a star import."""
    names: set[str] = set()
    for node, _ in _statements(tree.body):
        if isinstance(node, ast.ImportFrom):
            written = "." * node.level + (node.module or "")
            whole = loader in reader.resolve(written, importer)
            for alias in node.names:
                if whole and alias.name == "*":
                    return None
                sub = written + alias.name if written.endswith(".") else f"{written}.{alias.name}"
                if whole or loader in reader.resolve(sub, importer):
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if loader in reader.resolve(alias.name, importer):
                    names.add(alias.asname or alias.name.split(".")[0])
    return names
