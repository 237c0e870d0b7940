"""Sourced facts that the compiled reference (sources/reference/matrices.json) does not hold,
merged in by build.py.

Every value here was read in the source named beside it (URL, or repository + path + commit);
a value no source gives is None with a note, never a guess. Kept apart from build.py so that a
reviewer can check the additions without reading the generator. Imported by the build (build.py's modules) only.
"""

from __future__ import annotations

# ------------------------------------------------------------------------------------ sources

TABLE3 = "https://docs.nvidia.com/cuda/archive/12.4.0/cuda-toolkit-release-notes/index.html"
TABLE3_COPY = (
    "NVIDIA CUDA Toolkit Release Notes, Table 3 'CUDA Toolkit and Corresponding Driver Versions' "
    f"({TABLE3}); the rows for 8.0-11.7 were read from a verbatim copy of that table kept in a public "
    "Markdown note whose repository was not identified ('CUDA环境配置在Ubuntu18', section 'NVIDIA GPU "
    "driver与CUDA 版本对应'), whose 11.8-12.4 rows match the rows cuda.json already has from NVIDIA's own "
    "page; the 7.0-10.2 rows also match NVIDIA's Table 2 as quoted at https://eehoeskrap.tistory.com/451"
)
COMPAT_DOC = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
RUNFILES = (
    "runfile names cuda_<version>_<driver>_linux.run on developer.download.nvidia.com, as listed in "
    "Jimver/cuda-toolkit src/links/linux-links.ts @ 3d45d157f327c09c04b50ee6ccdea2d9d017ec76"
)
LTT_108 = (
    "pmeier/light-the-torch light_the_torch/_cb.py @ 33417c2 ('Add cuda 11.7 and 11.8 to minimum driver "
    "version list (#108)', based on Table 3)"
)
ARCH_MATRIX = (
    "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html"
)
ARCH_MATRIX_COPY = (
    f"NVIDIA 'CUDA Toolkit, Driver, and Architecture Matrix' ({ARCH_MATRIX}); the Fermi and Kepler 3.0/3.2 "
    "rows (cut off in the stored capture of NVIDIA's page after 'Kepler | 3.0 3.2 | CUDA 6.0 | CUDA 10') "
    "read from a copy of an earlier revision of the page (https://www.cnblogs.com/litifeng/p/18236236: "
    "'Fermi | 2.0 | CUDA 3.0 | CUDA 8.0 | R390', 'Kepler | 3.0,3.2 | CUDA 6.0 | CUDA 10.2 | R470')"
)
FORUM_LEGACY = (
    "NVIDIA forum 'Current releases' (https://forums.developer.nvidia.com/t/current-graphics-driver-releases/"
    "28500): legacy releases '470.239.06 - GKxxx Kepler GPUs', '390.157 - GF1xx Fermi GPUs', '340.108 - "
    "GeForce 8 and 9 series GPUs'"
)
CUDA_GPUS = "https://developer.nvidia.com/cuda-gpus"
FEATURES_129 = "https://docs.nvidia.com/cuda/archive/12.9.1/cuda-features-archive/index.html"
FEATURES_130 = "https://docs.nvidia.com/cuda/cuda-features-archive/index.html"
THOR_RENAME = (
    "https://docs.nvidia.com/cuda/curanddx/release_notes.html and https://docs.nvidia.com/cuda/nvcompdx/"
    "release_notes.html ('Support Thor SM renaming from sm_101 to sm_110 starting from CUDA 13.0; for CUDA "
    "12.9 and older releases Thor stays labeled as sm_101')"
)

# ------------------------------------------------------------------------------------ CUDA

MINOR_COMPAT_NONE = {
    "families": ["10", "9", "8"],
    "note": "CUDA 10.x and older have no minor-version compatibility: before CUDA 11 an application built "
    "with a newer toolkit needed that toolkit's own minimum driver (or the forward-compatibility package). "
    "minor_compat_driver is null for these toolkits.",
    "source": f"{COMPAT_DOC} ('From CUDA 11 onwards ...'; 'before CUDA 11, applications built against newer "
    "CUDA Toolkit releases were not supported on older drivers without forward compatibility package'; "
    "Table 2 'CUDA Toolkit 10.x Minimum Required Driver Versions')",
    "confirmed": True,
}

# (version, name, Table 3 Linux x86_64 minimum, runfile driver or None, minimum compute capability)
OLD_TOOLKITS = [
    ("8.0.44", "CUDA 8.0 GA1", "367.48", None, "2.0"),
    ("8.0.61", "CUDA 8.0 GA2", "375.26", "375.26", "2.0"),
    ("9.0.76", "CUDA 9.0 GA", "384.81", None, "3.0"),
    ("9.1.85", "CUDA 9.1 GA", "390.46", None, "3.0"),
    ("9.2.88", "CUDA 9.2 GA", "396.26", None, "3.0"),
    ("9.2.148", "CUDA 9.2 Update 1", "396.37", "396.37", "3.0"),
    ("10.0.130", "CUDA 10.0 GA", "410.48", "410.48", "3.0"),
    ("10.1.105", "CUDA 10.1 GA", "418.39", None, "3.0"),
    ("10.2.89", "CUDA 10.2 GA", "440.33", "440.33.01", "3.0"),
    ("11.0.2", "CUDA 11.0 GA", "450.51.05", "450.51.05", "3.5"),
    ("11.0.3", "CUDA 11.0 Update 1", "450.51.06", "450.51.06", "3.5"),
    ("11.1.0", "CUDA 11.1 GA", "455.23", None, "3.5"),
    ("11.1.1", "CUDA 11.1 Update 1", "455.32", "455.32.00", "3.5"),
    ("11.2.0", "CUDA 11.2 GA", "460.27.03", "460.27.04", "3.5"),
    ("11.2.1", "CUDA 11.2 Update 1", "460.32.03", "460.32.03", "3.5"),
    ("11.2.2", "CUDA 11.2 Update 2", "460.32.03", "460.32.03", "3.5"),
    ("11.3.0", "CUDA 11.3 GA", "465.19.01", "465.19.01", "3.5"),
    ("11.3.1", "CUDA 11.3 Update 1", "465.19.01", "465.19.01", "3.5"),
    ("11.4.0", "CUDA 11.4 GA", "470.42.01", "470.42.01", "3.5"),
    ("11.4.1", "CUDA 11.4 Update 1", "470.57.02", "470.57.02", "3.5"),
    ("11.4.2", "CUDA 11.4 Update 2", "470.57.02", "470.57.02", "3.5"),
    ("11.4.3", "CUDA 11.4 Update 3", "470.82.01", "470.82.01", "3.5"),
    ("11.4.4", "CUDA 11.4 Update 4", "470.82.01", "470.82.01", "3.5"),
    ("11.5.0", "CUDA 11.5 GA", "495.29.05", "495.29.05", "3.5"),
    ("11.5.1", "CUDA 11.5 Update 1", "495.29.05", "495.29.05", "3.5"),
    ("11.5.2", "CUDA 11.5 Update 2", "495.29.05", "495.29.05", "3.5"),
    ("11.6.0", "CUDA 11.6 GA", "510.39.01", "510.39.01", "3.5"),
    ("11.6.1", "CUDA 11.6 Update 1", "510.47.03", "510.47.03", "3.5"),
    ("11.6.2", "CUDA 11.6 Update 2", "510.47.03", "510.47.03", "3.5"),
    ("11.7.0", "CUDA 11.7 GA", "515.43.04", "515.43.04", "3.5"),
    ("11.7.1", "CUDA 11.7 Update 1", "515.48.07", "515.65.01", "3.5"),
]
TEN_X_PRIMARY = {"10.0", "10.1", "10.2"}  # also in NVIDIA's CUDA Compatibility Table 2
TOOLKIT_NOTES = {
    "8.0.44": ["Table 3 prints the row as 'CUDA 8.0 (8.0.44)'."],
    "8.0.61": ["Table 3 prints the row as 'CUDA 8.0 (8.0.61 GA2)'."],
    "9.1.85": [
        "An older copy of Table 3 (gist okwrtdsh/6c1017e0...) gives >= 387.26 for 9.1.85; later revisions of "
        "the table give >= 390.46, which is used."
    ],
    "10.1.105": [
        "Table 3 row 'CUDA 10.1 (10.1.105 general release, and updates)': 10.1 Update 1/2 share it."
    ],
    "10.2.89": ["Runfile bundles 440.33.01; Table 3 and CUDA Compatibility Table 2 give >= 440.33."],
    "11.0.2": ["Table 3 also lists 'CUDA 11.0.1 RC >= 450.36.06' (a release candidate; not bundled)."],
    "11.2.0": ["Runfile bundles 460.27.04; Table 3 gives >= 460.27.03 (used)."],
    "11.7.1": [
        "Runfile bundles 515.65.01; Table 3 gives >= 515.48.07 (used; light-the-torch #108 reads the same "
        "value from Table 3)."
    ],
}

# Architecture table changes: (architecture, changes)
ARCH_EXTRA = {
    "Kepler": {
        "compute_capabilities": ["3.0", "3.2", "3.5", "3.7"],
        "last_cuda_by_cc": {"3.0": "10.2", "3.2": "10.2"},
        "source_extra": ARCH_MATRIX_COPY + "; " + FORUM_LEGACY,
        "note": "NVIDIA's matrix has two Kepler rows: 3.5/3.7 (last CUDA 11.x, R470) and 3.0/3.2 (last CUDA "
        "10.2, R470); they are one entry here with last_cuda_by_cc for 3.0/3.2. The last Kepler driver branch "
        "R470 also appears in NVIDIA's legacy-driver list (470.239.06 for GKxxx).",
    },
    "Blackwell": {
        "compute_capabilities": ["10.0", "10.1", "10.3", "11.0", "12.0", "12.1"],
        "first_cuda_by_cc": {"10.1": "12.8", "10.3": "12.9", "11.0": "13.0", "12.1": "12.9"},
        "last_cuda_by_cc": {"10.1": "12.9"},
        "source_extra": (
            f"{CUDA_GPUS} (compute capability 10.3: NVIDIA GB300, B300; 11.0: Jetson T5000, T4000; 12.1: "
            f"NVIDIA GB10 (DGX Spark)); {FEATURES_129} ('CUDA Toolkit 12.9 adds compiler target support for SM "
            f"architecture 10.3 (sm_103, sm_103f, sm_103a) and 12.1 (sm_121)'); {FEATURES_130} ('SM101 has "
            f"been renumbered as SM110 from this release'); {THOR_RENAME}"
        ),
        "note": "Thor (Jetson T5000/T4000) was compute capability 10.1 (sm_101) in CUDA 12.8-12.9 and is 11.0 "
        "(sm_110) from CUDA 13.0: the same GPU, renumbered. The first CUDA for sm_101 (12.8) is not stated "
        "in the pages read; 12.8 is the first toolkit of the family. Blackwell-class GPUs need the open "
        "kernel modules (module_source); Jetson Thor uses NVIDIA's Jetson (L4T) driver, not the data-center "
        "driver packages.",
        "first_cuda_by_cc_confirmed": False,
    },
}
NEW_ARCHS = [
    {
        "architecture": "Fermi",
        "compute_capabilities": ["2.0", "2.1"],
        "first_cuda": "3.0",
        "last_cuda": "8.0",
        "last_driver": "R390",
        "module": "proprietary",
        "source": ARCH_MATRIX_COPY + "; " + FORUM_LEGACY,
        "module_source": "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html "
        "(the open kernel modules support Turing and newer only)",
        "confirmed": False,
        "notes": [
            "Values from a copy of NVIDIA's matrix, not NVIDIA's page itself (the stored capture is cut off "
            "before the Fermi row); the last driver branch R390 is also in NVIDIA's legacy-driver list."
        ],
    },
    {
        "architecture": "Tesla",
        "compute_capabilities": ["1.0", "1.1", "1.2", "1.3"],
        "first_cuda": None,
        "last_cuda": "6.5",
        "last_driver": "R340",
        "module": "proprietary",
        "source": "CUDA C Programming Guide, 'Compute Capability' (revision of the CUDA 10/11 era, quoted at "
        "https://blog.csdn.net/qq_29007291/article/details/123567687: major revision '1 for devices based on "
        "the Tesla architecture'; Tesla support removed from CUDA 7.0, so 6.5 is the last); " + FORUM_LEGACY,
        "module_source": "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html "
        "(the open kernel modules support Turing and newer only)",
        "confirmed": False,
        "notes": [
            "Pre-Fermi (G8x, G9x, GT2xx) GPUs. first_cuda not stated in the sources read. The 340 legacy "
            "driver is listed for 'GeForce 8 and 9 series'; that it also covers GT2xx (GeForce 200) is not "
            "stated there. No bundled toolkit (8.0 and newer) supports them."
        ],
    },
]

# ------------------------------------------------------------------------------------ torch

BUILDER = "pytorch/builder"
TEST_INFRA = "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py"
PREV_VERSIONS = (
    "pytorch/pytorch.github.io _get_started/previous-versions.md @ 04862e376ea686ba351674864400db1d93113979 "
    "(https://pytorch.org/get-started/previous-versions/)"
)
RELEASE_MD = (
    "pytorch/pytorch RELEASE.md 'Release Compatibility Matrix' (https://github.com/pytorch/pytorch/blob/main/"
    "RELEASE.md#release-compatibility-matrix; its rows were read in a Chinese translation of RELEASE.md that "
    "keeps the table in English, repository not identified, not re-read upstream)"
)
UV_BACKEND = "astral-sh/uv crates/uv-torch/src/backend.rs @ 26a9dd4b2125bc271b47855e1fa0c49af3365db5"
ROCM_43 = "gfx900;gfx906;gfx908 + (ROCm >= 4.3) gfx90a;gfx1030"
ARCH_37_86 = ["3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"]

# builder branch -> commit read (git log -1 of the branch in the fetched snapshot)
BUILDER_COMMITS = {
    "lts/release/1.8": "7e44027ebad0045165d929fb05a811098e04fbcd",
    "release/1.9": "0877fd10dd14817c0f84d35bee3840ada86ae34b",
    "release/1.10": "f0f41b25781aeb12a59937da169d87aece5a90c5",
    "release/1.11": "e77e5d077c1870283a7b391bf58e4857c58fb7f4",
    "release/1.12": "049415d44cf345cc531962e15160d910b2f9d620",
    "release/1.13": "d08f22640ad6f332026f26242d458b8d157187be",
    "release/2.0": "9f0fad92f342b146272d0f99d3969c2c148e80ba",
    "release/2.1": "55d40b1b06379fddd0ba14744dc3fdd768530da6",
    "release/2.2": "af60d11447443059c6c6c7590241a446a33db0f9",
    "release/2.3": "ba10bae9fe9b93365412297d40bc9a3a3eae6155",
}


def _builder(branch: str, cuda_file: str = "manywheel/build_cuda.sh", rocm: str | None = None) -> str:
    out = f"{BUILDER} branch {branch} @ {BUILDER_COMMITS[branch]} {cuda_file} (TORCH_CUDA_ARCH_LIST)"
    if rocm:
        out += f", {rocm} (PYTORCH_ROCM_ARCH)"
    return out


# One entry per minor release: patch versions, Python, variants. CUDA lists are
# TORCH_CUDA_ARCH_LIST as the builder branch sets it (no +PTX in any of them); ROCm lists are
# PYTORCH_ROCM_ARCH. "find_links": the install page of the release uses pip -f with that page.
OLD_TORCH = [
    {
        "minor": "2.3",
        "versions": ["2.3.0", "2.3.1"],
        "python": ["3.8", "3.9", "3.10", "3.11", "3.12"],
        "source": f"{TEST_INFRA} @ 6a6749762 ('Update stable version to 2.3.1': release CUDA 11.8/12.1, ROCm "
        f"5.7/6.0, Python 3.8-3.12); {_builder('release/2.3', rocm='manywheel/build_docker.sh')}; {RELEASE_MD}",
        "pypi_default": "cu121",
        "pypi_default_note": "not read for 2.3; see torch facts for 2.4",
        "variants": [
            ("cu118", ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "3.7", "9.0"]),
            ("cu121", ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]),
            ("rocm5.7", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100"]),
            ("rocm6.0", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100", "gfx942"]),
            ("cpu", []),
        ],
        "notes": [
            "RELEASE.md: Python >=3.8, <=3.11, 3.12 experimental; the release matrix builds 3.12 wheels."
        ],
    },
    {
        "minor": "2.2",
        "versions": ["2.2.0", "2.2.1", "2.2.2"],
        "python": ["3.8", "3.9", "3.10", "3.11", "3.12"],
        "source": f"{TEST_INFRA} @ 3f3e198b2 ('Advance release matrix ahead of 2.2.2': release CUDA 11.8/12.1, "
        f"ROCm 5.6/5.7, Python 3.8-3.12; 2.2.0/2.2.1 in commits 8e04a8e90, 344206d4b); "
        f"{_builder('release/2.2', rocm='manywheel/build_docker.sh')}; {RELEASE_MD}",
        "variants": [
            ("cu118", ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "3.7", "9.0"]),
            ("cu121", ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]),
            ("rocm5.6", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100"]),
            ("rocm5.7", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100"]),
            ("cpu", []),
        ],
        "notes": [
            "RELEASE.md: Python >=3.8, <=3.11, 3.12 experimental; the release matrix builds 3.12 wheels."
        ],
    },
    {
        "minor": "2.1",
        "versions": ["2.1.0", "2.1.1", "2.1.2"],
        "python": ["3.8", "3.9", "3.10", "3.11"],
        "source": f"{TEST_INFRA} @ 894576bf7 ('Advance stable release to 2.1.2': release CUDA 11.8/12.1, ROCm "
        f"5.5/5.6, Python 3.8-3.11; 2.1.0/2.1.1 in e900ee110, 7af3f9789); "
        f"{_builder('release/2.1', rocm='manywheel/build_docker.sh')}; {RELEASE_MD}",
        "variants": [
            ("cu118", ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "3.7", "9.0"]),
            ("cu121", ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]),
            ("rocm5.5", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100"]),
            ("rocm5.6", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100"]),
            ("cpu", []),
        ],
        "notes": [],
    },
    {
        "minor": "2.0",
        "versions": ["2.0.0", "2.0.1"],
        "python": ["3.8", "3.9", "3.10", "3.11"],
        "source": f"{TEST_INFRA} @ 05daa5e10 (release CUDA 11.7/11.8, ROCm 5.3/5.4.2, Python 3.8-3.11, "
        f"stable 2.0.1); {PREV_VERSIONS} (v2.0.0, v2.0.1: cu117, cu118, rocm5.4.2, cpu with --index-url); "
        f"{_builder('release/2.0', rocm='manywheel/build_docker.sh')}; {RELEASE_MD}",
        "variants": [
            ("cu117", ARCH_37_86),
            ("cu118", ARCH_37_86 + ["9.0"]),
            ("rocm5.3", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"]),
            ("rocm5.4.2", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"]),
            ("cpu", []),
        ],
        "notes": [
            "The install page lists rocm5.4.2 only; rocm5.3 is in the release build matrix.",
            f"ROCm list: {ROCM_43} (build_docker.sh).",
        ],
    },
    {
        "minor": "1.13",
        "versions": ["1.13.0", "1.13.1"],
        "python": ["3.7", "3.8", "3.9", "3.10"],
        "source": f"{TEST_INFRA} @ 8a674a190 (release CUDA 11.6/11.7, ROCm 5.1.1/5.2, Python 3.7-3.10, stable "
        f"1.13.1); {PREV_VERSIONS} (v1.13.0, v1.13.1: cu116, cu117, rocm5.2, cpu with --extra-index-url); "
        f"{_builder('release/1.13', rocm='manywheel/build_docker.sh')}; {RELEASE_MD}",
        "variants": [
            ("cu116", ARCH_37_86),
            ("cu117", ARCH_37_86),
            ("rocm5.1.1", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"]),
            ("rocm5.2", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"]),
            ("cpu", []),
        ],
        "notes": [f"ROCm list: {ROCM_43} (build_docker.sh)."],
    },
    {
        "minor": "1.12",
        "versions": ["1.12.0", "1.12.1"],
        "python": ["3.7", "3.8", "3.9", "3.10"],
        "source": f"{PREV_VERSIONS} (v1.12.0, v1.12.1: cu102, cu113, cu116, rocm5.1.1, cpu); {TEST_INFRA} @ "
        f"5677e291b (release CUDA 10.2/11.3/11.6); {_builder('release/1.12', rocm='manywheel/build_docker.sh')}; "
        f"{RELEASE_MD} (Python >=3.7, <=3.10)",
        "variants": [
            ("cu102", ["3.7", "5.0", "6.0", "7.0"]),
            ("cu113", ARCH_37_86),
            ("cu116", ARCH_37_86),
            ("rocm5.1.1", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"]),
            ("cpu", []),
        ],
        "notes": [
            "RELEASE.md names ROCm 5.0 as the stable ROCm of 1.12; the install page gives rocm5.1.1 (used).",
            f"ROCm list: {ROCM_43} (build_docker.sh).",
        ],
    },
    {
        "minor": "1.11",
        "versions": ["1.11.0"],
        "python": ["3.7", "3.8", "3.9", "3.10"],
        "source": f"{PREV_VERSIONS} (v1.11.0: cu102, cu113, rocm4.5.2, cpu with --extra-index-url); "
        f"{_builder('release/1.11', rocm='manywheel/build_docker.sh')}; Python from {BUILDER} release/1.11 "
        "common/install_cpython.sh (CPYTHON_VERSIONS 3.7.5 3.8.1 3.9.0 3.10.1)",
        "variants": [
            ("cu102", ["3.7", "5.0", "6.0", "7.0"]),
            ("cu113", ARCH_37_86),
            ("rocm4.5.2", ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"]),
            ("cpu", []),
        ],
        "notes": [
            "build_cuda.sh also handles CUDA 11.5 (cu115 wheels); the install page does not list them, so "
            "cu115 is left out.",
            f"ROCm list: {ROCM_43} (build_docker.sh).",
        ],
    },
    {
        "minor": "1.10",
        "versions": ["1.10.0", "1.10.1"],
        "python": ["3.6", "3.7", "3.8", "3.9"],
        "source": f"{PREV_VERSIONS} (v1.10.0, v1.10.1: cu102, cu111, rocm4.2, rocm4.1, rocm4.0.1, cpu via pip "
        f"-f torch_stable.html); {_builder('release/1.10', 'manywheel/build.sh')}; Python from {BUILDER} "
        "release/1.10 common/install_cpython.sh (CPYTHON_VERSIONS 3.6.6 3.7.5 3.8.1 3.9.0)",
        "find_links": "https://download.pytorch.org/whl/torch_stable.html",
        "variants": [
            ("cu102", ["3.7", "5.0", "6.0", "7.0"]),
            ("cu111", ARCH_37_86),
            ("rocm4.0.1", None),
            ("rocm4.1", None),
            ("rocm4.2", None),
            ("cpu", []),
        ],
        "notes": ["1.10.2 and cu113 wheels of 1.10 are not on the install page read; left out."],
    },
    {
        "minor": "1.9",
        "versions": ["1.9.0", "1.9.1"],
        "python": [],
        "source": f"{PREV_VERSIONS} (v1.9.0, v1.9.1: cu102, cu111, rocm4.2, rocm4.1, rocm4.0.1, cpu via pip -f "
        f"torch_stable.html); {_builder('release/1.9', 'manywheel/build.sh')}",
        "find_links": "https://download.pytorch.org/whl/torch_stable.html",
        "variants": [
            ("cu102", ["3.7", "5.0", "6.0", "7.0"]),
            ("cu111", ARCH_37_86),
            ("rocm4.0.1", None),
            ("rocm4.1", None),
            ("rocm4.2", None),
            ("cpu", []),
        ],
        "notes": ["Python versions of the 1.9 wheels are not stated in the sources read (python is empty)."],
    },
    {
        "minor": "1.8",
        "versions": ["1.8.0", "1.8.1"],
        "python": [],
        "source": f"{PREV_VERSIONS} (v1.8.0: cu111, cu102 (PyPI), rocm4.0.1, cpu; v1.8.1 adds cu101 and "
        f"rocm3.10; pip -f torch_stable.html); {_builder('lts/release/1.8', 'manywheel/build.sh')}",
        "find_links": "https://download.pytorch.org/whl/torch_stable.html",
        "variants": [
            ("cu102", ["3.7", "5.0", "6.0", "7.0"]),
            ("cu111", ARCH_37_86),
            ("rocm4.0.1", None),
            ("cpu", []),
        ],
        "notes": [
            "cu101 and rocm3.10 exist for 1.8.1 only and are left out; 1.8.2 (LTS) lives on separate indexes "
            "(https://download.pytorch.org/whl/lts/1.8/<variant>) and is left out.",
            "Python versions of the 1.8 wheels are not stated in the sources read (python is empty).",
        ],
    },
]
# ROCm wheels of 1.8-1.10: builder sets no PYTORCH_ROCM_ARCH; its build_rocm.sh says the default of
# pytorch's LoadHIP.cmake applies, quoting it.
ROCM_DEFAULT_ARCHS = ["gfx803", "gfx900", "gfx906", "gfx908"]
ROCM_DEFAULT_NOTE = (
    "PYTORCH_ROCM_ARCH is not set by the builder; manywheel/build_rocm.sh (same branch) says it 'defaults to "
    "all supported archs in pytorch's LoadHIP.cmake', e.g. set(PYTORCH_ROCM_ARCH gfx803;gfx900;gfx906;gfx908), "
    "the default also read in a copy of pytorch's cmake/public/LoadHIP.cmake of that era (the version that "
    "reads ${ROCM_PATH}/.info/version-dev; repository and commit not identified); not measured on the wheels, "
    "so confirmed=false"
)
OLD_INDEX_NOTE = (
    "the install page of this release uses pip -f {find_links}; https://download.pytorch.org/whl/{variant} is "
    "the per-variant index that uv uses for it (" + UV_BACKEND + " PYTORCH_{upper}_INDEX_URL)"
)

# cu129 on 2.9-2.11: built by PyTorch's own CD though not in the default (getting-started) matrix.
CU129_SOURCE = (
    "a version of pytorch/pytorch .github/scripts/generate_binary_build_matrix.py (repository copy and commit "
    "not identified; https://github.com/pytorch/pytorch/blob/release/2.10/.github/scripts/"
    "generate_binary_build_matrix.py is the file upstream, not re-read) with CUDA_ARCHES = "
    "['12.6', '12.8', '12.9', '13.0'], CUDA_ARCHES_FULL_VERSION '12.9': '12.9.1', ROCM_ARCHES ['7.0', '7.1'], "
    "i.e. the 2.10 cycle); pytorch/test-infra ea334aba3 ('Bring back CUDA 12.9 builds for domains', "
    "2025-10-15: resumes nightly, test and release 12.9 builds, for pytorch/pytorch#165165) and 6186f4539 "
    "('Remove cuda 12.9 builds', 2026-04-02); pytorch/pytorch#179155 ('Remove cuda 12.9 cd builds', "
    "2026-04-02, after the 2.11 branch cut); pytorch/pytorch#187834 (zou3519: 'cu129 was unsupported in "
    "PyTorch since PyTorch 2.10 and PyTorch officially dropped them in pytorch 2.12')"
)
CU129 = {
    "2.9": (
        ["7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0"],
        "arch list of release/2.9 .ci/manywheel/build_cuda.sh as quoted (without +PTX markers) by "
        "huggingface/kernel-builder pkgs/python-modules/torch/archs.nix @ c6c83df374ba, which also notes '12.9 "
        "does not seem to be in RC builds'; whether 12.0 has +PTX here is not read (the 2.8 script had "
        "'12.9) ...12.0+PTX'), so no PTX is counted",
    ),
    "2.10": (None, "arch list of the 2.10 cu129 wheels not read (left empty: never chosen)"),
    "2.11": (None, "arch list of the 2.11 cu129 wheels not read (left empty: never chosen)"),
}

PTX_270_NOTE = (
    "compute_120 PTX: the release/2.7 .ci/manywheel/build_cuda.sh was not readable here (the pytorch/pytorch "
    "snapshot is over the fetch limit; the search index holds only the 2.8-era script 00c7a380b836, whose "
    "'12.8)' line has no +PTX), so no primary source settles it and the PTX stays uncounted"
)

# torch 2.14 (#29): released, so it replaces the reference's "2.14 (candidate)" row.
TORCH_214_RELEASED = (
    "googlecolab/colabtools#6093 (atalman, PyTorch release manager, 2026-09-03: 'We have released torch v2.14.0 "
    "and torchvision v0.29.0, to pypi and download.pytorch.org'; plain pip gives 'Python 3.10-Python 3.14 Cuda "
    "13.0', with cu126 and cu132 as the other CUDA builds; release notes "
    "https://github.com/pytorch/pytorch/releases/tag/v2.14.0)"
)
TORCH_214_MATRIX = (
    "pytorch/pytorch#194367 ('Add 2.14 to the release compatibility and CUDA support matrices', 2026-08-21, values "
    "taken from release/2.14: Python >=3.10, <=(3.15, 3.15t experimental); CUDA 12.6, 13.0, 13.2; ROCm 7.14 from "
    "ROCM_ARCHES); RELEASE.md's CUDA support matrix 'For Release 2.12, 2.13 and 2.14' (12.6.3: 5.0-9.0; 13.0.2 "
    "and 13.2.1: 7.5-12.0+PTX, +PTX on Linux only), which pytorch/pytorch#197555 (2026-09-18) keeps for 2.14 "
    "alone ('Is 2.13 the same as 2.14?' 'yes')"
)
TORCH_214_TEST_CHANNEL = (
    "pytorch/test-infra 00fa5780cc757c7b8da59fb1338d1552f66cfde8 ('Update binary build matrix for release 2.14', "
    "2026-08-11): the test channel of the 2.14.0 candidates builds CUDA 12.6/13.0/13.2/13.4, ROCm 7.2/7.14 "
    "('These match what release/2.14 actually builds ... rocm7.1 wheels that 2.14 does not produce') and Python "
    "3.10-3.14, 3.14t, with 3.15/3.15t torch-only; 0fe1899c4 ('Move ROCm 7.1,7.2->7.2,7.14', 2026-08-07)"
)
TORCH_214 = {
    "torch": "2.14 (2.14.0)",
    "release": "by 3 Sep 2026",
    "python": ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t"],
    "variants": ["cpu", "cu126", "cu130", "cu132", "rocm7.2", "rocm7.14"],
    "pypi_default_linux_x86_64": "CUDA 13.0",
    "cuda_arch_list": {
        "cu126": "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
        "cu130": "7.5;8.0;8.6;9.0;10.0;12.0+PTX (+PTX Linux only)",
        "cu132": "7.5;8.0;8.6;9.0;10.0;12.0+PTX (+PTX Linux only)",
    },
    "rocm_arch_list": {"rocm7.2": None, "rocm7.14": None},
    "source": [TORCH_214_RELEASED, TORCH_214_MATRIX, TORCH_214_TEST_CHANNEL],
    # The ROCm arch lists were not read (rocm_archs in build_torch.py, torch 2.14), so the row is not confirmed.
    "confirmed": False,
    "notes": (
        "Released (announced 2026-09-03; RELEASE.md planned 2 Sep 2026). Python 3.15/3.15t are experimental "
        "(RELEASE.md) and torch-only in the candidates' validation, so they are left out. cu134 is built for the "
        "candidates (test-infra 00fa5780c) but is in neither RELEASE.md's row nor the release announcement, so it "
        "is left out."
    ),
}
# The third audit (2026-12-07): what the ROCm 7.14 wheels are built for. pytorch/pytorch
# .ci/docker/manywheel/build.sh on main @ 027375bffdc7 (after #190276 folded rocm7.14 in, 2026-07-16 on,
# and before #194919 removed the legacy path, 2026-08-26; the release/2.14 cut, 10 Aug 2026, lies between)
# gives every ROCm image one common list and adds gfx900;gfx906 only on the legacy path (7.1/7.2, OS
# packages); the 7.14 path (TheRock wheels) keeps the common list. #194919 confirms it: removing the legacy
# path removed 'the gfx900/gfx906 additions'. The audit before had given rocm7.14 rocm7.2's list.
BUILD_SH_214 = (
    "pytorch/pytorch .ci/docker/manywheel/build.sh @ 027375bffdc7aa980c93df464526ff2d83ad8349 (main between "
    "pytorch/pytorch#190276, 2026-07-16, and #194919, 2026-08-26, which spans the release/2.14 cut of 10 Aug "
    "2026): common PYTORCH_ROCM_ARCH 'gfx908;gfx90a;gfx942;gfx950;gfx1030;gfx1100;gfx1101;gfx1102;gfx1103;"
    "gfx1200;gfx1201;gfx1150;gfx1151'; the legacy path (7.1/7.2) prepends 'gfx900;gfx906' ('Legacy images also "
    "cover the older gfx900/gfx906 targets'); #194919 says its removal of that path removed 'the gfx900/gfx906 "
    "additions'"
)
ROCM_214_72_NOTE = (
    f"{BUILD_SH_214}: the rocm7.2 wheels get the legacy path's 15 targets (2.13's list). release/2.14's own "
    "build.sh was not read (main's at a commit whose date is not read), so confirmed=false"
)
ROCM_214_714_NOTE = (
    "ROCm 7.14 wheels are built against TheRock's rocm wheels and install ROCm from pip (pytorch/pytorch#191688: "
    "PYTORCH_EXTRA_INSTALL_REQUIREMENTS '7.14': 'rocm[libraries,device-all]==7.14'). Their targets: "
    f"{BUILD_SH_214}: the 7.14 path keeps the common 13 targets, without gfx900 and gfx906 (the third audit; "
    "the bundle had given rocm7.14 rocm7.2's 15). release/2.14's own build.sh was not read, so confirmed=false"
)
# What a rocm7.14 wheel requires in place of a bundled runtime (pytorch/pytorch#191688).
ROCM_714_FROM_PIP = "rocm[libraries,device-all]==7.14"

# Effective support: arch lists that name a target whose bundled rocBLAS has no kernels for it.
NO_KERNELS_SOURCE = (
    "ROCm/ROCm#4625 (https://github.com/ROCm/legacy-rocm-build/issues/4625, the repository since renamed; 'The rocblas of 6.4.0 release doesn't ship TensileLibrary files for gfx906', 2025-04-14: "
    "the 6.4.0 TensileLibrary list has no gfx900/gfx906 file; 'rocm 6.3 worked fine'; AMD opened an internal "
    "ticket); pytorch/pytorch#179865 (the 2.12.0.dev20260408+rocm7.2 wheel's torch/lib/rocblas/library holds "
    "no gfx900 TensileLibrary and aborts on the first GEMM; confirmed by an AMD engineer); "
    "unslothai/unsloth#7354 (citing ROCm/TheRock#1844: rocm6.4+/7.x torch wheels no longer run on gfx906; "
    "rocm6.3 is the last wheel family that does)"
)
NO_KERNELS_VARIANTS = {"rocm6.4", "rocm7.0", "rocm7.1", "rocm7.2"}
NO_KERNELS_ARCHS = ["gfx900", "gfx906"]

ARCH_NOTES = [
    {
        "arch": "gfx906",
        "products": "AMD Instinct MI50, MI60, Radeon VII, Radeon Pro VII (Vega 20)",
        "last_torch": "2.9.1",
        "last_variant": "rocm6.3",
        "note": "The last official wheels that run on gfx906 are the rocm6.3 ones (torch 2.7-2.9; newest "
        "2.9.1, https://download.pytorch.org/whl/rocm6.3): rocm6.4 and every ROCm 7 wheel list gfx906 but "
        "bundle a rocBLAS without gfx906 kernels.",
        "source": NO_KERNELS_SOURCE,
        "confirmed": False,
    },
    {
        "arch": "gfx900",
        "products": "AMD Radeon RX Vega 56/64, Instinct MI25 (Vega 10)",
        "last_torch": None,
        "last_variant": None,
        "note": "rocm6.4 and ROCm 7 wheels bundle a rocBLAS without gfx900 kernels; which wheel was the last "
        "to run on gfx900 is not stated in the sources read (the rocm6.3 wheels list gfx900, untested here).",
        "source": NO_KERNELS_SOURCE,
        "confirmed": False,
    },
    {
        "arch": "sm_35",
        "products": "Kepler GK110/GK208 (GeForce GTX 780/780 Ti/TITAN, Tesla K20/K40, GT 730)",
        "last_torch": None,
        "last_variant": None,
        "note": "sm_35 left the wheel build list on 2019-10-29 (pytorch/builder 2aac90bd 'moved 3.5 to 3.7': "
        "TORCH_CUDA_ARCH_LIST 3.5;5.0+PTX -> 3.7;5.0+PTX); every bundled release (1.8 on) is built for sm_37 "
        "at the oldest, and an sm_37 cubin does not run on sm_35. The last release built before that commit is "
        "older than the bundled range.",
        "source": "pytorch/builder 2aac90bd723dfbb3dc7728152bf0e6877ec4da16 manywheel/build.sh",
        "confirmed": True,
    },
    {
        "arch": "sm_30",
        "products": "Kepler GK104/GK106/GK107 (GeForce GTX 680/770, GT 740)",
        "last_torch": None,
        "last_variant": None,
        "note": "sm_30 left the wheel build list in February 2018 (pytorch/builder d3be5aa9 'remove 3.0, 5.2 "
        "archs', the commit that also set PYTORCH_BUILD_VERSION=0.3.1); no bundled release has sm_30 code.",
        "source": "pytorch/builder d3be5aa9cedad87cdfa770afc5f22229cef9b199 manywheel/build.sh",
        "confirmed": True,
    },
]

# The community HSA_OVERRIDE_GFX_VERSION route for targets no official wheel is built for.
GFX_OVERRIDES = [
    {
        "gfx": "gfx1031",
        "value": "10.3.0",
        "runs_as": "gfx1030",
        "risk": "unofficial and unsupported by AMD: the card runs gfx1030 code; reported to work on discrete "
        "RDNA2, but a crash or wrong result is not AMD's bug to fix",
        "source": "ROCm/rocBLAS#1339 (cgmb, AMD: 'the gfx1030 instruction set is identical to the gfx1031 "
        "instruction set in all but name ... I would recommend setting the environment variable "
        "HSA_OVERRIDE_GFX_VERSION=10.3.0 ... I believe this workaround is generally applicable to any "
        "discrete RDNA 2 GPUs')",
        "confirmed": True,
    },
    {
        "gfx": "gfx1032",
        "value": "10.3.0",
        "runs_as": "gfx1030",
        "risk": "unofficial and unsupported by AMD: the card runs gfx1030 code (discrete RDNA2)",
        "source": "ROCm/rocBLAS#1339 (cgmb, AMD: the 10.3.0 override is 'generally applicable to any discrete "
        "RDNA 2 GPUs')",
        "confirmed": False,
    },
    {
        "gfx": "gfx1034",
        "value": "10.3.0",
        "runs_as": "gfx1030",
        "risk": "unofficial and unsupported by AMD: the card runs gfx1030 code (discrete RDNA2)",
        "source": "ROCm/rocBLAS#1339 (cgmb, AMD: the 10.3.0 override is 'generally applicable to any discrete "
        "RDNA 2 GPUs')",
        "confirmed": False,
    },
    {
        "gfx": "gfx1103",
        "value": "11.0.0",
        "runs_as": "gfx1100",
        "risk": "unofficial and unsupported by AMD; on gfx1103 (Radeon 780M/760M) it is reported to cause "
        "GPU page faults",
        "source": "pytorch/pytorch#179653 ('[ROCm] Add gfx1103 to wheel build arch list': gfx1103 users rely on "
        "HSA_OVERRIDE_GFX_VERSION=11.0.0, reported to cause page faults); torch.json facts",
        "confirmed": False,
    },
]

# ------------------------------------------------------------------------------------ AMD

AMD_NOTES = {
    "1002:1506": (
        "gfx target checked: gfx1036, not gfx1037. Mesa maps RAPHAEL_MENDOCINO to gfx1036 and LLVM has no "
        "gfx1037 processor. The only 'gfx1037' seen is a KFD ISA version 100307 that 'drm/amdkfd: Add GC "
        "10.3.6 and 10.3.7 KFD definitions' (7c4f4f197e0c) gave GC 10.3.7 and that AMD corrected to 100306 "
        "(gfx1036) in 'drm/amdkfd: Fix isa version for the GC 10.3.7' (Prike Liang, amd-gfx, 2022-08-24; "
        "linux 2724efa389c0). Which GC version Mendocino carries was not read, so that patch is context, "
        "not the proof; the entry follows Mesa."
    ),
    "1002:74a2": (
        "MI308X gfx target left null: no AMD document read names it (the ROCm GPU lists and specification "
        "tables read do not list MI308X). Secondary sources (public deployment notes and kernel-queue analyses "
        "run on MI308X) report gfx942, the MI300X target; on a live system the KFD topology gives the target."
    ),
}

# ROCm releases 6.0.x and 6.1.x are in sources/reference/matrices.json (ROCm/ROCm compatibility-matrix-
# historical-6.0.csv @ c6bf8d20545e; kernels from rocm-install-on-linux docs/6.0.0 and docs/6.1.x).
ROCM_MIN = (6, 0)

# Strix Point (gfx1150) and Strix Halo (gfx1151) in the legacy stream (#29). The main compatibility
# matrix of 7.1-7.2.4 lists no Ryzen target and sends Ryzen APUs to the "Use ROCm on Radeon and Ryzen"
# documentation (ROCm/legacy-rocm-build docs/compatibility/compatibility-matrix.rst @ fff7efbd0c87,
# the 7.2.4/7.2.3 column: "If you're using ROCm with AMD Radeon GPUs or Ryzen APUs ... see Use ROCm on
# Radeon and Ryzen"). That documentation's pages were not readable here: the targets are added on
# what public notes quote from them, so the releases say it in their notes (unconfirmed).
RYZEN_LEGACY_FROM = (7, 1, 1)
RYZEN_LEGACY = ("gfx1150", "gfx1151")
RYZEN_LEGACY_PAGES = (
    "https://rocm.docs.amd.com/projects/radeon-ryzen/en/docs-7.1.1/docs/advanced/advancedryz/linux/llm/llamacpp.html "
    "(ROCm 7.1.1 on gfx1150/gfx1151); https://rocm.docs.amd.com/projects/radeon-ryzen/en/docs-7.2/docs/compatibility/"
    "compatibilityryz/native_linux/native_linux_compatibility.html (ROCm 7.2 Ryzen native Linux matrix)"
)
RYZEN_LEGACY_SECONDARY = (
    "th3cavalry/GZ302-Linux-Setup docs/ai-ml-packages.md @ 49ec2c49f3c4 ('ROCm 7.2 has been released with direct "
    "support for gfx1151', February 2026, linking AMD's Ryzen native Linux how-to); public notes quoting the two "
    "AMD pages (7.1.1: gfx1150/gfx1151 supported, PyTorch 2.9 / Python 3.12; 7.2: gfx1151 in the Ryzen matrix, "
    "Ubuntu 24.04.3); matrices/sources/reference/matrices.json products (Strix Halo / Strix Point, "
    "'listed per secondary sources')"
)
RYZEN_LEGACY_NOTE = (
    "gfx1150 (Strix Point, Ryzen AI 300) and gfx1151 (Strix Halo, Ryzen AI Max 300) on Radeon terms, UNCONFIRMED: "
    "AMD lists Ryzen APUs for 7.1.1 and 7.2.x in its 'Use ROCm on Radeon and Ryzen' pages ({pages}), which were "
    "not read here; the main compatibility matrix lists no Ryzen target and points to those pages. Read from: "
    "{secondary}. AMD's Ryzen terms are narrower than Radeon's: Ubuntu 24.04 only, with the distribution's inbox "
    "kernel driver (not amdgpu-dkms). 7.1.0 is left without them: no source read names a Ryzen APU for it."
)

# ------------------------------------------------------------------------------------ ROCm 5.x

# ROCm 5.0.0 - 5.7.1: every 5.x release has a docs/<version> branch in ROCm/ROCm, rendered at
# https://rocm.docs.amd.com/en/docs-<version>/release/gpu_os_support.html. Pinned at the branch heads
# read (the rows are in legacy_data.json, written by legacy.py from these commits).
ROCM5_REPO = "ROCm/ROCm"
ROCM5_DOCS = {
    "5.0.0": "815a7aa81d3df179eb81d888bd61ecab1d180a3f",
    "5.0.1": "e979e772ea8e68a62db5d10260b3cad6a36c9c25",
    "5.0.2": "91b4c3a7730134ebd792cf064831d499932e89f8",
    "5.1.0": "3ef81535dfa27f4b9b20f03f4f01fef0e5364c3c",
    "5.1.1": "26560ec4e0ccd6baa3a7d7ad27979d4068bdca87",
    "5.1.3": "fdfd9187d7b60471f20810ddedb0a2cba502ad61",
    "5.2.0": "89e60882ac1503764dec110992c004f53ca564ec",
    "5.2.1": "9135d26d5d8a9b2ac8dd827d63d204fbbacca483",
    "5.2.3": "dacff66c66bedbfdc3dd5404bd306e97c8f3fbaa",
    "5.3.0": "5658eeb46e36f94def496dfa8b25b3b1ca81f2fb",
    "5.3.2": "4720ecf62bbf7d5fd42d861679b8a8118e73db78",
    "5.3.3": "9bfe4fcadf52eb36a3618f84bf533c14e8db4c79",
    "5.4.0": "dac34360f21b0a76c8da4629105d5f60856d47d3",
    "5.4.1": "2edcc3a6c6adbf9df3e55478d1444898ce9837b0",
    "5.4.2": "45975549173829bd263cd9284a26f967a435bbeb",
    "5.4.3": "b3d51b08e4774a991744e4497def8e5f18a209ef",
    "5.5.0": "8e1883e3b5d5ed22205d63825939223587f48cb1",
    "5.5.1": "e1ba50284cd89ad6f9c94c6f396638a7901d47e5",
    "5.6.0": "cd7898608c3eed441a859631663f5b5a6804ad99",
    "5.6.1": "0e0d89c45bc3842bf8d54ee0747cc1e4245111ed",
    "5.7.0": "30f6f2508a0335e19178c24f5c9d6932eae78373",
    "5.7.1": "7aada9a2ae61956d480bc43a57b0a53396c1e1c0",
}
ROCM5_TORCH_COMMIT = "7aada9a2ae61956d480bc43a57b0a53396c1e1c0"  # docs/5.7.1 head


def rocm5_source(version: str) -> str:
    return (
        f"{ROCM5_REPO} docs/release/gpu_os_support.md @ branch docs/{version} (commit "
        f"{ROCM5_DOCS[version][:12]}); rendered at https://rocm.docs.amd.com/en/docs-{version}/release/"
        "gpu_os_support.html"
    )


ROCM5_TORCH_SOURCE = (
    f"{ROCM5_REPO} docs/release/3rd_party_support_matrix.md @ branch docs/5.7.1 (commit "
    f"{ROCM5_TORCH_COMMIT[:12]}), Deep Learning table (PyTorch column)"
)
# The docs/5.x branches were written in 2023 (the 5.0-5.4 tags carry no gpu_os_support.md). In June
# 2023 AMD set the OS table of most of them with commits "Downgrade OS support to <release>"; which
# release's list each page carries (None: the page was not set that way; see ROCM5_OS_UNCONFIRMED).
ROCM5_OS_SET_FOR = {
    "5.0.0": "5.0.2", "5.0.1": "5.0.2", "5.0.2": "5.0.2", "5.1.0": "5.1.0", "5.2.0": "5.2.3",
    "5.2.3": "5.2.3", "5.3.0": "5.3.0", "5.3.2": "5.3.3", "5.3.3": "5.3.3", "5.4.0": "5.4.3",
    "5.4.1": "5.4.3", "5.4.2": "5.4.3", "5.4.3": "5.4.3", "5.5.0": "5.5.0",
}  # fmt: skip
# Pages whose OS table is a copy of a later release's page: its OS entries and kernels stay
# confirmed=false (the doctor should not trust them).
ROCM5_OS_UNCONFIRMED = {
    "5.1.1": "the docs/5.1.1 page was not part of AMD's 'Downgrade OS support' series: its OS table (RHEL 9.1, "
    "RHEL 8.6-8.7, SLES 15 SP4, Ubuntu 20.04.5, 22.04.1) is the 5.4/5.5-era develop page (RHEL 9.1 and Ubuntu "
    "22.04.1 were released after ROCm 5.1.1); the docs/5.1.0 page lists CentOS 8.4/7.9, RHEL 8.5/7.9, SLES 15 "
    "SP3, Ubuntu 20.04.4/18.04.5. OS entries and kernels are confirmed=false.",
    "5.1.3": "the docs/5.1.3 page was not part of AMD's 'Downgrade OS support' series: its OS table is the "
    "5.4/5.5-era develop page (RHEL 9.1, Ubuntu 22.04.1: released after ROCm 5.1.3). OS entries and kernels "
    "are confirmed=false.",
    "5.2.1": "the docs/5.2.1 page was not part of AMD's 'Downgrade OS support' series: its OS table is the "
    "5.4/5.5-era develop page; the docs/5.2.0 and docs/5.2.3 pages both carry the 5.2.3 list (CentOS 7.9, "
    "RHEL 8.6/8.5/7.9, SLES 15 SP4/SP3, Ubuntu 20.04.4/20.04.3/18.04.5). OS entries and kernels are "
    "confirmed=false.",
    "5.5.1": "the docs/5.5.1 page carries the 5.6 page (its own note: 'versionadded 5.6: RHEL 8.8 and 9.2 "
    "support is added, SLES 15 SP5 support is added'); the page at the rocm-5.5.1 tag listed RHEL 9.1, RHEL "
    "8.6-8.7, SLES 15 SP4, Ubuntu 20.04.5, Ubuntu 22.04.1. OS entries and kernels are confirmed=false.",
}
ROCM5_NOTES = {
    "5.0.0": [
        "AMD's sources disagree on gfx900: the rocm-5.0.0 tag README's 'Hardware and Software Support' "
        "section still names 'Vega 10' chips (RX Vega 64, Instinct MI25) as officially supported and GFX8 "
        "Polaris 11/12 and GFX7 Hawaii as 'enabled ... though full support is not guaranteed'; the docs/5.0.0 "
        "page marks MI25 (gfx900) unsupported. gfx900 is left out; the release is confirmed=false."
    ],
    "5.0.1": [
        "AMD's sources disagree on gfx900: the rocm-5.0.1 tag README still names 'Vega 10' chips as officially "
        "supported; the docs/5.0.1 page marks MI25 (gfx900) unsupported. gfx900 is left out; confirmed=false."
    ],
    "5.5.1": [
        "The GPU table at the rocm-5.5.1 tag differed from the page's final form (revised 2023-07-27, 'GPU "
        "support clarification (#2350)'): it listed Radeon RX 6900 XT (gfx1030, 'HIP SDK'), 'RX 6600' "
        "(gfx1031, 'HIP Runtime') and R9 Fury (gfx803, 'Community') for Linux. The final page is used; "
        "confirmed=false."
    ],
    "5.7.1": [
        "gfx1100 (Radeon RX 7900 XTX / XT, Radeon Pro W7900) was added to the docs/5.7.1 page after the "
        "release ('7900 XT support (#2661)', 2023-11-21), marked 'Ubuntu 22.04 only'; the page at the "
        "rocm-5.7.1 tag does not list it."
    ],
}
ROCM5_GPU_UNCONFIRMED = {"5.0.0", "5.0.1", "5.5.1"}
# User space -> kernel driver (KFD) compatibility, ROCm/rocm-install-on-linux
# docs/reference/user-kernel-space-compat-matrix.rst @ 171e31a6210b (the Oct 2024 edition): KFD -> tested
# user space versions. A 5.x release pairs with its own same-numbered driver ("Use Driver Shipped with
# ROCm", gpu_os_support.md) plus every KFD row that lists its series.
ROCM5_KFD_SOURCE = (
    "ROCm/rocm-install-on-linux docs/reference/user-kernel-space-compat-matrix.rst @ 171e31a6210b "
    "(KFD -> tested user space versions; rendered at https://rocm.docs.amd.com/projects/install-on-linux/en/"
    "docs-6.2.0/reference/user-kernel-space-compat-matrix.html); the release's own driver line from "
    "'Use Driver Shipped with ROCm' (gpu_os_support.md)"
)
ROCM5_KFD = {
    "6.2.x": ["6.0.x", "6.1.x"],
    "6.1.x": ["5.7.x", "6.0.x", "6.2.x"],
    "6.0.x": ["5.6.x", "5.7.x", "6.1.x", "6.2.x"],
    "5.7.x": ["5.5.x", "5.6.x", "6.0.x", "6.1.x"],
    "5.6.x": ["5.4.x", "5.5.x", "5.7.x", "6.0.x"],
    "5.5.x": ["5.3.x", "5.4.x", "5.6.x", "5.7.x"],
    "5.4.x": ["5.2.x", "5.3.x", "5.5.x", "5.6.x"],
    "5.3.x": ["5.1.x", "5.2.x", "5.4.x", "5.5.x"],
}
ROCM5_TORCH_NOTE = (
    "PyTorch versions from AMD's 5.x framework table (docs/5.7.1 edition); it has rows for 5.0.2, 5.1.3 and "
    "5.2.x-5.7.x only"
)

# ------------------------------------------------------------------------------------ older AMD GPUs

# PCI id -> chip: the amdgpu driver's pciidlist, torvalds/linux drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c
# @ 005440066f929ba0dca8f4e0aebfbf8daac592cc (SI under CONFIG_DRM_AMDGPU_SI, CIK under
# CONFIG_DRM_AMDGPU_CIK, then VI, Polaris, VegaM, Vega 10/12/20). Transcribed as read.
AMDGPU_DRV = (
    "torvalds/linux drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c @ 005440066f92 (pciidlist: PCI id -> CHIP_*)"
)
AMDGPU_PCIIDLIST = {
    "TAHITI": "6780 6784 6788 678a 6790 6791 6792 6798 6799 679a 679b 679e 679f",
    "PITCAIRN": "6800 6801 6802 6806 6808 6809 6810 6811 6816 6817 6818 6819",
    "OLAND": "6600 6601 6602 6603 6604 6605 6606 6607 6608 6610 6611 6613 6617 6620 6621 6623 6631",
    "VERDE": "6820 6821 6822 6823 6824 6825 6826 6827 6828 6829 682a 682b 682c 682d 682f 6830 6831 6835 "
    "6837 6838 6839 683b 683d 683f",
    "HAINAN": "6660 6663 6664 6665 6667 666f",
    "KAVERI": "1304 1305 1306 1307 1309 130a 130b 130c 130d 130e 130f 1310 1311 1312 1313 1315 1316 1317 "
    "1318 131b 131c 131d",
    "BONAIRE": "6640 6641 6646 6647 6649 6650 6651 6658 665c 665d 665f",
    "HAWAII": "67a0 67a1 67a2 67a8 67a9 67aa 67b0 67b1 67b8 67b9 67ba 67be",
    "KABINI": "9830 9831 9832 9833 9834 9835 9836 9837 9838 9839 983a 983b 983c 983d 983e 983f",
    "MULLINS": "9850 9851 9852 9853 9854 9855 9856 9857 9858 9859 985a 985b 985c 985d 985e 985f",
    "TOPAZ": "6900 6901 6902 6903 6907",
    "TONGA": "6920 6921 6928 6929 692b 692f 6930 6938 6939",
    "FIJI": "7300 730f",
    "CARRIZO": "9870 9874 9875 9876 9877",
    "STONEY": "98e4",
    "POLARIS11": "67e0 67e3 67e8 67eb 67ef 67ff 67e1 67e7 67e9",
    "POLARIS10": "67c0 67c1 67c2 67c4 67c7 67d0 67df 67c8 67c9 67ca 67cc 67cf 6fdf",
    "POLARIS12": "6980 6981 6985 6986 6987 6995 6997 699f",
    "VEGAM": "694c 694e 694f",
    "VEGA10": "6860 6861 6862 6863 6864 6867 6868 6869 686a 686b 686c 686d 686e 686f 687f",
    "VEGA12": "69a0 69a1 69a2 69a3 69af",
    "VEGA20": "66a0 66a1 66a2 66a3 66a4 66a7 66af",
}
LLVM_PROCESSORS = (
    "llvm/llvm-project llvm/docs/AMDGPUUsage.rst @ 001388cf6923 processor table (gfx600: tahiti; gfx601: "
    "pitcairn, verde; gfx602: hainan, oland; gfx700: kaveri; gfx701: hawaii; gfx703: kabini, mullins; gfx704: "
    "bonaire; gfx801: carrizo; gfx802: iceland, tonga; gfx803: fiji, polaris10, polaris11; gfx810: stoney)"
)
KFD_PROBE = (
    "torvalds/linux drivers/gpu/drm/amd/amdkfd/kfd_device.c @ 002c6ca75289 kgd2kfd_probe (gfx_target_version "
    "per chip: KAVERI 70000, CARRIZO 80001, HAWAII 70001 (only with amdgpu.exp_hw_support), TONGA 80002, "
    "FIJI/POLARIS10/11/12/VEGAM 80003, Vega 10 90000, Vega 12 90004, Vega 20 90006; any other chip: "
    "'<CHIP> not supported in kfd')"
)
SI_CIK_DRIVER = (
    "torvalds/linux drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c @ 005440066f92 (si_support / cik_support: 'The "
    "default is using radeon driver when it available, otherwise using amdgpu driver'); amd-gfx '[PATCH 2/4] "
    "drm/amdgpu: Refactor how SI and CIK support is determined' (Timur Kristof, 2025-11-14: 'By default, SI "
    "chips are supported by radeon (except when radeon is not built)', same for CIK; 'All other chips are "
    "supported by amdgpu only')"
)
# chip -> (gfx target, architecture, integrated, kfd, kernel drivers (default first), gfx source, confirmed, note)
_GFX6 = "GCN GFX6 (Southern Islands)"
_GFX7 = "GCN GFX7 (Sea Islands)"
_GFX8 = "GCN GFX8 (Volcanic Islands)"
_BOTH = ["radeon", "amdgpu"]
_KFD_NO = "unsupported"
AMD_LEGACY_CHIPS = {
    "TAHITI": ("gfx600", _GFX6, False, _KFD_NO, _BOTH, LLVM_PROCESSORS, True, None),
    "PITCAIRN": ("gfx601", _GFX6, False, _KFD_NO, _BOTH, LLVM_PROCESSORS, True, None),
    "VERDE": ("gfx601", _GFX6, False, _KFD_NO, _BOTH, LLVM_PROCESSORS, True, None),
    "OLAND": ("gfx602", _GFX6, False, _KFD_NO, _BOTH, LLVM_PROCESSORS, True, None),
    "HAINAN": ("gfx602", _GFX6, False, _KFD_NO, _BOTH, LLVM_PROCESSORS, True, None),
    "BONAIRE": ("gfx704", _GFX7, False, _KFD_NO, _BOTH, LLVM_PROCESSORS, True, None),
    "HAWAII": (
        "gfx701", _GFX7, False, "experimental", _BOTH, f"{KFD_PROBE}; {LLVM_PROCESSORS}", True,
        "KFD supports Hawaii only with amdgpu.exp_hw_support=1 ('KFD support on Hawaii is experimental').",
    ),
    "KAVERI": (
        "gfx700", _GFX7, True, "supported", _BOTH, f"{KFD_PROBE}; {LLVM_PROCESSORS}", True,
        "KFD supports Kaveri only in kernels built with IOMMUv2 support (KFD_SUPPORT_IOMMU_V2).",
    ),
    "KABINI": ("gfx703", _GFX7, True, _KFD_NO, _BOTH, LLVM_PROCESSORS, True, None),
    "MULLINS": ("gfx703", _GFX7, True, _KFD_NO, _BOTH, LLVM_PROCESSORS, True, None),
    "TOPAZ": (
        "gfx802", _GFX8, False, _KFD_NO, ["amdgpu"], LLVM_PROCESSORS, False,
        "gfx802 inferred: LLVM names the processor 'iceland', amdgpu names the chip CHIP_TOPAZ (its Topaz "
        "support lives in the iceland_* files); no source read pairs the two names directly.",
    ),
    "TONGA": ("gfx802", _GFX8, False, "supported", ["amdgpu"], f"{KFD_PROBE}; {LLVM_PROCESSORS}", True, None),
    "FIJI": ("gfx803", _GFX8, False, "supported", ["amdgpu"], f"{KFD_PROBE}; {LLVM_PROCESSORS}", True, None),
    "CARRIZO": (
        "gfx801", _GFX8, True, "supported", ["amdgpu"], f"{KFD_PROBE}; {LLVM_PROCESSORS}", True,
        "KFD supports Carrizo only in kernels built with IOMMUv2 support (KFD_SUPPORT_IOMMU_V2).",
    ),
    "STONEY": ("gfx810", _GFX8, True, _KFD_NO, ["amdgpu"], LLVM_PROCESSORS, True, None),
    "POLARIS10": ("gfx803", _GFX8, False, "supported", ["amdgpu"], f"{KFD_PROBE}; {LLVM_PROCESSORS}", True, None),
    "POLARIS11": ("gfx803", _GFX8, False, "supported", ["amdgpu"], f"{KFD_PROBE}; {LLVM_PROCESSORS}", True, None),
    "POLARIS12": (
        "gfx803", _GFX8, False, "supported", ["amdgpu"], KFD_PROBE, True,
        "LLVM's processor table names polaris10/polaris11 only; the KFD reports Polaris 12 as 80003 (gfx803).",
    ),
    "VEGAM": ("gfx803", _GFX8, False, "supported", ["amdgpu"], KFD_PROBE, True, None),
    "VEGA10": ("gfx900", "GCN5.0", False, "supported", ["amdgpu"], KFD_PROBE, True, None),
    "VEGA12": ("gfx904", "GCN GFX9 (Vega)", False, "supported", ["amdgpu"], KFD_PROBE, True, None),
    "VEGA20": ("gfx906", "GCN5.1", False, "supported", ["amdgpu"], KFD_PROBE, True, None),
}  # fmt: skip
# Where sources disagree on one id's target.
AMD_LEGACY_DISAGREE = {
    "1002:67b0": "LLVM lists Radeon R9 290/290X/390/390X under gfx702 (no processor alias); the KFD reports every "
    "Hawaii chip as 70001 (gfx701), which is used.",
    "1002:67b1": "LLVM lists Radeon R9 290/290X/390/390X under gfx702 (no processor alias); the KFD reports every "
    "Hawaii chip as 70001 (gfx701), which is used.",
    "1002:6929": "LLVM lists FirePro S7150/S7100/W7100 under gfx805 ('tongapro'); the KFD reports every Tonga "
    "chip as 80002 (gfx802), which is used.",
    "1002:692b": "LLVM lists FirePro S7150/S7100/W7100 under gfx805 ('tongapro'); the KFD reports every Tonga "
    "chip as 80002 (gfx802), which is used.",
    "1002:692f": "LLVM lists FirePro S7150/S7100/W7100 under gfx805 ('tongapro'); the KFD reports every Tonga "
    "chip as 80002 (gfx802), which is used.",
}
AMD_KFD_NOTE = (
    "amdgpu's KFD (the kernel interface ROCm runs on) has no entry for {chip}: no ROCm release can use this "
    "GPU (dmesg: 'kfd kfd: amdgpu: {chip} not supported in kfd')."
)
AMD_SI_CIK_NOTE = (
    "Bound to the radeon driver by default when the kernel has radeon built (amdgpu.{param}=0); amdgpu drives "
    "it only with radeon.{param}=0 amdgpu.{param}=1."
)
