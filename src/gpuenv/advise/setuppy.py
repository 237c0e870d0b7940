"""What a ``setup.py`` says each platform's build compiles, read with ``ast`` and never run.

A source named only on the CUDA side of its ROCm switch (``if not IS_ROCM:``, the ``else:`` of
``if torch.version.hip:``, ``if use_cuda:`` where ``use_cuda = torch.version.cuda and ...``) is
the CUDA build's; one named outside any switch is both builds'. Paths are joined onto the
script's own directory; a list only ever removed from the sources (``not in``) is compiled by
neither. The model it fills is ``buildmodel.BuildModel``.
"""

from __future__ import annotations

import re

from gpuenv.advise.buildmodel import _PY_SOURCE, BuildModel, _join
from gpuenv.advise.regions import CUDA, HIP

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    import ast

_PY_ROCM_NAMES = re.compile(r"(?:^|_)(?:ROCM|HIP|AMD)(?:_|$)", re.IGNORECASE)
_PY_ANY_ROCM = re.compile(r"rocm|hip|amd", re.IGNORECASE)


def _test_side(test: ast.expr, flags: dict[str, str] | None = None) -> str | None:
    """HIP for a test that holds on ROCm builds only (``IS_ROCM``, ``torch.version.hip``,
    ``ROCM_HOME is not None``), CUDA for its negation (``not IS_ROCM``, ``torch.version.hip is
    None``); None for anything else (``SKIP_CUDA_BUILD``, ``BUILD_CUDA_EXT``: build at all).
    ``flags``: names the script assigned from such a test, with its side (torchao's ``use_cuda =
    torch.version.cuda and CUDA_HOME is not None``): read by what they hold, never by their name."""
    import ast

    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _test_side(test.operand, flags)
        return CUDA if inner == HIP else HIP if inner == CUDA else None
    if isinstance(test, ast.BoolOp):
        sides = [_test_side(v, flags) for v in test.values]
        if isinstance(test.op, ast.And):
            return HIP if HIP in sides else CUDA if CUDA in sides else None
        return sides[0] if len(set(sides)) == 1 else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        side = _test_side(test.left, flags)
        right = test.comparators[0]
        if side is not None and _env_read(test.left) is not None:
            # os.getenv("FORCE_CUDA", "0") == "1": set; == "0" or != "1": not set (no side)
            on = isinstance(right, ast.Constant) and right.value not in ("0", "", "false", "False", None, False, 0)
            return side if on == isinstance(test.ops[0], ast.Eq) else None
        if side is None and isinstance(right, ast.Constant) and isinstance(right.value, str):
            # BUILD_TARGET == "rocm", backend == "cuda"
            low = right.value.lower()
            name = _name_of(test.left)
            if name and ("target" in name.lower() or "backend" in name.lower()):
                side = HIP if low in ("rocm", "hip", "amd") else CUDA if low == "cuda" else None
                return side if isinstance(test.ops[0], ast.Eq) else (CUDA if side == HIP else None)
            return None
        if side is None:
            return None
        none = isinstance(right, ast.Constant) and right.value in (None, False, 0)
        negated = isinstance(test.ops[0], ast.Is | ast.Eq) == none
        return (CUDA if side == HIP else HIP) if negated else side
    if isinstance(test, ast.Call):
        env = _env_read(test)
        if env is not None:  # os.getenv("FORCE_CUDA"): a switch named for a platform
            return HIP if _PY_ROCM_NAMES.search(env) else CUDA if _PY_CUDA_NAMES.search(env) else None
        name = _name_of(test.func)
        return HIP if name and _PY_ROCM_NAMES.search(name.rsplit(".", 1)[-1]) else None
    name = _name_of(test)
    if name is None:
        return None
    if flags and name in flags:
        return flags[name]
    if name in ("torch.version.hip", "ROCM_HOME", "ROCM_PATH") or _PY_ROCM_NAMES.search(name.rsplit(".", 1)[-1]):
        return HIP
    if name == "torch.version.cuda":  # None in a ROCm build of torch
        return CUDA
    return None


_PY_CUDA_NAMES = re.compile(r"(?:^|_)CUDA(?:_|$)", re.IGNORECASE)


def _env_read(node: ast.expr) -> str | None:
    """The variable an ``os.getenv("X")`` / ``os.environ.get("X")`` call reads; None otherwise."""
    import ast

    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        name = _name_of(node.func)
        if name in ("os.getenv", "os.environ.get", "getenv", "environ.get") and isinstance(node.args[0].value, str):
            return node.args[0].value
    return None


def _name_of(node: ast.expr) -> str | None:
    import ast

    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name_of(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def read_setup_py(path: str, text: str, model: BuildModel) -> None:
    """The sources a setup.py names (string literals ending in a C/CUDA suffix), by the side of
    the ROCm switch around them; never executed."""
    import ast

    if not _PY_ANY_ROCM.search(text):
        return  # no ROCm switch to read (most setup.py files): no parse
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    base = path.rpartition("/")[0]
    found = False
    values = _Values(base)
    flags: dict[str, str] = {}
    # Lists only ever tested with `not in` (torchao's cutlass_sources, removed from the sources
    # where CUTLASS is not built): exclusions, never compiled.
    excluded = {c.id for n in ast.walk(tree) if isinstance(n, ast.Compare)
                for op, c in zip(n.ops, n.comparators, strict=False) if isinstance(op, ast.NotIn) and isinstance(c, ast.Name)}  # fmt: skip
    excluded -= {a.id for n in ast.walk(tree) if isinstance(n, ast.Call) for a in n.args if isinstance(a, ast.Name)}

    def visit(node: ast.AST, side: str | None) -> None:
        nonlocal found
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            values.assign(node, side)
            if isinstance(node, ast.Assign):
                _flag_assign(node, flags, side)
                if any(isinstance(t, ast.Name) and t.id in excluded for t in node.targets):
                    return
                if side is None and values.sources(node.value):
                    # cuda_sources = glob(...) outside any switch: a definition; what compiles it is
                    # the extension that names it, or the side that adds it to another list.
                    return
        elif isinstance(node, ast.Name) and side is not None and node.id not in excluded:
            for pattern in values.patterns.get(node.id, ()):
                model.add(side, pattern)  # sources += source_cuda, on the CUDA side of the switch
        elif isinstance(node, ast.Call) and side is None and _extension_call(node):
            # CUDAExtension("x._C", sorted(sources)) outside any switch: both builds compile what
            # the variables it reads hold as they were assigned outside the switch.
            for name in ast.walk(node):
                if isinstance(name, ast.Name) and name.id not in excluded:
                    for pattern in values.patterns.get(name.id, ()):
                        # a list made only on the CUDA side (torchao's cutlass_90a_sources) stays its
                        model.add(values.sides.get(name.id), pattern)
        if isinstance(node, ast.If):
            here = _test_side(node.test, flags)
            if here is not None:
                found = True
            for child in node.body:
                visit(child, here or side)
            # The else of `use_cuda and not IS_WINDOWS` is Windows or ROCm: not the ROCm side.
            sure = not (isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And)
                        and any(_test_side(v, flags) is None for v in node.test.values))  # fmt: skip
            other = (CUDA if here == HIP else HIP if here == CUDA else None) if sure else None
            for child in node.orelse:
                visit(child, other or side)
            return
        if isinstance(node, ast.Call) and _name_of(node.func) in _JOINS:
            # os.path.join(extensions_dir, "**/*.cu"): one path, never its pieces alone
            text = values.string(node)
            joined = _join(base, text) if text is not None and _PY_SOURCE.search(text) else None
            if joined is not None:
                model.add(side, joined)
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _PY_SOURCE.search(node.value):
            joined = _join(base, node.value)
            if joined is not None:
                model.add(side, joined)
            return
        for inner in ast.iter_child_nodes(node):
            visit(inner, side)

    visit(tree, None)
    if found:
        model.files.add(path)


_JOINS = ("os.path.join", "path.join", "join")


def _flag_assign(node: ast.Assign, flags: dict[str, str], where: str | None) -> None:
    """``use_cuda = torch.version.cuda and CUDA_HOME is not None``: the name holds the side of its
    test from here on; a name assigned anything else forgets any side it held."""
    import ast

    if isinstance(node.value, ast.Constant):
        # use_cutlass = True only inside `if use_cuda:` (False before it): set on that side alone
        side = where if node.value.value and where is not None else None
    elif any(isinstance(n, ast.Call) and _env_read(n) is not None for n in ast.walk(node.value)):
        # SKIP_CUDA_BUILD = os.getenv(...) == "TRUE": a switch a person sets, read by the tests
        # that use it (``_test_side`` keeps such names sideless), not a platform fact
        side = None
    else:
        side = _test_side(node.value, flags)
    for t in node.targets:
        if isinstance(t, ast.Name):
            if side is not None:
                flags[t.id] = side
            else:
                flags.pop(t.id, None)


def _extension_call(node: ast.Call) -> bool:
    name = _name_of(node.func)
    return name is not None and name.rsplit(".", 1)[-1].lower().endswith("extension")


class _Values:
    """What a setup.py's variables hold, read statically and in order: directory strings
    (``extensions_dir = os.path.join("xformers", "csrc")``) and source patterns
    (``source_cuda = glob.glob(os.path.join(extensions_dir, "**", "*.cu"), recursive=True)``). A
    list extended inside a switch (``sources += source_cuda`` under ``if torch.version.cuda``) is
    that side's, not the variable's: the names it reads carry their patterns to the side."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.strings: dict[str, str] = {}
        self.patterns: dict[str, set[str]] = {}
        self.sides: dict[str, str | None] = {}  # the side of the switch each list was made on

    def assign(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign, side: str | None) -> None:
        import ast

        value = node.value
        if value is None:
            return
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        text = self.string(value)
        if text is not None:
            for n in names:
                self.strings[n] = text
            return
        if isinstance(node, ast.AugAssign) and side is not None:
            return  # what it adds is read as names on that side by the visit
        found = self.sources(value)
        for n in names:
            if isinstance(node, ast.AugAssign):
                self.patterns.setdefault(n, set()).update(found)
            elif found:
                self.patterns[n] = found
                if not any(isinstance(r, ast.Name) and r.id == n for r in ast.walk(value)):
                    # sources = [s for s in sources if ...] on one side keeps the list's own side
                    self.sides[n] = side

    def string(self, node: ast.expr) -> str | None:
        """A path string: a constant, a variable holding one, os.path.join of them."""
        import ast

        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if _script_dir(node):
            return ""  # os.path.dirname(os.path.abspath(__file__)): where setup.py lies, its base
        if isinstance(node, ast.Name):
            return self.strings.get(node.id)
        if isinstance(node, ast.Call) and _name_of(node.func) in _JOINS and node.args:
            parts = [self.string(a) for a in node.args]
            return "/".join(p for p in parts if p) if all(p is not None for p in parts) else None
        return None

    def sources(self, node: ast.expr) -> set[str]:
        """The root-relative source patterns an expression holds."""
        import ast

        if isinstance(node, ast.Call):
            name = _name_of(node.func) or ""
            if name.rsplit(".", 1)[-1] in ("glob", "iglob") and node.args:
                text = self.string(node.args[0])
                joined = _join(self.base, text) if text is not None and _PY_SOURCE.search(text) else None
                return {joined} if joined else set()
            if name in ("list", "set", "sorted", "tuple") and node.args:
                return self.sources(node.args[0])
            return set()
        if isinstance(node, ast.BinOp):
            left = self.sources(node.left)
            return left if isinstance(node.op, ast.Sub) else left | self.sources(node.right)
        if isinstance(node, ast.Name):
            return set(self.patterns.get(node.id, ()))
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return set().union(*(self.sources(e) for e in node.elts)) if node.elts else set()
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return self.sources(node.generators[0].iter)
        return set()


def _script_dir(node: ast.expr) -> bool:
    """Whether an expression is the setup script's own directory, where ``pip`` runs it:
    ``os.path.dirname(os.path.abspath(__file__))``, ``Path(__file__).parent``, ``os.getcwd()``,
    ``os.path.curdir`` (and ``dirname`` of it, pytorch/ao's ``os.path.dirname(os.path.curdir)``)."""
    import ast

    if isinstance(node, ast.Attribute) and node.attr in ("parent", "resolve"):
        return _script_dir(node.value) or _is_file_name(node.value)
    name = _name_of(node)
    if name in ("os.path.curdir", "os.curdir", "curdir"):
        return True
    if not isinstance(node, ast.Call):
        return False
    func = _name_of(node.func) or ""
    last = func.rsplit(".", 1)[-1]
    if last in ("getcwd", "cwd") and not node.args:
        return True
    if last in ("resolve", "absolute") and isinstance(node.func, ast.Attribute):
        return _script_dir(node.func.value) or _is_file_name(node.func.value)
    if not node.args or len(node.args) != 1:
        return False
    arg = node.args[0]
    if last == "dirname":
        return _is_file_name(arg) or _script_dir(arg)
    if last in ("abspath", "realpath", "normpath", "Path"):
        return _script_dir(arg)
    return False


def _is_file_name(node: ast.expr) -> bool:
    """``__file__``, or it made absolute (``os.path.abspath(__file__)``, ``Path(__file__)``)."""
    import ast

    if isinstance(node, ast.Name):
        return node.id == "__file__"
    if isinstance(node, ast.Call) and len(node.args) == 1:
        last = (_name_of(node.func) or "").rsplit(".", 1)[-1]
        return last in ("abspath", "realpath", "normpath", "Path") and _is_file_name(node.args[0])
    if isinstance(node, ast.Attribute) and node.attr in ("resolve", "absolute"):
        return _is_file_name(node.value)
    return False
