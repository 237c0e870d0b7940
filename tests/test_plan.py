"""The planner, plan files and the executor's pure parts, on facts files (fast, no root needed)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuenv import facts as facts_mod
from gpuenv.execute import apt, executor
from gpuenv.execute.journal import Busy, Journal
from gpuenv.execute.runner import DryRunViolation, SimulatingRunner
from gpuenv.exitcodes import Exit
from gpuenv.plan import planfile, planner, repos
from gpuenv.plan.plan import Action, Kind, PlanError, from_dict
from tests.schemas import validate

FACTS = Path(__file__).parent / "facts"
FIXTURES = sorted(FACTS.glob("plan-*.json"))


def load(name: str) -> dict:
    return json.loads((FACTS / f"{name}.json").read_text())


def matrices():
    try:
        from gpuenv import matrices as m

        return m.load()
    except NotImplementedError:
        return None


def plan_for(doc: dict, stack: str, action=Action.INSTALL, **kw):
    req = planner.Request(action=action, stack=stack, user=kw.pop("user", "alice"), **kw)
    return planner.make_plan(facts_mod.from_dict(doc), matrices(), repos.load(), req)


def packages_of(plan, kind=Kind.APT_INSTALL) -> list[str]:
    return [p for s in plan.steps if s.kind is kind and not s.autoremove for p in s.packages or ()]


# --------------------------------------------------------------------------------------------
# Plans on every fixture: valid, explained, ordered


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
@pytest.mark.parametrize("stack", ["rocm", "cuda"])
def test_plans_validate_and_every_step_says_why(path, stack):
    doc = json.loads(path.read_text())
    try:
        plan = plan_for(doc, stack, version="12.8" if stack == "cuda" else None)
    except PlanError as exc:  # a clear refusal is an answer too, but it must say what to do
        assert "--version" in str(exc) or "matrices" in str(exc)
        return
    d = plan.to_dict()
    validate(d, "plan")
    assert from_dict(json.loads(json.dumps(d))) == plan
    assert all(s.why for s in plan.steps)
    kinds = [s.kind for s in plan.steps]
    assert kinds.count(Kind.APT_UPDATE) == 1
    first_install = min(i for i, s in enumerate(plan.steps) if s.kind is Kind.APT_INSTALL)
    assert kinds.index(Kind.APT_UPDATE) < first_install
    purges = [i for i, s in enumerate(plan.steps) if s.kind is Kind.APT_PURGE]
    assert all(i < kinds.index(Kind.APT_KEY) for i in purges)
    ids = [s.id for s in plan.steps]
    if "driver" in ids:
        assert ids.index("driver") < ids.index("toolkit")
        assert plan.step("driver").reboot_after and plan.reboot_required
    key = plan.step("key")
    assert key.url.startswith("https://") and len(key.fingerprint) == 40
    for s in plan.steps:
        if s.kind is Kind.APT_SOURCE:
            # one-line (signed-by=) or deb822 (Signed-By:) sources, as the vendor's page writes them
            assert f"signed-by={key.path}" in s.content or f"Signed-By: {key.path}\n" in s.content


def test_cuda_leftovers_purged_by_exact_names_only():
    plan = plan_for(load("plan-ubuntu2404-rx9070-cuda-leftovers"), "rocm")
    purged = packages_of(plan, Kind.APT_PURGE)
    assert {
        "cuda-toolkit-12-8",
        "cuda-drivers",
        "nvidia-open",
        "libcublas-12-8",
        "nvidia-dkms-570-open",
    } <= set(purged)
    for innocent in ("nvidia-container-toolkit", "libnvidia-container1", "hashcat-nvidia", "libnet-snpp-perl",
                     "python3-pycuda", "bash"):  # fmt: skip
        assert innocent not in purged
    assert not any(ch in p for p in purged for ch in "*?[")
    removed = {s.path for s in plan.steps if s.kind is Kind.REMOVE_FILE}
    assert "/etc/apt/sources.list.d/cuda-ubuntu2404-x86_64.list" in removed  # from the facts' sources
    assert "/etc/apt/sources.list.d/ubuntu.sources" not in removed
    purge = plan.step("purge-cuda-packages")
    assert purge.reboot_after  # a kernel driver goes


def test_rocm_suite_follows_the_os():
    noble = plan_for(load("plan-ubuntu2404-rx9070-cuda-leftovers"), "rocm", version="7.2.4")  # the legacy stream
    assert " noble main" in noble.step("source-1").content
    assert "linux-modules-extra-6.8.0-60-generic" in packages_of(noble)  # Ubuntu: modules-extra too
    debian = copy.deepcopy(load("plan-debian12-h100-rocm-leftovers"))
    debian["gpus"] = load("plan-ubuntu2404-rx9070-cuda-leftovers")["gpus"]
    debian["kernel"]["headers_installed"] = False
    plan = plan_for(debian, "rocm", version="7.2.4")
    assert all(" jammy main" in s.content for s in plan.steps if s.kind is Kind.APT_SOURCE)
    assert packages_of(plan)[:1] == ["linux-headers-6.1.0-28-amd64"]  # Debian: headers only
    assert plan.step("groups").user == "alice" and plan.step("groups").groups == ("render", "video")
    assert "amdgpu-dkms" in packages_of(plan) and "rocm" in packages_of(plan)


def test_rocm_to_debian_nvidia_box_purges_rocm_not_lookalikes():
    plan = plan_for(load("plan-debian12-h100-rocm-leftovers"), "cuda", version="12.8")
    purged = packages_of(plan, Kind.APT_PURGE)
    assert {"rocm", "rocm-core", "hip-runtime-amd", "amdgpu-dkms", "rocblas"} <= set(purged)
    assert "hipercontracer" not in purged
    assert plan.step("nouveau-blacklist").why == "nvidia.nouveau-loaded"
    assert "cuda-toolkit-12-8" in packages_of(plan)
    assert plan.target.driver == "nvidia-open"  # Hopper: open modules


def test_container_plans_user_space_only_blocked_only_without_the_devices():
    doc = load("plan-ubuntu2204-gtx1080-container")
    mapped = copy.deepcopy(doc)
    mapped["device_nodes"] = {"/dev/nvidiactl": {"exists": True}, "/dev/nvidia0": {"exists": True}}
    plan = plan_for(mapped, "cuda", version="12.8")
    # The doctor calls a container with its GPU mapped in fine (info): so does the plan.
    assert plan.blockers == ()
    assert not [s for s in plan.steps if s.id in ("driver", "headers", "nouveau-blacklist")]
    assert any("host needs the NVIDIA driver and nvidia-container-toolkit" in n for n in plan.notes)
    unmapped = copy.deepcopy(doc)
    unmapped["device_nodes"] = {"/dev/nvidiactl": {"exists": False}}
    blocked = plan_for(unmapped, "cuda", version="12.8")
    assert blocked.blockers == ("platform.container",)
    assert any(n.startswith("platform.container: Inside a docker container without the GPU device nodes") for n in blocked.notes)


def test_wsl_never_gets_a_linux_nvidia_driver():
    plan = plan_for(load("plan-ubuntu2404-rtx5090-wsl"), "cuda", version="12.8")
    pkgs = packages_of(plan)
    assert not [p for p in pkgs if p.startswith(("nvidia-", "cuda-drivers"))]
    assert "cuda-toolkit-12-8" in pkgs
    assert any("under WSL 2 the GPU driver comes from Windows" in n for n in plan.notes)
    # A Linux driver already installed inside WSL is the doctor's platform.wsl error: a blocker.
    broken = copy.deepcopy(load("plan-ubuntu2404-rtx5090-wsl"))
    broken.setdefault("packages", {"manager": "dpkg", "installed": {}})["installed"]["nvidia-driver-570"] = "570.133.07-0ubuntu1"
    assert "platform.wsl" in plan_for(broken, "cuda", version="12.8").blockers


def test_module_flavour_follows_the_gpu():
    pascal = copy.deepcopy(load("plan-ubuntu2204-gtx1080-container"))
    pascal["platform"]["container"] = None
    plan = plan_for(pascal, "cuda", version="12.8")
    assert "nvidia-open" not in packages_of(plan)
    assert any(p.startswith("cuda-drivers") for p in packages_of(plan))
    blackwell = copy.deepcopy(load("plan-ubuntu2404-rtx5090-wsl"))
    blackwell["platform"]["wsl"] = False
    assert "nvidia-open" in packages_of(plan_for(blackwell, "cuda", version="12.8"))
    both = copy.deepcopy(blackwell)
    both["gpus"] = blackwell["gpus"] + pascal["gpus"]
    assert "nvidia.module-flavor" in plan_for(both, "cuda", version="12.8").blockers


def test_unsupported_arch_os_and_no_gpu_are_blockers():
    arm = plan_for(load("plan-ubuntu2404-arm64-nogpu"), "rocm")
    assert {"platform.arch-unsupported", "gpu.none"} <= set(arm.blockers)
    fedora = plan_for(load("plan-fedora41-rx7900"), "rocm")
    assert "os.unsupported" in fedora.blockers


def test_unknown_architecture_is_not_unsupported():
    doc = copy.deepcopy(load("plan-ubuntu2404-rx9070-cuda-leftovers"))
    doc["host"]["arch"] = "unknown"
    assert "platform.arch-unsupported" not in plan_for(doc, "rocm").blockers


def test_uninstall_is_the_purge_alone():
    plan = plan_for(load("plan-ubuntu2404-rx9070-cuda-leftovers"), "cuda", action=Action.UNINSTALL)
    assert plan.action is Action.UNINSTALL
    assert not [s for s in plan.steps if s.kind in (Kind.APT_INSTALL, Kind.APT_KEY, Kind.APT_SOURCE)]
    assert "cuda-toolkit-12-8" in packages_of(plan, Kind.APT_PURGE)
    validate(plan.to_dict(), "plan")


def test_unknown_rocm_release_is_a_clear_error():
    with pytest.raises(PlanError, match="ROCm 9.9 is not in the bundled matrices"):
        plan_for(load("plan-ubuntu2404-rx9070-cuda-leftovers"), "rocm", version="9.9")


def test_planner_is_deterministic():
    doc = load("plan-debian12-h100-rocm-leftovers")
    assert plan_for(doc, "cuda", version="12.8") == plan_for(doc, "cuda", version="12.8")


# --------------------------------------------------------------------------------------------
# Repository data and purge rules


def test_repos_json_matches_its_schema():
    import jsonschema

    schema = json.loads((Path(repos.__file__).parents[1] / "schemas/matrices-repos.json").read_text())
    jsonschema.validate(
        json.loads(Path(repos.default_path()).read_text()), schema, cls=jsonschema.Draft202012Validator
    )


def test_purge_rules_are_anchored(tmp_path):
    doc = json.loads(Path(repos.default_path()).read_text())
    doc["purge"]["cuda"]["match"].append("*nvidia*")
    bad = tmp_path / "repos.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(PlanError, match="not anchored"):
        repos.load(bad)


@pytest.mark.parametrize(
    "name,stack,expected",
    [
        ("cuda-toolkit-12-8", "cuda", True),
        ("nvidia-open", "cuda", True),
        ("libnvidia-compute-570", "cuda", True),
        ("nvidia-container-toolkit", "cuda", False),
        ("libnvidia-container-tools", "cuda", False),
        ("hashcat-nvidia", "cuda", False),
        ("boinc-client-nvidia-cuda", "cuda", False),
        ("libnet-snpp-perl", "cuda", False),
        # NVIDIA's Wayland EGL platform: only NVIDIA's EGL loads it; its removal list (*nvidia*)
        # takes it, and apt's simulation refuses it if something outside the plan still needs it.
        ("libnvidia-egl-wayland1", "cuda", True),
        ("nvidia-container-toolkit-base", "cuda", False),
        ("python3-pycuda", "cuda", False),
        ("rocm", "rocm", True),
        ("rocm-core", "rocm", True),
        ("hip-runtime-amd", "rocm", True),
        ("amdgpu-dkms", "rocm", True),
        ("hipercontracer", "rocm", False),
        ("python3-hiredis", "rocm", False),
    ],
)
def test_purge_rules(name, stack, expected):
    assert repos.load().purge[stack].matches(name) is expected


@pytest.mark.parametrize("rule", ["^cuda$|.*$", "^.*nvidia.*$", "^lib.*$"])
def test_purge_rules_that_reach_unrelated_packages_are_refused(tmp_path, rule):
    doc = json.loads(Path(repos.default_path()).read_text())
    doc["purge"]["cuda"]["match"].append(rule)
    bad = tmp_path / "repos.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(PlanError, match="too broad"):
        repos.load(bad)


# --------------------------------------------------------------------------------------------
# Plan files


def test_planfile_round_trip_and_refusals(tmp_path):
    plan = plan_for(load("plan-debian12-h100-rocm-leftovers"), "cuda", version="12.8")
    path = tmp_path / "p.json"
    planfile.save(plan, path)
    assert planfile.load(path) == plan
    assert planfile.digest(plan) == planfile.digest(planfile.load(path))
    good = json.loads(path.read_text())

    def refused(mutate, match):
        doc = copy.deepcopy(good)
        mutate(doc)
        path.write_text(json.dumps(doc))
        with pytest.raises(PlanError, match=match):
            planfile.load(path)

    refused(lambda d: d.update(schema="gpuenv.plan/0"), "schema")
    refused(lambda d: d["steps"][0].update(packages=["*nvidia*"]), "not a package name")
    refused(lambda d: d["steps"][0].update(kind="rm-rf"), "not a step kind")
    refused(lambda d: d["steps"][1].update(path="etc/x"), "absolute")
    refused(lambda d: d.update(reboot_required=not d["reboot_required"]), "reboot_required")
    refused(lambda d: d["steps"].append(d["steps"][0]), "twice")
    refused(lambda d: d.pop("facts_digest"), "facts_digest")
    path.write_text("{not json")
    with pytest.raises(PlanError, match="not valid JSON"):
        planfile.load(path)
    with pytest.raises(PlanError, match="cannot read"):
        planfile.load(tmp_path / "missing.json")


# --------------------------------------------------------------------------------------------
# apt's simulation, keys, the dry-run runner, the journal


SIM = """NOTE: This is only a simulation!
Reading package lists...
The following packages will be REMOVED:
  cuda-toolkit-12-8* libcublas-12-8* myapp*
Purg cuda-toolkit-12-8 [12.8.1-1]
Purg myapp [1.0-1]
Purg libcublas-12-8 [12.8.4.1-1]
Inst rocm-core (7.2.4.70204-93~22.04 repo.radeon.com:jammy [amd64])
Conf rocm-core (7.2.4.70204-93~22.04 repo.radeon.com:jammy [amd64])
"""


def test_parse_simulation_and_collateral():
    sim = apt.parse_simulation(SIM)
    assert sim.removes == ("cuda-toolkit-12-8", "myapp", "libcublas-12-8")
    assert sim.installs == ("rocm-core",)
    assert sim.collateral(["cuda-toolkit-12-8", "libcublas-12-8"]) == ("myapp",)
    assert sim.collateral(["cuda-toolkit-12-8", "libcublas-12-8"], ["myapp"]) == ()
    missing = apt.parse_simulation("E: Unable to locate package rocm\n", 100)
    assert missing.missing == ("rocm",) and missing.error is None
    broken = apt.parse_simulation("E: Unmet dependencies.\n", 100)
    assert broken.error == "Unmet dependencies."


def test_pub_fingerprints_skip_subkeys():
    colons = "pub:-:4096:1:9386B48A1A693C5C:1470009600:::-:::scESC::::::23::0:\n" \
        "fpr:::::::::CA8BB4727A47B4D09B4EE8969386B48A1A693C5C:\n" \
        "sub:-:4096:1:AAAA:1470009600::::::e::::::23:\n" \
        "fpr:::::::::2B2AFE47A094DC2D1013777C30C07AF01A6D36BA:\n"  # fmt: skip
    assert apt.pub_fingerprints(colons) == (("CA8BB4727A47B4D09B4EE8969386B48A1A693C5C",), 1)


def test_dry_run_runner_and_files_refuse_changes(tmp_path):
    runner = SimulatingRunner("/")
    for argv in (["apt-get", "install", "-y", "x"], ["touch", str(tmp_path / "f")], ["dpkg", "-i", "x.deb"]):
        with pytest.raises(DryRunViolation):
            runner.run(argv)
    with pytest.raises(DryRunViolation):
        runner.run(["gpg", "--import", "k"], host=True)
    with pytest.raises(DryRunViolation):
        executor.ReadOnlyFiles(str(tmp_path)).write("/etc/x", b"x", "0644")
    with pytest.raises(DryRunViolation):
        executor.ReadOnlyFiles(str(tmp_path)).remove("/etc/x")
    assert not (tmp_path / "f").exists() and not (tmp_path / "etc").exists()


def test_files_write_atomically_with_mode(tmp_path):
    files = executor.Files(str(tmp_path))
    files.write("/etc/apt/sources.list.d/x.list", b"deb x\n", "0640")
    p = tmp_path / "etc/apt/sources.list.d/x.list"
    assert p.read_bytes() == b"deb x\n" and oct(p.stat().st_mode & 0o777) == "0o640"
    assert [f.name for f in p.parent.iterdir()] == ["x.list"]


def test_journal_lock_is_exclusive(tmp_path):
    first, second = Journal(str(tmp_path)), Journal(str(tmp_path))
    first.acquire()
    try:
        with pytest.raises(Busy):
            second.acquire()
    finally:
        first.release()
    second.acquire()
    second.release()


def _tiny_plan(doc):
    return plan_for(doc, "rocm")


def test_apply_refuses_stale_plan_and_blockers_before_any_change(tmp_path):
    doc = load("plan-ubuntu2404-rx9070-cuda-leftovers")
    plan = _tiny_plan(doc)
    other = copy.deepcopy(doc)
    other["packages"]["installed"]["newthing"] = "1"
    now = facts_mod.from_dict(other)
    out = executor.apply(plan, str(tmp_path), executor.Options(facts_now=now))
    assert out.exit is Exit.REFUSED and "stale plan" in out.message
    blocked = plan_for(load("plan-ubuntu2404-arm64-nogpu"), "rocm")
    out = executor.apply(
        blocked,
        str(tmp_path),
        executor.Options(facts_now=facts_mod.from_dict(load("plan-ubuntu2404-arm64-nogpu"))),
    )
    assert out.exit is Exit.REFUSED and "blockers" in out.message
    assert list(tmp_path.rglob("*")) == []  # a refused apply leaves nothing, not even its lock file


# --------------------------------------------------------------------------------------------
# The command line


def cli(*args, env=None):
    e = {**os.environ, "COLUMNS": "200", **(env or {})}
    e.pop("SUDO_USER", None)
    return subprocess.run([sys.executable, "-m", "gpuenv", *args], capture_output=True, text=True, env=e)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_cli_dry_run_on_each_fixture(path):
    res = cli("install", "rocm", "--dry-run", "--facts", str(path))
    plan = plan_for(json.loads(path.read_text()), "rocm", user=None)
    # A plan with blockers is shown, and refused: exit 3, so that scripts can tell.
    assert res.returncode == (3 if plan.blockers else 0), res.stderr
    assert f"install rocm {plan.target.version}" in res.stdout
    assert "BLOCKER" in res.stdout or "Purge" in res.stdout or "Install ROCm" in res.stdout
    assert ("BLOCKER" in res.stdout) == bool(plan.blockers)
    assert "nothing was changed" in res.stdout


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_cli_json_is_a_valid_plan(path):
    res = cli("install", "rocm", "--json", "--facts", str(path))
    doc = json.loads(res.stdout)
    validate(doc, "plan")
    assert res.returncode == (3 if doc["blockers"] else 0), res.stderr


def test_cli_dry_run_on_this_machine():
    res = cli("install", "rocm", "--dry-run")
    assert res.returncode in (0, 3), res.stderr
    assert "install rocm" in res.stdout and "nothing was changed" in res.stdout


def test_cli_bad_inputs_are_usage_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "gpuenv.plan/1"}')
    res = cli("apply", str(bad), "--yes", "--root", str(tmp_path))
    assert res.returncode == 2 and "required field missing" in res.stderr
    res = cli("install", "rocm", "--dry-run", "--facts", str(tmp_path / "nope.json"))
    assert res.returncode == 2 and "facts" in res.stderr and "No such file" in res.stderr
    res = cli("install", "metal", "--dry-run", "--facts", str(FIXTURES[0]))
    assert res.returncode == 2
    assert not (tmp_path / "var").exists()


def test_cli_an_install_from_a_facts_file_is_only_shown(tmp_path):
    res = cli("install", "rocm", "--yes", "--root", str(tmp_path), "--facts", str(FIXTURES[0]))
    assert res.returncode == 2 and "an apply is made from the facts of the machine it changes" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_torch_goes_into_the_named_venv_with_the_matrices_index():
    doc = load("plan-debian12-h100-rocm-leftovers")
    m = matrices()
    if m is None:
        pytest.skip("matrices not available")
    plan = plan_for(doc, "cuda", version="12.8", torch="2.7", venv="/opt/venv")
    variants = {v.variant: v for v in m.torch_variants("2.7")}
    pick = plan.target.torch
    assert pick.variant in variants and pick.index_url == variants[pick.variant].index_url
    assert variants[pick.variant].stack == "cuda" and _le(variants[pick.variant].stack_version, "12.8")
    assert plan.step("torch").argv[:5] == ("/opt/venv/bin/python", "-I", "-m", "pip", "install")
    assert plan.step("torch-venv").creates == "/opt/venv/bin/python"
    with pytest.raises(PlanError, match="--venv"):
        plan_for(doc, "cuda", version="12.8", torch="2.7")


def _le(a: str, b: str) -> bool:
    return tuple(map(int, a.split("."))) <= tuple(map(int, b.split(".")))


def test_default_cuda_is_the_newest_the_gpu_supports():
    m = matrices()
    if m is None:
        pytest.skip("matrices not available")
    pascal = copy.deepcopy(load("plan-ubuntu2204-gtx1080-container"))
    pascal["platform"]["container"] = None
    plan = plan_for(pascal, "cuda")
    fitting = [t for t in m.cuda_toolkits() if "6.1" in t.compute_capabilities and t.confirmed]
    assert plan.target.version == fitting[-1].series
    assert not plan.target.version.startswith("13.")  # CUDA 13 dropped Pascal


def test_install_purges_the_other_stack_only_where_a_trace_of_it_is_left():
    # The CUDA-leftovers box gets the CUDA purge; a box that never had CUDA gets none of its steps.
    leftovers = json.loads((FACTS / "plan-ubuntu2404-rx9070-cuda-leftovers.json").read_text())
    assert any(s.id.startswith("purge-cuda") for s in plan_for(leftovers, "rocm").steps)
    clean = json.loads(json.dumps(leftovers))
    clean["packages"]["installed"] = {
        k: v for k, v in clean["packages"]["installed"].items() if k in ("bash", "libnet-snpp-perl")
    }
    clean["apt_sources"] = [s for s in clean["apt_sources"] or [] if "nvidia" not in s["uri"]]
    clean["toolkits"] = {"cuda": [], "rocm": clean.get("toolkits", {}).get("rocm", [])}
    clean["nvidia"] = None
    ids = [s.id for s in plan_for(clean, "rocm").steps]
    assert not [i for i in ids if i.startswith("purge-cuda")]
    assert "key" in ids


# -- the request line that --expect repeats ------------------------------------------------------


def test_a_request_of_plain_words_reads_as_its_options():
    from gpuenv.plan.plan import Action, Request

    r = Request(Action.INSTALL, "rocm", torch="2.7.1", venv="/opt/torch", user="alice")
    assert r.line() == "install rocm --torch 2.7.1 --venv /opt/torch --user alice"
    assert r.named_by("install rocm --torch 2.7.1 --venv /opt/torch --user alice")
    assert r.named_by("  install rocm  --torch 2.7.1 --venv '/opt/torch' --user alice ")  # as a shell reads it
    assert not r.named_by("install rocm --torch 2.7.1 --venv /opt/torch")
    assert not r.named_by("install rocm --torch 2.7.1 --venv '/opt/torch --user alice")  # unclosed quote


def test_no_other_request_reads_the_same_line():
    from gpuenv.plan.plan import Action, Request

    widened = Request(Action.INSTALL, "rocm", torch="2.7.1", venv="/opt/torch --user alice")
    asked = Request(Action.INSTALL, "rocm", torch="2.7.1", venv="/opt/torch", user="alice")
    assert widened.line() != asked.line()
    assert widened.line() == "install rocm --torch 2.7.1 --venv '/opt/torch --user alice'"
    assert not widened.named_by(asked.line()) and not asked.named_by(widened.line())
    assert widened.named_by(widened.line())
