"""Human output on a real terminal: colour only there, never with NO_COLOR or TERM=dumb, control
characters from untrusted facts shown escaped, and a closed pipe ends the output quietly."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

FACTS = Path(__file__).parent / "facts" / "plan-ubuntu2404-rx9070-cuda-leftovers.json"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM", "COLUMNS")}
    return {**env, **extra}


def _on_tty(argv: list[str], env: dict[str, str]) -> str:
    """stdout of gpuenv ARGV when it is a terminal (a pseudo-terminal this test opens)."""
    return on_tty([sys.executable, "-m", "gpuenv", *argv], env)


def on_tty(command: list[str], env: dict[str, str]) -> str:
    """stdout of COMMAND when it is a terminal (a pseudo-terminal this test opens)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(command, stdout=follower, stderr=subprocess.DEVNULL, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=60)
    finally:
        os.close(leader)
    return b"".join(chunks).decode()


def test_doctor_on_a_terminal_is_coloured():
    out = _on_tty(["doctor", "--facts", str(FACTS)], _env(TERM="xterm"))
    assert "\x1b[1;31m✗ error\x1b[0m" in out  # errors in bold red
    assert "\x1b[32mfix:\x1b[0m" in out
    assert "\x1b[1;4mPlatform and kernel\x1b[0m" in out  # area titles bold, underlined


@pytest.mark.parametrize(
    "env", [{"TERM": "xterm", "NO_COLOR": "1"}, {"TERM": "dumb"}, {"TERM": "xterm", "NO_COLOR": ""}]
)
def test_no_colour_with_no_color_or_a_dumb_terminal(env):
    out = _on_tty(["doctor", "--facts", str(FACTS)], _env(**env))
    assert "✗ error" in out and "fix:" in out
    assert "\x1b[" not in out


def test_no_colour_into_a_pipe():
    done = subprocess.run(
        [sys.executable, "-m", "gpuenv", "doctor", "--facts", str(FACTS)],
        capture_output=True, text=True, env=_env(TERM="xterm"), check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "✗ error" in done.stdout and "\x1b" not in done.stdout


def test_escape_sequences_in_a_facts_file_are_shown_not_obeyed(tmp_path):
    doc = json.loads(FACTS.read_text())
    doc["gpus"][0]["name"] = "Evil\x1b]0;owned\x07 GPU\x9b2J"
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    out = _on_tty(["doctor", "--facts", str(path)], _env(TERM="xterm"))
    assert "Evil\\x1b]0;owned\\x07 GPU\\x9b2J" in out
    assert "\x07" not in out and "\x1b]" not in out and "\x9b" not in out
    done = subprocess.run(
        [sys.executable, "-m", "gpuenv", "doctor", "--facts", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Evil\\x1b]0;owned\\x07 GPU" in done.stdout and "\x1b" not in done.stdout


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path):
    # `gpuenv doctor --json --facts DIR | head -1`: far more than a pipe holds, so the writes
    # after the reader closes meet a broken pipe.
    for i in range(80):
        (tmp_path / f"{i:03}.json").write_text(FACTS.read_text())
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuenv", "doctor", "--json", "--facts", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
    )  # fmt: skip
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert json.loads(first)["schema"] == "gpuenv.report/1"
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert proc.returncode == 141


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "argv, prog",
    [
        (["doctor", "--json", "--facts", str(FACTS)], "gpuenv doctor"),
        (["doctor", "--facts", str(FACTS)], "gpuenv doctor"),
        (["probe", "--json", "--root", str(Path(__file__).parent / "roots" / "ubuntu2404-rx9070xt-fresh")], "gpuenv probe"),
        (["matrix", "show", "torch"], "gpuenv matrix"),
        (["--help"], "gpuenv"),
        (["--version"], "gpuenv"),
    ],
)
def test_output_to_a_full_device_is_one_line_and_status_120(argv, prog):
    # /dev/full fails every write with ENOSPC, as a full disk under `gpuenv doctor > report` does.
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "gpuenv", *argv], stdout=full, stderr=subprocess.PIPE, text=True, check=False
        )
    lines = [line for line in done.stderr.splitlines() if "redact" not in line]
    assert lines == [f"{prog}: cannot write the output: No space left on device"]
    assert done.returncode == 120


def test_everything_buffered_is_written_before_a_read_only_command_exits(tmp_path):
    # The read-only commands skip the interpreter's teardown (os._exit): what they printed must
    # still reach a file in full, and the exit status must be the command's own.
    for i in range(40):
        (tmp_path / f"{i:03}.json").write_text(FACTS.read_text())
    out = tmp_path / "out.jsonl"
    with out.open("w") as sink:
        done = subprocess.run(
            [sys.executable, "-m", "gpuenv", "doctor", "--json", "--facts", str(tmp_path)],
            stdout=sink, stderr=subprocess.PIPE, env=_env(), check=False,
        )  # fmt: skip
    reports = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(reports) == 40 and all(r["schema"] == "gpuenv.report/1" for r in reports)
    assert done.returncode == 1  # the facts hold errors
    assert done.stderr == b""  # JSON runs add no notice on standard error


def test_the_cli_exit_constants_are_the_exit_table():
    # cli.py keeps its few statuses as ints (no enum class on every command's path); the
    # table in gpuenv.exitcodes is the one users read.
    from gpuenv import cli, startup
    from gpuenv.exitcodes import Exit

    assert (cli.USAGE_EXIT, startup.PIPE_CLOSED_EXIT, startup.WRITE_FAILED_EXIT) == (
        Exit.USAGE, Exit.PIPE_CLOSED, Exit.WRITE_FAILED,
    )  # fmt: skip


@pytest.mark.parametrize(
    "errno_name, is_output", [("ENOSPC", True), ("EDQUOT", True), ("EFBIG", True), ("EIO", False), ("EACCES", False)]
)
def test_only_errors_a_write_alone_raises_are_called_output_failures(errno_name, is_output):
    import errno

    from gpuenv import startup

    assert startup.output_failed(OSError(getattr(errno, errno_name), "x")) is is_output
