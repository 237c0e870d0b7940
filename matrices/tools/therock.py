"""ROCm's new release stream (TheRock): ROCm 7.14.0 and ROCm Core SDK 10.0.0 and 10.1.0 (#29), merged into
rocm.json by build.py (build_rocm.py), and AMD's own PyTorch wheel indexes for them (AMD_WHEELS,
torch.json amd_wheels, by build_torch.py). Every value names where it was read; what was not read
is left out and said so in the release's notes.

Sources (AMD's documentation source, ROCm/rocm-docs, read in a searchable store of public repositories):
- RADEON_714 / RYZEN_714: docs/compatibility/include/system-radeon.rst and system-ryzen.rst
  @ bcabec9de623fa62d27c7c5bc86c51f094cb00ce. The revision is tied to 7.14.0 by its contents:
  amdgpu 31.40.1 newest and Adrenalin 26.6.4, the same pair the 7.14.0 install page names.
- INSTINCT_714: docs/compatibility/include/system-instinct.rst in ROCm/legacy-rocm-build (the
  repository of the 7.14.0 release notes) @ 8eb3b622ad34bf76fed627993f002750bd632890: the Instinct
  OS / kernel / amdgpu table. The revision is tied to 7.14.0 by its contents: amdgpu 31.40.1 newest
  (the 7.14.0 pairing, as in the Radeon and Ryzen tables) and firmware rows that differ from the
  10.0 page's (MI325X 01.26.01.02 vs 01.26.01.03, MI300A BKC 27 vs PI100D); the same repository's
  core-sdk-components-linux.rst (@ fab0f8750118) links docs-7.14 and therock-7.14 throughout.
- INSTALL_714: docs/install/include/200-install.rst, the 7.14.0 revision. The store did not name
  its commit (it is none of 0c31064a09a0 and 50600d8da151 in ROCm/rocm-docs, nor 03f04fe0392c in
  ROCm/legacy-rocm-build); the revision is identified by its text (74,311 characters): runfile
  rocm-installer-7.14.0-7.run, repo.amd.com/rocm/packages-multi-arch, per-target packages
  amdrocm7.14-gfxNNNN, amdgpu docs-31.40.1, Adrenalin 26.6.4. Its rendering is the public citation.
- INSTALL_100: docs/install/include/200-install.rst @ 0c31064a09a061b708758cc5bc9f74a9ede6c14f
  (runfile rocm-installer-10.0.0-4.run, stable.repo.amd.com/rocm/core, amdrocm10.0-gfxNNNN,
  amdgpu docs-31.50.0).
- OS_YAML: docs/data/os-support.yaml @ 1d2ba3f7b017f525e5ae3bbb7cb9afeaea490d63 (OS versions
  and kernels per GPU). Not tied to a release by anything in it; its OS set is the one the 10.0
  install page offers, so it is used for 10.0 only, unconfirmed.
- Dates: every release date of rocm.json, this stream's included, is AMD's release history
  (VERSIONS below, rendered at https://rocm.docs.amd.com/en/latest/release/versions.html; #42: one
  named source for every date): 7.14.0 July 15, 2026; 10.0.0 August 26, 2026; 7.14.1 September 2,
  2026; 10.1.0 October 5, 2026 (build_rocm.py ROCM_DATES).
- DRIVERS_100: docs/data/driver-firmware-support.yaml @ 65339780cb2b1ec8fef14458b0a42aba093f7904 (the
  same list @ 384a5ef4fd74): the amdgpu drivers AMD lists for every Instinct GPU and for Radeon, 31.50.0
  newest (the driver the 10.0 install page links) back to 30.10.0. Tied to 10.0.0 by its contents: 31.50.0
  newest and the MI350P, which 10.0.0 adds; no 31.60 (10.1.0's driver).

- INSTALL_101 / NOTES_101 / VERSIONS / AI_101: ROCm Core SDK 10.1.0. Its install page
  (docs/install/include/200-install.rst @ f47eb2f8ba97: runfile rocm-installer-10.1.0-5.run,
  stable.repo.amd.com/rocm/core, amdrocm10.1-gfxNNNN, amdgpu docs-31.60.0) gives its gfx targets, its
  OS set, its repository (repos.json amd_therock) and its driver. Its own GPU and OS tables
  (docs/data/gpus.yaml, os-support.yaml at the 10.1.0 revision) are not in the store: the stored
  gpus.yaml (@ 793e0c2edf9c) lists the Radeon AI PRO R9600D, not the R9600, and the stored
  os-support.yaml is OS_YAML above (Ubuntu 24.04.4). So 10.1.0's per-GPU OS limits are 10.0.0's with
  the changes its release notes state (OS_101 is built from OS_100), unconfirmed; its date is
  versions.rst's.
- INSTALL_7141 / THEROCK_7141 / VERSIONS: ROCm 7.14.1, a patch release of 7.14 (2026-09-02). Its
  install page (200-install.rst @ 50600d8da151: runfile rocm-installer-7.14.1-1.run) keeps 7.14.0's
  apt route, key, package names (amdrocm7.14-gfxNNNN), 15 targets and amdgpu 31.40.1. Its own GPU and
  OS tables were not found in any stored revision, so its OS entries are 7.14.0's carried over
  (OS_7141), unconfirmed.
"""

from __future__ import annotations

import copy

INSTINCT_714 = (
    "ROCm/legacy-rocm-build docs/compatibility/include/system-instinct.rst @ 8eb3b622ad34bf76fed627993f002750bd632890"
)
RADEON_714 = "ROCm/rocm-docs docs/compatibility/include/system-radeon.rst @ bcabec9de623fa62d27c7c5bc86c51f094cb00ce"
RYZEN_714 = "ROCm/rocm-docs docs/compatibility/include/system-ryzen.rst @ bcabec9de623fa62d27c7c5bc86c51f094cb00ce"
INSTALL_714 = (
    "https://rocm.docs.amd.com/en/docs-7.14.0/install/rocm.html (its source, ROCm/rocm-docs "
    "docs/install/include/200-install.rst in the 7.14.0 revision: runfile rocm-installer-7.14.0-7.run, "
    "amdgpu 31.40.1; commit not identified)"
)
INSTALL_100 = "ROCm/rocm-docs docs/install/include/200-install.rst @ 0c31064a09a061b708758cc5bc9f74a9ede6c14f"
OS_YAML = "ROCm/rocm-docs docs/data/os-support.yaml @ 1d2ba3f7b017f525e5ae3bbb7cb9afeaea490d63"
RELEASE_714 = "https://github.com/ROCm/legacy-rocm-build/releases/tag/rocm-7.14.0 (ROCm Core SDK 7.14.0 release notes)"
TRANSITION = "https://rocm.docs.amd.com/en/docs-7.14.0/about/transition-guide-TheRock.html"
# version.json of TheRock's release/therock-7.14 branch, which says 7.14.1 from e5e8093c2957 ("Raise
# version to 7.14.1", 2026-08-11) on; the branch then differs from the therock-7.14 tag by six commits
# (submodule bumps, a packaging fix), none touching cmake/therock_amdgpu_targets.cmake.
THEROCK_7141 = (
    "ROCm/TheRock version.json @ f51dc6c91e0d3214f22853fd5cb3f96dbc7d2c4b (release/therock-7.14: 7.14.1)"
)
# AMD's 10.1.0 install page: the OS releases it offers (Ubuntu 26.04.1, 24.04.5, 22.04.5; Debian 13,
# 12; RHEL 10.2, 10.0, 9.8, 9.6, 9.4, 8.10; Oracle Linux 10, 9, 8; Rocky Linux; SLES 16.0, 15.7), the
# per-target packages amdrocm10.1-gfxNNNN for the 15 targets of 10.0, the apt repository and key of
# 10.0 (stable.repo.amd.com/rocm/core/packages/<distro>/, stable.repo.amd.com/rocm/gpg/packages.gpg),
# and the AMD GPU driver documentation docs-31.60.0 (amdgpu-install 31.60.316000).
INSTALL_101 = "ROCm/rocm-docs docs/install/include/200-install.rst @ f47eb2f8ba97787da0cfd5166d1afbf42956fd9d"
# AMD's 10.1.0 release notes (what they say in their own words: the R9600 GPU, Ubuntu 26.04.1 and
# 24.04.5 in place of 26.04 and 24.04.4, PyTorch 2.14.0 in place of 2.11.0). The tables they render
# (docs/data/gpus.yaml, os-support.yaml at that revision) and the 10.1.0 install page were not in the store.
NOTES_101 = (
    "ROCm/rocm-docs docs/about/release-notes.md @ 15846f3dbb5e4994c02b1146d2a206df639cc629 (ROCm 10.1.0)"
)
# AMD's release history: 10.1.0 October 5, 2026; 7.14.1 September 2, 2026; 10.0.0 August 26, 2026; 7.14.0
# July 15, 2026 (the 7.14.0 GitHub release is dated a day later, 2026-07-16; the history is the named source).
VERSIONS = "ROCm/rocm-docs docs/release/versions.rst @ 9bcf25db1e77f58b435fe162baaa99566bac0189"
# The amdgpu drivers AMD calls compatible with Core SDK 10.0 (its compatibility page's driver table).
DRIVERS_100 = (
    "ROCm/rocm-docs docs/data/driver-firmware-support.yaml @ 65339780cb2b1ec8fef14458b0a42aba093f7904 (amdgpu "
    "31.50.0, 31.40.1, 31.40.0, 31.30.0, 31.20.0, 31.10.0, 30.30.3-30.30.0, 30.20.1-30.20.0, 30.10.2-30.10.0 for "
    "every Instinct GPU and for Radeon; read 2026-12-07)"
)
# The AI ecosystem table the 10.1.0 release notes include (docs/about/include/): PyTorch 2.14.0 (Linux,
# Python 3.14-3.10) and 2.13.0, 2.12.0 ("Instinct GPUs only"). Tied to 10.1.0 by its contents: JAX
# 0.11.1, vLLM 0.29.0, SGLang 0.5.18 and MIGraphX 2.18, the versions the 10.1.0 release notes name.
AI_101 = (
    "ROCm/rocm-docs docs/about/include/ai-ecosystem-support-table.html @ f47eb2f8ba97787da0cfd5166d1afbf42956fd9d "
    "(ROCm 10.1.0 AI ecosystem table)"
)
# The 7.14.1 install page: runfile rocm-installer-7.14.1-1.run, amdgpu docs-31.40.1, the 7.14 apt route
# (repo.amd.com/rocm/packages-multi-arch, the same key and package names), the same 15 targets.
INSTALL_7141 = "ROCm/rocm-docs docs/install/include/200-install.rst @ 50600d8da151e4ca8ce7fec9f68fa3048cc5bd85 (ROCm 7.14.1)"
THEROCK_101 = "ROCm/TheRock version.json @ 89553ce3746eda74ade42557470d25e37c91b6f0 (main: 10.1.0)"

INSTINCT = ("gfx950", "gfx942", "gfx90a", "gfx908")
RADEON = ("gfx1201", "gfx1200", "gfx1100", "gfx1101", "gfx1102", "gfx1030")
RYZEN = ("gfx1151", "gfx1150", "gfx1152", "gfx1153", "gfx1103")


def instinct_only(models=None, excluded=(), also=()):
    """An OS entry's ``gpus_only`` (gpuenv.matrices.GpuLimit): Instinct GPUs, only ``models`` when
    AMD names them, less ``excluded`` (AMD's model names as its tables print them), and every GPU
    of the classes in ``also`` ("radeon": the Radeon table lists the OS, the Ryzen table does not)."""
    out = {"class": "instinct"}
    if models is not None:
        out["models"] = list(models)
    if excluded:
        out["except"] = list(excluded)
    if also:
        out["also"] = list(also)
    return out


def _os(os_id, version, points, printed, source, confirmed, ga=(), hwe=(), notes=(), only=None, by_point=None):
    """One OS entry in rocm.json's shape; ``printed`` maps the label AMD prints to its kernel text,
    and the kernel series are those texts' MAJOR.MINOR (a UEK release name carries none). ``only``
    is the entry's per-GPU limit where AMD gives one the limit's terms can hold (Instinct GPUs, or
    named Instinct models, or Instinct GPUs but some, and whole classes beside); ``by_point`` the
    narrower limits of the point releases AMD lists for fewer GPUs (gpus_only_by_point)."""
    kernels = []
    for text in printed.values():
        words = text.replace(",", " ").split()
        for i, word in enumerate(words):
            if i and words[i - 1] == "UEK":
                continue  # "UEK 8.1" names Oracle's kernel release, not a kernel series
            parts = word.split("-")[0].split(".")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                series = f"{parts[0]}.{parts[1]}"
                if series not in kernels:
                    kernels.append(series)
    return {
        "id": os_id,
        "version": version,
        "point_releases": list(points),
        "kernels": kernels,
        "ga_kernels": list(ga),
        "hwe_kernels": list(hwe),
        "kernels_as_printed": dict(printed),
        "source": source,
        "confirmed": confirmed,
        "notes": list(notes),
        **({"gpus_only": only} if only is not None else {}),
        **({"gpus_only_by_point": by_point} if by_point else {}),
    }


# RHEL in the 7.14 Instinct and Radeon tables and in 10.0's os-support.yaml alike: every point
# release is listed for Instinct GPUs, 10.0 and 9.4 not for the MI350P; the Radeon GPUs list 10.2
# and 9.8 only; the Ryzen APUs list no RHEL release. 10.2 and 9.8 need no limit of their own.
RHEL10_POINTS = {"10.0": instinct_only(excluded=["MI350P"])}
RHEL9_POINTS = {"9.6": instinct_only(), "9.4": instinct_only(excluded=["MI350P"])}
_RHEL_NOTES = ("Instinct and Radeon GPUs; RHEL {old} is not listed for the Instinct MI350P; Radeon GPUs: RHEL "
               "{new} only; not listed for Ryzen APUs.")


_TABLES_714 = f"{INSTINCT_714}; {RADEON_714}; {RYZEN_714}"
# The OS rows of the three 7.14 tables (Instinct, Radeon, Ryzen) merged per distribution release;
# which GPUs a row is limited to is in the entry's notes and in its gpus_only (which the doctor and
# install auto judge): Instinct GPUs or named models, Ubuntu 22.04 Instinct but the MI350P and
# Radeon, RHEL Instinct and Radeon with the narrower point releases in gpus_only_by_point.
_ALL_INSTINCT = "all 7.14 Instinct GPUs (MI355X, MI350X, MI350P, MI325X, MI300X, MI300A, MI250X, MI250, MI210, MI100)"
OS_714 = [
    _os("ubuntu", "26.04", ["26.04"], {"Ubuntu 26.04": "7.0 [GA]"}, _TABLES_714, True, ga=["7.0"],
        notes=["Listed for " + _ALL_INSTINCT + ", the Radeon GPUs and the Ryzen APUs."]),
    _os(
        "ubuntu", "24.04", ["24.04.4"],
        {"Ubuntu 24.04.4": "6.8 [GA] (Instinct), 6.17 [HWE] (Radeon), 6.17 [OEM] (Ryzen)"},
        _TABLES_714, True, ga=["6.8"], hwe=["6.17"],
        notes=["Instinct GPUs: the GA 6.8 kernel; Radeon GPUs: the HWE 6.17 kernel; Ryzen APUs: the OEM 6.17 kernel."],
    ),
    _os("ubuntu", "22.04", ["22.04.5"], {"Ubuntu 22.04.5": "5.15 [GA] (Instinct), 6.8 [HWE] (Radeon)"},
        f"{INSTINCT_714}; {RADEON_714}", True, ga=["5.15"], hwe=["6.8"],
        notes=["Instinct GPUs except the MI350P: the GA 5.15 kernel; Radeon GPUs: the HWE 6.8 kernel; "
               "not listed for Ryzen APUs."],
        only=instinct_only(excluded=["MI350P"], also=["radeon"])),
    _os("debian", "13", [], {"Debian 13": "6.12"}, INSTINCT_714, True,
        notes=["Instinct MI355X, MI350X, MI350P, MI325X and MI300X only."],
        only=instinct_only(["MI355X", "MI350X", "MI350P", "MI325X", "MI300X"])),
    _os("debian", "12", [], {"Debian 12": "6.1.0"}, INSTINCT_714, True,
        notes=["Instinct MI355X, MI350X, MI325X, MI300X, MI300A, MI250X and MI250 only."],
        only=instinct_only(["MI355X", "MI350X", "MI325X", "MI300X", "MI300A", "MI250X", "MI250"])),
    _os("rhel", "10", ["10.2", "10.0"], {"RHEL 10.2": "6.12.0-211", "RHEL 10.0": "6.12.0-55"},
        f"{INSTINCT_714}; {RADEON_714}", True, notes=[_RHEL_NOTES.format(old="10.0", new="10.2")],
        only=instinct_only(also=["radeon"]), by_point=RHEL10_POINTS),
    _os("rhel", "9", ["9.8", "9.6", "9.4"],
        {"RHEL 9.8": "5.14.0-687", "RHEL 9.6": "5.14.0-570", "RHEL 9.4": "5.14.0-427"},
        f"{INSTINCT_714}; {RADEON_714}", True, notes=[_RHEL_NOTES.format(old="9.4", new="9.8")],
        only=instinct_only(also=["radeon"]), by_point=RHEL9_POINTS),
    _os("rhel", "8", ["8.10"], {"RHEL 8.10": "4.18.0-553"}, INSTINCT_714, True,
        notes=["Instinct GPUs only, except the MI350P and MI325X."], only=instinct_only(excluded=["MI350P", "MI325X"])),
    _os("ol", "10", [], {"Oracle Linux 10": "UEK 8.1"}, INSTINCT_714, True,
        notes=["Instinct MI355X, MI350X, MI325X and MI300X only. AMD names the UEK release, not a kernel series."],
        only=instinct_only(["MI355X", "MI350X", "MI325X", "MI300X"])),
    _os("ol", "9", [], {"Oracle Linux 9": "UEK 8"}, INSTINCT_714, True,
        notes=["Instinct MI355X, MI350X, MI325X and MI300X only. AMD names the UEK release, not a kernel series."],
        only=instinct_only(["MI355X", "MI350X", "MI325X", "MI300X"])),
    _os("ol", "8", [], {"Oracle Linux 8": "UEK 7"}, INSTINCT_714, True,
        notes=["Instinct MI300X only. AMD names the UEK release, not a kernel series."],
        only=instinct_only(["MI300X"])),
    _os("rocky", "9", [], {"Rocky Linux 9": "5.14.0-570"}, INSTINCT_714, True, notes=["Instinct MI300X and MI300A only."],
        only=instinct_only(["MI300X", "MI300A"])),
    _os("sles", "16", ["16.0"], {"SLES 16.0": "6.12"}, INSTINCT_714, True,
        notes=["Instinct GPUs only, except the MI100."], only=instinct_only(excluded=["MI100"])),
    _os("sles", "15", ["15.7"], {"SLES 15.7": "6.4.0-150700.51"}, INSTINCT_714, True, notes=["Instinct GPUs only."],
        only=instinct_only()),
]  # fmt: skip

# os-support.yaml lists each OS per GPU model; merged per distribution release as for 7.14. Its
# Instinct rows are the 7.14 table's (MI350P: no Ubuntu 22.04, RHEL 10.0, 9.4, 8.10 or Oracle
# Linux; MI325X: no RHEL 8.10; MI100: SLES 15.7 only), its Radeon GPUs list Ubuntu and RHEL 10.2 /
# 9.8 only, its Ryzen APUs Ubuntu 26.04 and 24.04.4 only.
OS_100 = [
    _os("ubuntu", "26.04", ["26.04"], {"Ubuntu 26.04": "7.0 [GA]"}, OS_YAML, False, ga=["7.0"],
        notes=["Listed for every Instinct GPU, the Radeon GPUs and the Ryzen APUs."]),
    _os("ubuntu", "24.04", ["24.04.4"], {"Ubuntu 24.04.4": "6.8 [GA], 6.17 [HWE], 6.17 [OEM]"}, OS_YAML, False,
        ga=["6.8"], hwe=["6.17"],
        notes=["GA 6.8 is listed for Instinct GPUs; Radeon GPUs list HWE 6.17, Ryzen APUs OEM 6.17."]),
    _os("ubuntu", "22.04", ["22.04.5"], {"Ubuntu 22.04.5": "5.15 [GA], 6.8 [HWE]"}, OS_YAML, False,
        ga=["5.15"], hwe=["6.8"],
        notes=["GA 5.15 is listed for Instinct GPUs except the MI350P; Radeon GPUs list HWE 6.8; not listed for "
               "Ryzen APUs."],
        only=instinct_only(excluded=["MI350P"], also=["radeon"])),
    _os("debian", "13", [], {"Debian 13": "6.12"}, OS_YAML, False,
        notes=["Instinct MI355X, MI350X, MI350P, MI325X and MI300X only."],
        only=instinct_only(["MI355X", "MI350X", "MI350P", "MI325X", "MI300X"])),
    _os("debian", "12", [], {"Debian 12": "6.1.0"}, OS_YAML, False,
        notes=["Instinct MI355X, MI350X, MI325X, MI300X, MI300A, MI250X and MI250 only."],
        only=instinct_only(["MI355X", "MI350X", "MI325X", "MI300X", "MI300A", "MI250X", "MI250"])),
    _os("rhel", "10", ["10.2", "10.0"], {"RHEL 10.2": "6.12.0-211", "RHEL 10.0": "6.12.0-55"}, OS_YAML, False,
        notes=[_RHEL_NOTES.format(old="10.0", new="10.2")], only=instinct_only(also=["radeon"]),
        by_point=RHEL10_POINTS),
    _os("rhel", "9", ["9.8", "9.6", "9.4"],
        {"RHEL 9.8": "5.14.0-687", "RHEL 9.6": "5.14.0-570", "RHEL 9.4": "5.14.0-427"}, OS_YAML, False,
        notes=[_RHEL_NOTES.format(old="9.4", new="9.8")], only=instinct_only(also=["radeon"]),
        by_point=RHEL9_POINTS),
    _os("rhel", "8", ["8.10"], {"RHEL 8.10": "4.18.0-553"}, OS_YAML, False,
        notes=["Instinct GPUs only, except the MI350P and MI325X."], only=instinct_only(excluded=["MI350P", "MI325X"])),
    _os("ol", "10", [], {"Oracle Linux 10": "UEK 8.1"}, OS_YAML, False,
        notes=["Instinct MI355X, MI350X, MI325X and MI300X only."],
        only=instinct_only(["MI355X", "MI350X", "MI325X", "MI300X"])),
    _os("ol", "9", [], {"Oracle Linux 9": "UEK 8"}, OS_YAML, False,
        notes=["Instinct MI355X, MI350X, MI325X and MI300X only."],
        only=instinct_only(["MI355X", "MI350X", "MI325X", "MI300X"])),
    _os("ol", "8", [], {"Oracle Linux 8": "UEK 7"}, OS_YAML, False, notes=["Instinct MI300X only."],
        only=instinct_only(["MI300X"])),
    _os("rocky", "9", [], {"Rocky Linux 9": "5.14.0-570"}, OS_YAML, False, notes=["Instinct MI300X and MI300A only."],
        only=instinct_only(["MI300X", "MI300A"])),
    _os("sles", "16", ["16.0"], {"SLES 16.0": "6.12"}, OS_YAML, False,
        notes=["Instinct GPUs only, except the MI100."], only=instinct_only(excluded=["MI100"])),
    _os("sles", "15", ["15.7"], {"SLES 15 SP7": "6.4.0-150700.51"}, OS_YAML, False, notes=["Instinct GPUs only."],
        only=instinct_only()),
]  # fmt: skip


# ROCm Core SDK 10.1.0: 10.0.0's OS entries, built from OS_100 (so that a correction there, such as
# a per-GPU limit, carries over), less the two Ubuntu releases its release notes replace: "Ubuntu
# 26.04.1 (kernel: 7.0 [GA]) for AMD Instinct, Radeon, and Ryzen GPUs" and "Ubuntu 24.04.5: 6.8 [GA]
# for AMD Instinct GPUs, 7.0 [HWE] for AMD Radeon and Ryzen GPUs", which "replaces the support for
# Ubuntu 26.04 and Ubuntu 24.04.4 respectively". The other entries are 10.0.0's: the notes name no
# change to them, and 10.1.0's own os-support.yaml was not read.
_UBUNTU_101 = {
    "26.04": _os("ubuntu", "26.04", ["26.04.1"], {"Ubuntu 26.04.1": "7.0 [GA]"}, NOTES_101, False, ga=["7.0"],
                 notes=["The 10.1.0 release notes list Ubuntu 26.04.1 (GA 7.0) for Instinct, Radeon and Ryzen GPUs, "
                        "in place of 26.04."]),
    "24.04": _os("ubuntu", "24.04", ["24.04.5"], {"Ubuntu 24.04.5": "6.8 [GA] (Instinct), 7.0 [HWE] (Radeon, Ryzen)"},
                 NOTES_101, False, ga=["6.8"], hwe=["7.0"],
                 notes=["The 10.1.0 release notes list Ubuntu 24.04.5 with GA 6.8 for Instinct GPUs and HWE 7.0 "
                        "for Radeon and Ryzen GPUs, in place of 24.04.4."]),
}  # fmt: skip
_CARRIED_101 = (
    "Offered by the 10.1.0 install page; its kernels and per-GPU limits are carried over from 10.0.0: the 10.1.0 "
    "release notes name no change to them (10.1.0's own table was not read)."
)


def _os_101(entries: list[dict]) -> list[dict]:
    """10.1.0's OS entries: each of ``entries`` (10.0.0's) copied, the Ubuntu releases the 10.1.0
    notes replace swapped for theirs, the rest marked as carried over."""
    out = []
    for entry in entries:
        new = _UBUNTU_101.get(entry["version"]) if entry["id"] == "ubuntu" else None
        if new is None:
            new = copy.deepcopy(entry)
            new["notes"] = [*new["notes"], _CARRIED_101]
        out.append(new)
    return out


OS_101 = _os_101(OS_100)

_CARRIED_7141 = (
    "Carried over from 7.14.0: 7.14.1 is a patch release whose own GPU and OS tables were not read; its install "
    "page keeps 7.14.0's route and targets."
)


def _carried(entries: list[dict], note: str) -> list[dict]:
    """``entries`` copied, each saying where it comes from, and unconfirmed for the release it is
    carried into."""
    out = []
    for entry in entries:
        new = copy.deepcopy(entry)
        new["notes"] = [*new["notes"], note]
        new["confirmed"] = False
        out.append(new)
    return out


OS_7141 = _carried(OS_714, _CARRIED_7141)


# -- PyTorch ---------------------------------------------------------------------------------
# AMD lists for 10.0.0 (its compatibility matrix page, read in a stored copy of the rendered page):
COMPAT_100 = (
    "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html (titled 'ROCm 10.0.0 "
    "compatibility matrix', dated 2026-08-20; AI ecosystem table: PyTorch 2.13.0, 2.12.0, 2.11.0, Python "
    "3.14-3.11)"
)
TORCH_100 = ["2.13.0", "2.12.0", "2.11.0"]
# The third audit (2026-12-07): the same AI ecosystem table in AMD's docs source, as an AMD engineer's fork of
# ROCm/ROCm (AMD's docs repository, since renamed) holds it: PyTorch 2.13.0, 2.12.0, 2.11.0 for gfx950/gfx942/
# gfx90a/gfx908, 2.13.0 and 2.12.0 for Radeon and Ryzen, so 2.11.0 is Instinct-only. Tied to 10.0.0 by its
# contents: JAX 0.11.0/0.10.x, vLLM 0.27.0, SGLang 0.5.15, MIGraphX 2.17, the versions 10.1.0's release notes
# (NOTES_101) say 10.1.0 replaces.
AI_100 = (
    "prbasyal-amd/ROCm (a fork of ROCm/ROCm) docs/compatibility/include/ai-ecosystem.rst @ "
    "0a25ed32c2ec33ab5b83ca7c87723fd4743321a7 (PyTorch '2.13.0, 2.12.0, 2.11.0' for gfx950/gfx942/gfx90a/gfx908, "
    "'2.13.0, 2.12.0' for Radeon and Ryzen; vLLM 0.27.0, SGLang 0.5.15, MIGraphX 2.17), read 2026-12-07"
)
TORCH_100_ALL = ["2.13.0", "2.12.0"]  # the releases AMD lists for every 10.0.0 target
# ... and for 10.1.0 (AI_101, and the same table in docs/compatibility/include/ai-ecosystem.rst
# @ 9bcf25db1e77, read 2026-12-07): 2.14.0, 2.13.0, 2.12.0 for gfx950/gfx942/gfx90a/gfx908 (Instinct),
# 2.14.0 alone for Radeon and Ryzen ('fam=radeon fam=ryzen').
TORCH_101 = ["2.14.0", "2.13.0", "2.12.0"]
AI_101_TABLE = (
    "ROCm/rocm-docs docs/compatibility/include/ai-ecosystem.rst @ 9bcf25db1e77f58b435fe162baaa99566bac0189 "
    "(PyTorch '2.14.0, 2.13.0, 2.12.0' for gfx950/gfx942/gfx90a/gfx908, '2.14.0' for Radeon and Ryzen)"
)
# ... and for 7.14 (#42): the AI ecosystem table of ROCm/legacy-rocm-build, the repository of the 7.14.0
# release notes and of the 7.14 Instinct table (INSTINCT_714): PyTorch 2.12.0, 2.11.0, 2.10.0 for
# gfx950/gfx942/gfx90a/gfx908, 2.12.0 and 2.11.0 for Radeon and Ryzen; Python 3.14-3.11. Tied to 7.14 by
# its contents: PyTorch 2.12.0 newest (the +rocm7.14.0 wheels public notes install), vLLM 0.23, MIGraphX
# 2.16, JAX 0.10.0 (10.0's page lists PyTorch 2.13.0 newest).
AI_714 = (
    "ROCm/legacy-rocm-build docs/compatibility/include/ai-ecosystem.rst @ 114129958d7e0293e643a1c11dddcd45ddb9a331 "
    "(PyTorch '2.12.0, 2.11.0, 2.10.0' for gfx950/gfx942/gfx90a/gfx908, '2.12.0, 2.11.0' for Radeon and Ryzen), "
    "read 2026-12-07"
)
TORCH_714 = ["2.12.0", "2.11.0", "2.10.0"]
# AMD's own wheels: one index per release channel, the GPU picked by a [device-gfxNNNN] extra
# (TheRock RELEASES.md: "For packages which include device-specific code (such as rocm, torch, and
# torchvision), select your GPU using a [device-*] install extra"; several targets as
# torch[device-gfx942,device-gfx950]).
RELEASES_MD = "ROCm/TheRock RELEASES.md @ 89553ce3746eda74ade42557470d25e37c91b6f0 (the [device-*] install extras)"
SETUP_VENV = (
    "ROCm/TheRock build_tools/setup_venv.py @ 89553ce3746eda74ade42557470d25e37c91b6f0 (ROCM_INDEX_URLS_MAP "
    "stable: https://stable.repo.amd.com/rocm/whl-next/)"
)
# AMD's release matrix for TheRock's multi-arch PyTorch wheels on the branch 7.14.0 and 7.14.1 are built from
# (release/therock-7.14, version.json 7.14.1 at this commit): release/2.10 (no gfx125x), 2.11 and 2.12, set by
# 5d3b1b754 ('[Release 7.14] Remove pytorch 2.9 + nightly', 2026-07-06) (third audit).
THEROCK_TORCH_714 = (
    "ROCm/TheRock build_tools/github_actions/configure_pytorch_release_matrix.py @ "
    "f51dc6c91e0d3214f22853fd5cb3f96dbc7d2c4b (release/therock-7.14, 2026-08-19: PYTORCH_REFS_LINUX "
    "'adjusted for release/therock-7.14': release/2.10, release/2.11, release/2.12)"
)
AMD_WHEELS = [
    {
        "rocm": "10.1.0",
        "index_url": "https://stable.repo.amd.com/rocm/whl-next/",
        "torch": ["2.14.0"],
        "archs": None,
        "source": f"{INSTALL_101} (pip: --index-url https://stable.repo.amd.com/rocm/whl-next/ "
        f"\"rocm[libraries,device-gfxNNNN]==10.1.0\" for each of its 15 targets); {RELEASES_MD}; torch versions: {AI_101}",
        "confirmed": False,
        "notes": [
            "The index and the device extras are AMD's (the 10.1.0 install page installs the ROCm wheels from it for "
            "each target; TheRock's RELEASES.md installs torch with the same extras). AMD's 10.1.0 AI ecosystem table "
            "lists PyTorch 2.14.0 (Linux, Python 3.14-3.10), and 2.13.0 and 2.12.0 for Instinct GPUs only, so only "
            "2.14.0 is named here for every target. That the index carries it for each target was not read.",
        ],
    },
    {
        "rocm": "10.0.0",
        "index_url": "https://stable.repo.amd.com/rocm/whl-next/",
        "torch": TORCH_100_ALL,
        "archs": None,  # the release's targets (filled below)
        "source": f"{INSTALL_100} (pip: --index-url https://stable.repo.amd.com/rocm/whl-next/ "
        f"\"rocm[libraries,device-gfxNNNN]==10.0.0\"); {SETUP_VENV}; {RELEASES_MD}; torch versions: {COMPAT_100}; {AI_100}",
        "confirmed": False,
        "notes": [
            "The index and the device extras are AMD's (the 10.0 install page installs the ROCm wheels from it, "
            "TheRock's RELEASES.md installs torch with the same extras); the torch versions are those AMD's 10.0 "
            "compatibility matrix lists for every target (2.11.0, Instinct-only in its AI ecosystem table, is left "
            "out, as for 7.14.0 and 10.1.0: the third audit). That the index carries each of them for each target "
            "was not read: public "
            "install notes show torch[device-gfx1151]==2.13.0+rocm10.0.0 and torch[device-gfx1201]==2.13.0+rocm10.0.0 "
            "from it (unconfirmed).",
        ],
    },
    {
        "rocm": "7.14.0",
        "index_url": "https://repo.amd.com/rocm/whl-multi-arch/",
        "torch": ["2.12.0", "2.11.0"],
        "archs": None,
        "source": "https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/frameworks/pytorch/install.html (as "
        "quoted, 2026-08-15, by public install scripts whose repositories were not identified: "
        "--index-url https://repo.amd.com/rocm/whl-multi-arch/ \"torch[device-gfx942]==2.12.0+rocm7.14.0\"); "
        "ROCm/TheRock RELEASES.md @ 89553ce3746eda74ade42557470d25e37c91b6f0 (the [device-*] install extras; "
        "names https://repo.amd.com/rocm/whl-multi-arch/ as a release channel); torch 2.11.0: "
        f"{THEROCK_TORCH_714}",
        "confirmed": False,
        "notes": [
            "Not read in AMD's own pages: the index and torch 2.12.0 (+rocm7.14.0) come from public scripts quoting "
            "AMD's PyTorch install page; other public notes also show 2.11.0+rocm7.14.0 wheels there. AMD's 7.14 AI "
            f"ecosystem table lists PyTorch 2.12.0, 2.11.0 and 2.10.0 (2.10.0 for Instinct GPUs only: {AI_714}); "
            "which of them the index carries for each target was not read. AMD's own release build of the multi-arch "
            f"PyTorch wheels on the 7.14 release branch ({THEROCK_TORCH_714}) builds release/2.10, 2.11 and 2.12, so 2.12.0 and "
            "2.11.0, the two AMD lists for every target, are named here (the third audit); 2.10.0, Instinct-only in "
            "AMD's table, is left out, as 10.1.0's Instinct-only releases are.",
            "The index itself is AMD's 7.14 wheel index (#42): TheRock's RELEASES.md names it as a release channel, "
            "and PyTorch's own CI installs ROCm 7.14 from it (pytorch/pytorch#190276, 2026-07-16: 'installing ROCm "
            "from the multi-arch TheRock wheel index (https://repo.amd.com/rocm/whl-multi-arch/)'). The entry stays "
            "confirmed=false for its torch versions, which only third parties show on it.",
        ],
    },
]


def _gpus() -> dict[str, str]:
    out = {g: "full" for g in INSTINCT}
    out.update({g: "radeon" for g in (*RADEON, *RYZEN)})
    return out


for _w in AMD_WHEELS:
    _w["archs"] = sorted(_gpus())

RELEASES = [
    {
        "version": "7.14.0",
        "release_date": "2026-07-15",
        "stream": "therock",
        "os": OS_714,
        "gpus": _gpus(),
        "amdgpu_driver": "31.40.x",
        "amdgpu_driver_compat": ["31.40.x", "31.30.x", "31.20.x", "31.10.x", "30.30.x", "30.20.x", "30.10.x"],
        "torch": TORCH_714,
        "torch_instinct_only": ["2.10.0"],
        "source": f"{RELEASE_714}; {TRANSITION}; {INSTINCT_714}; {RADEON_714}; {RYZEN_714}; {INSTALL_714}; "
        f"{VERSIONS} (release date); PyTorch: {AI_714}",
        "kernels_source": _TABLES_714,
        "confirmed": False,
        "kernels_confirmed": True,
        "notes": [
            "First production release of the new stream, built with TheRock: installs into /opt/rocm/core-7.14 "
            "(alternatives /opt/rocm/core), packages amdrocm-*7.14; its numbering breaks from 7.2 (the 7.9.0 "
            "preview started the break).",
            "Radeon (gfx1201/1200/1100/1101/1102/1030) and Ryzen APU (gfx1151/1150/1152/1153/1103) targets from "
            "AMD's 7.14-era compatibility tables; the Instinct targets (gfx950/942/90a/908) from the 7.14 Instinct "
            "table and the per-target packages of the 7.14.0 install page. OS and kernels: the Instinct, Radeon and "
            "Ryzen tables of 7.14 merged per distribution release (per-GPU limits in each OS entry's notes, "
            "gpus_only and gpus_only_by_point).",
            "Ryzen APUs (gfx115x, gfx1103) use the inbox kernel driver of the Ubuntu release, not amdgpu-dkms; "
            "7.14.0 adds the Ryzen AI Max PRO 495/490/485 (gfx1151).",
            "amdgpu: AMD lists drivers 31.40.1, 31.40.0, 31.30.0, 31.20.0, 31.10.0, 30.30.3-30.30.0, "
            "30.20.1-30.20.0, 30.10.2-30.10.0 for Radeon, and the same list for Instinct (lines kept here).",
            "PyTorch (#42): AMD's 7.14 AI ecosystem table lists 2.12.0, 2.11.0 and 2.10.0 for Instinct GPUs "
            "(gfx950/gfx942/gfx90a/gfx908), 2.12.0 and 2.11.0 for Radeon and Ryzen (torch_instinct_only: 2.10.0); "
            "Python 3.14-3.11. AMD's own wheels for it (unconfirmed): torch.json amd_wheels.",

            f"ROCm 7.14.1 followed ({THEROCK_7141}), released 2026-09-02 ({VERSIONS}): a release of its own "
            "here. AMD's 7.14 repository serves the series' newest patch release under the same package names.",
            f"Release date: AMD's release history ({VERSIONS}), the one source every date of rocm.json is taken "
            "from (#42); the GitHub release of 7.14.0 is dated a day later (2026-07-16).",
        ],
    },
    {
        "version": "7.14.1",
        "release_date": "2026-09-02",
        "stream": "therock",
        "os": OS_7141,
        "gpus": _gpus(),
        "amdgpu_driver": "31.40.x",
        "amdgpu_driver_compat": ["31.40.x", "31.30.x", "31.20.x", "31.10.x", "30.30.x", "30.20.x", "30.10.x"],
        "torch": [],
        "source": f"{INSTALL_7141}; {THEROCK_7141}; {VERSIONS} (release date); otherwise 7.14.0's tables: {_TABLES_714}",
        "kernels_source": f"{_TABLES_714} (7.14.0's, carried over)",
        "confirmed": False,
        "kernels_confirmed": False,
        "notes": [
            "ROCm 7.14.1, a patch release of 7.14 (TheRock stream): /opt/rocm/core-7.14, packages amdrocm-*7.14 from "
            "the 7.14 repository (repo.amd.com/rocm/packages-multi-arch), as its install page gives them.",
            "Read: its install page (runfile rocm-installer-7.14.1-1.run; the 7.14 apt route and key; per-target "
            "packages amdrocm7.14-gfx950 ... -gfx1153, 7.14.0's 15 targets; the AMD GPU driver docs-31.40.1), TheRock's "
            "version.json on release/therock-7.14 and AMD's release history (the date). Not read: 7.14.1's own GPU, "
            "OS and driver tables: its OS entries and compatible-driver list are 7.14.0's, unconfirmed for 7.14.1.",
            "PyTorch versions AMD lists for 7.14.1 were not read.",
        ],
    },
    {
        "version": "10.0.0",
        "release_date": "2026-08-26",
        "stream": "therock",
        "os": OS_100,
        "gpus": _gpus(),
        "amdgpu_driver": "31.50.x",
        "amdgpu_driver_compat": ["31.50.x", "31.40.x", "31.30.x", "31.20.x", "31.10.x", "30.30.x", "30.20.x", "30.10.x"],
        "torch": TORCH_100,
        "torch_instinct_only": ["2.11.0"],
        "source": f"{INSTALL_100}; {OS_YAML}; amdgpu: {DRIVERS_100}; {VERSIONS} (release date); PyTorch: {COMPAT_100}; "
        f"{AI_100}",
        "kernels_source": OS_YAML,
        "confirmed": False,
        "kernels_confirmed": False,
        "notes": [
            "ROCm Core SDK 10.0.0 (TheRock stream): /opt/rocm/core-10.0, packages amdrocm-*10.0.",
            "gfx targets: the per-target packages of the 10.0 install page (amdrocm10.0-gfx950 ... -gfx1153). "
            "OS and kernels: os-support.yaml of AMD's docs source at a revision not tied to a release (its OS "
            "set matches the 10.0 install page); per-GPU OS limits are in the OS entries' notes, gpus_only and "
            "gpus_only_by_point.",
            "amdgpu: the 10.0 install page links the AMD GPU driver docs-31.50.0; AMD's driver table for 10.0 lists "
            "31.50.0 back to 30.10.0 as compatible (31.50.0, 31.40.1, 31.40.0, 31.30.0, 31.20.0, 31.10.0, "
            "30.30.3-30.30.0, 30.20.1-30.20.0, 30.10.2-30.10.0), for every Instinct GPU and for Radeon (#42: "
            "the bundle had 31.50.x only).",
            "Release date: AMD's release history (the therock-10.0 tag of ROCm/rocm-systems carries the same day).",
            "PyTorch: AMD's 10.0.0 compatibility matrix lists 2.13.0, 2.12.0 and 2.11.0 (Python 3.14-3.11); its AI "
            "ecosystem table gives 2.11.0 for Instinct GPUs only (gfx950/gfx942/gfx90a/gfx908; torch_instinct_only; "
            "the third audit: the bundle had not said so). AMD's own wheels for it: torch.json amd_wheels.",

            f"ROCm Core SDK 10.1.0 followed ({NOTES_101}; {THEROCK_101}; {INSTALL_101}): a release of its "
            "own here.",
        ],
    },
    {
        "version": "10.1.0",
        "release_date": "2026-10-05",
        "stream": "therock",
        "os": OS_101,
        "gpus": _gpus(),
        "amdgpu_driver": "31.60.x",
        "amdgpu_driver_compat": ["31.60.x"],
        "torch": TORCH_101,
        "torch_instinct_only": ["2.13.0", "2.12.0"],
        "source": f"{INSTALL_101}; {NOTES_101}; {VERSIONS} (release date); PyTorch: {AI_101}; {AI_101_TABLE}; "
        "per-GPU OS limits: "
        f"10.0.0's, {OS_YAML}",
        "kernels_source": f"{NOTES_101} (Ubuntu 26.04.1, 24.04.5); {OS_YAML} (the other distributions, as 10.0.0)",
        "confirmed": False,
        "kernels_confirmed": False,
        "notes": [
            "ROCm Core SDK 10.1.0 (TheRock stream): /opt/rocm/core-10.1, packages amdrocm10.1 and "
            "amdrocm10.1-gfxNNNN from stable.repo.amd.com/rocm/core, as its install page gives them.",
            "Read: AMD's 10.1.0 install page, release notes, AI ecosystem table and release history (the date). "
            "Not read: 10.1.0's own GPU and OS tables (gpus.yaml, os-support.yaml at its revision) and its full "
            "compatible-driver list.",
            "gfx targets: the per-target packages of the 10.1.0 install page (amdrocm10.1-gfx950 ... -gfx1153), "
            "10.0.0's 15. The release notes add the Radeon AI PRO R9600; no source read names its gfx target, so "
            "it adds none here.",
            "OS and kernels: 10.0.0's entries with the release notes' changes: Ubuntu 26.04.1 (GA 7.0) for "
            "Instinct, Radeon and Ryzen GPUs in place of 26.04; Ubuntu 24.04.5 (GA 6.8 for Instinct, HWE 7.0 for "
            "Radeon and Ryzen) in place of 24.04.4. The other entries are 10.0.0's, unconfirmed for 10.1.0.",
            "amdgpu: the 10.1.0 install page links the AMD GPU driver docs-31.60.0 (amdgpu-install 31.60); the "
            "full compatible-driver list of 10.1.0 was not read.",
            "PyTorch: AMD's 10.1.0 AI ecosystem table lists 2.14.0 (Linux, Python 3.14-3.10) and 2.13.0, 2.12.0 "
            "for Instinct GPUs only (gfx950/gfx942/gfx90a/gfx908; torch_instinct_only), 2.14.0 alone for Radeon and "
            "Ryzen. AMD's own wheels for it: torch.json amd_wheels (the install page's index).",
        ],
    },
]
