"""System libraries on the loader path and host compilers: the probe (ld.so.cache in both layouts,
ld.so.conf, toolkit trees, cudnn_version.h, dpkg's compilers, `--version` parsing), the sourced
host-compiler table, and the checks that judge them (words and exact boundaries)."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import struct
import subprocess

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpuenv.matrices import load
from gpuenv.probe import collect
from gpuenv.probe import libraries as L
from gpuenv.probe import toolchain as T
from gpuenv.probe.host import Sysroot
from gpuenv.resolve.finding import Target
from gpuenv.resolve.report import diagnose
from tests.doctor_cases import base, found, judge
from tests.probe_helpers import ROOTS
from tests.schemas import SCHEMAS

LOADER = "debian12-kvm-cuda118-gcc12-loader"


@pytest.fixture(scope="module")
def matrices():
    return load()


# -- ld.so.cache ---------------------------------------------------------------------------------


def _strings(entries, base_offset):
    table, offsets = b"", []
    for key, value in entries:
        k = base_offset + len(table)
        table += key.encode() + b"\0"
        v = base_offset + len(table)
        table += value.encode() + b"\0"
        offsets.append((k, v))
    return table, offsets


def new_cache(entries, endian="<"):
    header = 48
    table, offsets = _strings(entries, header + 24 * len(entries))
    flags = 2 if endian == "<" else 3
    head = L.NEW_MAGIC + struct.pack(endian + "II", len(entries), len(table)) + bytes([flags, 0, 0, 0])
    head += struct.pack(endian + "IIII", 0, 0, 0, 0)
    assert len(head) == header
    body = b"".join(struct.pack(endian + "iIIIQ", 0x0303, k, v, 0, 0) for k, v in offsets)
    return head + body + table


def old_cache(entries):
    table, offsets = _strings(entries, 0)  # old layout: offsets from the string table
    head = L.OLD_MAGIC + b"\0" + struct.pack("<I", len(entries))
    return head + b"".join(struct.pack("<iII", 0x0303, k, v) for k, v in offsets) + table


ENTRIES = [
    ("libcudart.so.12", "/usr/local/cuda-12.8/targets/x86_64-linux/lib/libcudart.so.12"),
    ("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"),
]


@pytest.mark.parametrize("endian", ["<", ">"])
def test_new_layout_cache_parses(endian):
    assert L.parse_ld_so_cache(new_cache(ENTRIES, endian)) == ENTRIES


def test_old_layout_cache_parses():
    assert L.parse_ld_so_cache(old_cache(ENTRIES)) == ENTRIES


def test_old_layout_followed_by_new_layout_uses_the_new_one():
    old = old_cache([("libold.so.1", "/old/libold.so.1")])
    end = 16 + 12
    padded = old[:end] + b"\0" * (((end + 7) & ~7) - end)
    combined = padded + new_cache(ENTRIES)
    assert L.parse_ld_so_cache(combined) == ENTRIES


@pytest.mark.parametrize("data", [b"", b"garbage", L.NEW_MAGIC + b"\0" * 10, new_cache(ENTRIES)[:60]])
def test_broken_cache_is_a_value_error(data):
    with pytest.raises(ValueError):
        L.parse_ld_so_cache(data)


@pytest.mark.skipif(
    not os.path.exists("/etc/ld.so.cache") or not shutil.which("ldconfig"), reason="no ldconfig"
)
def test_this_machines_cache_agrees_with_ldconfig():
    entries = L.parse_ld_so_cache(open("/etc/ld.so.cache", "rb").read())
    listed = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    assert f"{len(entries)} libs found" in listed.splitlines()[0]
    for soname, path in entries[:20]:
        assert f"{soname} " in listed and path in listed


def test_cache_under_a_root_decides_which_libraries_the_loader_sees(tmp_path):
    root = tmp_path / "root"
    lib = root / "usr/local/cuda-12.8/targets/x86_64-linux/lib"
    lib.mkdir(parents=True)
    (lib / "libcudart.so.12.8.90").write_text("")
    (lib / "libcudart.so.12").symlink_to("libcudart.so.12.8.90")
    (root / "etc").mkdir()
    (root / "etc/ld.so.cache").write_bytes(new_cache(ENTRIES))
    # A conf file naming another directory is not what the loader reads when there is a cache.
    (root / "etc/ld.so.conf").write_text("/opt/elsewhere\n")
    libs = L.scan(Sysroot.at(str(root)), None, [])
    assert [(x.name, x.version, x.path, x.source) for x in libs] == [
        ("cudart", "12.8.90", "/usr/local/cuda-12.8/targets/x86_64-linux/lib/libcudart.so.12", "ldconfig")
    ]


def test_unreadable_cache_falls_back_to_ld_so_conf_and_says_so(tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/ld.so.cache").write_bytes(b"not a cache at all")
    (root / "etc/ld.so.conf").write_text("include ld.so.conf.d/*.conf\n")
    (root / "etc/ld.so.conf.d").mkdir()
    (root / "etc/ld.so.conf.d/nccl.conf").write_text("# NCCL\n/opt/nccl/lib\n")
    (root / "opt/nccl/lib").mkdir(parents=True)
    (root / "opt/nccl/lib/libnccl.so.2.21.5").write_text("")
    (root / "opt/nccl/lib/libnccl.so.2").symlink_to("libnccl.so.2.21.5")
    errors = []
    libs = L.scan(Sysroot.at(str(root)), None, errors)
    assert [(x.name, x.version, x.path) for x in libs] == [("nccl", "2.21.5", "/opt/nccl/lib/libnccl.so.2")]
    assert errors and "ld.so.conf" in errors[0].message


def test_two_majors_in_one_directory_are_two_libraries(tmp_path):
    root = tmp_path / "root"
    lib = root / "usr/lib/x86_64-linux-gnu"
    lib.mkdir(parents=True)
    for name in ("libcudnn.so.8.9.7", "libcudnn.so.9.1.0"):
        (lib / name).write_text("")
    (lib / "libcudnn.so.8").symlink_to("libcudnn.so.8.9.7")
    (lib / "libcudnn.so.9").symlink_to("libcudnn.so.9.1.0")
    (lib / "libcudnn_ops.so.9").write_text("")  # a sub-library, not cuDNN's soname
    (root / "etc").mkdir()
    (root / "etc/ld.so.conf").write_text("/usr/lib/x86_64-linux-gnu\n")
    libs = L.scan(Sysroot.at(str(root)), None, [])
    assert [(x.version, x.path.rsplit("/", 1)[1]) for x in libs] == [
        ("8.9.7", "libcudnn.so.8"),
        ("9.1.0", "libcudnn.so.9"),
    ]


def test_ld_library_path_comes_first_and_is_named(tmp_path):
    root = tmp_path / "root"
    lib = root / "opt/cudnn/lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9.1.0").write_text("")
    libs = L.scan(Sysroot(str(root), True), ["/opt/cudnn/lib"], [])  # live-style: the caller passes the variable
    assert libs[0].source == "ld_library_path" and libs[0].version == "9.1.0"


def test_library_names_and_versions_from_file_names():
    assert L.library_of("libcudart.so.12.8.90") == ("cudart", "12.8.90")
    assert L.library_of("libMIOpen.so.1.0.70200") == ("miopen", "1.0.70200")
    assert L.library_of("libhipblaslt.so.0") == ("hipblaslt", "0")
    assert L.library_of("libcublas.so") == ("cublas", None)
    assert L.library_of("libcublasLt.so.12") is None and L.library_of("libcudnn_ops.so.9") is None


# The string parsers below are held to regular expressions (the oracle, in each test), over the
# characters that library names and versions are made of.
_NAME_CHARS = st.text(alphabet="libcudartMIOpenhpgc+-.:0123456789so_x", max_size=24)


@settings(max_examples=400, deadline=None)
@given(_NAME_CHARS)
@example("libcudart.so.12.8.90")
@example("libcudart.so.")
@example("libcudart.so2")
@example("libcudart.so.12..8")
@example("libcudart.so.so.1")
def test_library_of_reads_what_the_pattern_read(name):
    m = re.match(r"^(lib[A-Za-z]+)\.so((?:\.\d+)*)$", name)
    stems = {stem: lib for lib, stem in L.LIBRARIES.items()}
    want = (stems[m.group(1)], m.group(2)[1:] or None) if m and m.group(1) in stems else None
    assert L.library_of(name) == want


@settings(max_examples=400, deadline=None)
@given(_NAME_CHARS)
@example("4:13.2.0-7ubuntu1")
@example("13:x")
@example("12.")
@example("1..2")
@example(".5")
@example(" 1:18.1.3-1 ")
def test_upstream_version_reads_what_the_pattern_read(version):
    m = re.match(r"^(?:\d+:)?(\d+(?:\.\d+)*)", version.strip())
    assert T.upstream(version) == (m.group(1) if m else None)


@settings(max_examples=400, deadline=None)
@given(_NAME_CHARS)
@example("gcc-13")
@example("g++-13")
@example("clang-18")
@example("gcc-13-base")
@example("gcc-")
@example("cpp-13")
def test_versioned_compiler_package_names_read_what_the_pattern_read(name):
    m = re.match(r"^(gcc|g\+\+|clang)-(\d+)$", name)
    assert T._versioned(name) == (m.groups() if m else None)


@settings(max_examples=400, deadline=None)
@given(st.lists(_NAME_CHARS, min_size=1, max_size=4))
@example(["usr", "lib", "llvm-18", "bin", "clang"])
@example(["usr", "bin", "a-1..2"])
@example(["usr", "bin", "a-1.2-3"])
@example(["usr", "bin", "gcc-"])
def test_version_of_a_path_reads_what_the_pattern_read(parts):
    real = "/" + "/".join(parts)
    want = None
    pieces = real.rstrip("/").split("/")
    for part in (pieces[-1], *reversed(pieces[:-1])):
        m = re.search(r"-(\d+(?:\.\d+)*)$", part)
        if m:
            want = m.group(1)
            break
    assert T.version_of_path(real) == want


def test_cudnn_version_header():
    text = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n"
    assert L.parse_cudnn_version_h(text) == "9.1.0"
    assert L.parse_cudnn_version_h("/* nothing */") is None


def test_loader_fixture_libraries():
    f = collect(root=str(ROOTS / LOADER), user="carol")
    assert [(x.name, x.version, x.source) for x in f.libraries] == [
        ("cudart", "12.8.90", "ldconfig"),  # /etc/ld.so.conf.d/988_cuda-12.conf, through the cuda-12 link
        ("cudnn", "8.9.7", "ldconfig"),  # libcudnn.so.8 alone; the version from cudnn_version_v8.h
        ("cudart", "11.8.89", "toolkit"),  # the runfile toolkit's own tree, not on the loader path
    ]
    assert f.path_targets == {
        "/usr/local/cuda": "/usr/local/cuda-11.8",
        "/usr/local/cuda-12": "/usr/local/cuda-12.8",
    }


# -- the toolchain probe -------------------------------------------------------------------------


def test_compilers_from_dpkg_with_the_default_from_the_metapackage():
    tools = T.from_packages({"gcc-12": "12.2.0-14+deb12u1", "gcc-13": "13.3.0-6ubuntu2~24.04", "gcc": "4:12.2.0-3",
                             "clang-18": "1:18.1.3-1ubuntu1", "cmake": "3.25.1-1", "ninja-build": "1.11.1-2~deb12u1"})  # fmt: skip
    got = {(t.name, t.version, t.default) for t in tools}
    assert got == {
        ("gcc", "12.2.0", True), ("gcc", "13.3.0", False), ("clang", "18.1.3", None),
        ("cmake", "3.25.1", None), ("ninja", "1.11.1", None),
    }  # fmt: skip


@pytest.mark.parametrize(
    "real, want",
    [
        ("/usr/bin/x86_64-linux-gnu-gcc-12", "12"),
        ("/usr/bin/clang-18", "18"),
        ("/usr/lib/llvm-18/bin/clang", "18"),
        ("/usr/local/cuda-12.8/bin/nvcc", "12.8"),
        ("/usr/bin/gcc", None),
    ],
)
def test_version_from_where_the_command_leads(real, want):
    assert T.version_of_path(real) == want


def test_the_commands_on_path_are_read_without_running_them(tmp_path, monkeypatch):
    """gcc -> gcc-12 -> x86_64-linux-gnu-gcc-12 (Debian's chain); a 'gcc' that would run is a
    script that leaves a mark: it must never be executed."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    mark = tmp_path / "ran"
    real = bin_ / "x86_64-linux-gnu-gcc-12"
    real.write_text(f"#!/bin/sh\ntouch {mark}\n")
    real.chmod(0o755)
    (bin_ / "gcc-12").symlink_to(real.name)
    (bin_ / "gcc").symlink_to("gcc-12")
    monkeypatch.setenv("PATH", str(bin_))
    tools = T.from_path(Sysroot.at(None))
    assert [(t.name, t.version, t.path, t.source) for t in tools] == [("gcc", "12", str(real), "path")]
    assert not mark.exists()


def test_no_command_is_looked_up_under_a_root():
    host = Sysroot.at(str(ROOTS / LOADER))
    assert host.which("gcc") is None
    assert T.from_path(host) == []


def test_loader_fixture_toolchain_is_packages_then_files():
    f = collect(root=str(ROOTS / LOADER), user="carol")
    assert [(t.name, t.version, t.source) for t in f.toolchain] == [
        ("cmake", "3.25.1", "package"), ("g++", "12.2.0", "package"), ("gcc", "12.2.0", "package"),
        ("ninja", "1.11.1", "package"), ("nvcc", "11.8.0", "file"),
    ]  # fmt: skip


# -- the host compiler table ---------------------------------------------------------------------


def test_host_compiler_table_fits_its_schema_and_cites_every_row():
    import jsonschema

    from gpuenv.standins import bundled

    with open(bundled.path("matrices", "host_compilers.json")) as fh:
        doc = json.load(fh)
    jsonschema.validate(doc, json.loads((SCHEMAS / "matrices-host_compilers.json").read_text()))
    for row in doc["releases"]:
        assert row["source"].startswith("https://docs.nvidia.com/") and isinstance(row["confirmed"], bool)


def test_host_compiler_lookup(matrices):
    assert matrices.host_compilers("12.8.1").gcc == (6, 14)
    assert matrices.host_compilers("13.0").gcc == (6, 15) and matrices.host_compilers("13.0").clang == (7, 20)
    assert matrices.host_compilers("11.8").gcc[1] == 11
    assert matrices.host_compilers("13.2") is None  # no source read: no answer


def _with_gxx(version, cuda_dir="/usr/local/cuda-12.8", package="g++-15", extra=()):
    doc = base("doctor-healthy-cuda")
    doc["toolchain"] = [
        {"name": "g++", "version": version, "path": f"/usr/bin/{package}", "source": "package", "package": package,
         "default": True},
        *extra,
    ]  # fmt: skip
    doc["environment"] = {"PATH": f"{cuda_dir}/bin"}
    return doc


@pytest.mark.parametrize(
    "gxx, fires",
    [("14.2.0", False), ("14.99.1", False), ("15.1.0", True), ("6.5.0", False), ("5.4.0", True)],
)
def test_host_compiler_boundaries_for_cuda_12_8(gxx, fires, matrices):
    report = judge(_with_gxx(gxx), matrices)
    assert bool(found(report, "cuda.host-compiler")) is fires


def test_host_compiler_words_and_fix(matrices):
    doc = _with_gxx("15.2.0", extra=[{"name": "g++", "version": "13.3.0", "path": "/usr/bin/g++-13", "source": "package",
                                      "package": "g++-13", "default": False}])  # fmt: skip
    (f,) = found(judge(doc, matrices), "cuda.host-compiler")
    assert f.severity.value == "warning"
    assert f.title == "nvcc of CUDA 12.8 does not support GCC 15 (newer than GCC 14)"
    assert "GCC 6-14" in f.detail and "-allow-unsupported-compiler" in f.detail and "g++-13" in f.detail
    assert "nvcc -ccbin g++-13" in f.fix and "NVCC_CCBIN=g++-13" in f.fix and "CUDAHOSTCXX=g++-13" in f.fix
    assert "update-alternatives" in f.fix and "apt-get install" not in f.fix  # one in range is installed


def test_host_compiler_without_an_alternative_says_what_to_install(matrices):
    (f,) = found(judge(_with_gxx("15.2.0"), matrices), "cuda.host-compiler")
    assert "sudo apt-get install gcc-14 g++-14" in f.fix


def test_cuda_13_accepts_gcc_15_but_not_16(matrices):
    doc = _with_gxx("15.2.0", cuda_dir="/usr/local/cuda-13.0")
    doc["toolkits"]["cuda"] = [{"version": "13.0.0", "path": "/usr/local/cuda-13.0", "source": "package"}]
    assert not found(judge(doc, matrices), "cuda.host-compiler")
    doc["toolchain"][0]["version"] = "16.1.0"
    assert found(judge(doc, matrices), "cuda.host-compiler")


def test_nvcc_ccbin_names_the_compiler_judged(matrices):
    doc = _with_gxx("15.2.0", extra=[{"name": "g++", "version": "13.3.0", "path": "/usr/bin/g++-13", "source": "package",
                                      "package": "g++-13", "default": False}])  # fmt: skip
    doc["environment"]["NVCC_CCBIN"] = "g++-13"
    assert not found(judge(doc, matrices), "cuda.host-compiler")
    doc["environment"]["NVCC_CCBIN"] = "/usr/bin/g++-15"
    assert found(judge(doc, matrices), "cuda.host-compiler")


def test_no_table_row_no_finding(matrices):
    doc = _with_gxx("17.1.0", cuda_dir="/usr/local/cuda-13.2")
    doc["toolkits"]["cuda"] = [{"version": "13.2.0", "path": "/usr/local/cuda-13.2", "source": "package"}]
    assert not found(judge(doc, matrices), "cuda.host-compiler")


def test_loader_fixture_judged_by_the_doctor(matrices):
    f = collect(root=str(ROOTS / LOADER), user="carol")
    report = diagnose(f, matrices, Target())
    (host,) = found(report, "cuda.host-compiler")
    assert host.title == "nvcc of CUDA 11.8 does not support GCC 12 (newer than GCC 11)"
    assert "gcc-11 g++-11" in host.fix
    (lib,) = found(report, "cuda.library-conflict")
    assert "libcudart.so.12 (cudart 12.8.90, ldconfig)" in lib.detail and "11.8.0" in lib.detail
    assert "/usr/local/cuda-12/targets/x86_64-linux/lib" in lib.fix and "sudo ldconfig" in lib.fix


# -- loader conflicts and the torch wheel -------------------------------------------------------


def test_same_soname_two_versions_keeps_the_toolkit_in_use(matrices):
    doc = json.loads((ROOTS.parent / "facts/env-cuda-mixed-paths.json").read_text())
    (f,) = found(judge(doc, matrices), "cuda.library-conflict")
    assert "cudart 12.4.127, LD_LIBRARY_PATH) is found first" in f.detail
    assert f.fix.startswith("remove /usr/local/cuda-12.4/lib64 from LD_LIBRARY_PATH")


def test_torch_ld_library_path_names_the_library_and_both_versions(matrices):
    doc = json.loads((ROOTS.parent / "facts/env-cuda-mixed-paths.json").read_text())
    (f,) = found(judge(doc, matrices), "torch.ld-library-path")
    assert (
        "(CUDA runtime 12.4.127) shadows the CUDA runtime 12.8.57 that torch takes from nvidia-cuda-runtime-cu12"
        in f.detail
    )


@pytest.mark.parametrize("system, fires", [("9.1.0", True), ("9.5.1", False), ("8.9.7", False)])
def test_cudnn_on_ld_library_path_against_the_wheels_cudnn(system, fires, matrices):
    doc = base("doctor-healthy-cuda")
    doc["python"]["packages"]["nvidia-cudnn-cu12"] = "9.5.1.17"
    doc["environment"]["LD_LIBRARY_PATH"] = "/opt/cudnn/lib"
    doc["libraries"] = [{"name": "cudnn", "version": system, "path": f"/opt/cudnn/lib/libcudnn.so.{system[0]}",
                         "source": "ld_library_path"}]  # fmt: skip
    hits = found(judge(doc, matrices), "torch.ld-library-path")
    assert bool(hits) is fires  # another major is another soname: no shadowing
    if fires:
        assert (
            "cuDNN 9.1.0) shadows the cuDNN 9.5.1.17 that torch takes from nvidia-cudnn-cu12"
            in hits[0].detail
        )


def test_rocm_libraries_of_another_release(matrices):
    doc = base("doctor-healthy-rocm")
    doc["libraries"] = [{"name": "rocblas", "version": "4.4.0", "path": "/opt/rocm-6.4.0/lib/librocblas.so.4",
                         "source": "ld_library_path"}]  # fmt: skip
    (f,) = found(judge(doc, matrices), "rocm.library-conflict")
    assert "ROCm 6.4.0" in f.detail and "7.2.4" in f.detail and "LD_LIBRARY_PATH" in f.fix
    doc["libraries"][0]["path"] = "/opt/rocm-7.2.4/lib/librocblas.so.4"
    assert not found(judge(doc, matrices), "rocm.library-conflict")


# -- hipcc ---------------------------------------------------------------------------------------


def test_hipcc_without_rocm_clang(matrices):
    doc = base("doctor-healthy-rocm")
    hipcc = {"name": "hipcc", "version": "7.2.4", "path": "/opt/rocm-7.2.4/bin/hipcc", "source": "file"}
    doc["toolchain"] = [hipcc]
    (f,) = found(judge(doc, matrices), "rocm.hipcc-clang-missing")
    assert f.severity.value == "error" and "/opt/rocm-7.2.4/llvm/bin/clang" in f.detail
    assert f.fix.startswith("sudo apt-get install rocm-llvm")
    doc["toolchain"] = [
        hipcc,
        {"name": "rocm-llvm", "path": "/opt/rocm-7.2.4/llvm/bin/clang", "source": "file"},
    ]
    assert not found(judge(doc, matrices), "rocm.hipcc-clang-missing")
    doc["toolchain"] = [hipcc]
    doc["environment"]["HIP_CLANG_PATH"] = "/usr/lib/llvm-18/bin"
    assert not found(judge(doc, matrices), "rocm.hipcc-clang-missing")


def test_hipcc_probe_reads_the_rocm_tree(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(ROOTS / "ubuntu2404-rx9070xt-igpu-rocm", root, symlinks=True)
    (root / "opt/rocm-7.2.0/bin").mkdir(parents=True, exist_ok=True)
    (root / "opt/rocm-7.2.0/bin/hipcc").write_text("")
    f = collect(root=str(root), user="alice")
    assert [(t.name, t.path) for t in f.toolchain if t.name == "hipcc"] == [
        ("hipcc", "/opt/rocm-7.2.0/bin/hipcc")
    ]
    report = diagnose(f, load(), Target())
    assert found(report, "rocm.hipcc-clang-missing")
    (root / "opt/rocm-7.2.0/llvm/bin").mkdir(parents=True)
    (root / "opt/rocm-7.2.0/llvm/bin/clang").write_text("")
    f = collect(root=str(root), user="alice")
    assert not found(diagnose(f, load(), Target()), "rocm.hipcc-clang-missing")


def test_facts_without_the_new_fields_judge_as_before(matrices):
    doc = copy.deepcopy(base("doctor-healthy-cuda"))
    for key in ("libraries", "toolchain", "path_targets"):
        doc.pop(key, None)
    codes = {f.code for f in judge(doc, matrices).findings}
    assert not codes & {"cuda.library-conflict", "cuda.host-compiler", "rocm.hipcc-clang-missing"}


@pytest.mark.parametrize("pattern", ["*.conf", "*conf", "*", "nv*.conf", "*.con?", "[ab]*.conf", "x.conf"])
def test_ld_so_conf_include_globs_match_as_fnmatch_does(pattern):
    import fnmatch

    names = ["a.conf", "b.conf.bak", ".hidden.conf", "nvidia.conf", "x86_64-linux-gnu.conf", "conf", "x.conf", "a\nb.conf"]
    assert L._matching(names, pattern) == [n for n in names if fnmatch.fnmatch(n, pattern)]
