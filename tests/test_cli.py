"""The command line (gpuenv.cli): one argparse definition, built for the one command asked for;
usage errors are one line and exit 2; --help and --version; no heavy module on the cheap paths."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv.cli import COMMANDS, parser_for
from tests.cli_runner import invoke
from tests.doctor_cases import FACTS_DIR
from tests.probe_helpers import cli_args, expected_of, without_volatile


def test_probe_json_of_a_sysroot_is_its_expected_facts():
    machine = "ubuntu2404-rtx5090-driver570"
    result = invoke(["probe", "--json", *cli_args(machine)])
    assert result.exit_code == 0, result.output
    assert without_volatile(json.loads(result.stdout)) == expected_of(machine)


def test_equals_form_of_options_is_the_same_option():
    machine = "ubuntu2404-rtx5090-driver570"
    args = cli_args(machine)
    joined = [f"{a}={b}" for a, b in zip(args[::2], args[1::2], strict=True)]
    assert json.loads(invoke(["probe", "--json", *joined]).stdout)["gpus"] == json.loads(
        invoke(["probe", "--json", *args]).stdout
    )["gpus"]


def test_bad_root_is_a_usage_error(tmp_path):
    result = invoke(["probe", "--root", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "not a directory" in result.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (["probe", "--bogus"], "unrecognized arguments: --bogus"),
        (["doctor", "--facts"], "expected one argument"),
        (["torch", "--vendor", "intel"], "invalid choice"),
        (["install", "metal"], "invalid choice"),
        (["matrix"], "required"),
        (["frobnicate"], "is not a command"),
        (["dcotor"], "did you mean doctor?"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args, words):
    result = invoke(args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and words in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_top_level_help_lists_every_command_and_the_exit_statuses():
    result = invoke(["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in result.stdout
    assert "3 plan refused" in result.stdout
    assert invoke([]).exit_code == 2  # no command: the help, as a usage error


def test_version():
    from gpuenv import __version__

    assert invoke(["--version"]).stdout == f"gpuenv {__version__}\n"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_of_every_command_is_described(name):
    parser = parser_for(name)
    actions = list(parser._actions)
    for sub in parser._subparsers._group_actions if parser._subparsers else ():
        for child in getattr(sub, "choices", {}).values():
            actions += child._actions
    for action in actions:
        if action.dest in ("help",) or not action.option_strings and action.nargs == 0:
            continue
        assert action.help, f"gpuenv {name}: {action.option_strings or action.dest} has no help"
    text = parser.format_help()
    assert "<bool>" not in text and "<str>" not in text


def _imports_after(argv: list[str]) -> str:
    code = (
        f"import sys\nfrom gpuenv.cli import main\ncode = main({argv!r})\n"
        "heavy = [m for m in ('rich', 'typer', 'click', 'pydantic', 'requests', 'pynvml', 'jsonschema', 'psutil')"
        " if m in sys.modules]\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy) + ' CODE=' + str(code))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    return done.stderr.rsplit("HEAVY=", 1)[-1]


def test_json_paths_import_no_heavy_module():
    facts = str(FACTS_DIR / "doctor-healthy-rocm.json")
    assert _imports_after(["doctor", "--json", "--facts", facts]).startswith(" CODE=")
    assert _imports_after(["torch", "--json", "--facts", facts]).startswith(" CODE=")
    assert _imports_after(["probe", "--json", "--root", "/nonexistent"]) == " CODE=2"


def test_help_imports_no_heavy_module():
    code = (
        "import sys\nfrom gpuenv.cli import main\n"
        "try:\n    main(['apply', '--help'])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('HEAVY=' + ','.join(m for m in ('rich', 'typer', 'requests') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "--expect REQUEST" in done.stdout
    assert done.stderr == "HEAVY="


# gpuenv.cli imports argparse beside a stand-in for gettext (argparse needs only the names of two
# of its functions). What a process sees afterwards, as one JSON line: whether gettext is loaded,
# what a later `import gettext` gives, what argparse calls its words with, and a usage error.
_AFTER_CLI = """
import json, sys
{before}
import gpuenv.cli as cli
loaded = "gettext" in sys.modules
import gettext
import argparse
kept = sorted(n for n, v in vars(argparse).items() if type(v) is type(sys) and v.__name__ == "gettext")
print(json.dumps({{
    "gettext_loaded": loaded,
    "real_gettext": hasattr(gettext, "translation") and sys.modules["gettext"] is gettext,
    "words_untranslated": argparse._ is str and [argparse.ngettext("a", "b", n) for n in (0, 1, 2)] == ["b", "a", "b"],
    "kept_is_real": [hasattr(getattr(argparse, n), "translation") for n in kept],
}}))
sys.stdout.flush()
cli.main(["doctor", "--bogus"])
"""
_GETTEXT_LINE = "from gettext import gettext as _, ngettext"


def _after_cli(tmp_path, argparse_line: str | None = None, before: str = "") -> tuple[dict, str]:
    """Run gpuenv.cli's import in a new process, with the real argparse or a copy of it whose
    gettext import is ``argparse_line`` (an argparse of some other Python)."""
    env = None
    if argparse_line is not None:
        source = Path(argparse.__file__).read_text(encoding="utf-8")
        assert _GETTEXT_LINE in source  # the line this Python's argparse imports gettext with
        (tmp_path / "argparse.py").write_text(source.replace(_GETTEXT_LINE, argparse_line, 1), encoding="utf-8")
        # In front of what is there (bench/mutate.py puts its mutated copy of gpuenv there).
        path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _AFTER_CLI.format(before=before)], capture_output=True, text=True,
        timeout=60, check=False, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    return json.loads(done.stdout), done.stderr


USAGE_LINE = "gpuenv doctor: unrecognized arguments: --bogus (see gpuenv doctor --help)\n"


def test_argparse_is_imported_without_gettext_and_a_later_import_gets_the_real_module(tmp_path):
    seen, err = _after_cli(tmp_path)
    assert seen == {"gettext_loaded": False, "real_gettext": True, "words_untranslated": True, "kept_is_real": []}
    assert err == USAGE_LINE


def test_gettext_already_loaded_is_the_one_argparse_gets(tmp_path):
    seen, err = _after_cli(tmp_path, before="import gettext")
    assert seen == {"gettext_loaded": True, "real_gettext": True, "words_untranslated": True, "kept_is_real": []}
    assert err == USAGE_LINE


def test_an_argparse_wanting_more_of_gettext_gets_the_real_module(tmp_path):
    seen, err = _after_cli(tmp_path, "from gettext import gettext as _, ngettext, dgettext")
    assert seen == {"gettext_loaded": True, "real_gettext": True, "words_untranslated": True, "kept_is_real": []}
    assert err == USAGE_LINE


def test_an_argparse_keeping_the_gettext_module_is_given_the_real_one(tmp_path):
    line = "import gettext as _gettext\n_, ngettext = _gettext.gettext, _gettext.ngettext"
    seen, err = _after_cli(tmp_path, line)
    assert seen == {"gettext_loaded": True, "real_gettext": True, "words_untranslated": True, "kept_is_real": [True]}
    assert err == USAGE_LINE
