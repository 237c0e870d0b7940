"""The purge: the other stack's packages by the anchored purge rules (never vendor globs), its
runfile uninstallers, its source files and leftovers, then an autoremove narrowed to the stack."""

from __future__ import annotations

from gpuenv.plan.builders import initramfs, ldconfig, remove_file
from gpuenv.plan.plan import Kind, Step
from gpuenv.resolve.checks import cuda as cuda_checks
from gpuenv.resolve.checks import stack as stack_checks
from gpuenv.resolve.registry import cite

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import Facts
    from gpuenv.plan.repos import Repos


def purge_packages(facts: Facts, repos: Repos, stack: str) -> list[str]:
    """The installed packages that belong to a stack, by the anchored purge rules."""
    installed = facts.packages.installed if facts.packages else {}
    rules = repos.purge[stack]
    return sorted(p for p in installed if rules.matches(p.split(":")[0]))


def stack_present(facts: Facts, repos: Repos, stack: str) -> bool:
    """Any trace of a stack: its packages, its vendor's APT sources, a toolkit, a driver running."""
    vendor = "amd" if stack == "rocm" else "nvidia"
    if purge_packages(facts, repos, stack) or getattr(facts.toolkits, stack):
        return True
    if any(repos.is_vendor_uri(vendor, s.uri) for s in facts.apt_sources or ()):
        return True
    if stack == "cuda":
        return bool(facts.nvidia and facts.nvidia.driver_version) or bool(facts.module_loaded("nvidia"))
    return False


def purge_steps(facts: Facts, repos: Repos, stack: str, why: str) -> list[Step]:
    vendor = "amd" if stack == "rocm" else "nvidia"
    spec = repos.section(vendor)
    steps: list[Step] = []
    packages = purge_packages(facts, repos, stack)
    if stack == "cuda":
        for tk in facts.toolkits.cuda:
            if tk.source == "runfile" and tk.path:
                uninstaller = spec["runfile_uninstallers"]["toolkit"].format(path=tk.path.rstrip("/"))
                steps.append(
                    Step(
                        id=f"purge-cuda-runfile-{tk.version}",
                        kind=Kind.COMMAND,
                        title=f"Remove the runfile CUDA {tk.version} with its own uninstaller",
                        why=cite(cuda_checks.mixed_install, "a runfile install is removed by its uninstaller, not apt"),
                        argv=(uninstaller,),
                        only_if_exists=uninstaller,
                    )
                )
        driver_uninstaller = spec["runfile_uninstallers"]["driver"]
        driver_seen = bool(facts.nvidia and facts.nvidia.driver_version) or facts.module_loaded("nvidia")
        packaged = any(p.startswith(("nvidia-", "cuda-drivers")) for p in packages)
        if driver_seen and not packaged:  # a driver no package owns: the runfile's
            steps.append(
                Step(
                    id="purge-nvidia-runfile-driver",
                    kind=Kind.COMMAND,
                    title="Remove a runfile NVIDIA driver with nvidia-uninstall (when one is there)",
                    why=cite(cuda_checks.mixed_install, "a runfile driver is removed by its uninstaller, not apt"),
                    argv=(driver_uninstaller, "--silent"),
                    only_if_exists=driver_uninstaller,
                )
            )
    kernel_driver = any(("dkms" in p or p in ("nvidia-open", "cuda-drivers")) for p in packages)
    if packages:
        steps.append(
            Step(
                id=f"purge-{stack}-packages",
                kind=Kind.APT_PURGE,
                title=f"Purge the {len(packages)} installed {stack.upper()} packages",
                why=why,
                packages=tuple(packages),
                argv=("apt-get", "purge", "-y", *packages),
                reboot_after=kernel_driver,
                skip_if="none of these packages is installed",
            )
        )
    files = list(spec["leftover_files"])
    for src in facts.apt_sources or ():
        if src.file and repos.is_vendor_uri(vendor, src.uri) and src.file not in files:
            others = [
                s
                for s in facts.apt_sources or ()
                if s.file == src.file and not repos.is_vendor_uri(vendor, s.uri)
            ]
            if not others:  # a file that also lists other repositories is left alone
                files.append(src.file)
    file_ids = {path: f"purge-{stack}-file-{i}" for i, path in enumerate(dict.fromkeys(files))}
    leftovers = cite(stack_checks.leftovers, f"{stack} sources, pins, keyrings and gpuenv's own files")
    steps += [remove_file(step_id, f"Remove {path}", leftovers, path) for path, step_id in file_ids.items()]
    changed = tuple(s.id for s in steps if s.kind is Kind.APT_PURGE) + tuple(file_ids.values())
    if stack == "rocm":
        why = "drop /etc/ld.so.conf.d/rocm.conf from the loader cache"
        steps.append(ldconfig("purge-rocm-ldconfig", why, changed))
    else:
        blacklist = file_ids[spec["nouveau_blacklist"]["path"]]
        steps.append(
            initramfs("purge-cuda-initramfs", "the nouveau blacklist is gone", (blacklist,), reboot=False)
        )
    rules = repos.purge[stack]
    steps.append(
        Step(
            id=f"purge-{stack}-autoremove",
            kind=Kind.APT_PURGE,
            title=f"Autoremove what the {stack.upper()} purge orphaned (simulated first; only {stack} packages)",
            why="apt autoremove is simulated and narrowed: it never takes packages outside the stack",
            autoremove=True,
            allow=rules.patterns + tuple("!" + p.pattern for p in rules.keep),
            argv=("apt-get", "autoremove", "--purge", "-y"),
            skip_if="apt's simulation finds no orphan of this stack",
        )
    )
    return steps

