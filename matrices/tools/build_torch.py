"""torch.json: the official torch wheels by release and variant (the reference, errata.md, the
measured and sourced additions, and torch 1.8-2.3 from additions.py)."""

from __future__ import annotations

import re

import additions as ADD  # the sourced additions (matrices/tools/additions.py)
import therock as THEROCK  # ROCm 7.14 / Core SDK 10.0 and AMD's own wheels (matrices/tools/therock.py)
from build_common import ERRATA, vtuple

TORCH_PATCHES = {
    "2.4": ["2.4.0", "2.4.1"],
    "2.5": ["2.5.0", "2.5.1"],
    "2.6": ["2.6.0"],
    "2.7": ["2.7.0", "2.7.1"],
    "2.8": ["2.8.0"],
    "2.9": ["2.9.0", "2.9.1"],
    "2.10": ["2.10.0"],
    "2.11": ["2.11.0"],
    "2.12": ["2.12.0", "2.12.1"],
    "2.13": ["2.13.0"],
    "2.14": ["2.14.0"],
}
ROCM_14 = [
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102",
    "gfx1200", "gfx1201", "gfx950", "gfx1150", "gfx1151",
]  # fmt: skip
ROCM_15 = ROCM_14[:9] + ["gfx1103"] + ROCM_14[9:]
ROCM_714 = ROCM_15[2:]  # the 7.14 path of build.sh: the common list, no gfx900/gfx906 (additions.BUILD_SH_214)
TI_212_CANDIDATE = (
    "pytorch/test-infra de717a4fd60df2a566ca7b794a6eacdfb8d9164d '[Release 2.12] advance candidate version' "
    "(#7973), 2026-04-15"
)
GFX1103_LANDED = (
    "https://github.com/pytorch/pytorch/pull/179788, comment by jeffdaily of 2026-04-17: 'Now that "
    "https://github.com/pytorch/pytorch/pull/179653 landed'"
)
ROCM_29_NOTE = (
    "11 targets, without gfx950, gfx1150 and gfx1151: release/2.9 .ci/docker/manywheel/build.sh as quoted by "
    "huggingface/kernel-builder archs.nix (pytorch commit 21fec657) and uv's measured rocm6.4 list; consistent "
    "with pytorch/pytorch#167299 (2025-11-07, after the 2.9 release), which made gfx950/gfx1150/gfx1151 "
    "unconditional by removing a ROCm >= 7.0 check. The build script at the release commit was not read "
    "here (the pytorch/pytorch snapshot is over the fetch limit), so confirmed=false"
)


# get_arch_list() outputs read in a public source; used only to confirm the lists above.
_ISSUE_182250 = (
    "get_arch_list() of this wheel printed in https://github.com/pytorch/pytorch/issues/182250 "
    "(2026-05-03) matches"
)
MEASURED_CUDA = {
    ("2.10", "cu128"): (["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], _ISSUE_182250),
    ("2.11", "cu128"): (["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], _ISSUE_182250),
    ("2.11", "cu126"): (["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], _ISSUE_182250),
}


def cuda_archs(text: str) -> tuple[list[str], list[str], list[str]]:
    """'7.5;8.0;12.0+PTX (+PTX Linux only)' -> (['sm_75', ..., 'sm_120'], ['compute_120'], notes)."""
    notes = []
    m = re.search(r"\((.*)\)\s*$", text)
    if m:
        notes.append(m.group(1))
        text = text[: m.start()].strip()
    sms, ptx = [], []
    for part in text.split(";"):
        part = part.strip()
        code = part.replace("+PTX", "").replace(".", "")
        sms.append(f"sm_{code}")
        if part.endswith("+PTX"):
            ptx.append(f"compute_{code}")
    return sms, ptx, notes


def rocm_archs(torch_minor: str, variant: str, listed) -> tuple[list[str], bool, str | None]:
    """(archs, confirmed, note) with errata.md items 1 and 2 applied."""
    if torch_minor == "2.7":
        return (
            listed,
            True,
            f"{ERRATA} item 1: list confirmed (hf-nix archs.nix quoting release/2.7 build.sh; uv#14086)",
        )
    if torch_minor == "2.10":
        # ERRATA item 2 corrects the list but reads no get_arch_list of a 2.10.0+rocm7.x wheel and,
        # unlike item 1 for 2.7, does not call the row confirmed: the list rests on PR timing and
        # third-party quotes of release/2.10 build.sh, so it stays confirmed=false.
        return (
            ROCM_14,
            False,
            (
                f"{ERRATA} item 2 corrects matrices.md: 14 targets incl. gfx950, gfx1150, gfx1151 "
                "(pytorch/pytorch#167299 merged before the 2.10 branch cut, #170119; release/2.10 "
                "build.sh quoted by huggingface/kernel-builder archs.nix). Not measured on a 2.10 wheel."
            ),
        )
    if torch_minor == "2.11" and variant == "rocm7.1":
        return (
            ROCM_14,
            False,
            f"{ERRATA} item 2: inferred equal to 2.11 rocm7.2 (same build.sh list), not read",
        )
    if torch_minor == "2.12":
        # No gfx1103 (#29): it came with pytorch/pytorch#179653, which landed after release/2.12 was cut.
        return (
            ROCM_14,
            False,
            (
                f"{ERRATA} item 2: the 14-target list without gfx1103 (one third-party reading of release/2.12 "
                f"build.sh, unslothai/unsloth#9829). gfx1103 came with pytorch/pytorch#179653 (opened "
                f"2026-04-08, landed by 2026-04-17: {GFX1103_LANDED}); issue #29 reports it merged after "
                f"{TI_212_CANDIDATE}, i.e. after the release/2.12 cut (13 Apr 2026 in RELEASE.md's cadence "
                "table). release/2.12 build.sh not read here, so confirmed=false"
            ),
        )
    if torch_minor == "2.13":
        return (
            ROCM_15,
            False,
            (
                f"{ERRATA} item 2: release/2.13 build.sh per a third-party reading, and timing: "
                f"pytorch/pytorch#179653 (gfx1103) landed by 2026-04-17 ({GFX1103_LANDED}), before the "
                "release/2.13 cut (8 Jun 2026 in RELEASE.md's cadence table; test-infra names 2.13.0 the "
                "candidate only at 6d36e31f45e8, 2026-07-08). Not read from the branch, so confirmed=false"
            ),
        )
    if torch_minor == "2.14":
        if variant == "rocm7.2":
            return ROCM_15, False, ADD.ROCM_214_72_NOTE
        return ROCM_714, False, ADD.ROCM_214_714_NOTE
    if torch_minor == "2.9" and variant in ("rocm6.3", "rocm6.4"):
        # #29: the 2.9 lists rest on a third-party quote of the release build script; the pytorch/pytorch
        # snapshot is too large to fetch here, so the script at the release commit was not read.
        return listed, False, ROCM_29_NOTE
    return listed, True, None


def build_torch(ref: dict) -> dict:
    releases = []
    # 2.14 was a candidate in the reference; it has been released since (#29), with its own sources.
    wheels = [ADD.TORCH_214 if w["torch"].startswith("2.14 ") else w for w in ref["torch_wheels"]]
    for w in wheels:
        minor = w["torch"].split(" ")[0]
        if minor not in TORCH_PATCHES:
            continue  # a candidate, not a release
        source = "; ".join(w["source"]) if isinstance(w["source"], list) else w["source"]
        variants = []
        for name in w["variants"]:
            entry: dict = {
                "variant": name,
                "index_url": f"https://download.pytorch.org/whl/{name}",
                "confirmed": True,
                "notes": [],
            }
            if name == "cpu":
                entry.update(stack="cpu", stack_version=None, archs=[], ptx=[])
            elif name.startswith("cu"):
                digits = name[2:]
                entry.update(stack="cuda", stack_version=f"{digits[:-1]}.{digits[-1]}")
                text = w["cuda_arch_list"][name]
                sms, ptx, notes = cuda_archs(text)
                entry.update(archs=sms, ptx=ptx)
                entry["notes"] += notes
                entry["archs_as_printed"] = text
                if any("third-party" in n for n in notes):
                    # The sources disagree (build script without +PTX, third-party get_arch_list
                    # with compute_120): keep the script's value but do not call it confirmed.
                    entry["confirmed"] = False
                    entry["notes"].append(
                        "sources disagree on a compute_120 PTX entry; ptx follows the release build "
                        "script (kernel-builder quote), so the variant is confirmed=false"
                    )
                measured = MEASURED_CUDA.get((minor, name))
                if measured is not None:
                    assert measured[0] == sms, (minor, name)  # a check, not a source of values
                    entry["notes"].append(measured[1])
            else:
                entry.update(stack="rocm", stack_version=name[4:], ptx=[])
                archs, confirmed, note = rocm_archs(minor, name, w["rocm_arch_list"][name])
                entry["archs"] = archs
                entry["confirmed"] = confirmed
                if note:
                    entry["notes"].append(note)
                if name == "rocm7.14":  # TheRock's runtime comes from pip, not in the wheel (#42)
                    entry["rocm_from_pip"] = ADD.ROCM_714_FROM_PIP
            variants.append(entry)
        confirmed = bool(w["confirmed"]) or minor == "2.7"  # ERRATA item 1 (item 2 leaves 2.10 open)
        releases.append(
            {
                "minor": minor,
                "versions": TORCH_PATCHES[minor],
                "released": w["release"],
                "python": [p for p in w["python"]],
                "pypi_default": w["pypi_default_linux_x86_64"],
                "variants": variants,
                "source": source,
                "confirmed": confirmed,
                "notes": [w["notes"]] if w.get("notes") else [],
            }
        )
    for r in releases:
        if r["minor"] == "2.10":
            r["notes"] = [
                f"{ERRATA} item 2: the ROCm lists have 14 targets (gfx950, gfx1150, gfx1151 included); "
                "uv's 12-target rows were not a measurement. No get_arch_list of a 2.10.0+rocm7.x wheel "
                "was read, so the ROCm variants (and the row) stay confirmed=false."
            ]
        if r["minor"] == "2.7":
            # Drop matrices.md's "ROCm arch list inferred ... build.sh itself was not read": errata
            # item 1 read the release/2.7 list (via hf-nix) and measured 2.7.1 wheels (uv#14086).
            stale = (
                " ROCm arch list inferred from PR merge dates (before the Mar 2025 branch cut) + uv's "
                "empirical lists; the release/2.7 build.sh itself was not read."
            )
            r["notes"] = [n.replace(stale, "") for n in r["notes"]]
            r["notes"].append(
                f"{ERRATA} item 1 confirms the 11-target ROCm list (release/2.7 build.sh as quoted by hf-nix "
                "archs.nix, pytorch commit 1341794745…#L100, plus get_arch_list of 2.7.1+rocm6.3/6.2.4 in "
                "astral-sh/uv#14086); row confirmed."
            )
    for r in releases:
        for v in r["variants"]:
            if r["minor"] == "2.7" and v["variant"] == "cu128":
                v["notes"].append(ADD.PTX_270_NOTE)
            mark_no_kernels(v)
        if r["minor"] in ADD.CU129:
            r["variants"].append(cu129_variant(r["minor"]))
    releases += old_torch_releases()
    return {
        "schema": "gpuenv.matrices.torch/1",
        "index_url_pattern": "https://download.pytorch.org/whl/<variant>",
        "facts": ref["torch_wheel_facts"],
        "releases": releases,
        "arch_notes": ADD.ARCH_NOTES,
        "gfx_overrides": ADD.GFX_OVERRIDES,
        "amd_wheels": THEROCK.AMD_WHEELS,
    }


def mark_no_kernels(v: dict) -> None:
    """Effective support: a ROCm variant whose bundled rocBLAS has no kernels for some listed targets."""
    if v["variant"] in ADD.NO_KERNELS_VARIANTS:
        missing = [a for a in ADD.NO_KERNELS_ARCHS if a in v["archs"]]
        if missing:
            v["archs_without_kernels"] = missing
            v["archs_without_kernels_source"] = ADD.NO_KERNELS_SOURCE
            v["archs_without_kernels_confirmed"] = False


def cu129_variant(minor: str) -> dict:
    caps, note = ADD.CU129[minor]
    sms = [f"sm_{c.replace('.', '')}" for c in caps] if caps else []
    return {
        "variant": "cu129",
        "index_url": "https://download.pytorch.org/whl/cu129",
        "confirmed": False,
        "notes": [
            "Built by PyTorch's own CD for this release although not on the default (getting-started) build "
            "matrix: " + ADD.CU129_SOURCE,
            note,
        ],
        "stack": "cuda",
        "stack_version": "12.9",
        "archs": sms,
        "ptx": [],
    }


def old_torch_releases() -> list[dict]:
    """Torch 1.8 - 2.3 (additions.OLD_TORCH): variants, index URLs, arch lists from the builder."""
    out = []
    for rel in ADD.OLD_TORCH:
        variants = []
        for name, caps in rel["variants"]:
            entry: dict = {
                "variant": name,
                "index_url": f"https://download.pytorch.org/whl/{name}",
                "confirmed": True,
                "notes": [],
            }
            if rel.get("find_links"):
                entry["find_links"] = rel["find_links"]
                entry["notes"].append(
                    ADD.OLD_INDEX_NOTE.format(
                        find_links=rel["find_links"], variant=name, upper=name.upper().replace(".", "")
                    )
                )
            if name == "cpu":
                entry.update(stack="cpu", stack_version=None, archs=[], ptx=[])
            elif name.startswith("cu"):
                digits = name[2:]
                sms = sorted({f"sm_{c.replace('.', '')}" for c in caps}, key=vtuple)
                entry.update(stack="cuda", stack_version=f"{digits[:-1]}.{digits[-1]}", archs=sms, ptx=[])
                entry["archs_as_printed"] = ";".join(caps)
            else:
                entry.update(stack="rocm", stack_version=name[4:], ptx=[])
                if caps is None:
                    entry["archs"] = list(ADD.ROCM_DEFAULT_ARCHS)
                    entry["confirmed"] = False
                    entry["notes"].append(ADD.ROCM_DEFAULT_NOTE)
                else:
                    entry["archs"] = list(caps)
            mark_no_kernels(entry)
            variants.append(entry)
        out.append(
            {
                "minor": rel["minor"],
                "versions": rel["versions"],
                "released": None,
                "python": rel["python"],
                "pypi_default": None,
                "variants": variants,
                "source": rel["source"],
                "confirmed": all(v["confirmed"] for v in variants),
                "notes": list(rel["notes"]),
            }
        )
    return out

