"""What the interactive commands import (issue "Speed"): heavy modules stay off their path.

Not a timed test (timings live in bench/): the modules a command loads are a fact, the same on
every machine. Each module named here cost more than the work it was imported for
(bench/bench_all.py measured the commands before and after).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FACTS = Path(__file__).parent / "facts"
PLAN_FACTS = FACTS / "plan-ubuntu2404-rx9070-cuda-leftovers.json"

# rich: ~40 ms; pathlib pulls urllib.parse and ipaddress; shutil pulls zlib, bz2 and lzma;
# typing, dataclasses, importlib.util: kept off since the first speed pass; hashlib loads
# OpenSSL (gpuenv.standins.checksum uses the built-in sha256); fnmatch compiles a regex per pattern;
# importlib (gpuenv.import_module does its one job) and collections.abc (annotations only) cost
# half a millisecond each; struct is a shared library to load on a pyenv or conda Python (the
# ld.so.cache reader casts a memoryview instead); locale, a millisecond of alias tables, is what
# argparse's gettext lookups of its own words imported (gpuenv.cli skips those lookups);
# _colorize (with dataclasses, inspect and ast, ~12 ms) is what Python 3.14's argparse imports to
# colour help, for every parser it builds (gpuenv's formatter gives plain help without it);
# datetime (~0.7 ms with _datetime and math) is what matrices.stale needs only for a machine that
# runs something newer than the bundle knows.
HEAVY = (
    "rich", "pathlib", "shutil", "typing", "dataclasses", "importlib", "importlib.util", "subprocess",
    "tempfile", "hashlib", "_hashlib", "fnmatch", "collections.abc", "struct", "_struct", "locale",
    "_colorize", "inspect", "ast", "datetime",
)  # fmt: skip

_LOADED = """
from gpuenv.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
sys.__stderr__.write("\\nMODULES " + " ".join(sorted(_imported())) + "\\n")
"""
# What each script starts with: the names of the modules really imported. An alias, a name bound
# in sys.modules to a module imported under another name (Python 3.13's collections binds
# _collections_abc as collections.abc, whose __name__ says collections.abc too; os binds
# posixpath as os.path), costs nothing: not counted. The name it was imported under is its spec's.
_IMPORTED = """
import sys
def _imported():
    return [n for n, m in list(sys.modules.items())
            if getattr(getattr(m, "__spec__", None), "name", n) == n]
"""


def _modules(code: str, *argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED + code, *argv], capture_output=True, text=True, check=False, timeout=120,
        env={**os.environ, "PYTHONPATH": ""},
    )  # fmt: skip
    line = [ln for ln in done.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, done.stderr
    return set(line[-1].split()[1:])


def _loaded(*argv: str) -> set[str]:
    """The modules the command adds to a bare ``import gpuenv`` (an editable install's own
    import hook brings pathlib and importlib.util there, a wheel's does not)."""
    bare = _modules('import gpuenv; sys.__stderr__.write("MODULES " + " ".join(_imported()) + "\\n")')
    return _modules(_LOADED, *argv) - bare


@pytest.mark.parametrize(
    "argv",
    [
        ["probe", "--json"],
        ["doctor", "--json"],
        ["doctor"],
        ["torch", "--json"],
        ["torch"],
        ["doctor", "--help"],
        ["matrix", "show", "--help"],  # a subcommand's parser, which argparse builds itself
    ],
)
def test_interactive_commands_keep_heavy_modules_off_their_path(argv):
    loaded = _loaded(*argv)
    assert not [m for m in HEAVY if m in loaded]


@pytest.mark.parametrize("argv", [["probe", "--json"], ["doctor", "--json"], ["torch", "--json"], ["doctor", "--help"]])
def test_commands_that_write_no_styled_lines_load_no_renderer(argv):
    """The help formatter's terminal width is found in gpuenv.startup: the line renderer
    (gpuenv.render.term, two modules) is loaded only by what writes styled lines."""
    loaded = _loaded(*argv)
    assert "gpuenv.startup" in loaded
    assert not [m for m in loaded if m.startswith("gpuenv.render")]


def test_a_doctor_without_torch_or_nvidia_driver_loads_no_wheel_rules(tmp_path):
    """The torch checks' helpers (wheelfit, torcharch, pep440) are imported past their early
    returns: a fresh box (an empty root: no torch, no driver) never loads them; a box with torch
    and a driver does."""
    assert not {"gpuenv.resolve.wheelfit", "gpuenv.resolve.torcharch", "gpuenv.standins.pep440"} & _loaded(
        "doctor", "--json", "--root", str(tmp_path)
    )
    assert {"gpuenv.resolve.wheelfit", "gpuenv.resolve.torcharch", "gpuenv.standins.pep440"} <= _loaded(
        "doctor", "--json", "--facts", str(FACTS / "doctor-healthy-cuda.json")
    )


def test_help_is_plain_text_even_where_colour_is_forced():
    """Python 3.14's argparse would colour it (FORCE_COLOR); gpuenv's formatter keeps it plain,
    as on 3.10 to 3.13, without importing _colorize."""
    env = {**os.environ, "FORCE_COLOR": "1", "PYTHON_COLORS": "1"}
    env.pop("NO_COLOR", None)
    for argv in (["doctor", "--help"], ["matrix", "show", "--help"]):
        done = subprocess.run([sys.executable, "-m", "gpuenv", *argv], capture_output=True, text=True, env=env,
                              check=False, timeout=60)  # fmt: skip
        assert done.returncode == 0 and done.stdout.startswith(f"usage: gpuenv {' '.join(argv[:-1])}"), done
        assert "\x1b" not in done.stdout and "--help" in done.stdout


def test_an_alias_in_sys_modules_is_free_and_a_real_import_is_not():
    """collections.abc bound to _collections_abc (Python 3.13's collections) costs nothing;
    importing the real module counts."""
    alias = _modules("import types; sys.modules['gpuenv_alias_x'] = types; "  # as collections does
                     "sys.__stderr__.write('MODULES ' + ' '.join(_imported()))")  # fmt: skip
    assert "gpuenv_alias_x" not in alias and "types" in alias
    real = _modules("import fnmatch; sys.__stderr__.write('MODULES ' + ' '.join(_imported()))")
    assert "fnmatch" in real


def test_a_dry_run_plan_in_json_loads_no_executor():
    loaded = _loaded("install", "rocm", "--dry-run", "--facts", str(PLAN_FACTS), "--json")
    assert "gpuenv.plan.planner" in loaded  # it did plan
    assert not [m for m in loaded if m.startswith(("gpuenv.execute", "urllib.request", "http", "rich"))]


# -- the replacements behave as what they replace ------------------------------------------------


@pytest.mark.parametrize("path", [None, "", ":/usr/bin::/bin", "/nonexistent:/usr/bin", "/usr/bin:/usr/bin"])
@pytest.mark.parametrize("name", ["sh", "python3", "no-such-command-gpuenv", "/bin/sh", "/etc", "."])
def test_which_finds_what_shutil_which_finds(monkeypatch, tmp_path, path, name):
    from gpuenv.probe.host import which

    monkeypatch.chdir(tmp_path)
    if path is None:
        monkeypatch.delenv("PATH", raising=False)
    else:
        monkeypatch.setenv("PATH", path)
    assert which(name) == shutil.which(name)


def test_which_skips_directories_and_files_without_the_execute_bit(monkeypatch, tmp_path):
    from gpuenv.probe.host import which

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "tool").mkdir()  # a directory named like the command
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "tool").write_text("#!/bin/sh\n")  # not executable
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "c" / "tool").chmod(0o755)
    monkeypatch.setenv("PATH", ":".join(str(tmp_path / d) for d in "abc"))
    assert which("tool") == str(tmp_path / "c" / "tool")


def test_the_rich_free_doctor_says_what_the_json_says():
    # Every finding of the JSON report, with its fix, is in the human output, word for word.
    human = subprocess.run(
        [sys.executable, "-m", "gpuenv", "doctor", "--facts", str(PLAN_FACTS)], capture_output=True, text=True
    ).stdout
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "gpuenv", "doctor", "--json", "--facts", str(PLAN_FACTS)],
            capture_output=True, text=True,
        ).stdout
    )  # fmt: skip
    assert report["findings"]
    for f in report["findings"]:
        assert f"{f['title']} {f['code']}" in human
        assert f"    {f['detail']}" in human
        first, *rest = f["fix"].splitlines()
        assert f"    fix: {first}" in human
        for line in rest:
            assert f"         {line}" in human


def test_probe_writes_its_json_without_importing_json(tmp_path):
    """gpuenv.standins.jsonout writes the document; json (whose import compiles the decoder's and the
    scanner's regexes) is for reading, which a probe does only of a CUDA tree's version.json or
    for --python (an empty root has neither)."""
    loaded = _loaded("probe", "--json", "--root", str(tmp_path))
    assert "gpuenv.standins.jsonout" in loaded
    assert not {"json", "json.decoder", "json.scanner"} & loaded
