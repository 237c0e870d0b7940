"""Text from files and hosts reaches the admin's terminal inert: every renderer shows control
characters escaped (gpuenv.render.term.inert), never as the escape sequences they would be.

Output here is no terminal, so no colour is on: any ESC, BEL or C1 byte in it came from the
input."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from gpuenv.render.term import inert
from tests.cli_runner import invoke

HERE = Path(__file__).resolve().parent
OSC = "\x1b]0;pwned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"  # clears the screen
C1 = "\x9b31m"  # CSI as one C1 byte
HOSTILE = f"{OSC}{CLEAR}{C1}\x00\x08\x7f"


def assert_inert(text: str) -> None:
    raw = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]
    assert raw == [], repr(text)


def test_inert_escapes_every_control_but_newline_and_tab():
    assert inert(f"a{HOSTILE}\tb\nc") == "a\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x00\\x08\\x7f\tb\nc"
    assert inert(inert(HOSTILE)) == inert(HOSTILE)


def doctor_doc(code: str, title: str) -> dict:
    finding = {"code": code, "severity": "error", "title": title, "detail": f"detail {HOSTILE}",
               "fix": f"fix {HOSTILE}"}  # fmt: skip
    return {
        "schema": "gpuenv.report/1",
        "facts_digest": "sha256:" + "0" * 64,
        "target": {"stack": "rocm", "version": "7.2.4", "torch": None, "basis": "installed"},
        "findings": [finding],
        "summary": {"error": 1, "warning": 0, "info": 0},
    }


def test_report_shows_a_hosts_escape_sequences_escaped(tmp_path):
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "web7.doctor.json").write_text(json.dumps(doctor_doc(f"amd.{OSC}x", f"title {HOSTILE}")))
    (fleet / f"ev{CLEAR}il.doctor.json").write_text(json.dumps(doctor_doc("amd.driver-missing", HOSTILE)))
    (fleet / f"broken{OSC}.doctor.json").write_text("{")
    result = invoke(["report", str(fleet)], env={"COLUMNS": "300"})
    assert result.exit_code in (0, 1) and result.exception is None, result.stderr
    assert_inert(result.stdout + result.stderr)
    assert "\\x1b]0;pwned\\x07" in result.stdout and "\\x1b[2J" in result.stdout


def test_probe_of_a_sysroot_shows_its_text_escaped(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(HERE / "roots" / "ubuntu2404-rtx5090-driver570", root, symlinks=True)
    (root / "etc/hostname").write_text(f"gpu{HOSTILE}box\n")
    text = (root / "etc/os-release").read_text()
    (root / "etc/os-release").write_text(text.replace("PRETTY_NAME=", f"PRETTY_NAME={OSC}", 1))
    for command in (["probe", "--root", str(root)], ["doctor", "--root", str(root)]):
        result = invoke(command, env={"COLUMNS": "300"})
        assert result.exception is None, result.stderr
        assert_inert(result.stdout + result.stderr)


def test_advise_shows_a_trees_file_names_escaped(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / f"k{OSC}.cu").write_text("#include <cublas_v2.h>\n__global__ void k() { int lane = threadIdx.x % 32; }\n")
    result = invoke(["advise", str(tree)], env={"COLUMNS": "300"})
    assert result.exception is None, result.stderr
    assert_inert(result.stdout + result.stderr)
    assert "\\x1b]0;pwned" in result.stdout  # (rich drops BEL itself)


def test_the_rich_console_escapes_what_reaches_it_as_text_or_table_cells():
    import io

    from rich.table import Table
    from rich.text import Text

    from gpuenv.render.console import make_console

    con = make_console()
    con.file = io.StringIO()
    table = Table()
    table.add_column(f"col{OSC}")
    table.add_row(f"cell{CLEAR}")
    con.print(Text(f"text{C1}"))
    con.print(table)
    con.print(f"[bold]markup[/bold] {HOSTILE}")
    assert_inert(con.file.getvalue())


# -- rich markup in a host's text (issue 40) -------------------------------------------------------


def test_report_of_a_title_with_a_closing_tag_does_not_crash(tmp_path):
    """Issue 40: `gpuenv report DIR` crashed (rich.errors.MarkupError) on a host file whose
    finding title holds `[/bold]`."""
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "web7.doctor.json").write_text(json.dumps(doctor_doc("amd.driver-missing", "evil [/bold] [red]title")))
    (fleet / "[bold]web8.doctor.json").write_text("{")
    result = invoke(["report", str(fleet)], env={"COLUMNS": "300"})
    assert result.exception is None and result.exit_code in (0, 1), result.stderr
    assert "evil [/bold] [red]title" in result.stdout and "[bold]web8" in result.stdout


def test_a_link_tag_in_a_hosts_text_is_no_hyperlink(tmp_path):
    """Issue 40: `[link=...]` in a finding title became a terminal hyperlink (OSC 8). On a
    terminal (script(1) gives the run one), the text is shown as written, and no link is made."""
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    title = "[link=https://evil.example/]click me[/link]"
    (fleet / "web7.doctor.json").write_text(json.dumps(doctor_doc("amd.driver-missing", title)))
    done = subprocess.run(
        ["script", "-qec", shlex.join([sys.executable, "-m", "gpuenv", "report", str(fleet)]), "/dev/null"],
        capture_output=True, timeout=60, check=False, env={**os.environ, "COLUMNS": "300", "TERM": "xterm-256color"},
    )  # fmt: skip
    out = done.stdout.decode("utf-8", "replace")
    assert done.returncode in (0, 1), out
    assert "\x1b[" in out  # a terminal: styled
    assert "\x1b]8;" not in out and title in out, out


def test_the_markdown_report_shows_a_c1_csi_escaped(tmp_path):
    """Issue 40: U+009B (a one-byte CSI on many terminals) from a host's os.pretty_name or GPU
    name was printed raw by `doctor --format markdown`."""
    doc = json.loads((HERE / "facts/doctor-healthy-rocm.json").read_text())
    doc["os"]["pretty_name"] = "Ubuntu\x9b2J"
    doc["gpus"][0]["name"] = "Radeon\x9b31m"
    (tmp_path / "facts.json").write_text(json.dumps(doc))
    result = invoke(["doctor", "--format", "markdown", "--facts", str(tmp_path / "facts.json")], env={"COLUMNS": "300"})
    assert result.exception is None, result.stderr
    assert_inert(result.stdout)
    assert "Ubuntu\\x9b2J" in result.stdout and "Radeon\\x9b31m" in result.stdout


def test_the_fleet_html_shows_controls_escaped(tmp_path):
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "web7.doctor.json").write_text(json.dumps(doctor_doc("amd.driver-missing", f"t{C1}[/bold]")))
    (fleet / "we\x9bb8.doctor.json").write_text(json.dumps(doctor_doc("amd.driver-missing", "t")))
    result = invoke(["report", str(fleet), "--html", str(tmp_path / "r.html")])
    assert result.exception is None, result.stderr
    page = (tmp_path / "r.html").read_text()
    assert_inert(page)
    assert "we\\x9bb8" in page
