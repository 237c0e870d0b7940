"""The command line: a thin typer layer. Each command module parses options, calls one core
function, renders the result and exits; no logic lives here. Heavy modules (rich, requests,
pynvml) are imported inside the commands that need them, to keep start-up fast."""

from __future__ import annotations

import typer

from gpuenv.commands import doctor, install, matrix, probe, torch

app = typer.Typer(
    name="gpuenv",
    help="GPU environment doctor and installer for Linux (NVIDIA CUDA and AMD ROCm).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (probe, doctor, torch, matrix, install):
    module.register(app)


def main() -> None:
    app()
