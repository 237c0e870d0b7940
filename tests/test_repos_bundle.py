"""Where plans get their vendor repositories and keys: the shipped repos.json, or the one an
installed matrices bundle carries (an admin's mirror, installed with `gpuenv matrix update`).
No environment variable changes them: the installed console script reads no test-only switch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv import matrices as M
from gpuenv import matrixbundle as B
from gpuenv.plan import repos
from gpuenv.plan.plan import PlanError
from tests import test_matrices_update

HERE = Path(__file__).resolve().parent
FACTS = HERE / "facts" / "plan-debian12-h100-rocm-leftovers.json"
AMD_FACTS = HERE / "facts" / "plan-ubuntu2404-rx9070-cuda-leftovers.json"
MIRROR = "http://127.0.0.1:8765"
FPR = "0123456789ABCDEF0123456789ABCDEF01234567"
AMD_THEROCK_KEY = "D0F004A0025A1145C7807FCD0701EAC4D5E02107"  # unconfirmed (#42): pinned when repeated
state = test_matrices_update.state  # the fixture: GPUENV_STATE_DIR in tmp_path, matrices cache cleared
HOSTILE = {
    "GPUENV_TEST_REPO_MAP": "https://developer.download.nvidia.com=https://evil.example/nv,"
    "https://repo.radeon.com=https://evil.example/amd",
    "GPUENV_TEST_KEY_FINGERPRINTS": f"amd={FPR},nvidia={FPR}",
}


def gpuenv_argv() -> list[str]:
    """The installed console script (tests/run.sh sets GPUENV_E2E_BIN), else this interpreter's."""
    installed = os.environ.get("GPUENV_E2E_BIN")
    return [installed] if installed else [sys.executable, "-m", "gpuenv"]


def plan_json(*args: str, env: dict[str, str]) -> dict:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GPUENV_"))}
    done = subprocess.run([*gpuenv_argv(), "install", *args, "--dry-run", "--json"], env={**full, **env},
                          capture_output=True, text=True, timeout=120, cwd="/", check=False)  # fmt: skip
    assert done.stdout.startswith("{"), done.stderr
    return json.loads(done.stdout)


def keys(plan: dict) -> list[tuple[str, str]]:
    return [(s["url"], s["fingerprint"]) for s in plan["steps"] if s["kind"] == "apt-key"]


def shipped() -> dict:
    return json.loads((Path(M.bundled_dir()) / "repos.json").read_text())


def test_the_installed_script_ignores_the_old_test_switches(tmp_path):
    env = {**HOSTILE, "GPUENV_STATE_DIR": str(tmp_path / "state")}
    cuda = plan_json("cuda", "--version", "12.8", "--facts", str(FACTS), env=env)
    rocm = plan_json("rocm", "--version", "7.2.4", "--facts", str(AMD_FACTS), env=env)
    therock = plan_json("rocm", "--version", "10.0.0", "--facts", str(AMD_FACTS),
                        "--trust-unconfirmed-key", AMD_THEROCK_KEY, env=env)  # fmt: skip
    nv, amd = shipped()["nvidia"]["key"], shipped()["amd"]["key"]
    amd_100 = next(r for r in shipped()["amd_therock"]["releases"] if r["rocm"] == "10.0.0")["key"]
    assert keys(cuda) == [(nv["url"].format(distro="debian12", arch="x86_64"), nv["fingerprint"])]
    assert keys(rocm) == [(amd["url"], amd["fingerprint"])]
    assert keys(therock) == [(amd_100["url"], amd_100["fingerprint"])]
    text = json.dumps([cuda, rocm, therock])
    assert "evil.example" not in text and FPR not in text and "test_overrides" not in text


def mirror_bundle(dest: Path, key_url: str | None = None) -> Path:
    """A newer bundle whose repos.json names the mirror at MIRROR and pins FPR (tests/chroot_env's,
    as the new-stream install tests use it); ``key_url`` replaces AMD's key URL."""
    from tests.chroot_env import mirror_bundle as build

    build(dest, MIRROR, FPR, therock=True)
    if key_url is not None:
        doc = json.loads((dest / "repos.json").read_text())
        doc["amd"]["key"]["url"] = key_url
        (dest / "repos.json").write_text(json.dumps(doc))
    return dest


def test_an_installed_bundle_with_repos_json_is_what_plans_use(tmp_path, state):
    bundle = mirror_bundle(tmp_path / "bundle")
    B.install(str(bundle), B.digest(bundle))
    assert (state / "repos.json").is_file()
    r = repos.load()
    assert r.amd_key().url == f"{MIRROR}/amd/rocm/rocm.gpg.key" and r.amd_key().fingerprint == FPR
    assert r.loopback_keys
    assert r.is_vendor_uri("amd", "https://repo.radeon.com/rocm/apt/7.2.4")
    # The environment names the state directory, the bundle there decides: as a plan shows it.
    env = {"GPUENV_STATE_DIR": str(state.parent)}
    plan = plan_json("rocm", "--version", "7.2.4", "--facts", str(AMD_FACTS), env=env)
    assert keys(plan) == [(f"{MIRROR}/amd/rocm/rocm.gpg.key", FPR)]
    newest = plan_json("rocm", "--facts", str(AMD_FACTS), env=env)  # the new stream's 10.0, from the mirror too
    assert keys(newest) == [(f"{MIRROR}/amd-stable/rocm/gpg/packages.gpg", FPR)]


def test_without_repos_json_an_installed_bundle_keeps_the_shipped_repositories(tmp_path, state):
    bundle = mirror_bundle(tmp_path / "bundle")
    (bundle / "repos.json").unlink()
    # rocm.json's copy of the routes named the mirror's key: against the shipped repos.json it
    # disagrees, and the bundle is refused (#42: the doctor and the planner would choose apart).
    with pytest.raises(B.BundleError, match="rocm.json's repository entries and repos.json disagree"):
        B.install(str(bundle), B.digest(bundle))
    shutil.copy(Path(M.bundled_dir()) / "rocm.json", bundle / "rocm.json")
    B.install(str(bundle), B.digest(bundle))
    assert repos.load().amd_key().url == shipped()["amd"]["key"]["url"]


@pytest.mark.parametrize("url", ["http://evil.example/key", "http://10.0.0.1/key", "ftp://127.0.0.1/key",
                                 "http://localhost.evil.example/key"])  # fmt: skip
def test_a_bundle_whose_key_comes_over_http_from_elsewhere_is_refused(tmp_path, state, url):
    bundle = mirror_bundle(tmp_path / "bundle", key_url=url)
    with pytest.raises(B.BundleError, match="key URL must be https"):
        B.install(str(bundle), B.digest(bundle))
    assert not state.exists()


def test_keys_come_over_https_or_from_this_machines_loopback(tmp_path):
    assert not repos.load(Path(M.bundled_dir()) / "repos.json").loopback_keys
    doc = shipped()
    path = tmp_path / "repos.json"
    doc["nvidia"]["key"]["url"] = "http://[::1]:8080/{distro}/{arch}/k.pub"
    path.write_text(json.dumps(doc))
    assert repos.load(path).loopback_keys
    doc["nvidia"]["key"]["url"] = "http://example.com/k.pub"
    path.write_text(json.dumps(doc))
    repos._load.cache_clear()
    with pytest.raises(PlanError, match="nvidia key URL must be https"):
        repos.load(path)


@pytest.mark.skipif(os.geteuid() != 0, reason="root's rule (CI is root)")
def test_as_root_an_installed_repos_json_another_account_could_change_is_passed_over(tmp_path, state):
    bundle = mirror_bundle(tmp_path / "bundle")
    B.install(str(bundle), B.digest(bundle))
    os.chown(state / "repos.json", 1000, 1000)
    M.clear_cache()
    m = M.load()
    assert m.bundle.origin == "bundled" and "repos.json belongs to uid 1000" in m.bundle.skipped
    assert repos.load().amd_key().url == shipped()["amd"]["key"]["url"]
