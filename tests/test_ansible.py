"""The Ansible role (ansible/roles/gpuenv) and its example playbook, run by real ansible-core.

- ansible-playbook --syntax-check of ansible/site.yml;
- the role against localhost (ansible_connection=local) with ``gpuenv_executable`` pointing at a
  stand-in gpuenv that keeps its state in a temporary directory, so the host is never changed:
  check mode (gpuenv's dry run: changed, nothing applied), a real run (apply, reboot, resume,
  JSON fetched for `gpuenv report`), a second run (nothing changed);
- the reboot the plan marks goes through ansible.builtin.reboot itself. Its action refuses the
  local connection (it would reboot the controller), so these runs use ``simreboot``: the local
  connection under another name, written by the test, with a reboot_command that only changes a
  boot id file the boot_time_command reads;
- the pip task of the role, for real: gpuenv from a wheel into a temporary venv;
- in a Debian 12 chroot (tests/chroot_env.py), the role with the real gpuenv acting on the
  chroot through --root: check mode changes nothing, a real run installs, a second changes
  nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_provision import (  # noqa: F401 (fixtures)
    build_wheel_and_wheelhouse,
    fresh_box,
    installing_pythons,
    python_chroot,
)

pytest_plugins = ["tests.chroot_env"]  # base_chroot, vendor_repo

REPO = Path(__file__).resolve().parents[1]
SITE = REPO / "ansible" / "site.yml"
ROLES = REPO / "ansible" / "roles"


def _tool(name: str) -> str:
    """ansible-playbook beside this interpreter (the test extra installs ansible-core), else on
    PATH. Missing is a failure: tests/run.sh installs the test extra."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    assert found, f"{name} is missing: install the test extra (pip install '.[test]', ansible-core)"
    return found


# --------------------------------------------------------------------------------------------
# A stand-in gpuenv and a connection that may "reboot"

FAKE_GPUENV = r'''#!PYTHON
"""Stand-in gpuenv for the role's tests: state in STATE, every call in CALLS."""
import json, sys
STATE, CALLS = "STATE_PATH", "CALLS_PATH"
argv = sys.argv[1:]
with open(CALLS, "a") as f:
    f.write(json.dumps(argv) + "\n")
with open(STATE) as f:
    st = json.load(f)
def save():
    with open(STATE, "w") as f:
        json.dump(st, f)
cmd = argv[0] if argv else ""
if cmd == "install" and "--dry-run" in argv:
    print("install %s 12.8  driver: 570" % argv[1])
    for code in st.get("blockers", []):
        print("BLOCKER " + code)
    done = " (already done)" if st["applied"] else ""
    print("+  1. Install CUDA 12.8 (cuda-toolkit-12-8)" + done)
    print("       why: target cuda 12.8")
    boot = "  \u27f3 reboot after" if st.get("needs_reboot") else ""
    print("+  2. Install the NVIDIA driver 570 (nvidia-open)" + done + boot)
    print("?  3. Check the GPU is visible (already done)")
    # A command gpuenv would not run says why, and is no change either.
    print("$  4. Refresh the loader cache (ldconfig)" + (" (not needed: the steps it follows change nothing)" if st["applied"] else ""))
    if st.get("needs_reboot"):
        print("A reboot is needed after this plan (marked \u27f3).")
    print("dry run: nothing was changed")
    sys.exit(3 if st.get("blockers") else 0)
if cmd == "install" and "--yes" in argv:
    if st["applied"]:
        print("Nothing to do: the machine already matches this plan.")
        sys.exit(0)
    st["applied"] = True
    st["installs"] = st.get("installs", 0) + 1
    save()
    print("applied" + ("; reboot to load the new driver" if st.get("needs_reboot") else "") + "  (2 ran)")
    sys.exit(0)
if cmd == "apply" and "--resume" in argv:
    if st.get("unfinished"):  # an apply a crash left: the resume finishes it
        st["unfinished"], st["applied"] = False, True
        save()
        print("applied" + ("; reboot to load the new driver" if st.get("needs_reboot") else "") + "  (1 ran)")
        sys.exit(0)
    print("nothing to resume: no apply is unfinished")
    sys.exit(0)
if cmd == "probe":
    print(json.dumps({"schema": "gpuenv.facts/1", "host": {"hostname": "fake-host"}}))
    sys.exit(0)
if cmd == "doctor":
    print(json.dumps({"schema": "gpuenv.report/1", "findings": [], "summary": {"errors": 0}}))
    sys.exit(0)
if cmd == "verify":
    print(json.dumps({"schema": "gpuenv.verify/1", "host": "fake-host", "ok": False}))
    sys.exit(1)
print("fake gpuenv: unexpected call %r" % argv, file=sys.stderr)
sys.exit(2)
'''

FAKE_REBOOT = """#!/bin/sh
# Stand-in reboot_command: a new boot id, and a note that it ran (with its arguments).
cat /proc/sys/kernel/random/uuid >BOOT_ID
echo "$*" >>REBOOTS
"""


def _simreboot_plugin(directory: Path) -> Path:
    """The local connection under the name simreboot: ansible.builtin.reboot refuses only the
    transport named local. Its DOCUMENTATION must be a literal (ansible reads it unimported)."""
    from ansible.plugins.connection import local

    doc = local.DOCUMENTATION.replace("name: local", "name: simreboot", 1)
    doc = doc.replace("short_description: execute on controller", "short_description: local, for tests", 1)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "simreboot.py").write_text(
        "from ansible.plugins.connection.local import Connection as _Local\n\n"
        f"DOCUMENTATION = {doc!r}\n\n\n"
        "class Connection(_Local):\n"
        "    transport = 'simreboot'\n"
    )
    return directory


class Box:
    """A stand-in host: the fake gpuenv's state, its calls, the boot id and reboots, and the
    directories the role writes to (all under tmp)."""

    def __init__(self, tmp: Path, **state) -> None:
        self.tmp = tmp
        tmp.mkdir(parents=True, exist_ok=True)
        self.state_path = tmp / "state.json"
        self.calls_path = tmp / "calls.log"
        self.boot_id = tmp / "boot_id"
        self.reboots = tmp / "reboots.log"
        self.fetch_dir = tmp / "fetched"
        self.report_dir = tmp / "host-reports"
        self.state_path.write_text(json.dumps({"applied": False, **state}))
        self.calls_path.write_text("")
        self.boot_id.write_text("boot-1\n")
        self.gpuenv = tmp / "bin" / "gpuenv"
        self.gpuenv.parent.mkdir()
        self.gpuenv.write_text(
            FAKE_GPUENV.replace("PYTHON", sys.executable)
            .replace("STATE_PATH", str(self.state_path))
            .replace("CALLS_PATH", str(self.calls_path))
        )
        self.gpuenv.chmod(0o755)
        reboot = tmp / "bin" / "fake-reboot"
        reboot.write_text(FAKE_REBOOT.replace("BOOT_ID", str(self.boot_id)).replace("REBOOTS", str(self.reboots)))
        reboot.chmod(0o755)
        self.reboot_cmd = str(reboot)
        _simreboot_plugin(tmp / "connection_plugins")

    @property
    def state(self) -> dict:
        return json.loads(self.state_path.read_text())

    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.calls_path.read_text().splitlines()]

    def inventory(self, connection: str = "simreboot") -> Path:
        inv = self.tmp / "inventory.ini"
        inv.write_text(
            "[gpu]\n"
            f"gpubox ansible_host=127.0.0.1 ansible_connection={connection} "
            f"ansible_python_interpreter={sys.executable} ansible_become=false\n"
        )
        return inv

    def extra_vars(self, **more) -> str:
        doc = {
            "gpuenv_manage_install": False,
            "gpuenv_executable": str(self.gpuenv),
            "gpuenv_fetch_dir": str(self.fetch_dir),
            "gpuenv_report_dir": str(self.report_dir),
            "gpuenv_reboot_command": self.reboot_cmd,
            "gpuenv_boot_time_command": f"cat {self.boot_id}",
            "gpuenv_reboot_timeout": 60,
            **more,
        }
        return json.dumps(doc)

    def play(self, *args: str, connection: str = "simreboot", playbook: Path = SITE, env=None, **more):
        return ansible_playbook(
            self.tmp,
            "-i",
            str(self.inventory(connection)),
            str(playbook),
            "-e",
            self.extra_vars(**more),
            *args,
            env=env,
        )


def ansible_env(tmp: Path) -> dict[str, str]:
    home = tmp / "ansible-home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(
        ANSIBLE_HOME=str(home),
        ANSIBLE_LOCAL_TEMP=str(home / "tmp"),
        ANSIBLE_REMOTE_TEMP=str(home / "remote-tmp"),
        ANSIBLE_ROLES_PATH=str(ROLES),
        ANSIBLE_CONNECTION_PLUGINS=str(tmp / "connection_plugins"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_RETRY_FILES_ENABLED="0",
        ANSIBLE_HOST_KEY_CHECKING="0",
        ANSIBLE_DEPRECATION_WARNINGS="0",
        ANSIBLE_CONFIG=str(home / "none.cfg"),  # never an ansible.cfg from the cwd or ~
        LC_ALL="C.UTF-8",
    )
    return env


def ansible_playbook(tmp: Path, *args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [_tool("ansible-playbook"), *args],
        env={**ansible_env(tmp), **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp,
    )


def recap(res: subprocess.CompletedProcess, host: str = "gpubox") -> dict[str, int]:
    m = re.search(rf"^{re.escape(host)}\s+:\s+(.*)$", res.stdout, re.M)
    assert m, f"no PLAY RECAP for {host}:\n{res.stdout}\n{res.stderr}"
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(1))}


def changed_tasks(res: subprocess.CompletedProcess) -> list[str]:
    """The names of the tasks that reported changed (the default callback's TASK/changed lines)."""
    out, task = [], None
    for line in res.stdout.splitlines():
        m = re.match(r"^(?:TASK|RUNNING HANDLER) \[(?:gpuenv : )?(.*?)\]", line)
        if m:
            task = m.group(1)
        elif line.startswith("changed:") and task:
            out.append(task)
    return out


def show(res: subprocess.CompletedProcess) -> str:
    return f"rc {res.returncode}\n{res.stdout[-6000:]}\n{res.stderr[-3000:]}"


# --------------------------------------------------------------------------------------------
# The playbook and the role, with the stand-in gpuenv


def test_syntax_check(tmp_path):
    res = ansible_playbook(tmp_path, "-i", "localhost,", str(SITE), "--syntax-check")
    assert res.returncode == 0, show(res)


def test_ansible_lint_clean(tmp_path):
    """ansible-lint's production profile, on a copy (it writes a cache beside the project)."""
    copy = tmp_path / "ansible"
    shutil.copytree(REPO / "ansible", copy)
    (copy / ".git").mkdir()  # the copy is its own project, never the checkout around it
    res = subprocess.run(
        [_tool("ansible-lint"), "--offline", "--nocolor", "--profile", "production", "site.yml", "roles/gpuenv"],
        env={**ansible_env(tmp_path), "NO_COLOR": "1"},
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_check_mode_is_the_dry_run(tmp_path):
    box = Box(tmp_path, needs_reboot=True)
    res = box.play("--check")
    assert res.returncode == 0, show(res)
    assert recap(res)["failed"] == 0
    # changed comes from the plan: steps not "(already done)" in gpuenv's dry run.
    assert changed_tasks(res) == ["Show the plan (gpuenv install --dry-run)"], show(res)
    assert "pending: 3 of 4 steps; a reboot after them" in res.stdout
    calls = box.calls()
    assert calls and all("--dry-run" in c for c in calls), calls  # nothing but the dry run ran
    assert box.state == {"applied": False, "needs_reboot": True}
    assert not box.reboots.exists()
    assert not box.fetch_dir.exists() and not box.report_dir.exists()


def test_real_run_applies_reboots_resumes_and_fetches(tmp_path):
    box = Box(tmp_path, needs_reboot=True)
    res = box.play()
    assert res.returncode == 0, show(res)
    assert box.state["applied"] is True and box.state["installs"] == 1
    # ansible.builtin.reboot ran its reboot_command once and saw the boot id change.
    assert box.reboots.read_text().count("\n") == 1, show(res)
    assert box.boot_id.read_text().strip() != "boot-1"
    names = [" ".join(c[:2]) for c in box.calls()]
    i = names.index("install cuda") if "install cuda" in names else names.index("install auto")
    assert "apply --resume" in names[i + 1 :], names  # resumed after the reboot
    assert "Reboot to load the new GPU driver" in changed_tasks(res)
    for kind, schema in (("facts", "gpuenv.facts/1"), ("doctor", "gpuenv.report/1"), ("verify", "gpuenv.verify/1")):
        doc = json.loads((box.fetch_dir / f"gpubox.{kind}.json").read_text())
        assert doc["schema"] == schema
    assert sorted(p.name for p in box.fetch_dir.iterdir()) == [
        "gpubox.doctor.json",
        "gpubox.facts.json",
        "gpubox.verify.json",
    ]

    again = box.play()
    assert again.returncode == 0, show(again)
    assert recap(again)["changed"] == 0, changed_tasks(again)
    assert box.state["installs"] == 1
    assert box.reboots.read_text().count("\n") == 1  # no second reboot
    assert not [c for c in box.calls()[len(names) :] if "--yes" in c and c[0] == "install"]


def test_a_resumed_apply_reboots_before_the_plan(tmp_path):
    """An apply a crash left unfinished: the resume finishes it, the reboot it needs comes
    first, then the dry run finds nothing to do; one reboot, no install."""
    box = Box(tmp_path, needs_reboot=True, unfinished=True)
    res = box.play()
    assert res.returncode == 0, show(res)
    assert box.state["applied"] is True and "installs" not in box.state
    assert box.reboots.read_text().count("\n") == 1, show(res)
    names = [" ".join(c[:2]) for c in box.calls()]
    assert names[:2] == ["apply --resume", "apply --resume"], names  # the resume, then after the reboot
    assert not [c for c in box.calls() if c[0] == "install" and "--yes" in c]
    again = box.play()
    assert recap(again)["changed"] == 0 and box.reboots.read_text().count("\n") == 1, show(again)


def test_no_reboot_leaves_it_pending(tmp_path):
    box = Box(tmp_path, needs_reboot=True)
    res = box.play(gpuenv_reboot=False)
    assert res.returncode == 0, show(res)
    assert box.state["applied"] is True
    assert not box.reboots.exists()
    assert "needs a reboot to load the new GPU driver" in res.stdout


def test_a_change_without_a_reboot_mark_reboots_nothing(tmp_path):
    box = Box(tmp_path)
    res = box.play()
    assert res.returncode == 0, show(res)
    assert box.state["applied"] is True
    assert not box.reboots.exists()
    assert "Apply the plan (gpuenv install --yes)" in changed_tasks(res)


def test_blockers_fail_the_host_before_any_change(tmp_path):
    box = Box(tmp_path, blockers=["gpu.none"])
    for args in (("--check",), ()):
        res = box.play(*args)
        assert res.returncode != 0, show(res)
        assert recap(res)["failed"] == 1
        assert "BLOCKER gpu.none" in res.stdout
    assert box.state["applied"] is False
    assert not [c for c in box.calls() if "--yes" in c and c[0] == "install"]


def test_local_connection_is_never_rebooted(tmp_path):
    """Against the controller itself the reboot the plan marks fails the host, loudly."""
    box = Box(tmp_path, needs_reboot=True)
    res = box.play(connection="local")
    assert res.returncode != 0
    assert "would reboot the control node" in res.stdout, show(res)
    assert not box.reboots.exists()


def test_settings_are_checked(tmp_path):
    box = Box(tmp_path)
    res = box.play("--check", gpuenv_stack="intel")
    assert res.returncode != 0 and "gpuenv_stack must be auto, rocm or cuda" in res.stdout, show(res)
    assert box.calls() == []


def test_target_options_reach_gpuenv(tmp_path):
    box = Box(tmp_path)
    res = box.play(
        gpuenv_stack="cuda",
        gpuenv_version="12.8",
        gpuenv_torch="2.7.1",
        gpuenv_venv="/opt/torch",
        gpuenv_user="alice",
        gpuenv_allow_removal=["myapp"],
    )
    assert res.returncode == 0, show(res)
    installs = [c for c in box.calls() if c[0] == "install"]
    tail = ["--version", "12.8", "--torch", "2.7.1", "--venv", "/opt/torch", "--user", "alice", "--allow-removal=myapp"]
    assert installs == [["install", "cuda", *tail, "--dry-run"], ["install", "cuda", *tail, "--yes"]]
    assert ["doctor", "--json", "--user", "alice", "--python", "/opt/torch/bin/python"] in box.calls()
    assert ["verify", "--json", "--python", "/opt/torch/bin/python"] in box.calls()


# --------------------------------------------------------------------------------------------
# The role's own install of gpuenv (pip from a wheel into a venv), for real


@pytest.fixture(scope="session")
def wheel_and_wheelhouse(tmp_path_factory) -> tuple[Path, Path]:
    # For every Python that installs from it: the role makes its venv with the python3 on PATH
    # (Debian 13's 3.13 on Debian 13), not only Debian 12's.
    return build_wheel_and_wheelhouse(tmp_path_factory.mktemp("gpuenv-wheel"), installing_pythons())



@pytest.mark.timeout(600)  # pip installs into venvs: slow on a busy machine
def test_role_installs_gpuenv_from_a_wheel(tmp_path, wheel_and_wheelhouse):
    """gpuenv_wheel_src: copied to the host and pip-installed into gpuenv_prefix. The apt task
    is left out (gpuenv_packages: []) so the host's apt is never touched."""
    gpuenv_wheel, wheelhouse = wheel_and_wheelhouse
    box = Box(tmp_path)
    prefix = tmp_path / "opt-gpuenv"
    env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}
    common = {
        "gpuenv_manage_install": True,
        "gpuenv_packages": [],
        "gpuenv_wheel_src": str(gpuenv_wheel),
        "gpuenv_wheel_sha256": hashlib.sha256(gpuenv_wheel.read_bytes()).hexdigest(),
        "gpuenv_wheel_dir": str(tmp_path / "wheels"),
        "gpuenv_prefix": str(prefix),
        "gpuenv_collect": False,
    }
    check = box.play("--check", env=env, **common)
    assert check.returncode == 0, show(check)
    assert not prefix.exists() and not (tmp_path / "wheels").exists()
    res = box.play(env=env, **common)
    assert res.returncode == 0, show(res)
    out = subprocess.run([str(prefix / "bin" / "gpuenv"), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "install" in out.stdout
    again = box.play(env=env, **common)
    assert again.returncode == 0, show(again)
    assert "Install gpuenv into its venv" not in changed_tasks(again), show(again)


@pytest.mark.parametrize(
    "source",
    [
        {},
        {"gpuenv_wheel_url": "https://files.example/gpuenv-0.1.0-py3-none-any.whl"},
        {"gpuenv_wheel_url": "ftp://files.example/gpuenv-0.1.0-py3-none-any.whl", "gpuenv_wheel_sha256": "0" * 64},
        {"gpuenv_git": "https://git.example/gpuenv.git", "gpuenv_commit": "main"},
        {"gpuenv_git": "https://git.example/gpuenv.git", "gpuenv_commit": "a" * 40, "gpuenv_wheel_src": "/x.whl",
         "gpuenv_wheel_sha256": "0" * 64},
    ],
    ids=["none", "no-sha256", "ftp", "commit-not-pinned", "two-sources"],
)
def test_no_source_fails_before_anything_runs(tmp_path, source):
    """Item 1: no package name is guessed; check mode reports no `changed` for an install that
    could not work: the host fails first, with the settings to give."""
    box = Box(tmp_path)
    prefix = tmp_path / "opt-gpuenv"
    for args in (("--check",), ()):
        res = box.play(*args, gpuenv_manage_install=True, gpuenv_packages=[], gpuenv_prefix=str(prefix), **source)
        assert res.returncode != 0 and recap(res)["failed"] == 1 and recap(res)["changed"] == 0, show(res)
        assert "gpuenv needs one source" in res.stdout, show(res)
    assert box.calls() == [] and not prefix.exists()


@pytest.mark.timeout(600)  # pip installs into venvs: slow on a busy machine
def test_a_prefix_another_account_controls_is_refused(tmp_path, wheel_and_wheelhouse):
    """As bootstrap.sh (item 5): root runs what is in gpuenv_prefix, so a prefix of another
    account's, or a file in it that another account can write, fails the host before anything
    in it runs or is installed, in check mode too."""
    gpuenv_wheel, wheelhouse = wheel_and_wheelhouse
    box = Box(tmp_path)
    prefix = tmp_path / "opt-gpuenv"
    (prefix / "bin").mkdir(parents=True)
    marker = prefix / ".gpuenv-source"
    sha256 = hashlib.sha256(gpuenv_wheel.read_bytes()).hexdigest()
    marker.write_text(f"sha256:{sha256}\n")  # "this is the good wheel, up to date"
    common = {"gpuenv_manage_install": True, "gpuenv_packages": [], "gpuenv_wheel_src": str(gpuenv_wheel),
              "gpuenv_wheel_sha256": sha256, "gpuenv_wheel_dir": str(tmp_path / "wheels"),
              "gpuenv_prefix": str(prefix), "gpuenv_collect": False}  # fmt: skip
    for owner, mode in ((65534, 0o644), (0, 0o666)):
        os.chown(marker, owner, owner)
        marker.chmod(mode)
        for args in (("--check",), ()):
            res = box.play(*args, **common)
            assert res.returncode != 0 and recap(res)["failed"] == 1, show(res)
            assert "is not root's alone" in res.stdout, show(res)
            assert box.calls() == [], show(res)  # the stand-in gpuenv never ran
    assert sorted(p.name for p in prefix.iterdir()) == [".gpuenv-source", "bin"]


@pytest.mark.timeout(600)  # pip installs into venvs: slow on a busy machine
def test_check_mode_without_gpuenv_shows_a_throwaway_plan(tmp_path, wheel_and_wheelhouse):
    """Item 2: on a host without gpuenv, check mode installs nothing and still shows gpuenv's
    plan, from a throwaway gpuenv in a temporary directory that is removed afterwards."""
    import glob
    import tempfile

    gpuenv_wheel, wheelhouse = wheel_and_wheelhouse
    box = Box(tmp_path)
    prefix = tmp_path / "opt-gpuenv"
    env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "gpuenv-check.*")))
    res = box.play("--check", env=env, gpuenv_manage_install=True, gpuenv_packages=[], gpuenv_stack="cuda",
                   gpuenv_executable=str(prefix / "bin/gpuenv"), gpuenv_prefix=str(prefix),
                   gpuenv_wheel_src=str(gpuenv_wheel), gpuenv_wheel_dir=str(tmp_path / "wheels"),
                   gpuenv_wheel_sha256=hashlib.sha256(gpuenv_wheel.read_bytes()).hexdigest())  # fmt: skip
    # This machine has no NVIDIA GPU: the plan may have blockers (the host then fails), but it is shown.
    assert "dry run: nothing was changed" in res.stdout, show(res)
    assert "TASK [gpuenv : Show the plan (gpuenv install --dry-run)]" in res.stdout
    assert not prefix.exists() and not (tmp_path / "wheels").exists()
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "gpuenv-check.*"))) == before


# --------------------------------------------------------------------------------------------
# The role with the real gpuenv against a Debian 12 chroot


CHROOT_WRAPPER = """#!/bin/sh
# gpuenv acting on the chroot ROOT (--root), for the role's tests; verify runs as is (it has no
# --root: it judges this interpreter, which has no torch).
cmd=$1
shift
case $cmd in
install | apply | probe | doctor) exec GPUENV "$cmd" --root ROOT "$@" ;;
*) exec GPUENV "$cmd" "$@" ;;
esac
"""


@pytest.mark.chroot
def test_role_against_a_chroot(base_chroot, vendor_repo, tmp_path):
    from tests.chroot_env import NVIDIA_GPU, VOLATILE, copy_root, give_machine, gpuenv_argv, manifest

    root = give_machine(copy_root(base_chroot, tmp_path / "root"), NVIDIA_GPU)
    box = Box(tmp_path / "box")
    wrapper = tmp_path / "gpuenv-chroot"
    real = " ".join(gpuenv_argv())
    wrapper.write_text(CHROOT_WRAPPER.replace("GPUENV", real).replace("ROOT", str(root)))
    wrapper.chmod(0o755)
    env = {**vendor_repo.env}
    opts = {"gpuenv_executable": str(wrapper), "gpuenv_stack": "cuda", "gpuenv_version": "12.8", "gpuenv_user": "alice"}

    before = manifest(root)
    check = box.play("--check", env=env, **opts)
    assert check.returncode == 0, show(check)
    assert changed_tasks(check) == ["Show the plan (gpuenv install --dry-run)"], show(check)
    assert manifest(root) == before

    res = box.play(env=env, **opts)
    assert res.returncode == 0, show(res)
    assert "Apply the plan (gpuenv install --yes)" in changed_tasks(res)
    assert (root / "etc/apt/sources.list.d/cuda-debian12-x86_64.list").exists()
    # The NVIDIA driver's plan marks a reboot: ansible.builtin.reboot ran, then the resume.
    assert box.reboots.read_text().count("\n") == 1, show(res)
    doctor = json.loads((box.fetch_dir / "gpubox.doctor.json").read_text())
    assert doctor["schema"] == "gpuenv.report/1"
    facts = json.loads((box.fetch_dir / "gpubox.facts.json").read_text())
    assert facts["schema"] == "gpuenv.facts/1"

    settled = manifest(root, skip=VOLATILE)
    again = box.play(env=env, **opts)
    assert again.returncode == 0, show(again)
    assert recap(again)["changed"] == 0, changed_tasks(again)
    assert manifest(root, skip=VOLATILE) == settled
    check2 = box.play("--check", env=env, **opts)
    assert check2.returncode == 0 and recap(check2)["changed"] == 0, show(check2)


# --------------------------------------------------------------------------------------------
# The role over Ansible's chroot connection: a fresh Debian 12 box with nothing installed (#25)

FAKE_REBOOT_IN_BOX = """#!/bin/sh
# Stand-in reboot_command inside the box: what a reboot changes for gpuenv, the boot id.
python3 -c 'import uuid; open("/proc/sys/kernel/random/boot_id", "w").write(str(uuid.uuid4()) + "\\\\n")'
echo reboot >>/var/log/reboots
"""


def chroot_inventory(tmp: Path, root: Path) -> Path:
    """One host, the chroot at `root`, as the role's README writes it (root already: no become).
    Ansible's own working files go to /tmp in the box, which it empties after each task (by
    default it would leave /root/.ansible behind, and the tree could not be compared whole)."""
    inv = tmp / "chroot.ini"
    inv.write_text(
        "[gpu]\n"
        f"trybox ansible_host={root} ansible_connection=chroot ansible_become=false "
        "ansible_python_interpreter=/usr/bin/python3 ansible_remote_tmp=/tmp\n"
    )
    return inv


@pytest.mark.chroot
def test_role_over_the_chroot_connection(fresh_box, wheel_and_wheelhouse, tmp_path):  # noqa: F811 (fixture)
    """Ansible's own chroot connection (the `ansible` package's community.general.chroot) into a
    fresh Debian 12 box that has python3 and nothing else, the wheel on the controller:

    - --check shows what apt would install and gpuenv's plan, from a throwaway gpuenv (pip run
      from its wheel, since the box has no python3-venv yet), and changes nothing (tree compared);
    - a real run installs python3-venv and gpuenv, applies the plan, reboots (a stand-in
      reboot_command: a new boot id), resumes and fetches the reports;
    - a second --check reports changed=0, and a second real run changes nothing either."""
    from tests.chroot_env import VOLATILE, manifest

    box = fresh_box
    root = box.root
    wheel, _ = wheel_and_wheelhouse
    # pip's mirror for gpuenv's dependencies: the box's own /etc/pip.conf (the wheelhouse).
    (root / "etc/pip.conf").write_text("[global]\nno-index = true\nfind-links = /srv/wheelhouse\n")
    reboot = root / "usr/local/sbin/fake-reboot"
    reboot.write_text(FAKE_REBOOT_IN_BOX)
    reboot.chmod(0o755)
    fetched = tmp_path / "reports"
    extra = json.dumps({
        "gpuenv_wheel_src": str(wheel),
        "gpuenv_wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "gpuenv_stack": "cuda", "gpuenv_version": "12.8", "gpuenv_user": "alice",
        "gpuenv_reboot_command": "/usr/local/sbin/fake-reboot",
        "gpuenv_boot_time_command": "cat /proc/sys/kernel/random/boot_id",
        "gpuenv_reboot_timeout": 120,
        "gpuenv_fetch_dir": str(fetched),
    })  # fmt: skip
    inv = chroot_inventory(tmp_path, root)

    # The chroot connection hands the controller's environment to the box: pip settings of this
    # machine (PIP_FIND_LINKS...) would override the box's own /etc/pip.conf.
    env = {k: v for k, v in ansible_env(tmp_path).items() if not k.startswith("PIP_")}

    def play(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([_tool("ansible-playbook"), "-i", str(inv), str(SITE), "-e", extra, *args], env=env,
                              capture_output=True, text=True, timeout=800, cwd=tmp_path)  # fmt: skip

    assert not (root / "opt/gpuenv").exists() and "python3.11-venv" not in box.packages()
    before = manifest(root)
    check = play("--check")
    assert check.returncode == 0, show(check)
    assert "would install with apt: python3-venv, ca-certificates, gpg" in check.stdout, show(check)
    assert "dry run: nothing was changed" in check.stdout and "install cuda 12.8" in check.stdout, show(check)
    assert re.search(r"pending: \d+ of \d+ steps; a reboot after them", check.stdout), show(check)
    assert recap(check, "trybox")["failed"] == 0
    assert manifest(root) == before, "check mode changed the box"
    assert not fetched.exists()

    res = play()
    assert res.returncode == 0, show(res)
    pkgs = box.packages()
    assert all(p in pkgs for p in ("python3.11-venv", "gpg", "cuda-toolkit-12-8", "nvidia-open")), pkgs
    assert (root / "opt/gpuenv/bin/gpuenv").exists()
    assert (root / "var/log/reboots").read_text() == "reboot\n", show(res)  # one reboot, then the resume
    assert "Resume the plan after the reboot (gpuenv apply --resume)" in res.stdout
    assert json.loads((fetched / "trybox.doctor.json").read_text())["schema"] == "gpuenv.report/1"

    settled = manifest(root, skip=VOLATILE)
    check2 = play("--check")
    assert check2.returncode == 0 and recap(check2, "trybox")["changed"] == 0, show(check2)
    assert manifest(root, skip=VOLATILE) == settled
    again = play()
    assert again.returncode == 0 and recap(again, "trybox")["changed"] == 0, show(again)
    assert (root / "var/log/reboots").read_text() == "reboot\n"
