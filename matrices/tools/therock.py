"""ROCm's new release stream (TheRock): ROCm 7.14.0 and ROCm Core SDK 10.0.0 (#29), merged into
rocm.json by build.py (build_rocm.py). Every value names where it was read; what was not read
is left out and said so in the release's notes.

Sources (AMD's documentation source, ROCm/rocm-docs, read in a searchable store of public repositories):
- RADEON_714 / RYZEN_714: docs/compatibility/include/system-radeon.rst and system-ryzen.rst
  @ bcabec9de623fa62d27c7c5bc86c51f094cb00ce. The revision is tied to 7.14.0 by its contents:
  amdgpu 31.40.1 newest and Adrenalin 26.6.4, the same pair the 7.14.0 install page names.
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
- Dates: 7.14.0 released 2026-07-16 (github.com/ROCm/legacy-rocm-build/releases/tag/rocm-7.14.0);
  the therock-10.0 tag of ROCm/rocm-systems is dated 2026-08-26 (shared/reference/errata.md
  section 7; rocm.docs.amd.com/en/latest titled "ROCm Core SDK 10.0.0 release notes" by 2026-08-30).
"""

from __future__ import annotations

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

INSTINCT = ("gfx950", "gfx942", "gfx90a", "gfx908")
RADEON = ("gfx1201", "gfx1200", "gfx1100", "gfx1101", "gfx1102", "gfx1030")
RYZEN = ("gfx1151", "gfx1150", "gfx1152", "gfx1153", "gfx1103")


def _os(os_id, version, points, printed, source, confirmed, ga=(), hwe=(), notes=()):
    """One OS entry in rocm.json's shape; ``printed`` maps the label AMD prints to its kernel text,
    and the kernel series are those texts' MAJOR.MINOR (a UEK release name carries none)."""
    kernels = []
    for text in printed.values():
        for word in text.replace(",", " ").split():
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
    }


_TABLES_714 = f"{RADEON_714}; {RYZEN_714}"
# Radeon and Ryzen kernels are AMD's 7.14-era tables; the Instinct OS/kernel table of 7.14.0 was
# not read, and the install page offers more distributions (Debian, RHEL 10.0/9.6/9.4/8.10, Oracle,
# Rocky, SLES) for some GPUs. So only what both tables agree on is confirmed; the rest is listed
# (the release installs there) with its kernels unconfirmed, which the doctor does not judge.
_INSTINCT_UNREAD = "The Instinct OS/kernel table of 7.14.0 was not read; this entry is not judged (confirmed: false)."
_OFFERED = f"{INSTALL_714} (the distribution and version selectors of the install page; kernels not given there)"
OS_714 = [
    _os("ubuntu", "26.04", ["26.04"], {"Ubuntu 26.04": "7.0 [GA]"}, _TABLES_714, True, ga=["7.0"]),
    _os(
        "ubuntu", "24.04", ["24.04.4"], {"Ubuntu 24.04.4": "6.17 [HWE] (Radeon), 6.17 [OEM] (Ryzen)"},
        _TABLES_714, False, hwe=["6.17"],
        notes=["The Radeon table lists 24.04.4 with the HWE 6.17 kernel only, the Ryzen table with the OEM 6.17 "
               "kernel. " + _INSTINCT_UNREAD],
    ),
    _os("ubuntu", "22.04", ["22.04.5"], {"Ubuntu 22.04.5": "6.8 [HWE] (Radeon)"}, RADEON_714, False, hwe=["6.8"],
        notes=[_INSTINCT_UNREAD]),
    _os("debian", "13", [], {}, _OFFERED, False, notes=[_INSTINCT_UNREAD]),
    _os("debian", "12", [], {}, _OFFERED, False, notes=[_INSTINCT_UNREAD]),
    _os("rhel", "10", ["10.2", "10.0"], {"RHEL 10.2": "6.12.0-211 (Radeon)"}, f"{RADEON_714}; {_OFFERED}", False,
        notes=["Radeon GPUs: RHEL 10.2 only. " + _INSTINCT_UNREAD]),
    _os("rhel", "9", ["9.8", "9.6", "9.4"], {"RHEL 9.8": "5.14.0-687 (Radeon)"}, f"{RADEON_714}; {_OFFERED}", False,
        notes=["Radeon GPUs: RHEL 9.8 only. " + _INSTINCT_UNREAD]),
    _os("rhel", "8", ["8.10"], {}, _OFFERED, False, notes=[_INSTINCT_UNREAD]),
    _os("ol", "10", [], {}, _OFFERED, False, notes=[_INSTINCT_UNREAD]),
    _os("ol", "9", [], {}, _OFFERED, False, notes=[_INSTINCT_UNREAD]),
    _os("ol", "8", [], {}, _OFFERED, False, notes=[_INSTINCT_UNREAD]),
    _os("rocky", "9", [], {}, _OFFERED, False, notes=[_INSTINCT_UNREAD]),
    _os("sles", "15", [], {}, _OFFERED, False, notes=["SLES 15 (the install page's sles15 repository). " + _INSTINCT_UNREAD]),
]  # fmt: skip

OS_100 = [
    _os("ubuntu", "26.04", ["26.04"], {"Ubuntu 26.04": "7.0 [GA]"}, OS_YAML, False, ga=["7.0"]),
    _os("ubuntu", "24.04", ["24.04.4"], {"Ubuntu 24.04.4": "6.8 [GA], 6.17 [HWE], 6.17 [OEM]"}, OS_YAML, False,
        ga=["6.8"], hwe=["6.17"],
        notes=["GA 6.8 is listed for Instinct GPUs; Radeon GPUs list HWE 6.17, Ryzen APUs OEM 6.17."]),
    _os("ubuntu", "22.04", ["22.04.5"], {"Ubuntu 22.04.5": "5.15 [GA], 6.8 [HWE]"}, OS_YAML, False,
        ga=["5.15"], hwe=["6.8"], notes=["GA 5.15 is listed for Instinct GPUs; Radeon GPUs list HWE 6.8."]),
    _os("debian", "13", [], {"Debian 13": "6.12"}, OS_YAML, False, notes=["Instinct GPUs only."]),
    _os("debian", "12", [], {"Debian 12": "6.1.0"}, OS_YAML, False, notes=["Instinct GPUs only."]),
    _os("rhel", "10", ["10.2", "10.0"], {"RHEL 10.2": "6.12.0-211", "RHEL 10.0": "6.12.0-55"}, OS_YAML, False),
    _os("rhel", "9", ["9.8", "9.6", "9.4"],
        {"RHEL 9.8": "5.14.0-687", "RHEL 9.6": "5.14.0-570", "RHEL 9.4": "5.14.0-427"}, OS_YAML, False),
    _os("rhel", "8", ["8.10"], {"RHEL 8.10": "4.18.0-553"}, OS_YAML, False, notes=["Instinct GPUs only."]),
    _os("ol", "10", [], {"Oracle Linux 10": "UEK 8.1"}, OS_YAML, False, notes=["Instinct GPUs only."]),
    _os("ol", "9", [], {"Oracle Linux 9": "UEK 8"}, OS_YAML, False, notes=["Instinct GPUs only."]),
    _os("ol", "8", [], {"Oracle Linux 8": "UEK 7"}, OS_YAML, False, notes=["MI300X only."]),
    _os("rocky", "9", [], {"Rocky Linux 9": "5.14.0-570"}, OS_YAML, False, notes=["MI300X and MI300A only."]),
    _os("sles", "16", ["16.0"], {"SLES 16.0": "6.12"}, OS_YAML, False, notes=["Instinct GPUs only."]),
    _os("sles", "15", ["15.7"], {"SLES 15 SP7": "6.4.0-150700.51"}, OS_YAML, False, notes=["Instinct GPUs only."]),
]  # fmt: skip


def _gpus() -> dict[str, str]:
    out = {g: "full" for g in INSTINCT}
    out.update({g: "radeon" for g in (*RADEON, *RYZEN)})
    return out


RELEASES = [
    {
        "version": "7.14.0",
        "release_date": "2026-07-16",
        "stream": "therock",
        "os": OS_714,
        "gpus": _gpus(),
        "amdgpu_driver": "31.40.x",
        "amdgpu_driver_compat": ["31.40.x", "31.30.x", "31.20.x", "31.10.x", "30.30.x", "30.20.x", "30.10.x"],
        "torch": [],
        "source": f"{RELEASE_714}; {TRANSITION}; {RADEON_714}; {RYZEN_714}; {INSTALL_714}",
        "kernels_source": _TABLES_714,
        "confirmed": False,
        "kernels_confirmed": False,
        "notes": [
            "First production release of the new stream, built with TheRock: installs into /opt/rocm/core-7.14 "
            "(alternatives /opt/rocm/core), packages amdrocm-*7.14; its numbering breaks from 7.2 (the 7.9.0 "
            "preview started the break).",
            "Radeon (gfx1201/1200/1100/1101/1102/1030) and Ryzen APU (gfx1151/1150/1152/1153/1103) targets from "
            "AMD's 7.14-era compatibility tables; the Instinct targets (gfx950/942/90a/908) from the per-target "
            "packages of the 7.14.0 install page. The Instinct OS/kernel table of 7.14.0 was not read: the OS "
            "entries beyond Ubuntu 26.04 are unconfirmed (not judged by the doctor).",
            "Ryzen APUs (gfx115x, gfx1103) use the inbox kernel driver of the Ubuntu release, not amdgpu-dkms; "
            "7.14.0 adds the Ryzen AI Max PRO 495/490/485 (gfx1151).",
            "amdgpu: AMD lists drivers 31.40.1, 31.40.0, 31.30.0, 31.20.0, 31.10.0, 30.30.3-30.30.0, "
            "30.20.1-30.20.0, 30.10.2-30.10.0 for Radeon (lines kept here).",
            "PyTorch versions AMD lists for 7.14.0 were not read.",
        ],
    },
    {
        "version": "10.0.0",
        "release_date": "2026-08-26",
        "stream": "therock",
        "os": OS_100,
        "gpus": _gpus(),
        "amdgpu_driver": "31.50.x",
        "amdgpu_driver_compat": ["31.50.x"],
        "torch": [],
        "source": f"{INSTALL_100}; {OS_YAML}; shared/reference/errata.md section 7 (therock-10.0 tag, 2026-08-26)",
        "kernels_source": OS_YAML,
        "confirmed": False,
        "kernels_confirmed": False,
        "notes": [
            "ROCm Core SDK 10.0.0 (TheRock stream): /opt/rocm/core-10.0, packages amdrocm-*10.0.",
            "gfx targets: the per-target packages of the 10.0 install page (amdrocm10.0-gfx950 ... -gfx1153). "
            "OS and kernels: os-support.yaml of AMD's docs source at a revision not tied to a release (its OS "
            "set matches the 10.0 install page); per-GPU OS limits are in the OS entries' notes.",
            "amdgpu: the 10.0 install page links the AMD GPU driver docs-31.50.0; the full compatible-driver "
            "list of 10.0 was not read.",
            "The 10.0 release date is the therock-10.0 tag's; AMD's release notes page was not read for a date.",
            "PyTorch versions AMD lists for 10.0.0 were not read.",
        ],
    },
]
