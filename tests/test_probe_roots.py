"""Every sysroot fixture under tests/roots probes to its reviewed expected facts, through the
library and through `gpuenv probe --json --root`, and every document fits the facts schema."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys

import pytest

from gpuenv import facts as facts_mod
from gpuenv.probe import RootError, collect
from tests.probe_helpers import ROOTS, args_of, cli_args, expected_of, machines, run_gpuenv, without_volatile
from tests.schemas import validate

MACHINES = machines()


def test_at_least_the_eight_machines_of_the_issue():
    assert {
        "ubuntu2404-rx9070xt-fresh",
        "ubuntu2404-rx9070xt-igpu-rocm",
        "ubuntu2204-8xmi300x-rocm",
        "ubuntu2404-rtx5090-driver570",
        "ubuntu2204-a100-nouveau",
        "wsl2-ubuntu2404",
        "docker-rocm-no-kfd",
        "debian12-cuda-and-rocm-halfconfigured",
    } <= set(MACHINES)


@pytest.mark.parametrize("machine", MACHINES)
def test_fixture_probes_to_expected_facts(machine):
    got = without_volatile(collect(root=str(ROOTS / machine), **args_of(machine)).to_dict())
    want = expected_of(machine)
    validate(got, "facts")
    for key in sorted(set(got) | set(want)):
        assert got.get(key) == want.get(key), f"{machine}: field {key!r} differs"


@pytest.mark.parametrize("machine", MACHINES)
def test_cli_json_on_fixture_validates_and_round_trips(machine):
    done = run_gpuenv("probe", "--json", *cli_args(machine))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    validate(doc, "facts")
    assert without_volatile(doc) == expected_of(machine)
    # The document loads back into Facts unchanged (the seam other layers read).
    assert facts_mod.loads(done.stdout).to_dict() == doc


def test_cli_json_on_this_machine_validates():
    done = run_gpuenv("probe", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    validate(doc, "facts")
    assert doc["host"]["arch"] == os.uname().machine
    assert doc["kernel"]["release"] == os.uname().release
    assert doc["python"]["executable"]


def test_cli_human_summary_on_fixture():
    done = run_gpuenv("probe", *cli_args("ubuntu2404-rx9070xt-igpu-rocm"), env={"NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Ubuntu 24.04.3 LTS" in out
    assert "Navi 48" in out and "gfx1201" in out and "Raphael" in out
    assert "ROCm 7.2.0" in out
    assert "\x1b[" not in out  # NO_COLOR and a pipe: no escape codes


def test_missing_root_is_a_usage_error(tmp_path):
    done = run_gpuenv("probe", "--json", "--root", str(tmp_path / "nope"))
    assert done.returncode == 2
    assert "not a directory" in done.stderr
    assert done.stdout == ""
    with pytest.raises(RootError):
        collect(root=str(tmp_path / "nope"))


def test_unknown_user_under_root_is_recorded_not_raised():
    f = collect(root=str(ROOTS / "ubuntu2404-rx9070xt-fresh"), user="mallory")
    assert f.user is None
    assert [e.probe for e in f.errors] == ["users"]
    assert "mallory" in f.errors[0].message


def test_root_switches_live_sources_off():
    """Under --root nothing of the reading machine leaks in: no environment, no NVML, no uname."""
    code = (
        "import json, sys; from gpuenv.probe import collect; "
        f"f = collect(root={str(ROOTS / 'wsl2-ubuntu2404')!r}); "
        "print(json.dumps([f.environment, 'pynvml' in sys.modules, f.kernel.release, f.user]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": "0"})  # fmt: skip
    environment, nvml_imported, release, user = json.loads(done.stdout)
    assert environment is None and nvml_imported is False and user is None
    assert release == "5.15.167.4-microsoft-standard-WSL2"


def test_symlinks_resolve_inside_the_root(tmp_path):
    """An absolute link in a sysroot points into the sysroot, never at the host's files."""
    root = tmp_path / "root"
    (root / "usr/lib").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "usr/lib/os-release").write_text('ID=fixtureos\nVERSION_ID="1"\n')
    (root / "etc/os-release").symlink_to("/usr/lib/os-release")
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").write_text("6.1.0-test\n")
    (root / "proc/sys/kernel/arch").write_text("aarch64\n")
    # A link climbing out with ../ stops at the root, as it would in a chroot.
    (root / "etc/hostname").symlink_to("../../../../../../etc/hostname")
    f = collect(root=str(root))
    assert f.os.id == "fixtureos" and f.os.version_id == "1"
    assert f.host.arch == "aarch64" and f.kernel.release == "6.1.0-test"
    assert f.host.hostname is None  # /etc/hostname inside the root resolves to itself: a loop, so unknown
    validate(f.to_dict(), "facts")


def test_empty_root_gives_unknowns_and_errors_not_a_crash(tmp_path):
    f = collect(root=str(tmp_path))
    doc = f.to_dict()
    validate(doc, "facts")
    assert f.os.id == "unknown" and f.kernel.release == "unknown" and f.host.arch == "unknown"
    assert {"os", "kernel.release", "host.arch"} <= {e.probe for e in f.errors}
    assert f.gpus == () and f.packages is None and f.device_nodes is None and f.python is None


@pytest.mark.parametrize("machine", MACHINES)
def test_human_rendering_of_every_fixture(machine):
    from rich.console import Console

    from gpuenv.render.facts import render_facts, summary_rows

    f = facts_mod.from_dict({"schema": facts_mod.SCHEMA, **expected_of(machine)})
    buf = io.StringIO()
    render_facts(f, Console(file=buf, width=200, no_color=True))
    text = buf.getvalue()
    labels = [label for label, _ in summary_rows(f)]
    assert {"OS", "Kernel", "GPUs", "Stacks"} <= set(labels)
    assert f.kernel.release in text
    for g in f.gpus:
        assert g.pci_id in text


def test_root_slash_still_switches_live_sources_off():
    f = collect(root="/")
    assert f.environment is None
    assert f.nvidia.nvml in ("not_installed", "not_queried") and f.amd.amdsmi in (
        "not_installed",
        "not_queried",
    )
    validate(f.to_dict(), "facts")


def test_device_stand_in_without_mode_line_uses_the_files_mode(tmp_path):
    import shutil

    root = tmp_path / "root"
    shutil.copytree(ROOTS / "ubuntu2404-rx9070xt-igpu-rocm", root, symlinks=True)
    (root / "dev/kfd").write_text("not an ls line\n")
    (root / "dev/kfd").chmod(0o640)
    f = collect(root=str(root), user="alice")
    kfd_node = f.device_nodes["/dev/kfd"]
    assert (kfd_node.exists, kfd_node.mode) == (True, "0640")
    assert f.device_nodes["/dev/dri/renderD128"].group == "render"


def test_absolute_link_to_a_host_file_is_not_followed_to_the_host(tmp_path):
    """/etc/os-release -> /usr/lib/os-release with no such file in the root: unknown, even though
    the reading machine has one (following it from outside would report the host's OS)."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/os-release").symlink_to("/usr/lib/os-release")
    (root / "etc/passwd").symlink_to("../../../../../../../../etc/passwd")  # climbs to the root's /etc
    f = collect(root=str(root), user="root")
    assert f.os.id == "unknown" and "os" in {e.probe for e in f.errors}
    assert f.user is None  # the root's /etc/passwd is the link itself: a loop, not the host's file


def test_fifo_or_device_where_a_file_is_expected_does_not_hang(tmp_path):
    """A sysroot is untrusted: a FIFO at /proc/modules or at a device stand-in must not block."""
    root = tmp_path / "root"
    shutil.copytree(ROOTS / "ubuntu2404-rx9070xt-igpu-rocm", root, symlinks=True)
    (root / "proc/modules").unlink()
    os.mkfifo(root / "proc/modules")
    (root / "dev/kfd").unlink()
    os.mkfifo(root / "dev/kfd")
    f = collect(root=str(root), user="alice")
    assert f.kernel.modules_loaded is None and "kernel.modules" in {e.probe for e in f.errors}
    assert f.device_nodes["/dev/kfd"].exists is True
    validate(f.to_dict(), "facts")


@pytest.mark.parametrize(
    "layout, want",
    [
        ({"sys/firmware/acpi/tables/DSDT": None}, False),  # legacy BIOS boot: no EFI, no Secure Boot
        ({"sys/firmware/": None}, None),  # an empty /sys/firmware: masked by a container runtime
        ({"sys/firmware/efi/efivars/": None}, None),  # efivarfs not mounted
        (
            {"sys/firmware/efi/efivars/BootOrder-8be4df61-93ca-11d2-aa0d-e398403d8c8c": b"\x07\0\0\0\1\0"},
            False,
        ),
        ({"sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e398403d8c8c": b"\x06\0\0\0\1"}, True),
        ({"sys/firmware/efi/vars/SecureBoot-8be4df61-93ca-11d2-aa0d-e398403d8c8c/data": b"\1"}, True),
        ({}, None),  # no /sys at all
    ],
)
def test_secure_boot_states(tmp_path, layout, want):
    from gpuenv.probe import kernel
    from gpuenv.probe.host import Sysroot

    for rel, data in layout.items():
        path = tmp_path / rel
        if rel.endswith("/"):
            path.mkdir(parents=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data or b"")
    assert kernel.secure_boot(Sysroot.at(str(tmp_path))) is want


def test_dkms_tree_build_dir_and_original_module_are_not_versions_or_kernels(tmp_path):
    """A failed build leaves VERSION/build (with make.log); DKMS keeps replaced in-tree modules in
    MODULE/original_module: neither is a version or a kernel of `dkms status`."""
    from gpuenv.facts import DkmsEntry
    from gpuenv.probe import dkms
    from gpuenv.probe.host import Sysroot

    base = tmp_path / "var/lib/dkms/nvidia"
    (tmp_path / "usr/src/nvidia-570.133.07").mkdir(parents=True)
    (base / "570.133.07/build").mkdir(parents=True)
    (base / "570.133.07/build/make.log").write_text("error: ...\n")
    (base / "570.133.07/source").symlink_to("/usr/src/nvidia-570.133.07")
    (base / "570.133.07/6.8.0-51-generic/x86_64/module").mkdir(parents=True)
    (base / "570.133.07/6.8.0-60-generic/x86_64").mkdir(parents=True)  # build failed for this one
    (base / "kernel-6.8.0-51-generic-x86_64").symlink_to("570.133.07/6.8.0-51-generic/x86_64")
    (base / "original_module/6.8.0-51-generic/x86_64").mkdir(parents=True)
    (tmp_path / "var/lib/dkms/amdgpu/6.16.6/6.8.0-51-generic/x86_64/module").mkdir(parents=True)
    (tmp_path / "var/lib/dkms/amdgpu/6.16.6/source").symlink_to("/usr/src/amdgpu-6.16.6")  # gone
    got = dkms.scan(Sysroot.at(str(tmp_path)))
    assert got == (
        DkmsEntry("amdgpu", "6.16.6", "6.8.0-51-generic", "broken"),
        DkmsEntry("nvidia", "570.133.07", "6.8.0-51-generic", "installed"),
        DkmsEntry("nvidia", "570.133.07", "6.8.0-60-generic", "added"),
    )


def test_dpkg_journal_is_read_under_a_root(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(ROOTS / "ubuntu2404-rx9070xt-igpu-rocm", root, symlinks=True)
    (root / "var/lib/dpkg/updates").mkdir()
    (root / "var/lib/dpkg/updates/0000").write_text(
        "Package: rocm-core\nStatus: install ok half-configured\nArchitecture: amd64\nVersion: 7.2.0.70200-43~24.04\n"
    )
    (root / "var/lib/dpkg/updates/tmp.i").write_text("Package: rocm-core\nStatus: garbage\n")
    f = collect(root=str(root), user="alice")
    assert f.packages.unconfigured == ("rocm-core",)
    assert f.packages.installed["rocm-core"] == "7.2.0.70200-43~24.04"


def test_only_regular_files_are_read_and_dev_null_reads_empty():
    """A config masked with a link to /dev/null reads as empty; any other device is refused
    before it is opened (opening a device can act on it)."""
    from gpuenv.probe.host import Sysroot

    live = Sysroot.at(None)
    assert live.read_text("/dev/null") == ""
    with pytest.raises(OSError, match="not a regular file"):
        live.read_bytes("/dev/zero")
    with pytest.raises(OSError, match="directory"):
        live.read_bytes("/proc")


def test_kfd_partitions_of_one_gpu_list_the_source_once(tmp_path):
    """MI300X compute partitions (CPX) are several KFD nodes on one PCI function."""
    root = tmp_path / "root"
    shutil.copytree(ROOTS / "ubuntu2204-8xmi300x-rocm", root, symlinks=True)
    nodes = root / "sys/class/kfd/kfd/topology/nodes"
    shutil.copytree(nodes / "2", nodes / "10")
    f = collect(root=str(root), user="ubuntu")
    first = next(g for g in f.gpus if g.pci_slot == "0000:05:00.0")
    assert first.sources == ("sysfs", "kfd") and first.gfx_target == "gfx942"
    assert len(f.gpus) == 8
