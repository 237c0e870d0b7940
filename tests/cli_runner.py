"""Runs gpuenv's command line in this process, capturing its output (the tests' CliRunner).

``CliRunner().invoke(app, ["doctor", "--json"])`` calls ``gpuenv.cli.main`` as the console script does, with
stdout, stderr, stdin and the environment swapped for the call; ``SystemExit`` (argparse's usage
errors) becomes the exit code. The end-to-end tests run the installed console script instead.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None = None  # what escaped main(): a traceback a user would see

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class CliRunner:
    def invoke(self, app, args, input: str | None = None, env: dict[str, str] | None = None) -> Result:  # noqa: A002
        from gpuenv.cli import main

        out, err = io.StringIO(), io.StringIO()
        stdin = io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8")
        saved_env = dict(os.environ)
        saved_stdin = sys.stdin
        try:
            if env:
                for key, value in env.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value
            sys.stdin = stdin
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                escaped = None
                try:
                    code = main([str(a) for a in args])
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
                except Exception as exc:  # noqa: BLE001 - recorded, as the console would show it
                    code, escaped = 1, exc
        finally:
            sys.stdin = saved_stdin
            os.environ.clear()
            os.environ.update(saved_env)
        return Result(int(code), out.getvalue(), err.getvalue(), escaped)


app = "gpuenv"  # what the tests pass as the app: gpuenv.cli.main is the only one


def invoke(args, **kw) -> Result:
    return CliRunner().invoke(app, args, **kw)
