"""Every read-only command's output on every machine fixture, into one directory: run it with
two venvs (before and after a change to the loader) and diff the directories.

    python3 bench/dump_outputs.py VENV OUTDIR

For each facts file (tests/facts, tests/cases) and each sysroot (tests/roots, with its
args.json): `doctor`, `doctor --json`, `torch`, `torch --json`, `install rocm --dry-run` and
`install rocm --dry-run --json`, `install auto --dry-run --json` (`torch` takes no --user or
--python, `install` no --python); once: `matrix show` of each table and `matrix check` of the repository's matrices. Each
output file holds the exit status, stdout and stderr. The state directory is an empty one, so
the shipped bundle answers whatever is installed on this machine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMANDS = {
    "doctor": ["doctor"],
    "doctor-json": ["doctor", "--json"],
    "torch": ["torch"],
    "torch-json": ["torch", "--json"],
    "install-rocm": ["install", "rocm", "--dry-run"],
    "install-rocm-json": ["install", "rocm", "--dry-run", "--json"],
    "install-auto-json": ["install", "auto", "--dry-run", "--json"],
}
MATRIX = ["", "rocm", "cuda", "torch", "gpus"]


def machines() -> list[tuple[str, list[str]]]:
    out = []
    for folder in ("facts", "cases"):
        for f in sorted((REPO / "tests" / folder).glob("*.json")):
            if folder == "cases" and not f.name.endswith(".facts.json"):
                continue
            out.append((f"{folder}-{f.stem}", ["--facts", str(f)]))
    for args in sorted((REPO / "tests" / "roots").glob("*.args.json")):
        name = args.name[: -len(".args.json")]
        given = json.loads(args.read_text())
        extra = ["--root", str(REPO / "tests" / "roots" / name)]
        if given.get("user"):
            extra += ["--user", given["user"]]
        if given.get("python"):
            extra += ["--python", given["python"]]
        out.append((f"roots-{name}", extra))
    return out


def _without_python(args: list[str]) -> list[str]:
    if "--python" not in args:
        return args
    at = args.index("--python")
    return args[:at] + args[at + 2 :]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    venv = str(Path(sys.argv[1]).absolute())
    script = str(Path(venv) / "bin" / "gpuenv")
    dest = Path(sys.argv[2])
    dest.mkdir(parents=True, exist_ok=True)
    state = tempfile.mkdtemp(prefix="gpuenv-dump-state-")
    env = {**os.environ, "COLUMNS": "100", "GPUENV_STATE_DIR": state, "NO_COLOR": "1"}
    jobs = []
    for machine, args in machines():
        for label, cmd in COMMANDS.items():
            given = args[:2] if cmd[0] == "torch" else _without_python(args) if cmd[0] == "install" else args
            jobs.append((f"{machine}.{label}", [script, *cmd, *given]))
    for subject in MATRIX:
        jobs.append((f"matrix-show-{subject or 'all'}", [script, "matrix", "show", *([subject] if subject else [])]))
    jobs.append(("matrix-check", [script, "matrix", "check", str(REPO / "matrices")]))

    def run(job: tuple[str, list[str]]) -> None:
        name, cmd = job
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/", check=False)
        text = f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        # What differs from run to run or venv to venv: the state directory, the venv's own
        # path (the shipped bundle's) and the times a plan or a probe was made.
        text = text.replace(state, "STATE").replace(venv, "VENV")
        (dest / name).write_text(re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)", "TIME", text))

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(run, jobs))
    print(f"{len(jobs)} outputs in {dest}")


if __name__ == "__main__":
    main()
