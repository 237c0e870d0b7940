"""The two ways into `gpuenv probe` (the typer-free fast path of the console script, and the
typer command behind --help and `gpuenv.cli.app`) parse the same options and give the same facts."""

from __future__ import annotations

import json

import pytest

from gpuenv.fastpath import parse_probe_argv
from tests.probe_helpers import cli_args, expected_of, without_volatile

BASE = {"json_out": False, "root": None, "user": None, "python": None}


@pytest.mark.parametrize(
    "argv, want",
    [
        (["probe"], BASE),
        (["probe", "--json"], {**BASE, "json_out": True}),
        (["probe", "--root", "/r", "--user", "alice"], {**BASE, "root": "/r", "user": "alice"}),
        (
            ["probe", "--root=/r", "--python=/v/bin/python", "--json"],
            {**BASE, "root": "/r", "python": "/v/bin/python", "json_out": True},
        ),
        (["probe", "--help"], None),
        (["probe", "--root"], None),
        (["probe", "--root", "--json"], None),
        (["probe", "extra"], None),
        (["doctor", "--json"], None),
        ([], None),
    ],
)
def test_parse_probe_argv(argv, want):
    assert parse_probe_argv(argv) == want


def test_typer_command_matches_fast_path(capsys):
    from typer.testing import CliRunner

    from gpuenv import fastpath
    from gpuenv.cli import app

    machine = "ubuntu2404-rtx5090-driver570"
    result = CliRunner().invoke(app, ["probe", "--json", *cli_args(machine)])
    assert result.exit_code == 0, result.output
    via_typer = without_volatile(json.loads(result.stdout))

    opts = parse_probe_argv(["probe", "--json", *cli_args(machine)])
    assert fastpath.probe(**opts) == 0
    via_fast = without_volatile(json.loads(capsys.readouterr().out))
    assert via_typer == via_fast == expected_of(machine)


def test_typer_command_bad_root_exit_code(tmp_path):
    from typer.testing import CliRunner

    from gpuenv.cli import app

    result = CliRunner().invoke(app, ["probe", "--root", str(tmp_path / "missing")])
    assert result.exit_code == 2


def test_fast_path_imports_no_cli_or_rendering_stack():
    """`gpuenv probe --json` stays cheap: no typer (and its pydantic), rich, requests or jsonschema."""
    import subprocess
    import sys

    code = (
        "import sys; sys.argv = ['gpuenv', 'probe', '--json']\n"
        "from gpuenv.fastpath import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "heavy = [m for m in ('typer', 'click', 'pydantic', 'rich', 'requests', 'jsonschema', 'psutil', 'distro')"
        " if m in sys.modules]\n"
        "sys.stderr.write('HEAVY:' + ','.join(heavy) + ':CODE:' + str(code))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stderr.strip().endswith("HEAVY::CODE:0"), done.stderr[-500:]
    assert json.loads(done.stdout)["schema"] == "gpuenv.facts/1"
