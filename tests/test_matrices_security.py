"""A matrices bundle is untrusted input: root later pip-installs torch from its index URLs. The
loader itself refuses what matters (any host but download.pytorch.org, plain http, userinfo or
port tricks, wrong types, malformed versions), with one MatrixError line, and `matrix check` gives
the same answer whether or not jsonschema is installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv import matrices as M
from gpuenv import matrixbundle as B
from tests.test_matrices import copy_bundle, edit

HOSTILE_URLS = [
    "http://download.pytorch.org/whl/cu128",
    "https://evil.example/whl/cu128",
    "https://download.pytorch.org.evil.com/whl/cu128",
    "https://download.pytorch.org.evil.com/",
    "https://user@evil/whl/cu128",
    "https://user@download.pytorch.org/whl/cu128",
    "https://download.pytorch.org:8443/whl/cu128",
    "https://download.pytorch.org@evil.example/whl/cu128",
    "https://download.pytorch.org/simple/torch",
    "https://download.pytorch.org/whl/../simple",
    "https://download.pytorch.org/whl/cu128?x=1",
    "https://download.pytorch.org/whl/cu128#frag",
    "https://download.pytorch.org/whl/cu128 --extra-index-url https://evil.example",
    " https://download.pytorch.org/whl/cu128",
    "https://download.pytorch.org/whl/cu128\n",
    "HTTPS://DOWNLOAD.PYTORCH.ORG/whl/cu128",
    "file:///etc/passwd",
    "",
]


def _set_url(url):
    def change(d):
        d["releases"][0]["variants"][1]["index_url"] = url

    return change


# (file, change, what the one-line error must name)
HOSTILE_FIELDS = [
    ("torch.json", lambda d: d["releases"][0]["variants"][1].update(index_url=["x"]), "index_url"),
    ("torch.json", lambda d: d["releases"][0]["variants"][1]["archs"].append(3), "archs[8]"),
    ("torch.json", lambda d: d["releases"][0]["variants"][1]["archs"].append("sm_90; rm"), "archs[8]"),
    ("torch.json", lambda d: d["releases"][0]["versions"].append("2.4.2 --pre"), "versions[2]"),
    ("torch.json", lambda d: d["releases"][0]["variants"][1].update(variant="cu118 -i x"), "variant"),
    ("torch.json", lambda d: d["releases"][0]["variants"][1].update(stack_version=11.8), "stack_version"),
    ("torch.json", lambda d: d["releases"][0]["variants"][1].update(stack="nvidia"), "stack"),
    ("torch.json", lambda d: d["releases"][0].update(python=["3.x"]), "python[0]"),
    ("torch.json", lambda d: d["releases"][0].update(confirmed="yes"), "confirmed"),
    (
        "torch.json",
        lambda d: d["releases"][0]["variants"][1].update(find_links="http://download.pytorch.org/whl/x.html"),
        "find_links",
    ),
    (
        "torch.json",
        lambda d: d["gfx_overrides"][0].update(value="10.3.0; curl evil"),
        "gfx_overrides[0].value",
    ),
    ("torch.json", lambda d: d["arch_notes"][0].update(last_torch=2.9), "arch_notes[0].last_torch"),
    ("cuda.json", lambda d: d["toolkits"][0].update(min_driver="570; reboot"), "toolkits[0].min_driver"),
    ("cuda.json", lambda d: d["minor_version_compatibility"]["drivers"].update({"12": 525}), "drivers.12"),
    ("cuda.json", lambda d: d["driver_branches"][0].update(branch="Rfoo"), "driver_branches[0].branch"),
    (
        "cuda.json",
        lambda d: d["architectures"][0].update(first_cuda_by_cc={"10.3": 12.9}),
        "first_cuda_by_cc",
    ),
    ("nvidia_gpus.json", lambda d: d["gpus"][0].update(compute_capability="12"), "compute_capability"),
    ("amd_gpus.json", lambda d: d["gpus"][0].update(gfx_target="gfx9xx"), "gfx_target"),
    ("amd_gpus.json", lambda d: d["gpus"][0].update(revisions={"C0": 1}), "revisions"),
    ("rocm.json", lambda d: d["releases"][0].update(version="6.0.0-evil"), "releases[0].version"),
    ("rocm.json", lambda d: d["releases"][0]["gpus"].update({"not a gfx": "full"}), "gpus"),
    ("bundle.json", lambda d: d.update(version="9999"), "bundle.json: $.version"),
]


def _one_line(text: str) -> bool:
    return "\n" not in text and len(text) < 400


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_hostile_index_urls_are_refused(tmp_path, url):
    bundle = copy_bundle(tmp_path, "2099.01.01")
    edit(bundle / "torch.json", _set_url(url))
    with pytest.raises(M.MatrixError) as err:
        M.parse_dir(bundle, "test")
    message = str(err.value)
    assert message.startswith("torch.json: $.releases[0].variants[1].index_url") and _one_line(message)
    problems = B.check(bundle)
    assert len(problems) == 1 and problems[0] == message


@pytest.mark.parametrize(("file", "change", "needle"), HOSTILE_FIELDS)
def test_wrong_types_and_malformed_values_are_refused(tmp_path, file, change, needle):
    bundle = copy_bundle(tmp_path, "2099.01.01")
    edit(bundle / file, change)
    with pytest.raises(M.MatrixError) as err:
        M.parse_dir(bundle, "test")
    message = str(err.value)
    assert message.startswith(file) and needle in message and _one_line(message), message
    assert B.check(bundle) == [message]


def test_the_shipped_bundle_and_its_urls_pass(tmp_path):
    assert B.check(M.bundled_dir()) == []
    bundle = copy_bundle(tmp_path)
    edit(bundle / "torch.json", _set_url("https://download.pytorch.org/whl/cu118/"))  # trailing slash: fine
    assert B.check(bundle) == []


def test_a_hostile_bundle_is_not_installed(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUENV_STATE_DIR", str(tmp_path / "state"))
    M.clear_cache()
    bundle = copy_bundle(tmp_path, "2099.01.01")
    edit(bundle / "torch.json", _set_url("http://evil.example/whl/cu128"))
    with pytest.raises(B.BundleError) as err:
        B.install(str(bundle), B.digest(bundle))
    assert "index_url" in str(err.value)
    assert not (tmp_path / "state" / "matrices").exists()
    M.clear_cache()


_PROBE = r"""
import json, sys
if sys.argv[1] == "block":
    sys.modules["jsonschema"] = None  # `import jsonschema` now raises ImportError
from pathlib import Path
from gpuenv import matrixbundle as B
try:
    import jsonschema  # noqa: F401
    have = True
except ImportError:
    have = False
print(json.dumps({"jsonschema": have, "answers": {d: B.check(Path(d)) for d in sys.argv[2:]}}))
"""


def test_check_gives_the_same_answers_without_jsonschema(tmp_path):
    dirs = [str(M.bundled_dir())]
    for i, url in enumerate(("http://download.pytorch.org/whl/cu128", "https://user@evil/whl/cu128")):
        bundle = copy_bundle(tmp_path, "2099.01.01", name=f"url{i}")
        edit(bundle / "torch.json", _set_url(url))
        dirs.append(str(bundle))
    for i, (file, change, _) in enumerate(HOSTILE_FIELDS[:4]):
        bundle = copy_bundle(tmp_path, "2099.01.01", name=f"field{i}")
        edit(bundle / file, change)
        dirs.append(str(bundle))
    runs = {}
    for mode in ("block", "allow"):
        proc = subprocess.run(  # noqa: S603 - our own interpreter on our own probe
            [sys.executable, "-c", _PROBE, mode, *dirs],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        runs[mode] = json.loads(proc.stdout)
    assert runs["block"]["jsonschema"] is False
    assert runs["block"]["answers"] == runs["allow"]["answers"]
    answers = runs["block"]["answers"]
    assert answers[dirs[0]] == []
    assert all(len(answers[d]) == 1 and _one_line(answers[d][0]) for d in dirs[1:])


def test_matrix_check_command_refuses_with_one_line(tmp_path):
    from tests.cli_runner import invoke

    bundle = copy_bundle(tmp_path, "2099.01.01")
    edit(bundle / "torch.json", _set_url("https://download.pytorch.org.evil.com/whl/cu128"))
    result = invoke(["matrix", "check", str(bundle)])
    assert result.exit_code == 2 and "index_url" in result.output
    lines = [line for line in result.output.splitlines() if "torch.json" in line]
    assert len(lines) == 1


def test_shipped_files_validate_against_the_schemas_and_the_loader_agrees():
    # The schemas stay the documented format (used here, not at run time).
    from tests.schemas import validate

    for name, schema in B.SCHEMAS.items():
        validate(json.loads((Path(M.bundled_dir()) / name).read_text()), schema[: -len(".json")])
