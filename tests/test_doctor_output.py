"""The doctor's front end: the typer-free argv parser of the fast path, the human grouping, and
the start-up cost boundary (no heavy modules on the `doctor --json` path)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpuenv.commands.doctor import parse_argv
from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.render.report import grouped, target_line
from gpuenv.resolve.finding import Target
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import FACTS_DIR, variant


def test_parse_argv_reads_every_option():
    opts = parse_argv(
        ["--json", "--facts", "a.json", "--facts=b", "--ignore", "x.y", "--target", "rocm@7.2.4", "--torch=2.7.0",
         "--root", "/r", "--user", "bob", "--python", "/p", "nvidia.nouveau-loaded"]
    )  # fmt: skip
    assert opts == {
        "codes": ["nvidia.nouveau-loaded"], "facts_paths": ["a.json", "b"], "ignore": ["x.y"], "root": "/r",
        "user": "bob", "python": "/p", "target": "rocm@7.2.4", "torch": "2.7.0", "json_out": True, "list_codes": False,
    }  # fmt: skip


@pytest.mark.parametrize("argv", [["--help"], ["--facts"], ["--bogus"], ["--target", "--json"], ["-h"]])
def test_parse_argv_leaves_the_rest_to_typer(argv):
    assert parse_argv(argv) is None


def test_help_still_works_through_typer():
    proc = subprocess.run(
        [sys.executable, "-m", "gpuenv", "doctor", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "--target" in proc.stdout


def test_json_path_imports_no_heavy_module():
    facts = str(FACTS_DIR / "doctor-healthy-rocm.json")
    code = (
        f"import sys; sys.argv = ['gpuenv', 'doctor', '--json', '--facts', {facts!r}]\n"
        "from gpuenv.fastpath import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('rich', 'typer', 'pydantic', 'requests', 'pynvml', 'jsonschema') if m in sys.modules]\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "HEAVY=" in proc.stderr
    assert proc.stderr.split("HEAVY=")[1].strip() == ""


def test_grouping_puts_the_worst_area_first():
    doc, _, _ = variant("rocm.multiple-versions")  # amd: info
    doc["packages"]["unconfigured"] = ["rocm-core"]  # stacks: error
    doc["amd"]["driver_version"] = "6.12.12"  # platform: warning (loaded amdgpu is not the DKMS build)
    report = diagnose(from_dict(doc), load(), Target())
    areas = [a for a, _ in grouped(report.findings)]
    assert areas[:2] == ["stacks", "platform"]
    assert areas.index("amd") > areas.index("platform")
    assert "ROCm 7.2.4 (installed)" in target_line(report)
