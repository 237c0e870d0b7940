"""Bad input never crashes the probe: malformed os-release, dpkg status, KFD properties, APT
sources and sysfs files are fed to a whole probe run over a sysroot; it records what it could
not read and goes on, and its output still fits the schema."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpuenv.probe import apt_sources, collect, dpkg, kfd, osinfo
from tests.probe_helpers import ROOTS
from tests.schemas import validate

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
BASE = "ubuntu2404-rx9070xt-igpu-rocm"

# Text that looks a little like the real formats, so the fuzzing reaches past the first line.
LINES = st.lists(
    st.one_of(
        st.text(max_size=60),
        st.from_regex(r"[A-Z_]{1,12}=[\"']?[^\n]{0,20}[\"']?", fullmatch=True),
        st.from_regex(r"[a-z_]{1,20} -?[0-9]{1,12}", fullmatch=True),
        st.from_regex(r"(Package|Status|Version|Architecture): [^\n]{0,30}", fullmatch=True),
        st.from_regex(r"#? ?deb (\[[^\]\n]{0,30}\] )?[^\n]{0,40}", fullmatch=True),
        st.from_regex(r"(Types|URIs|Suites|Components|Signed-By|Enabled): [^\n]{0,30}", fullmatch=True),
        st.just(""),
    ),
    max_size=30,
).map("\n".join)
BYTES = st.one_of(st.binary(max_size=200), LINES.map(lambda s: s.encode("utf-8", "surrogatepass")))


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    dest = tmp_path_factory.mktemp("fuzzroot") / "root"
    shutil.copytree(ROOTS / BASE, dest, symlinks=True)
    return dest


def run(root) -> object:
    facts = collect(root=str(root), user="alice")
    validate(facts.to_dict(), "facts")
    return facts


def write(root, rel: str, data: bytes) -> None:
    path = root / rel
    path.write_bytes(data)


@SETTINGS
@given(data=BYTES)
def test_malformed_os_release(root, data):
    write(root, "usr/lib/os-release", data)
    facts = run(root)
    fields = osinfo.parse_os_release(data.decode("utf-8", "replace"))
    if fields.get("ID"):
        assert facts.os.id == fields["ID"].lower()
    else:
        assert facts.os.id == "unknown" and "os" in {e.probe for e in facts.errors}


@SETTINGS
@given(data=BYTES)
def test_malformed_dpkg_status(root, data):
    write(root, "var/lib/dpkg/status", data)
    facts = run(root)
    assert facts.packages is not None and facts.packages.manager == "dpkg"
    assert set(facts.packages.unconfigured) <= set(facts.packages.installed) | {
        st_["Package"] for st_ in dpkg.parse_status(data.decode("utf-8", "replace")) if "Package" in st_
    }


@SETTINGS
@given(data=BYTES)
def test_malformed_kfd_properties(root, data):
    write(root, "sys/class/kfd/kfd/topology/nodes/1/properties", data)
    facts = run(root)
    # The sysfs view of both GPUs survives whatever KFD says.
    assert [g.pci_id for g in facts.gpus][:2] == ["1002:7550", "1002:164e"]
    props = kfd.parse_properties(data.decode("utf-8", "replace"))
    assert all(isinstance(v, int) for v in props.values())
    # The dGPU carries exactly the gfx target the malformed node names for its slot, or none.
    node = kfd.node_from_properties("1", props)
    dgpu = next(g for g in facts.gpus if g.pci_slot == "0000:03:00.0")
    want = node.gfx_target if node is not None and node.pci_slot == "0000:03:00.0" else None
    assert dgpu.gfx_target == want


@SETTINGS
@given(list_text=BYTES, sources_text=BYTES)
def test_malformed_apt_sources(root, list_text, sources_text):
    write(root, "etc/apt/sources.list.d/rocm.list", list_text)
    write(root, "etc/apt/sources.list.d/ubuntu.sources", sources_text)
    facts = run(root)
    assert facts.apt_sources is not None
    for source in facts.apt_sources:
        assert source.uri and " " not in source.uri
    # The pure parsers agree with what the probe kept.
    n = len(apt_sources.parse_list(list_text.decode("utf-8", "replace"))) + len(
        apt_sources.parse_deb822(sources_text.decode("utf-8", "replace"))
    )
    assert len(facts.apt_sources) == n + 1  # + the untouched amdgpu.list


@SETTINGS
@given(vendor=BYTES, device=BYTES, klass=BYTES)
@example(vendor=b"0", device=b"", klass=b"")  # no GPU vendor: its junk device and class unread
@example(vendor=b"0x1002\n", device=b"", klass=b"0x0403")  # AMD audio: its device unread
@example(vendor=b"0x1002\n", device=b"0x75", klass=b"junk")  # an AMD function: the class is read
@example(vendor=b"0x1002\n", device=b"zz", klass=b"0x030000")  # an AMD GPU: its device id is read
def test_malformed_sysfs_pci_files(root, vendor, device, klass):
    base = "sys/bus/pci/devices/0000:03:00.0/"
    write(root, base + "vendor", vendor)
    write(root, base + "device", device)
    write(root, base + "class", klass)
    facts = run(root)
    # The other GPU (the iGPU) is always still there.
    assert "0000:10:00.0" in {g.pci_slot for g in facts.gpus}
    # An error for the device exactly when a file the scan had to read is malformed: the vendor;
    # the class of a GPU vendor's function; the device id of a GPU (the files of a function that
    # is no GPU are not read).
    from gpuenv.probe.pci import VENDORS, is_gpu, parse_hex_id

    def malformed() -> bool:
        try:
            vid = parse_hex_id(vendor.decode("utf-8", "replace"))
            if vid not in VENDORS:
                return False
            if not is_gpu(vid, parse_hex_id(klass.decode("utf-8", "replace"), 6)[:4]):
                return False
            parse_hex_id(device.decode("utf-8", "replace"))
        except ValueError:
            return True
        return False

    errored = any(e.probe == "pci" and "0000:03:00.0" in e.message for e in facts.errors)
    assert errored is malformed()


@SETTINGS
@given(tainted=BYTES, modules=BYTES, secure_boot=st.binary(max_size=8))
def test_malformed_proc_and_efi_files(root, tainted, modules, secure_boot):
    write(root, "proc/sys/kernel/tainted", tainted)
    write(root, "proc/modules", modules)
    write(root, "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e398403d8c8c", secure_boot)
    facts = run(root)
    if len(secure_boot) < 5:
        assert facts.kernel.secure_boot is None and "kernel.secure_boot" in {e.probe for e in facts.errors}
    else:
        assert facts.kernel.secure_boot is (secure_boot[4] == 1)
