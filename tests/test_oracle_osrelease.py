"""The os-release parser (gpuenv.probe.osinfo) against ``distro`` (python-distro) on that
project's own fixture files (tests/oracles/os-release, vendored with its licence), and against a
POSIX shell, which os-release(5) says the format is, on the quoting real files use."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpuenv.probe import osinfo

FIXTURES = sorted(p for p in (Path(__file__).parent / "oracles" / "os-release").iterdir() if p.name != "LICENSE")
# Keys distro adds of its own (worked out from VERSION), not read from the file.
_DERIVED = {"codename", "release_codename"}


def _distro(text: str) -> dict[str, str]:
    import io

    from distro import LinuxDistribution

    found = LinuxDistribution._parse_os_release_content(io.StringIO(text))
    return {k: v for k, v in found.items() if k not in _DERIVED}


def _ours(text: str) -> dict[str, str]:
    return {k.lower(): v for k, v in osinfo.parse_os_release(text).items() if k.lower() not in _DERIVED}


def test_the_fixtures_are_there():
    assert len(FIXTURES) >= 40


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_python_distros_fixture_files_read_as_distro_reads_them(path):
    text = path.read_text(encoding="utf-8")
    assert _ours(text) == _distro(text)
    assert osinfo.os_from_release(osinfo.parse_os_release(text)).id  # and every one names its OS


# The quoting real files use (os-release(5): shell assignments), each line as a shell reads it.
QUOTING = [
    'NAME="Fedora Linux" # the name',  # a comment after the value
    "ID=debian    # trailing comment",
    'export PRETTY_NAME="Debian GNU/Linux 13 (trixie)"',  # export
    "export\tVERSION_ID='13'",
    "NAME='Red Hat'\" Enterprise\"' Linux'",  # joined quotes
    'NAME="A \\"quoted\\" \\$name \\`x\\` \\\\ \\n"',  # backslash in double quotes: $ ` " \\ only
    "NAME='no \\escape in single quotes'",
    "NAME=Fedora\\ Linux",  # an unquoted escaped space
    "HOME_URL=https://example.org/#anchor",  # # inside a word is no comment
    'VARIANT=""',
    "VERSION=24.04.3\\ LTS\\ \\(Noble\\)",
]


def _sh(line: str, key: str, tmp_path: Path) -> str:
    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no sh on this machine")
    path = tmp_path / "os-release"
    path.write_text(line + "\n", encoding="utf-8")
    done = subprocess.run(
        [sh, "-c", f'. "$1" && printf "%s" "${key}"', "sh", str(path)],
        capture_output=True, text=True, check=True, env={"PATH": "/nonexistent"},
    )  # fmt: skip
    return done.stdout


@pytest.mark.parametrize("line", QUOTING)
def test_quoting_reads_as_a_shell_reads_it(tmp_path, line):
    key = line.removeprefix("export").lstrip().partition("=")[0]
    assert osinfo.parse_os_release(line) == {key: _sh(line, key, tmp_path)}


@pytest.mark.parametrize("line", [q for q in QUOTING if "\\" not in q and "/#" not in q])
def test_quoting_reads_as_distro_reads_it(line):
    # distro (shlex) reads these as a shell does; backslashes in quotes, and a # inside a word
    # (a comment to shlex), it reads otherwise, and the shell decides.
    assert _ours(line) == _distro(line)


@pytest.mark.parametrize("line", ['NAME="open', "NAME='open", "NAME=a'b"])
def test_an_open_quote_is_no_value(line):
    assert osinfo.parse_os_release(line) == {}
