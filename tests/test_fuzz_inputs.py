"""Hostile input files across every command (issue: ship what is tested): hypothesis mutates real
facts, plan and bundle files (and writes random bytes); every command answers with a documented
exit status (gpuenv.exitcodes.Exit: 0-5, where 5 is a doctor that could not judge part of
the machine), one line on stderr for a refusal, never a traceback, and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_runner import invoke

FACTS = Path(__file__).parent / "facts"
SEEDS = [json.loads(p.read_text()) for p in sorted(FACTS.glob("*.json"))[:6]]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _mutate(doc, path: list, value):
    """Replace the value at a random path (given as indices into the keys) with ``value``."""
    node = doc
    for step in path[:-1]:
        if isinstance(node, dict) and node:
            node = node[sorted(node)[step % len(node)]]
        elif isinstance(node, list) and node:
            node = node[step % len(node)]
        else:
            break
    if isinstance(node, dict) and node:
        node[sorted(node)[path[-1] % len(node)]] = value
    elif isinstance(node, list) and node:
        node[path[-1] % len(node)] = value
    return doc


documents = st.one_of(
    st.binary(max_size=300),
    st.builds(
        lambda seed, path, value: json.dumps(_mutate(json.loads(json.dumps(seed)), path, value)).encode(),
        st.sampled_from(SEEDS),
        st.lists(st.integers(0, 50), min_size=1, max_size=5),
        json_values,
    ),
)

COMMANDS = [
    ["doctor", "--json", "--facts", "{f}"],
    ["torch", "--facts", "{f}"],
    ["install", "rocm", "--dry-run", "--facts", "{f}"],
    ["install", "cuda", "--json", "--facts", "{f}"],
    ["plan", "rocm", "--facts", "{f}", "--out", "{out}"],
    ["apply", "{f}", "--root", "{root}", "--yes", "--expect", "install rocm"],
    ["matrix", "update", "--from", "{f}", "--sha256", "0" * 64],
]


@SETTINGS
@given(data=documents, command=st.sampled_from(COMMANDS))
def test_every_command_answers_hostile_files_with_a_documented_exit(tmp_path_factory, data, command):
    tmp = tmp_path_factory.mktemp("fuzz")
    f = tmp / "input.json"
    f.write_bytes(data)
    root = tmp / "root"
    root.mkdir()
    args = [a.format(f=f, out=tmp / "out.json", root=root) for a in command]
    res = invoke(args, env={"GPUENV_STATE_DIR": str(tmp / "state")})
    assert res.exception is None, repr(res.exception)
    assert res.exit_code in (0, 1, 2, 3, 4, 5), res.output
    assert res.exit_code != 5 or command[0] == "doctor", res.output  # only doctor leaves part unjudged
    assert "Traceback" not in res.output
    if res.exit_code in (2, 3) and command[0] != "install":
        assert res.stderr.strip().count("\n") == 0, res.stderr
    assert list(root.iterdir()) == []  # nothing created in the root
    assert not (tmp / "state").exists()
