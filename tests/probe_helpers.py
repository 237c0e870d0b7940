"""Shared bits of the probe tests: the sysroot fixtures and a gpuenv subprocess runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOTS = Path(__file__).resolve().parent / "roots"
REPO = Path(__file__).resolve().parent.parent
VOLATILE = ("collected_at", "gpuenv_version")


def machines() -> list[str]:
    return sorted(p.name[: -len(".expected.json")] for p in ROOTS.glob("*.expected.json"))


def args_of(machine: str) -> dict:
    path = ROOTS / f"{machine}.args.json"
    return json.loads(path.read_text()) if path.exists() else {}


def expected_of(machine: str) -> dict:
    return json.loads((ROOTS / f"{machine}.expected.json").read_text())


def cli_args(machine: str) -> list[str]:
    out = ["--root", str(ROOTS / machine)]
    for key, value in args_of(machine).items():
        out += [f"--{key}", value]
    return out


def run_gpuenv(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
        check=False,
    )


def without_volatile(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in VOLATILE}
