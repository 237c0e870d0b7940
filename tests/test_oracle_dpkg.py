"""The dpkg status reader (gpuenv.probe.dpkg) against dpkg itself: ``dpkg-query --admindir``
over the same database, real (this machine's, the sysroot fixtures') and generated; and its one
pass (``dpkg_order``) on every supported Python, equal to the general reader."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuenv.probe import dpkg
from tests import pythons

ROOTS = Path(__file__).parent / "roots"
FIXTURES = sorted(ROOTS.glob("*/var/lib/dpkg/status"))
HOST_STATUS = Path("/var/lib/dpkg/status")

needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="no dpkg-query on this machine")

# dpkg-query's view of a database: one line per package it lists.
_FORMAT = "${Package}\\t${Architecture}\\t${Version}\\t${db:Status-Want}\\t${db:Status-Eflag}\\t${db:Status-Status}\\n"
_PRESENT = {"installed", "half-configured", "unpacked", "triggers-awaited", "triggers-pending"}
_UNFINISHED = {"half-installed", "half-configured", "unpacked", "triggers-awaited"}


def _admindir(tmp_path: Path, status: bytes, updates: list[bytes] = ()) -> Path:
    admin = tmp_path / "dpkg"
    (admin / "updates").mkdir(parents=True)
    (admin / "status").write_bytes(status)
    for i, text in enumerate(updates):
        (admin / "updates" / f"{i:04d}").write_bytes(text)
    return admin


def _dpkg_query(admin: Path) -> tuple[dict[str, str], list[str]] | None:
    """(installed, unfinished) as dpkg-query reads the database; None when dpkg refuses it. The
    keys are gpuenv's (name, or name:arch for a foreign architecture), the native architecture
    the one of the dpkg stanza, as gpuenv takes it."""
    done = subprocess.run(
        ["dpkg-query", "--admindir", str(admin), "-W", "-f", _FORMAT], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return None
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    native = next((arch for name, arch, *_ in rows if name == "dpkg"), None)
    installed: dict[str, str] = {}
    unfinished: list[str] = []
    for name, arch, version, _want, eflag, state in rows:
        key = name if not native or not arch or arch in ("all", native) else f"{name}:{arch}"
        if state in _PRESENT:
            installed[key] = version
        if state in _UNFINISHED or eflag == "reinstreq":
            unfinished.append(key)
    return installed, sorted(unfinished)


def _ours(status: bytes, updates: list[bytes] = ()) -> tuple[dict[str, str], list[str]]:
    pk = dpkg.packages_from_status(status, updates=updates)
    return dict(pk.installed), sorted(pk.unconfigured)


@needs_dpkg
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.parts[-5])
def test_the_fixture_databases_read_as_dpkg_query_reads_them(tmp_path, path):
    status = path.read_bytes()
    assert _ours(status) == _dpkg_query(_admindir(tmp_path, status))


@needs_dpkg
@pytest.mark.skipif(not HOST_STATUS.is_file(), reason="this machine has no dpkg database")
def test_this_machines_database_reads_as_dpkg_query_reads_it(tmp_path):
    status = HOST_STATUS.read_bytes()
    want = _dpkg_query(_admindir(tmp_path, status))
    assert want is not None and len(want[0]) > 50
    assert _ours(status) == want
    assert dpkg.dpkg_order(status) is not None  # and through the one pass


_DPKG = b"Package: dpkg\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.21.22\n"


@needs_dpkg
@pytest.mark.parametrize(
    ("status", "journal", "installed", "unfinished"),
    [
        (  # a package built for all architectures before, for amd64 now, stopped half-way
            b"Package: foo\nStatus: install ok installed\nArchitecture: all\nVersion: 1\n",
            b"Package: foo\nStatus: install reinstreq half-installed\nArchitecture: amd64\nVersion: 2\n",
            {"dpkg": "1.21.22"}, ["foo"],
        ),
        (  # a crossgrade: one instance of a package that is not Multi-Arch: same
            b"Package: foo\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1\n",
            b"Package: foo\nStatus: install ok unpacked\nArchitecture: i386\nVersion: 1\n",
            {"dpkg": "1.21.22", "foo:i386": "1"}, ["foo:i386"],
        ),
        (  # Multi-Arch: same: the i386 instance beside the amd64 one
            b"Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nMulti-Arch: same\nVersion: 2.36\n",
            b"Package: libc6\nStatus: install ok unpacked\nArchitecture: i386\nMulti-Arch: same\nVersion: 2.36\n",
            {"dpkg": "1.21.22", "libc6": "2.36", "libc6:i386": "2.36"}, ["libc6:i386"],
        ),
    ],
)  # fmt: skip
def test_a_journal_stanza_replaces_the_instance_dpkg_replaces(tmp_path, status, journal, installed, unfinished):
    # dpkg keeps one instance of a package per architecture only for Multi-Arch: same; any other
    # package has one instance, whatever architecture its new stanza names.
    want = _dpkg_query(_admindir(tmp_path, _DPKG + b"\n" + status, [journal]))
    assert want == (installed, unfinished)
    assert _ours(_DPKG + b"\n" + status, [journal]) == want


# Stanzas as dpkg writes them (its field order; any field dpkg accepts around the four read),
# beside dpkg's own stanza.
_NAMES = st.sampled_from(["libc6", "nvidia-driver-570", "rocm-core", "g++-12", "libstdc++6", "a.b+c"])
_ARCHES = st.sampled_from(["amd64", "all", "i386", "arm64"])
_VERSIONS = st.sampled_from(["1.0", "1:570.133.07-1ubuntu1", "7.2.0.70200-43~24.04", "2.36-9+deb12u10", "1.0~rc1"])
_STATES = st.sampled_from(
    ["install ok installed", "deinstall ok config-files", "install reinstreq half-installed",
     "install ok unpacked", "install ok half-configured", "hold ok installed", "install ok triggers-awaited",
     "install ok triggers-pending", "purge ok not-installed", "install reinstreq unpacked", "deinstall ok installed",
     "install reinstreq installed", "hold reinstreq installed"]
)  # fmt: skip
_EXTRA = st.sampled_from(
    ["Priority: optional\n", "Section: libs\n", "Essential: yes\n", "Multi-Arch: same\n",
     "Description: a package\n with Version: 9 and\n Status: in a continuation line\n",
     "Conffiles:\n /etc/a 0123456789abcdef0123456789abcdef\n", "Source: other (1.0)\n",
     "Config-Version: 1.0\n", "Triggers-Pending: ldconfig\n"]
)  # fmt: skip


@st.composite
def _stanza(draw) -> bytes:
    name, arch, version, state = draw(_NAMES), draw(_ARCHES), draw(_VERSIONS), draw(_STATES)
    extra = draw(st.lists(_EXTRA, max_size=3, unique=True))
    if "triggers-pending" not in state:
        extra = [e for e in extra if not e.startswith("Triggers-Pending")]
    else:
        extra = [*extra, "Triggers-Pending: ldconfig\n"][:4]
    head = [e for e in extra if e.startswith("Essential")]
    tail = [e for e in extra if e not in head]
    text = f"Package: {name}\n{''.join(head)}Status: {state}\nMaintainer: M <m@example.org>\n"
    text += f"Architecture: {arch}\nVersion: {version}\n{''.join(dict.fromkeys(tail))}"
    return text.encode()


@needs_dpkg
@settings(max_examples=60, deadline=None)
@given(
    # One stanza per package and architecture in the file, as dpkg writes it (of two, dpkg keeps
    # the later, gpuenv the installed one: a file nobody has).
    stanzas=st.lists(_stanza(), min_size=1, max_size=8, unique_by=lambda b: (b.split(b"\n")[0], b.split(b"Architecture: ")[1][:5])),
    journal=st.lists(_stanza(), max_size=3),
)
def test_generated_databases_read_as_dpkg_query_reads_them(tmp_path_factory, stanzas, journal):
    status = b"\n".join([_DPKG, *stanzas])  # dpkg's own stanza names the native architecture
    want = _dpkg_query(_admindir(tmp_path_factory.mktemp("db"), status, journal))
    if want is None:
        return  # dpkg refuses the database (two stanzas of one package and architecture): no oracle
    assert _ours(status, journal) == want
    # A file dpkg wrote is read from the one pass's matches, without records; an empty journal
    # file sends the same file through the records: both read it alike.
    assert dpkg.packages_from_status(status) == dpkg.packages_from_status(status, updates=[b""])


_ON_EVERY_PYTHON = """
import json
from gpuenv.probe import dpkg
out = []
for path in json.loads(sys.stdin.read()):
    raw = open(path, "rb").read()
    fast = dpkg.dpkg_order(raw)
    same = fast == dpkg.general_records(raw)
    same = same and dpkg.packages_from_status(raw) == dpkg.packages_from_status(raw, updates=[b""])
    out.append([path, None if fast is None else len(fast), same])
print(json.dumps(out))
"""


def test_the_one_pass_reads_every_stanza_of_a_real_file_on_every_supported_python():
    # A real status file (this machine's, the fixtures') is read in one pass, and to the same
    # records as the general reader, by each interpreter >= 3.10 found here.
    files = [str(p) for p in (HOST_STATUS, *FIXTURES) if p.is_file()]
    found = pythons.pythons()
    assert found
    wrong = {}
    for version, python in found.items():
        done = pythons.run_source(python, _ON_EVERY_PYTHON, stdin=json.dumps(files))
        if done.returncode != 0:
            wrong[pythons.label(version, python)] = done.stderr.strip().splitlines()[-1:]
            continue
        bad = [(path, n) for path, n, same in json.loads(done.stdout) if n is None or not same]
        if bad:
            wrong[pythons.label(version, python)] = bad
    assert wrong == {}
