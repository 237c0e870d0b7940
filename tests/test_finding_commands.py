"""A finding's fix carries `commands` beside its text (report schema 1.1, #30 item 3): the
runnable command lines of the fix, each one a line of the fix text, and redacted like it."""

from __future__ import annotations

import json
import shlex

import pytest

from gpuenv.facts import from_dict
from gpuenv.matrices import load
from gpuenv.resolve.finding import Target
from gpuenv.resolve.report import diagnose
from tests.cli_runner import invoke
from tests.doctor_cases import CASES, variant
from tests.schemas import validate

# The findings whose fix is a runnable command line today.
WITH_COMMANDS = (
    "kernel.headers-missing",
    "kernel.next-boot-no-module",
    "kernel.dkms-not-built",
    "kernel.reboot-required",
    "nvidia.driver-not-loaded",
    "dpkg.interrupted",
    "amd.no-device-access",
)


@pytest.fixture(scope="module")
def matrices():
    return load()


def _fired(code, matrices):
    doc, target, _ = variant(code)
    report = diagnose(from_dict(doc), matrices, Target.parse(target))
    return report, [f for f in report.findings if f.code == code]


@pytest.mark.parametrize("code", sorted(CASES))
def test_commands_are_lines_of_the_fix_and_parse_as_shell(code, matrices):
    report, fired = _fired(code, matrices)
    fix_lines = {line.split("  #", 1)[0].rstrip() for f in fired for line in f.fix.splitlines()}
    for f in fired:
        for command in f.commands:
            assert command in fix_lines, f"{code}: {command!r} is not a line of its fix"
            assert "\n" not in command and "#" not in command
            assert shlex.split(command)
    validate(report.to_dict(), "report")


@pytest.mark.parametrize("code", WITH_COMMANDS)
def test_command_line_fixes_carry_their_commands(code, matrices):
    _, fired = _fired(code, matrices)
    assert fired and all(f.commands for f in fired), code
    doc = fired[0].to_dict()
    assert list(doc)[:6] == ["code", "severity", "title", "detail", "fix", "commands"]


def test_headers_commands_name_the_running_kernel_and_rebuild_installed_modules(matrices):
    doc, target, _ = variant("kernel.headers-missing")
    facts = from_dict(doc)
    (f,) = [f for f in diagnose(facts, matrices, Target.parse(target)).findings if f.code == "kernel.headers-missing"]
    assert f.commands[0].startswith("sudo apt-get install linux-headers-" + facts.kernel.release)
    assert f.commands[-1] == "sudo dkms autoinstall"  # the healthy ROCm box has amdgpu-dkms


def test_a_finding_without_commands_leaves_the_key_out(matrices):
    _, fired = _fired("rocm.multiple-versions", matrices)  # its fix is prose around a command
    assert fired and all("commands" not in f.to_dict() for f in fired)


def test_commands_are_redacted_with_the_fix(tmp_path):
    doc, _, _ = variant("amd.no-device-access")
    doc["user"]["name"] = "zoltan"
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    plain = json.loads(invoke(["doctor", "--json", "--no-redact", "--facts", str(path)]).stdout)
    (f,) = [f for f in plain["findings"] if f["code"] == "amd.no-device-access"]
    assert f["commands"] == ["sudo usermod -aG render,video zoltan"]
    res = invoke(["doctor", "--json", "--redact", "--facts", str(path)])
    validate(json.loads(res.stdout), "report")
    assert "zoltan" not in res.stdout and "<user-1>" in res.stdout
    md = invoke(["doctor", "--format", "markdown", "--facts", str(path)]).stdout  # redacted by default
    assert '"commands": [' in md and "sudo usermod -aG render,video <user-1>" in md and "zoltan" not in md
