"""The command line (gpuenv.cli): one argparse definition, built for the one command asked for;
usage errors are one line and exit 2; --help and --version; no heavy module on the cheap paths."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpuenv.cli import COMMANDS, parser_for
from tests import pythons
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


def test_matrix_show_names_1010_as_the_newest_amd_release():
    lines = invoke(["matrix", "show"]).stdout.splitlines()
    # #42: the first line dates the bundle and names each vendor's newest release it knows
    assert lines[0].startswith("bundle   ")
    assert "newest known: ROCm 10.1.0 (2026-10-05), legacy stream 7.2.4 (2026-05-29); " in " ".join(" ".join(lines).split())
    assert "ROCm     5.0.0 .. 10.1.0, default 7.2.4" in lines


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


# gpuenv.cli keeps argparse's words untranslated (no gettext lookups, so no locale). What a
# process sees afterwards, as one JSON line: whether locale is loaded, what argparse calls its
# words with, and a usage error.
_AFTER_CLI = """
import json, sys
{before}
import gpuenv.cli as cli
import argparse
print(json.dumps({{
    "locale_loaded": "locale" in sys.modules,
    "words_untranslated": argparse._ is str and [argparse.ngettext("a", "b", n) for n in (0, 1, 2)] == ["b", "a", "b"],
}}))
sys.stdout.flush()
cli.main(["doctor", "--bogus"])
"""
_SEEN = {"locale_loaded": False, "words_untranslated": True}


def _after_cli(python: str | None = None, before: str = "") -> tuple[dict, str]:
    """gpuenv.cli's import and a usage error in a new process: this interpreter's installed
    gpuenv, or ``python`` running the checkout's sources."""
    code = _AFTER_CLI.format(before=before)
    if python is None:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    else:
        done = pythons.run_source(python, code, timeout=60)
    assert done.returncode == 2, done.stderr
    return json.loads(done.stdout), done.stderr


USAGE_LINE = "gpuenv doctor: unrecognized arguments: --bogus (see gpuenv doctor --help)\n"


def test_argparse_words_are_untranslated_and_locale_stays_unloaded():
    assert _after_cli() == (_SEEN, USAGE_LINE)


def test_gettext_already_loaded_changes_nothing():
    assert _after_cli(before="import gettext") == (_SEEN, USAGE_LINE)


def test_argparse_words_are_untranslated_on_every_supported_python():
    # Debian's own 3.11.2 patches argparse's gettext import; each Python found here is asked.
    seen = {pythons.label(v, p): _after_cli(p) for v, p in pythons.pythons().items()}
    assert seen and all(answer == (_SEEN, USAGE_LINE) for answer in seen.values()), seen
