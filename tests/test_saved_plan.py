"""Reviewing a saved plan (#27 items 3 and 4), through the installed console script.

`gpuenv plan show FILE` shows a saved plan as the dry run does (or its JSON); `gpuenv apply FILE
--dry-run` admits the plan as apply does (stale? edited? a file others could change?), shows what
would run and changes nothing. The facts a plan records are the ones that read the same whoever
probes, so a plan made by a normal user is not stale for root. Dry-run wording: a kernel that is
not a distribution kernel is said to be one, and a command that will not run is not "already done".
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpuenv import facts as facts_mod
from gpuenv.plan.staleness import facts_digest
from tests.test_first_hour import BIN, FACTS, _box, _env, as_root, gpuenv

CUSTOM_KERNEL = "6.18.44-fc-v1272"


def _tree(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = path.read_bytes()
        else:
            out[rel] = "dir"
    return out


def _plan_lines(stdout: str) -> list[str]:
    """The plan as shown: its head, blockers, notes and steps (what follows is per command)."""
    lines = stdout.splitlines()
    end = next((i for i, ln in enumerate(lines) if ln.startswith(("plan saved to", "apply it with:"))), len(lines))
    return lines[:end]


@pytest.fixture
def saved(open_tmp):
    """A box (an AMD desktop's sysroot) and a plan for it saved by root."""
    root = _box(open_tmp)
    made = gpuenv("plan", "rocm", "--root", root, "--user", "alice", "--out", open_tmp / "p.json")
    assert made.returncode == 0, made.stderr
    return root, open_tmp / "p.json", made


# -- plan show ---------------------------------------------------------------------------------


def test_plan_show_renders_the_saved_plan_as_planning_did(saved):
    root, plan, made = saved
    shown = gpuenv("plan", "show", plan)
    assert shown.returncode == 0, shown.stderr
    assert _plan_lines(shown.stdout) == _plan_lines(made.stdout)
    assert "--expect 'install rocm --user alice'" in shown.stdout
    assert f"{os.path.abspath(BIN)} apply {plan} --dry-run" in shown.stdout


def test_plan_show_json_is_the_saved_plan(saved):
    _, plan, _ = saved
    shown = gpuenv("plan", "show", plan, "--json")
    assert shown.returncode == 0 and shown.stderr == ""
    assert json.loads(shown.stdout) == json.loads(plan.read_text())


@pytest.mark.parametrize(
    "args, says",
    [
        (["plan", "show"], "which plan? gpuenv plan show FILE"),
        (["plan", "show", "/nonexistent/p.json"], "/nonexistent/p.json"),
        (["plan", "show", str(FACTS / "torch-rx9070xt.json")], "plan"),
        (["plan", "rocm"], "--out FILE is required"),
        (["plan", "rocm", "extra.json", "--out", "x.json"], "unexpected argument 'extra.json'"),
    ],
)
def test_plan_show_bad_input_is_one_line_and_exit_2(args, says):
    res = gpuenv(*args)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and says in res.stderr, res.stderr


# -- apply FILE --dry-run ---------------------------------------------------------------------------


@as_root
def test_apply_dry_run_admits_the_plan_shows_it_and_changes_nothing(saved):
    root, plan, made = saved
    before = _tree(root)
    res = gpuenv("apply", plan, "--dry-run", "--root", root)
    assert res.returncode == 0, res.stderr
    assert _plan_lines(res.stdout)[: len(_plan_lines(made.stdout))] == _plan_lines(made.stdout)
    assert "the plan matches this machine and the request it records" in res.stdout
    assert res.stdout.rstrip().endswith("dry run: nothing was changed")
    assert _tree(root) == before and not (root / "var/lib/gpuenv").exists()


@as_root
def test_apply_dry_run_refuses_a_stale_plan(saved):
    root, plan, _ = saved
    (root / "etc/apt/sources.list.d/other.list").write_text("deb http://deb.example/x noble main\n")
    before = _tree(root)
    res = gpuenv("apply", plan, "--dry-run", "--root", root)
    assert res.returncode == 3 and res.stdout == ""
    assert "stale plan: this machine changed since the plan was made" in res.stderr
    assert _tree(root) == before


@as_root
def test_apply_dry_run_refuses_an_edited_plan(saved):
    root, plan, _ = saved
    doc = json.loads(plan.read_text())
    step = next(s for s in doc["steps"] if s.get("content"))
    step["content"] += "deb [trusted=yes] http://evil.example/ noble main\n"
    plan.write_text(json.dumps(doc))
    before = _tree(root)
    res = gpuenv("apply", plan, "--dry-run", "--root", root)
    assert res.returncode == 3 and res.stdout == ""
    assert "this plan is not the one gpuenv makes from this machine" in res.stderr
    assert _tree(root) == before


@as_root
def test_apply_dry_run_refuses_as_root_a_plan_others_could_change(saved):
    root, plan, _ = saved
    plan.chmod(0o666)
    res = gpuenv("apply", plan, "--dry-run", "--root", root)
    assert res.returncode == 3 and "refusing the plan" in res.stderr and "Nothing was changed" in res.stderr


def test_apply_dry_run_never_resumes(open_tmp):
    """A resume changes the machine: with --dry-run it is refused as a usage error, before the
    journal is even read."""
    res = gpuenv("apply", "--resume", "--dry-run", "--root", open_tmp)
    assert res.returncode == 2 and res.stdout == "" and "--dry-run and --resume" in res.stderr
    assert list(open_tmp.iterdir()) == []


# -- the facts a plan records: the same whoever probes ----------------------------------------------


def _facts(name: str = "torch-rx9070xt.json") -> dict:
    return json.loads((FACTS / name).read_text())


def _digest(doc: dict) -> str:
    return facts_digest(facts_mod.from_dict(doc))


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["platform"].update(virtualization="vm", virtualization_evidence="/proc/cpuinfo flags: hypervisor"),
        lambda d: d.setdefault("python", {}).update(version="3.11.2", executable="/usr/bin/python3"),
        lambda d: d.update(environment={"PATH": "/home/alice/.local/bin:/usr/bin"}),
        lambda d: d.update(collected_at="2030-01-01T00:00:00Z", errors=[{"probe": "python", "message": "x"}]),
        lambda d: [n.update(accessible=not n.get("accessible")) for n in (d.get("device_nodes") or {}).values()],
    ],
    ids=["hypervisor-name", "python", "environment", "moment", "device-access"],
)
def test_facts_that_differ_by_who_probes_do_not_make_a_plan_stale(change):
    doc = _facts()
    doc["platform"]["virtualization"] = "firecracker"  # what root reads
    other = copy.deepcopy(doc)
    change(other)
    assert _digest(other) == _digest(doc)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.setdefault("packages", {"manager": "dpkg", "installed": {}})["installed"].update(newthing="1"),
        lambda d: d["kernel"].update(release="6.8.0-99-generic"),
        lambda d: d.update(apt_sources=[*(d.get("apt_sources") or []), {"uri": "http://x.example/", "suites": ["noble"]}]),
        lambda d: d["gpus"].pop(),
        lambda d: d["os"].update(version_id="24.10"),
        lambda d: d.update(user={"name": "alice", "uid": 1000, "groups": ["render"]}),
        lambda d: d["platform"].update(container="docker"),
    ],
    ids=["package", "kernel", "apt-source", "gpu", "os", "user-groups", "container"],
)
def test_what_the_plan_depends_on_still_makes_it_stale(change):
    doc = _facts()
    other = copy.deepcopy(doc)
    change(other)
    assert _digest(other) != _digest(doc)


@as_root
def test_a_plan_a_normal_user_made_here_is_not_stale_for_root(open_tmp):
    """The README's flow on this very machine: `gpuenv plan` as the user, `sudo gpuenv apply`.
    Only the dry run runs (apt's simulation and reads): this machine is not changed."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-query") is None:
        pytest.skip("this machine has no apt")
    work = open_tmp / "u"
    work.mkdir()
    os.chown(work, 65534, 65534)
    made = gpuenv("plan", "rocm", "--out", "p.json", user="nobody", cwd=work)
    assert made.returncode in (0, 3), made.stderr
    res = gpuenv("apply", "p.json", "--dry-run", cwd=work, env=_env(SUDO_UID="65534", SUDO_USER="nobody"))
    assert "stale" not in res.stderr and "not the one gpuenv makes" not in res.stderr, res.stderr
    assert "the plan matches this machine" in res.stdout and "dry run: nothing was changed" in res.stdout


# -- #27 item 4: a kernel that is not a distribution kernel ------------------------------------------


@pytest.fixture
def custom_kernel_box(open_tmp):
    root = _box(open_tmp)
    (root / "proc/sys/kernel/osrelease").write_text(CUSTOM_KERNEL + "\n")
    return root


def test_the_plan_for_a_custom_kernel_says_so_and_names_no_headers_package(custom_kernel_box):
    # A legacy-stream plan builds amdgpu-dkms, which needs the kernel's build tree.
    res = gpuenv("install", "rocm", "--version", "7.2.4", "--json", "--root", custom_kernel_box, "--user", "root")
    plan = json.loads(res.stdout)
    packages = [p for s in plan["steps"] for p in s.get("packages") or ()]
    assert not any(p.startswith("linux-headers-") for p in packages), packages
    note = next(n for n in plan["notes"] if n.startswith("kernel.headers-missing"))
    assert f"the running kernel {CUSTOM_KERNEL} is not a distribution kernel" in note
    assert f"/lib/modules/{CUSTOM_KERNEL}/build" in note and "DKMS" in note
    # The new stream's plan leaves the kernel driver as it is: nothing to build, nothing to say.
    res = gpuenv("install", "rocm", "--json", "--root", custom_kernel_box, "--user", "root",
                 "--trust-unconfirmed-key", "D0F004A0025A1145C7807FCD0701EAC4D5E02107")  # fmt: skip
    plan = json.loads(res.stdout)
    assert plan["target"]["version"] == "10.1.0"
    assert not [n for n in plan["notes"] if n.startswith("kernel.headers-missing")], plan["notes"]


def test_the_doctors_fix_for_a_custom_kernel_names_no_package_that_does_not_exist(custom_kernel_box):
    res = gpuenv("doctor", "--json", "--root", custom_kernel_box, "--target", "rocm", "kernel.headers-missing")
    finding = next(f for f in json.loads(res.stdout)["findings"] if f["code"] == "kernel.headers-missing")
    assert f"linux-headers-{CUSTOM_KERNEL}" not in finding["fix"]
    assert "not a distribution kernel" in finding["detail"] and "distribution kernel" in finding["fix"]


def test_a_distribution_kernels_headers_are_still_planned_and_named(open_tmp):
    root = _box(open_tmp)
    release = (root / "proc/sys/kernel/osrelease").read_text().strip()
    res = gpuenv("doctor", "--json", "--root", root, "--target", "rocm", "kernel.headers-missing")
    fixes = [f["fix"] for f in json.loads(res.stdout)["findings"] if f["code"] == "kernel.headers-missing"]
    assert fixes and f"linux-headers-{release}" in fixes[0]


# -- #27 item 4: what a dry run says of steps that will not run --------------------------------------


def _shown(plan, outcome) -> str:
    import io

    from rich.console import Console

    from gpuenv.render.plan import show_plan

    out = io.StringIO()
    show_plan(Console(file=out, width=300, color_system=None, highlight=False, soft_wrap=True), plan, outcome)
    return out.getvalue()


def _plan_of(action, *steps):
    from gpuenv.plan.plan import Plan, PlanTarget

    return Plan(action, PlanTarget("rocm", "7.2.4"), "sha256:" + "0" * 64, tuple(steps))


def _outcome(*reports):
    from gpuenv.execute.executor import Outcome
    from gpuenv.exitcodes import Exit

    return Outcome(Exit.OK, "dry run: nothing was changed", tuple(reports))


def test_a_command_that_will_not_run_is_not_said_to_be_done():
    from gpuenv.execute.executor import StepReport
    from gpuenv.plan.plan import Action, Kind, Step

    rm = Step(id="rm", kind=Kind.REMOVE_FILE, title="Remove /etc/modprobe.d/x.conf", path="/etc/modprobe.d/x.conf")
    initramfs = Step(id="initramfs", kind=Kind.COMMAND, title="Rebuild the initramfs (update-initramfs -u)",
                     argv=("update-initramfs", "-u"), after=("rm",), reboot_after=True)  # fmt: skip
    plan = _plan_of(Action.INSTALL, rm, initramfs)
    text = _shown(plan, _outcome(StepReport(rm, "done", "absent"),
                                 StepReport(initramfs, "done", "nothing it follows changed")))  # fmt: skip
    line = next(ln for ln in text.splitlines() if "Rebuild the initramfs" in ln)
    assert "(already done)" not in line and "⟳ reboot after" not in line
    assert "(not needed: the steps it follows change nothing)" in line
    assert "A reboot is needed" not in text
    # When it does run, it says so, reboot and all.
    text = _shown(plan, _outcome(StepReport(rm, "todo", "present"), StepReport(initramfs, "todo", "runs")))
    line = next(ln for ln in text.splitlines() if "Rebuild the initramfs" in ln)
    assert line.endswith("⟳ reboot after") and "A reboot is needed" in text


def test_apt_missing_headers_of_a_custom_kernel_are_not_blamed_on_the_vendor_source():
    from gpuenv.execute.apt import Simulation
    from gpuenv.execute.executor import StepReport
    from gpuenv.plan.plan import Action, Kind, Step

    source = Step(id="source", kind=Kind.APT_SOURCE, title="Write rocm.list", path="/etc/apt/sources.list.d/rocm.list",
                  content="deb x noble main\n", mode="0644")  # fmt: skip
    headers = Step(id="headers", kind=Kind.APT_INSTALL, title="Install headers",
                   packages=(f"linux-headers-{CUSTOM_KERNEL}", "rocm"))  # fmt: skip
    sim = Simulation(missing=(f"linux-headers-{CUSTOM_KERNEL}", "rocm"))
    text = _shown(_plan_of(Action.INSTALL, source, headers),
                  _outcome(StepReport(source, "todo"), StepReport(headers, "todo", "", sim)))  # fmt: skip
    line = next(ln for ln in text.splitlines() if "apt could not simulate" in ln)
    assert f"the running kernel {CUSTOM_KERNEL} is not a distribution kernel" in line and "DKMS" in line
    assert f"linux-headers-{CUSTOM_KERNEL} (not in apt's lists yet" not in line
    assert "rocm (not in apt's lists yet: the vendor source is added by this plan)" in line
    # Without a source in the plan, no vendor source is claimed.
    text = _shown(_plan_of(Action.INSTALL, headers), _outcome(StepReport(headers, "todo", "", Simulation(missing=("rocm",)))))
    assert "rocm (not in apt's lists)" in text and "vendor source" not in text


def test_an_uninstall_with_nothing_there_says_nothing_to_remove():
    from gpuenv.execute.executor import StepReport
    from gpuenv.plan.plan import Action, Kind, Step

    steps = [Step(id=f"rm{i}", kind=Kind.REMOVE_FILE, title=f"Remove /etc/x{i}", path=f"/etc/x{i}") for i in range(8)]
    text = _shown(_plan_of(Action.UNINSTALL, *steps), _outcome(*(StepReport(s, "done", "absent") for s in steps)))
    assert "Nothing to remove" in text and "(8 steps checked)" in text
    assert "(already done)" not in text and "Remove /etc/x0" not in text


@as_root
def test_apply_dash_reads_the_plan_from_standard_input_not_a_file_named_dash(saved, tmp_path):
    """Issue 40: `apply -` as root looked for a file named "-" in the working directory (which
    may be another account's). It reads standard input, admitted as a file is."""
    root, plan, made = saved
    work = tmp_path / "work"
    work.mkdir()
    (work / "-").write_text("{}")  # what another account could leave there
    os.chown(work / "-", 1000, 1000)
    res = subprocess.run(
        [BIN, "apply", "-", "--dry-run", "--root", str(root)], input=plan.read_bytes(),
        capture_output=True, cwd=work, timeout=300, check=False, env=_env(),
    )  # fmt: skip
    out = res.stdout.decode()
    assert res.returncode == 0, res.stderr.decode()
    assert _plan_lines(out)[: len(_plan_lines(made.stdout))] == _plan_lines(made.stdout)
    assert out.rstrip().endswith("dry run: nothing was changed")
    bad = subprocess.run(
        [BIN, "apply", "-", "--dry-run", "--root", str(root)], input=b"{",
        capture_output=True, cwd=work, timeout=300, check=False, env=_env(),
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.decode().count("\n") == 1, bad.stderr
    assert "plan on standard input" in bad.stderr.decode()
