"""What each stand-in saves: its import against the real module's, and the command paths that
load it, run as they are and with the real module swapped in.

    python bench/standins.py [--rounds N] [--only record jsonout ...]

Two tables, each measured interleaved on this interpreter (sys.executable), so that load on the
machine hits both sides alike:

- import: a fresh interpreter imports the stand-in and uses it once (a record class declared and
  built, a document written, a digest, ...), timed inside that process; then the same with the
  real module. The figure is the median of each side and of the rounds' differences.
- command paths: ``gpuenv probe --json``, ``doctor --json`` and ``torch --json`` (live, on this
  machine), each run as it is and with the stand-in replaced by a module of the same interface
  built on the real thing (each ``StandIn.swap`` below), one right after the other, the order
  alternating by round. A path is measured only where the stand-in is loaded on it (``-X importtime`` says), and
  the swapped run must print what the plain run prints, or the row says so. Saved: the median of
  the rounds' differences (swapped minus plain), with the middle half of them beside it.

src/gpuenv/standins/README.md quotes this script's figures; the rule (CONTRIBUTING.md) is that a
stand-in saves at least 2 ms on a measured command path.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

COMMANDS = [["probe", "--json"], ["doctor", "--json"], ["torch", "--json"]]

# The console script's own code, after a prelude that may swap a module in.
_RUN = "import sys; sys.argv = ['gpuenv', *sys.argv[1:]]\nfrom gpuenv.cli import run\nrun()\n"


@dataclass(frozen=True)
class StandIn:
    name: str  # the stand-in's module
    real: str  # what it replaces, as the README names it
    setup: str  # run untimed in both processes of the import table
    ours: str  # the stand-in imported and used once
    theirs: str  # the real module imported and used the same way
    swap: str  # a prelude that puts the real module in the stand-in's place


def _inject(module: str, source: str) -> str:
    """A prelude that registers ``source`` as the module ``module`` before gpuenv imports it."""
    return (
        "import sys as _s, types as _t\n"
        f"_m = _t.ModuleType({module!r})\n"
        f"exec({source!r}, _m.__dict__)\n"
        f"_s.modules[{module!r}] = _m\n"
    )


_RECORD_USE = "class R:\n    a: int\n    b: str\n    c: tuple = ()\n    d: int = 0\nR(1, 'x')\n"

STANDINS = [
    StandIn(
        "gpuenv.standins.record", "dataclasses",
        "import gpuenv.standins",
        "from gpuenv.standins.record import record\n" + _RECORD_USE.replace("class R", "@record(frozen=True)\nclass R"),
        "from dataclasses import dataclass\n" + _RECORD_USE.replace("class R", "@dataclass(frozen=True)\nclass R"),
        _inject("gpuenv.standins.record", (
            "from dataclasses import MISSING, Field, dataclass, field, fields, replace\n"
            "from dataclasses import FrozenInstanceError as FrozenError, is_dataclass as is_record\n"
            # gpuenv reads a record's fields from __record_fields__ (a name-to-field dict).
            "def record(cls=None, /, *, frozen=False):\n"
            "    def wrap(c):\n"
            "        c = dataclass(c, frozen=frozen)\n"
            "        c.__record_fields__ = c.__dataclass_fields__\n"
            "        return c\n"
            "    return wrap if cls is None else wrap(cls)\n"
        )),
    ),
    StandIn(
        "gpuenv.standins.jsonout", "json (json.dumps(obj, indent=2))",
        "import gpuenv.standins\ndoc = {'a': [1, 2.5, None, True], 'b': {'c': 'd'}}",
        "from gpuenv.standins.jsonout import dumps\ndumps(doc)",
        "import json\njson.dumps(doc, indent=2)",
        _inject("gpuenv.standins.jsonout", "import json\ndef dumps(obj):\n    return json.dumps(obj, indent=2)\n"),
    ),
    StandIn(
        "gpuenv.standins.jsoninput", "json.loads of an open file (no limits)",
        "import gpuenv.standins",
        "from gpuenv.standins.jsoninput import parse\nparse(b'{\"a\": [1]}', 'x')",
        "import json\njson.loads(b'{\"a\": [1]}')",
        _inject("gpuenv.standins.jsoninput", (
            "import json, sys\n"
            "MAX_BYTES = 16 << 20\nMAX_DEPTH = 64\n"
            "class InputError(ValueError):\n    pass\n"
            "def read_bytes(path, what, limit=MAX_BYTES):\n"
            "    try:\n"
            "        if path == '-':\n            return sys.stdin.buffer.read()\n"
            "        with open(path, 'rb') as f:\n            return f.read()\n"
            "    except OSError as exc:\n        raise InputError(f'{what} {path}: {exc}') from None\n"
            "def parse(data, label, *, max_depth=MAX_DEPTH):\n"
            "    try:\n        return json.loads(data)\n"
            "    except ValueError as exc:\n        raise InputError(f'{label}: {exc}') from None\n"
            "def read(path, what, limit=MAX_BYTES, *, max_depth=MAX_DEPTH):\n"
            "    return parse(read_bytes(path, what, limit), f'{what} {path}')\n"
        )),
    ),
    StandIn(
        "gpuenv.standins.checksum", "hashlib (sha256)",
        "import gpuenv.standins",
        "from gpuenv.standins.checksum import sha256_hex\nsha256_hex(b'abc')",
        "import hashlib\nhashlib.sha256(b'abc').hexdigest()",
        _inject("gpuenv.standins.checksum", (
            "import hashlib\ndef sha256_hex(data):\n    return hashlib.sha256(data).hexdigest()\n"
        )),
    ),
    StandIn(
        "gpuenv.standins.bundled", "importlib.resources (files())",
        "import gpuenv.standins",
        "from gpuenv.standins import bundled\nbundled.directory('matrices')",
        "from importlib.resources import files\nstr(files('gpuenv._matrices'))",
        _inject("gpuenv.standins.bundled", (
            "from importlib.resources import files\n"
            "_P = {'matrices': 'gpuenv._matrices', 'schemas': 'gpuenv.schemas',"
            " 'install-scripts': 'gpuenv._install_scripts'}\n"
            "def directory(kind):\n    return str(files(_P[kind]))\n"
            "def path(kind, name):\n    return str(files(_P[kind]) / name)\n"
        )),
    ),
    StandIn(
        "gpuenv.standins.debversion", "dpkg --compare-versions (a process per comparison)",
        "import gpuenv.standins",
        "from gpuenv.standins import debversion\ndebversion.compare('1:570.133.07-1', '580.65.06-1')",
        "import subprocess\nsubprocess.run(['dpkg', '--compare-versions', '1:570.133.07-1', 'lt', '580.65.06-1'])",
        _inject("gpuenv.standins.debversion", (
            "import subprocess\nfrom functools import cmp_to_key\n"
            "def compare(a, b):\n"
            "    for answer, op in ((-1, 'lt'), (0, 'eq')):\n"
            "        if subprocess.run(['dpkg', '--compare-versions', a, op, b], check=False).returncode == 0:\n"
            "            return answer\n"
            "    return 1\n"
            "key = cmp_to_key(compare)\n"
        )),
    ),
    StandIn(
        "gpuenv.standins.pep440", "packaging.version",
        "import gpuenv.standins",
        "from gpuenv.standins import pep440\npep440.older('2.9.0.dev1', '2.9.0')",
        "from packaging.version import Version\nVersion('2.9.0.dev1') < Version('2.9.0')",
        _inject("gpuenv.standins.pep440", (
            "from packaging.version import InvalidVersion, Version\n"
            "def key(version):\n"
            "    try:\n        return Version(version)\n"
            "    except InvalidVersion:\n        return None\n"
            "def older(a, b):\n"
            "    ka, kb = key(a or ''), key(b or '')\n"
            "    return ka is not None and kb is not None and ka < kb\n"
        )),
    ),
    StandIn(
        # Not in standins/: the probe module that reads os-release (the README lists it).
        "gpuenv.probe.osinfo", "distro (its os-release parser)",
        "import gpuenv.facts, gpuenv.probe.host\ntext = open('/etc/os-release').read()",
        "from gpuenv.probe import osinfo\nosinfo.parse_os_release(text)",
        "import io, distro\ndistro.LinuxDistribution._parse_os_release_content(io.StringIO(text))",
        # parse_os_release through distro's parser; os-release keys are upper case, distro's not.
        "import io\nimport distro\nfrom gpuenv.probe import osinfo as _o\n"
        "_o.parse_os_release = lambda text: {k.upper(): v for k, v in"
        " distro.LinuxDistribution._parse_os_release_content(io.StringIO(text)).items()}\n",
    ),
]  # fmt: skip


def _env() -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "100"}
    env.pop("PYTHONPATH", None)
    return env


def _timed_import(code: str, setup: str, env: dict[str, str]) -> float:
    """Seconds the child spends in ``code``, timed inside the child."""
    child = f"{setup}\nfrom time import perf_counter as _pc\n_t = _pc()\n{code}\nprint(_pc() - _t)\n"
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=env, check=True)
    return float(done.stdout.split()[-1])


def _timed_command(prelude: str, argv: list[str], env: dict[str, str]) -> tuple[float, bytes, int]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", prelude + _RUN, *argv], capture_output=True, env=env, check=False)
    return time.perf_counter() - start, done.stdout, done.returncode


def _stable(result: tuple[bytes, int]) -> tuple[bytes, int]:
    """A run's output and status less the moment of probing (it differs from run to run)."""
    out, code = result
    return b"\n".join(line for line in out.splitlines() if b'"collected_at"' not in line), code


def _loaded(argv: list[str], env: dict[str, str]) -> set[str]:
    """The modules a plain run of the command imports."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", _RUN, *argv],
                          capture_output=True, text=True, env=env, check=False)  # fmt: skip
    return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:6.2f}"


def _spread(values: list[float]) -> str:
    if len(values) < 2:
        return ""
    low, _, high = statistics.quantiles(values, n=4)
    return f"{low * 1000:.2f}..{high * 1000:.2f}"


def imports(picked: list[StandIn], rounds: int, env: dict[str, str]) -> None:
    ours: dict[str, list[float]] = {s.name: [] for s in picked}
    theirs: dict[str, list[float]] = {s.name: [] for s in picked}
    for r in range(rounds):
        for s in picked:
            sides = [(ours, s.ours), (theirs, s.theirs)]
            for table, code in sides if r % 2 == 0 else sides[::-1]:
                table[s.name].append(_timed_import(code, s.setup, env))
    print(f"\nimport and first use, in a fresh interpreter (ms; median of {rounds} rounds)")
    print(f"{'stand-in':28} {'ours':>7} {'real':>7} {'saved':>7} {'middle half':>13}  real module")
    for s in picked:
        saved = [b - a for a, b in zip(ours[s.name], theirs[s.name], strict=True)]
        print(f"{s.name:28} {_ms(ours[s.name]):>7} {_ms(theirs[s.name]):>7} {_ms(saved):>7} {_spread(saved):>13}  {s.real}")


def commands(picked: list[StandIn], rounds: int, env: dict[str, str]) -> None:
    rows: list[tuple[StandIn, list[str]]] = []
    for argv in COMMANDS:
        loaded = _loaded(argv, env)
        rows += [(s, argv) for s in picked if s.name in loaded]
    plain: dict[int, list[float]] = {i: [] for i in range(len(rows))}
    saved: dict[int, list[float]] = {i: [] for i in range(len(rows))}
    differs: dict[int, str] = {}
    for r in range(rounds):
        for i, (s, argv) in enumerate(rows):
            sides = ["", s.swap] if r % 2 == 0 else [s.swap, ""]
            took: dict[str, float] = {}
            outputs = {}
            for prelude in sides:
                took[prelude], out, code = _timed_command(prelude, argv, env)
                outputs[prelude] = (out, code)
            if _stable(outputs[""]) != _stable(outputs[s.swap]):
                differs[i] = f"exit {outputs[''][1]} plain, {outputs[s.swap][1]} swapped" if outputs[""][1] != outputs[s.swap][1] else "output differs"
            plain[i].append(took[""])
            saved[i].append(took[s.swap] - took[""])
    print(f"\ncommand paths, plain and with the real module swapped in (ms; median of {rounds} rounds)")
    print(f"{'stand-in':28} {'command':16} {'plain':>7} {'saved':>7} {'middle half':>13}")
    for i, (s, argv) in enumerate(rows):
        note = f"  ({differs[i]})" if i in differs else ""
        print(f"{s.name:28} {' '.join(argv):16} {_ms(plain[i]):>7} {_ms(saved[i]):>7} {_spread(saved[i]):>13}{note}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--only", nargs="+", metavar="NAME", help="stand-ins by last name (record, jsonout, osinfo, ...)")
    ap.add_argument("--imports-only", action="store_true", help="the import table only")
    args = ap.parse_args(argv)
    picked = [s for s in STANDINS if not args.only or s.name.rsplit(".", 1)[-1] in args.only]
    env = _env()
    print(f"{sys.executable} (Python {sys.version.split()[0]}), {os.cpu_count()} CPUs")
    imports(picked, args.rounds, env)
    if not args.imports_only:
        commands(picked, args.rounds, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
