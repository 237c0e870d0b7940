"""`gpuenv advise` on kernels compiled at run time behind Python's platform switches, on headers a
project includes through its own include directory, and on namespace subpackages (shapes of
issue 41's grown set, written here, not copied). Each rule beside the same tree where it must not
apply: a use outside the switch, a switch whose definition does not exclude ROCm, a loader that
compiles at import, a bare <header.h>, a script outside any package."""

from __future__ import annotations

import ast

import pytest

from tests.test_advise_builds import PTX, run_json, uncounted
from tests.test_advise_rules import tree

ROCM_DOCKERFILE = "FROM rocm/dev-ubuntu-22.04:6.2\nRUN pip install .\n"
LOADER = ('from srv.jit.build import load_jit\n\n\ndef _module():\n'
          '    return load_jit("cache", cuda_files=["cache/copy.cuh"])\n\n\n'
          'def probe():\n    return _module() is not None\n\n\n'
          'def transfer(x):\n    return _module()(x)\n')  # fmt: skip
PLATFORM = ("import torch\n\n\ndef is_cuda():\n    return torch.cuda.is_available() and torch.version.cuda is not None\n\n\n"
            "def is_hip() -> bool:\n    return torch.version.hip is not None\n")  # fmt: skip
GUARDED = """from srv.jit.cache import probe, transfer
from srv.utils import is_cuda

_is_cuda = is_cuda()


class Pool:
    def __init__(self):
        self.use_jit = _is_cuda and probe()

    def load(self, x):
        if self.use_jit:
            return transfer(x)
        return x.copy()
"""
HANDLED = "already handled by the ROCm build: compiled at run time only on the CUDA side of a platform switch (srv/pool.py:"


def _files(pool: str = GUARDED, platform: str = PLATFORM) -> dict[str, str]:
    return {"pyproject.toml": '[project]\nname = "srv"\n', "srv/__init__.py": "", "Dockerfile.rocm": ROCM_DOCKERFILE,
            "srv/jit/__init__.py": "", "srv/jit/build.py": "def load_jit(name, cuda_files):\n    return name\n",
            "srv/jit/cache.py": LOADER, "srv/jit/csrc/cache/copy.cuh": PTX,
            # the predicates live in a module the package re-exports with a star import
            "srv/utils/__init__.py": "from srv.utils.platform import *\n", "srv/utils/platform.py": platform,
            "srv/pool.py": pool}  # fmt: skip


def _handled(doc: dict) -> str:
    (f,) = [f for f in doc["findings"] if f["rule"] == "construct:inline-ptx"]
    return f["handled"] or ""


def test_a_kernel_only_the_cuda_side_of_a_platform_switch_compiles_is_the_cuda_builds(tmp_path):
    """sglang's HiCache shape: the loader compiles its .cuh when called; the core calls it only
    behind ``_is_cuda and probe()`` and ``if self.use_jit:``, where ``_is_cuda`` comes from a
    function returning ``torch.cuda.is_available() and torch.version.cuda is not None`` (None
    under ROCm's PyTorch). The other branch is the ROCm path: the kernel is already handled."""
    code, doc = run_json(tree(tmp_path / "guarded", _files()))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    assert _handled(doc).startswith(HANDLED + "9)")


@pytest.mark.parametrize("name, pool", [
    ("unguarded", GUARDED.replace("        if self.use_jit:\n            return transfer(x)\n", "        return transfer(x)\n")),
    ("flag set elsewhere", GUARDED + "\n\ndef force(pool):\n    pool.use_jit = True\n"),
    ("passed on", GUARDED.replace("return transfer(x)", "return x").replace("from srv.jit.cache import probe, transfer",
                                                                             "from srv.jit.cache import probe, transfer  # noqa")),
    ("star import", GUARDED.replace("from srv.jit.cache import probe, transfer", "from srv.jit.cache import *")),
])  # fmt: skip
def test_a_use_outside_the_switch_keeps_the_kernel_core(tmp_path, name, pool):
    """The same tree, with one use of the loader that the ROCm build may reach: called outside the
    switch; the flag also set to True elsewhere in the file; an imported name never used there
    (it may be passed on); a star import. Each leaves the kernel counted."""
    code, doc = run_json(tree(tmp_path / "t", _files(pool)))
    assert (code, doc["verdict"]) == (1, "portable-with-work"), name
    assert uncounted(doc) == {"srv/jit/csrc/cache/copy.cuh"}


def test_the_switch_is_read_from_its_definition_not_its_name(tmp_path):
    """``is_cuda`` returning ``torch.cuda.is_available()`` alone holds on ROCm too (its PyTorch
    keeps the torch.cuda API): the branch is no CUDA side, whatever the function is called."""
    loose = PLATFORM.replace("torch.cuda.is_available() and torch.version.cuda is not None", "torch.cuda.is_available()")
    code, doc = run_json(tree(tmp_path / "t", _files(platform=loose)))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"srv/jit/csrc/cache/copy.cuh"}
    config = GUARDED.replace("_is_cuda = is_cuda()", "_is_cuda = read_config()")
    code, doc = run_json(tree(tmp_path / "c", _files(config)))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"srv/jit/csrc/cache/copy.cuh"}


@pytest.mark.parametrize("pool", [
    "from srv.jit.cache import transfer\nfrom srv.utils import is_hip\n\n\ndef load(x):\n"
    "    if not is_hip():\n        return transfer(x)\n    return x.copy()\n",
    "import srv.jit.cache as jit\nfrom srv.utils import is_hip\n\n_is_hip = is_hip()\n\n\ndef load(x):\n"
    "    if _is_hip:\n        return x.copy()\n    return jit.transfer(x)\n",
    "from srv.jit import cache\nfrom srv.utils import is_hip\n\n\ndef load(x):\n"
    "    if is_hip():\n        return x.copy()\n    else:\n        return cache.transfer(x)\n",
])  # fmt: skip
def test_the_other_shapes_of_a_switch(tmp_path, pool):
    """``if not is_hip():``; the statements after ``if _is_hip: return ...`` (the module imported
    under an alias); the ``else:`` of ``if is_hip():`` (the module imported from its package)."""
    code, doc = run_json(tree(tmp_path / "t", _files(pool)))
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    assert _handled(doc).startswith(HANDLED)


def test_a_loader_that_compiles_at_import_is_core_whatever_guards_its_calls(tmp_path):
    files = _files()
    files["srv/jit/cache.py"] = LOADER + "\n\n_MODULE = _module()\n"
    code, doc = run_json(tree(tmp_path / "t", files))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"srv/jit/csrc/cache/copy.cuh"}


def test_without_a_rocm_build_of_its_own_the_switch_proves_nothing(tmp_path):
    """No ROCm build in the tree: nothing says its other branch runs on ROCm."""
    files = {k: v for k, v in _files().items() if k != "Dockerfile.rocm"}
    code, doc = run_json(tree(tmp_path / "t", files))
    assert doc["verdict"] == "cuda-only"


def test_values_under_rocm_of_platform_tests():
    from gpuenv.advise.switches import Reader

    defs = ("import torch\nA = torch.version.hip\nB = not torch.version.cuda\nC = A or read()\nD = read() and B\n"
            "E = torch.version.hip is None\nF = bool(torch.version.cuda)\n")  # fmt: skip
    reader = Reader(lambda path: defs, lambda written, importer: [])

    def value(src: str) -> bool | None:
        return reader.value("m.py", ast.parse(src, mode="eval").body)[0]

    assert [value(n) for n in "ABCDEF"] == [True, True, True, None, False, False]
    assert value("torch.version.cuda is not None") is False and value("torch.version.hip is not None") is True
    assert value("torch.cuda.is_available()") is None and value("not read()") is None
    assert value("torch.cuda.is_available() and torch.version.cuda") is False



def test_a_name_bound_again_any_other_way_is_unknown():
    """Every binding of a name must agree: a loop variable, an augmented assignment, a ``with``
    target, a tuple target or an argument of the same name leaves a platform value unknown; a
    second assignment of the same value does not."""
    from gpuenv.advise.switches import Reader

    defs = "import torch\n" + "".join(f"{n} = torch.version.hip\n" for n in "ABCDEHK") + (
        "for A in x:\n    pass\nB += 1\nwith f() as C:\n    pass\nD, y = 1, 2\ndef g(E):\n    return E\n"
        "H: bool = bool(torch.version.hip)\n")  # fmt: skip
    reader = Reader(lambda path: defs, lambda written, importer: [])
    got = [reader.value("m.py", ast.parse(n, mode="eval").body)[0] for n in "ABCDEHK"]
    assert got == [None, None, None, None, None, True, True]


def test_a_file_judged_is_read_once_for_its_text_and_its_tree():
    """The uses of a loader are found from an importer's text and its parse: one read of the file."""
    from gpuenv.advise.switches import Reader

    reads: list[str] = []

    def read(path: str) -> str:
        reads.append(path)
        return GUARDED

    reader = Reader(read, lambda written, importer: [])
    assert reader.text("a.py") == GUARDED and reader.tree("a.py") is not None and reader.text("a.py") == GUARDED
    assert reads == ["a.py"]


JIT_INCLUDING = ('from srv.jit.build import load_jit\n\n\ndef _module():\n'
                 '    return load_jit("ar", cuda_files=["ar/reduce.cuh"])\n')  # fmt: skip


@pytest.mark.parametrize("written, counted", [("<srv_kernel/comm/common.cuh>", set()),
                                              ("<common.cuh>", {"srv/jit/include/srv_kernel/comm/common.cuh"})])
def test_a_header_included_through_the_projects_include_directory(tmp_path, written, counted):
    """sglang's ``#include <sgl_kernel/distributed/common.cuh>``: an angle-bracket include with a
    directory that ends a path of the tree is the project's own header, an edge of the include
    graph like a quoted one; the header only an optional kernel includes is optional with it. A
    bare ``<common.cuh>`` may be any system header: not followed, the header stays core."""
    files = {"pyproject.toml": '[project]\nname = "srv"\n', "srv/__init__.py": "", "Dockerfile.rocm": ROCM_DOCKERFILE,
             "srv/jit/__init__.py": "", "srv/jit/build.py": "def load_jit(name, cuda_files):\n    return name\n",
             "srv/jit/ar.py": JIT_INCLUDING, "srv/jit/csrc/ar/reduce.cuh": f"#include {written}\n" + PTX,
             "srv/jit/include/srv_kernel/comm/common.cuh": PTX,
             "srv/comm.py": "def reduce():\n    from srv.jit.ar import _module\n    return _module()\n"}  # fmt: skip
    code, doc = run_json(tree(tmp_path / "t", files))
    assert uncounted(doc) == counted
    assert doc["verdict"] == ("portable" if not counted else "portable-with-work")


def test_a_directory_below_a_package_is_part_of_it(tmp_path):
    """sglang/srt/ has no __init__.py under sglang/ that has one: a namespace subpackage, found by
    setuptools' pyproject configuration and imported as sglang.srt.x, so its modules are the
    package's. A script directory outside any package stays apart."""
    files = {"pyproject.toml": '[project]\nname = "srv"\n', "srv/__init__.py": "",
             "srv/engine/run.py": "import flashinfer\n", "tools/run.py": "import flashinfer\n"}  # fmt: skip
    code, doc = run_json(tree(tmp_path / "t", files))
    assert doc["verdict"] == "cuda-only" and uncounted(doc) == {"srv/engine/run.py"}
    assert [p["part"] for p in doc["optional_parts"]] == ["tools/ (scripts outside the Python package)"]


COORD = "from srv.jit.cache import transfer\n\n\nclass Coordinator:\n    def step(self, x):\n        return transfer(x)\n"
SCHED = ("from typing import Optional\n\nfrom srv.coord import Coordinator\n\n\nclass Scheduler:\n"
         "    def __init__(self, enabled: bool):\n        self.coord: Optional[Coordinator] = None\n\n"
         "    def attach(self, coord: Coordinator) -> Coordinator:\n        self.coord = coord\n        return coord\n")  # fmt: skip
RUNNER = ("class Runner:\n    def __init__(self, enable_sparse: bool):\n        if enable_sparse:\n"
          "            from srv.coord import Coordinator\n\n            self.coord = Coordinator()\n")  # fmt: skip


@pytest.mark.parametrize("sched, counted", [
    (SCHED, False),
    (SCHED + "\n\nDEFAULT = Coordinator()\n", True),
    (SCHED.replace("        self.coord = coord\n", "        assert isinstance(coord, Coordinator)\n        self.coord = coord\n"), True),
])  # fmt: skip
def test_a_module_the_core_imports_only_for_annotations_runs_only_where_it_is_imported_for_use(tmp_path, sched, counted):
    """sglang's HiSparse shape: the loader's importer calls it unguarded, but that importer is
    itself imported at module level only for type annotations (``Optional[Coordinator]``); the
    one import that uses it sits inside ``if enable_sparse:``. A kernel compiled when called is
    then compiled only by optional code, beside the project's ROCm build. Built at import, or
    used otherwise (``isinstance``), it is core."""
    files = {**_files(), "srv/coord.py": COORD, "srv/sched.py": sched, "srv/runner.py": RUNNER}
    del files["srv/pool.py"]
    code, doc = run_json(tree(tmp_path / "t", files))
    if counted:
        assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"srv/jit/csrc/cache/copy.cuh"}
        return
    assert (code, doc["verdict"]) == (0, "portable"), doc["reasons"]
    (f,) = [f for f in doc["findings"] if f["rule"] == "construct:inline-ptx"]
    assert f["optional"] == ("srv/jit/csrc/cache/ (compiled at run time only by optional code (srv/jit/cache.py, imported by "
                             "srv/coord.py: called only where imported inside try:/if:/a function (srv/runner.py); "
                             "srv/sched.py imports it for annotations only))")  # fmt: skip


def test_a_switch_nested_past_the_recursion_limit_is_no_switch(tmp_path):
    """A generated or hostile file: ``not not ... is_cuda()`` 2,400 deep parses, but reading its
    value would pass the interpreter's recursion limit. No traceback: the kernel stays core."""
    deep = GUARDED.replace("_is_cuda = is_cuda()", "_is_cuda = " + "not " * 2400 + "is_cuda()")
    code, doc = run_json(tree(tmp_path / "t", _files(deep)))
    assert doc["verdict"] == "portable-with-work" and uncounted(doc) == {"srv/jit/csrc/cache/copy.cuh"}


@pytest.mark.parametrize("order", [["pk/", "pk/cute/"], ["pk/cute/", "pk/"]])
def test_a_file_in_nested_packages_is_named_for_the_nearest(order):
    """flash-attention's flash_attn/ and flash_attn/cute/ each have a pyproject.toml: a file in the
    inner one is that package's, whatever order the set of packages comes in (a set of strings
    iterates in a different order in every interpreter)."""
    from gpuenv.advise.parts import optional_part

    assert optional_part("pk/cute/fwd.py", order, {}) == "pk/cute/ (a package of its own: setup.py or pyproject.toml)"  # type: ignore[arg-type]
