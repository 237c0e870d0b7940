"""A Debian 12 chroot and a local signed APT repository for the install tests (real apt, dpkg).

- ``base_chroot``: ``debootstrap --variant=minbase bookworm``, once per session (or reused from
  ``$GPUENV_CHROOT_CACHE``, a directory, when set), with no Debian sources (only the test
  repository is reachable) and a user ``alice``. Each scenario copies it with ``cp -a``.
- ``vendor_repo``: packages built with ``dpkg-deb`` under the real vendor names and
  dependencies, laid out like repo.radeon.com and NVIDIA's CUDA repository, signed with a
  throwaway key made in a temporary GNUPGHOME, served over http://127.0.0.1 by a thread. gpuenv
  reaches it the way an admin's mirror is reached: a matrices bundle whose repos.json names the
  local repository and pins the throwaway key, installed with ``gpuenv matrix update --from DIR
  --sha256 ...`` into a state directory of the session's (``env``: GPUENV_STATE_DIR naming it).
  ``install_bundle`` installs such a bundle into another state directory (a chroot's
  /var/lib/gpuenv, or one with another fingerprint).
- ``chroot_facts``: the facts of a chroot (OS, dpkg status, apt sources, the given GPU), so that
  plans are made, and staleness checked, from what is really in the chroot.

Nothing touches the host: every apt/dpkg command runs through ``chroot``; no mounts are made.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

MIRROR = os.environ.get("GPUENV_DEBIAN_MIRROR", "http://deb.debian.org/debian")
KERNEL = "6.1.0-28-amd64"
# The chroots are Debian 12, which ROCm 7.2.4 and 7.14.0 list for named Instinct GPUs only (the
# MI300X among them) and 10.0.0 for Instinct GPUs: a machine AMD supports there with each release.
AMD_GPU = {
    "vendor": "amd",
    "pci_id": "1002:74a1",
    "pci_slot": "0000:03:00.0",
    "pci_class": "0x120000",  # a processing accelerator, as the MI300X's function reports itself
    "name": "AMD Instinct MI300X",
    "gfx_target": "gfx942",
    "architecture": "CDNA3",
    "integrated": False,
}
NVIDIA_GPU = {
    "vendor": "nvidia",
    "pci_id": "10de:2330",
    "pci_slot": "0000:41:00.0",
    "name": "NVIDIA H100 SXM5 80GB",
    "compute_capability": "9.0",
    "architecture": "Hopper",
}


def skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "the chroot install tests need root (chroot, dpkg inside the chroot)"
    for tool in ("debootstrap", "dpkg-deb", "apt-ftparchive", "gpg", "chroot"):
        if shutil.which(tool) is None:
            return f"the chroot install tests need {tool} (see .ci/run)"
    return None


@functools.cache
def namespace_skip_reason() -> str | None:
    """Why this machine cannot give a test a private mount namespace, or None when it can.

    Tried once: inside a container or a chroot, / is often no mount point of its own, and unshare
    cannot make the namespace's mounts private (so none could be made without reaching the host).
    """
    if os.geteuid() != 0:
        return "needs root for a mount namespace (unshare -m)"
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux) for a mount namespace"
    try:
        done = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True,
                              text=True, timeout=30, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot make a private mount namespace here: unshare: {exc}"
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        return f"cannot make a private mount namespace here (a container or chroot?): {why}"
    return None


def run(argv, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("check", True)
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    try:
        return subprocess.run(argv, **kw)
    except subprocess.CalledProcessError as exc:
        raise AssertionError(f"{argv} failed ({exc.returncode}):\n{exc.stdout}\n{exc.stderr}") from None


def in_root(root: Path, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive"}
    return run(["chroot", str(root), *argv], env=env, check=check)


# --------------------------------------------------------------------------------------------
# The base chroot


def _debootstrap(dest: Path, suite: str = "bookworm") -> None:
    run(["debootstrap", "--variant=minbase", suite, str(dest), MIRROR])
    # Only the test repository: no Debian sources, no 9 MB index download per scenario.
    (dest / "etc/apt/sources.list").write_text("")
    for p in (dest / "var/lib/apt/lists").glob("*_*"):
        p.unlink()
    (dest / "etc/apt/apt.conf.d/99gpuenv-test").write_text('Acquire::Languages "none";\n')
    in_root(dest, "useradd", "--create-home", "--uid", "1000", "alice")
    in_root(dest, "apt-get", "clean")


@pytest.fixture(scope="session")
def base_chroot(tmp_path_factory) -> Path:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    cache = os.environ.get("GPUENV_CHROOT_CACHE")
    if cache and (Path(cache) / "etc/debian_version").exists():
        return Path(cache)
    dest = Path(cache) if cache else tmp_path_factory.mktemp("bookworm") / "root"
    if dest.exists():
        shutil.rmtree(dest)
    _debootstrap(dest)
    return dest


@pytest.fixture(scope="session")
def trixie_chroot(tmp_path_factory) -> Path:
    """Debian 13 minbase, made as base_chroot is: apt 3.0, which verifies with sqv under its own
    policy and brings no gpgv. Cached in ``$GPUENV_CHROOT_CACHE-trixie`` when that is set."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    cache = os.environ.get("GPUENV_CHROOT_CACHE")
    dest = Path(cache + "-trixie") if cache else tmp_path_factory.mktemp("trixie") / "root"
    if (dest / "etc/debian_version").exists() and (dest / "home/alice").is_dir():
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    _debootstrap(dest, "trixie")
    return dest


def copy_root(base: Path, dest: Path) -> Path:
    run(["cp", "-a", str(base), str(dest)])
    return dest


# --------------------------------------------------------------------------------------------
# The vendor repository


@dataclass(frozen=True)
class Deb:
    name: str
    version: str
    depends: str = ""
    files: tuple[tuple[str, str], ...] = ()  # (path, content)
    postinst: str = ""  # a maintainer script, only where the vendor's own does something gpuenv reads


# Real vendor names and dependency shapes, tiny payloads, no maintainer scripts (no real DKMS).
NVIDIA_DEBS = (
    Deb("libcublas-12-8", "12.8.4.1-1", files=(("/usr/local/cuda-12.8/lib64/libcublas.so.12", "fake\n"),)),
    Deb(
        "cuda-nvcc-12-8",
        "12.8.93-1",
        files=(("/usr/local/cuda-12.8/bin/nvcc", "#!/bin/sh\necho fake nvcc\n"),),
    ),
    Deb("cuda-toolkit-12-8", "12.8.1-1", "libcublas-12-8, cuda-nvcc-12-8"),
    Deb("nvidia-kernel-open-dkms", "570.124.06-1", files=(("/usr/src/nvidia-570.124.06/README", "fake\n"),)),
    Deb("nvidia-open", "570.124.06-1", "nvidia-kernel-open-dkms"),
    Deb("cuda-drivers", "570.124.06-1", "nvidia-open"),
    Deb("nvidia-container-toolkit", "1.17.8-1", files=(("/usr/bin/nvidia-ctk", "#!/bin/sh\n"),)),
    # Not NVIDIA's: a user's package that needs a CUDA library (apt would drag it out).
    Deb("myapp", "1.0-1", "libcublas-12-8", files=(("/usr/bin/myapp", "#!/bin/sh\n"),)),
)
AMDGPU_DEBS = (
    Deb("amdgpu-dkms", "1:6.12.12.30304-2200000.22.04", files=(("/usr/src/amdgpu-6.12/README", "x\n"),)),
)
ROCM_DEBS = (
    Deb("rocm-core", "7.2.4.70204-93~22.04", files=(("/opt/rocm-7.2.4/.info/version", "7.2.4\n"),)),
    Deb(
        "hip-runtime-amd",
        "7.2.53211.70204-93~22.04",
        "rocm-core",
        (("/opt/rocm-7.2.4/lib/libamdhip64.so.7", "x\n"),),
    ),
    Deb("rocm", "7.2.4.70204-93~22.04", "rocm-core, hip-runtime-amd"),
)


# ROCm's new release stream (TheRock, #29), laid out as its packages are: the tree under
# /opt/rocm/core-X.Y with rocm-core's .info/version, names amdrocm-*X.Y (gfx target last), and
# amdrocm-core's postinst pointing the /opt/rocm/core alternative at the tree (ROCm/TheRock
# build_tools/packaging/linux/build_package.py, packaging_utils.update_package_name and
# template/scripts/amdrocm-core-postinst.j2 @ therock-7.14).
THEROCK_POSTINST = (
    "#!/bin/sh\nset -e\nmkdir -p /opt/rocm\n"
    "update-alternatives --install /opt/rocm/core core /opt/rocm/core-7.14 7014000\n"
    "update-alternatives --install /opt/rocm/bin rocm-bin /opt/rocm/core-7.14/bin 7014000\n"
)
THEROCK_DEBS = (
    Deb("amdrocm-sysdeps7.14", "7.14.0-7"),
    Deb(
        "amdrocm-core7.14",
        "7.14.0-7",
        "amdrocm-sysdeps7.14",
        (("/opt/rocm/core-7.14/.info/version", "7.14.0-7\n"), ("/opt/rocm/core-7.14/bin/rocminfo", "#!/bin/sh\n")),
        THEROCK_POSTINST,
    ),
    Deb("amdrocm-runtime7.14", "7.14.0-7", "amdrocm-core7.14",
        (("/opt/rocm/core-7.14/lib/libamdhip64.so.7", "x\n"),)),
    Deb("amdrocm7.14-gfx942", "7.14.0-7", "amdrocm-runtime7.14"),
)  # fmt: skip


def build_deb(deb: Deb, out: Path, work: Path) -> Path:
    pkg = work / f"{deb.name}_{deb.version.replace(':', '%')}"
    (pkg / "DEBIAN").mkdir(parents=True)
    control = f"Package: {deb.name}\nVersion: {deb.version}\nArchitecture: amd64\nMaintainer: gpuenv tests <t@invalid>\n"
    if deb.depends:
        control += f"Depends: {deb.depends}\n"
    control += "Description: gpuenv test package (fake)\n"
    (pkg / "DEBIAN/control").write_text(control)
    if deb.postinst:
        (pkg / "DEBIAN/postinst").write_text(deb.postinst)
        (pkg / "DEBIAN/postinst").chmod(0o755)
    for path, content in deb.files:
        f = pkg / path.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(content)
        if content.startswith("#!"):
            f.chmod(0o755)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{deb.name}_{deb.version.split(':')[-1]}_amd64.deb"
    run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(pkg), str(target)])
    return target


@dataclass(frozen=True)
class Repo:
    root: Path
    url: str
    fingerprint: str
    gnupghome: Path
    state: Path  # GPUENV_STATE_DIR holding the installed bundle that points at this repository

    @property
    def env(self) -> dict[str, str]:
        return {"GPUENV_STATE_DIR": str(self.state)}

    def install_bundle(self, state: Path, fingerprint: str | None = None, therock: bool = False) -> Path:
        """Install, through ``gpuenv matrix update``, a bundle pointing at this repository (with
        ``fingerprint`` pinned instead of its key's) into the state directory ``state``; with
        ``therock``, the new ROCm stream's repositories are the mirror's too (mirror_bundle)."""
        import tempfile

        from gpuenv.matrixbundle import digest

        with tempfile.TemporaryDirectory(prefix="gpuenv-mirror-bundle-") as tmp:
            bundle = mirror_bundle(Path(tmp) / "bundle", self.url, fingerprint or self.fingerprint, therock)
            env = {"GPUENV_STATE_DIR": str(state)}
            res = gpuenv("matrix", "update", "--from", str(bundle), "--sha256", digest(bundle), env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        return state

    def keyring(self) -> bytes:
        return run(["gpg", "--homedir", str(self.gnupghome), "--export", self.fingerprint], text=False).stdout


def _gpg(home: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return run(
        ["gpg", "--homedir", str(home), "--batch", "--pinentry-mode", "loopback", "--passphrase", "", *args],
        **kw,
    )


def _sign(home: Path, fpr: str, directory: Path, release_args: list[str]) -> None:
    release = run(["apt-ftparchive", *release_args, "release", "."], cwd=directory).stdout
    (directory / "Release").write_text(release)
    _sign_release(home, fpr, directory)


def _sign_release(home: Path, fpr: str, directory: Path, *extra: str) -> None:
    """InRelease and Release.gpg of ``directory``'s Release (``extra``: gpg options, a digest)."""
    for how, out in (("--clearsign", "InRelease"), ("-abs", "Release.gpg")):
        _gpg(home, "--local-user", fpr, *extra, "--yes", how, "-o", str(directory / out), str(directory / "Release"))


@contextlib.contextmanager
def resigned(repo: Repo, top: Path, digest: str):
    """A copy of ``repo``'s tree, every Release signed again with ``digest`` (SHA1: what apt 3.0's
    sqv policy refuses and gpgv accepts), served on a port of its own, with a bundle that names
    it installed in a state directory of its own: a Repo."""
    www = top / "www"
    shutil.copytree(repo.root, www)
    for release in www.rglob("Release"):
        _sign_release(repo.gnupghome, repo.fingerprint, release.parent, "--digest-algo", digest)
    with _serve(www) as url:
        copy = Repo(www, url, repo.fingerprint, repo.gnupghome, top / "state")
        copy.install_bundle(copy.state)
        yield copy


@contextlib.contextmanager
def _serve(www: Path):
    handler = functools.partial(_Quiet, directory=str(www))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _dist_repo(
    home: Path, fpr: str, base: Path, debs: tuple[Deb, ...], work: Path, suites: tuple[str, ...] = ("jammy", "noble")
) -> None:
    """One pool, published under each suite (AMD's: jammy for Ubuntu 22.04 and Debian 12, noble
    for Ubuntu 24.04 and Debian 13, repos.json amd.suites)."""
    pool = base / "pool/main"
    for deb in debs:
        build_deb(deb, pool, work)
    pool.mkdir(parents=True, exist_ok=True)
    packages = run(["apt-ftparchive", "packages", "pool/main"], cwd=base).stdout
    for suite in suites:
        binary = base / f"dists/{suite}/main/binary-amd64"
        binary.mkdir(parents=True, exist_ok=True)
        (binary / "Packages").write_text(packages)
        opts = [
            "-o", f"APT::FTPArchive::Release::Suite={suite}",
            "-o", f"APT::FTPArchive::Release::Codename={suite}",
            "-o", "APT::FTPArchive::Release::Origin=repo.radeon.com",
            "-o", "APT::FTPArchive::Release::Components=main",
            "-o", "APT::FTPArchive::Release::Architectures=amd64",
        ]  # fmt: skip
        _sign(home, fpr, base / f"dists/{suite}", opts)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="session")
def vendor_repo(tmp_path_factory) -> Repo:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    top = tmp_path_factory.mktemp("vendor-repo")
    home = top / "gnupg"
    home.mkdir(mode=0o700)
    _gpg(home, "--quick-gen-key", "gpuenv test repository <test@invalid>", "rsa2048", "sign", "never")
    colons = _gpg(home, "--with-colons", "--list-keys").stdout
    fpr = next(ln.split(":")[9] for ln in colons.splitlines() if ln.startswith("fpr:"))
    armored = _gpg(home, "--armor", "--export", fpr).stdout
    www, work = top / "www", top / "build"
    # NVIDIA: a flat repository per distro, its key beside it.
    nv = www / "nvidia/compute/cuda/repos/debian12/x86_64"
    for deb in NVIDIA_DEBS:
        build_deb(deb, nv, work)
    (nv / "Packages").write_text(run(["apt-ftparchive", "packages", "."], cwd=nv).stdout)
    _sign(home, fpr, nv, [])
    (nv / "3bf863cc.pub").write_text(armored)
    # AMD: amdgpu, rocm and graphics repositories with the jammy and noble suites, one key for all.
    _dist_repo(home, fpr, www / "amd/amdgpu/30.30.4/ubuntu", AMDGPU_DEBS, work)
    _dist_repo(home, fpr, www / "amd/rocm/apt/7.2.4", ROCM_DEBS, work)
    _dist_repo(home, fpr, www / "amd/graphics/7.2.4/ubuntu", (), work)
    (www / "amd/rocm/rocm.gpg.key").write_text(armored)
    # AMD's new-stream repository: packages-multi-arch/<distro>, suite stable (the 7.14 install page).
    _dist_repo(home, fpr, www / "amd/rocm/packages-multi-arch/debian12", THEROCK_DEBS, work, suites=("stable",))
    (www / "amd/rocm/packages-multi-arch/gpg").mkdir()
    (www / "amd/rocm/packages-multi-arch/gpg/rocm.gpg").write_text(armored)  # where the 7.14 page fetches it

    with _serve(www) as url:
        repo = Repo(www, url, fpr, home, top / "state")
        repo.install_bundle(repo.state)
        yield repo
    # gpg started an agent for the throwaway keyring: a test leaves no process behind.
    subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], check=False, capture_output=True)


VENDORS = {"https://repo.radeon.com": "amd", "https://developer.download.nvidia.com": "nvidia"}
# ROCm's new release stream: repo.amd.com (7.14) and stable.repo.amd.com (10.0) under the mirror.
THEROCK_HOSTS = {"https://stable.repo.amd.com": "amd-stable", "https://repo.amd.com": "amd"}


def mirror_bundle(dest: Path, url: str, fingerprint: str, therock: bool = False) -> Path:
    """The shipped matrices as a newer bundle whose repos.json names the mirror at ``url`` (the
    vendors' trees under /amd and /nvidia, the new ROCm stream's under /amd and /amd-stable) and
    pins ``fingerprint`` for both vendors' keys. The new stream's keys are pinned with ``therock``
    only; without it they have no fingerprint, so plans stay on the legacy stream the install
    tests were written for (the mirror serves 7.14 only, not 10.0)."""
    import json

    from gpuenv.matrices import FILES, bundled_dir

    dest.mkdir(parents=True)
    for name in FILES:
        shutil.copy(Path(bundled_dir()) / name, dest / name)
    bundle = json.loads((dest / "bundle.json").read_text())
    year, rest = bundle["version"].split(".", 1)
    bundle["version"] = f"{int(year) + 100}.{rest}"  # newer than the shipped bundle: an update
    (dest / "bundle.json").write_text(json.dumps(bundle))
    text = (Path(bundled_dir()) / "repos.json").read_text()
    for vendor_url, vendor in (*VENDORS.items(), *THEROCK_HOSTS.items()):
        text = text.replace(vendor_url, f"{url}/{vendor}")
    repos = json.loads(text)
    host = url.split("://", 1)[1]
    for vendor in VENDORS.values():
        repos[vendor]["key"]["fingerprint"] = fingerprint
        repos[vendor]["source_hosts"].append(f"{host}/{vendor}")
    for rel in repos["amd_therock"]["releases"]:
        rel["key"]["fingerprint"] = fingerprint if therock else None
        # The mirror's key is the test's own, made by it: known, not one AMD's pages should confirm
        # (#42: the shipped new-stream key is confirmed=false, pinned only with --trust-unconfirmed-key).
        rel["key"]["confirmed"] = therock
    (dest / "repos.json").write_text(json.dumps(repos))
    # rocm.json's copy of the routes follows (#42: the doctor reads it; matrix update refuses a
    # bundle whose copies disagree).
    rocm = json.loads((dest / "rocm.json").read_text())
    for rel in rocm["releases"]:
        spec = rel.get("repository")
        if spec is not None and "distros" in spec:
            spec.update(fingerprint=fingerprint if therock else None, key_confirmed=therock)
        elif spec is not None:
            spec["fingerprint"] = fingerprint
    (dest / "rocm.json").write_text(json.dumps(rocm))
    return dest


# --------------------------------------------------------------------------------------------
# Facts of a chroot


def _dpkg_installed(root: Path) -> dict[str, str]:
    out, pkg, ver, ok = {}, None, None, False
    text = (root / "var/lib/dpkg/status").read_text()
    for line in text.splitlines() + [""]:
        if line.startswith("Package: "):
            pkg = line[9:]
        elif line.startswith("Version: "):
            ver = line[9:]
        elif line.startswith("Status: "):
            ok = line.endswith(" installed")
        elif not line and pkg:
            if ok:
                out[pkg] = ver
            pkg, ver, ok = None, None, False
    return dict(sorted(out.items()))


def give_machine(root: Path, gpu: dict) -> Path:
    """Make the chroot probe as a machine with ``gpu``: what `gpuenv probe --root` reads of a real
    one (the running kernel, its build tree, the GPU's PCI function in sysfs, no module loaded).
    Plans are then made, and applies checked, from the chroot's own probed facts."""
    (root / "proc/sys/kernel").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/kernel/osrelease").write_text(KERNEL + "\n")
    (root / "proc/sys/kernel/arch").write_text("x86_64\n")
    (root / "proc/modules").write_text("")
    (root / f"lib/modules/{KERNEL}/build").mkdir(parents=True, exist_ok=True)
    for old in (root / "sys/bus/pci/devices").glob("*"):
        shutil.rmtree(old)
    dev = root / "sys/bus/pci/devices" / gpu["pci_slot"]
    dev.mkdir(parents=True)
    vendor, device = gpu["pci_id"].split(":")
    (dev / "vendor").write_text(f"0x{vendor}\n")
    (dev / "device").write_text(f"0x{device}\n")
    default_class = "0x030000" if gpu["vendor"] == "amd" else "0x030200"
    (dev / "class").write_text(gpu.get("pci_class", default_class) + "\n")
    return root


# --------------------------------------------------------------------------------------------
# Running gpuenv against a chroot, and what a chroot holds


def gpuenv_argv() -> list[str]:
    """The installed console script (tests/run.sh: the bare venv of the built wheel), else this
    interpreter's gpuenv."""
    installed = os.environ.get("GPUENV_E2E_BIN")
    return [installed] if installed else [sys.executable, "-m", "gpuenv"]


def gpuenv(*args: str, env: dict[str, str], check: bool = False, **kw) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env, "COLUMNS": "200", "NO_COLOR": "1"}
    full_env.pop("SUDO_USER", None)
    return subprocess.run(
        [*gpuenv_argv(), *args],
        env=full_env,
        capture_output=True,
        text=True,
        check=check,
        **kw,
    )


VOLATILE = ("var/log/", "var/cache/", "var/lib/apt/lists/", "var/lib/gpuenv/", "tmp/")


def manifest(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """path -> mode:sha256 (or link target) of every file under root, apart from `skip` prefixes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir in ("proc", "sys", "dev"):
            dirnames[:] = []
            continue
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if any(rel.startswith(s) for s in skip):
                continue
            st = os.lstat(full)
            if os.path.islink(full):
                out[rel] = "link:" + os.readlink(full)
            elif os.path.isfile(full):
                with open(full, "rb") as fh:
                    out[rel] = f"{st.st_mode:o}:{hashlib.sha256(fh.read()).hexdigest()}"
            else:
                out[rel] = f"{st.st_mode:o}"
        for d in dirnames:
            full = os.path.join(dirpath, d)
            rel = os.path.normpath(os.path.join(rel_dir, d))
            if not os.path.islink(full) and not any((rel + "/").startswith(s) for s in skip):
                out[rel + "/"] = f"{os.lstat(full).st_mode:o}"
    return out


def end_state(root: Path) -> dict:
    """What an apply leaves that matters: packages, groups, and files outside caches and logs.
    Backups that shadow's tools rotate (/etc/group-) and the loader cache are left out: they
    depend on how many times a tool ran, not on the end state."""
    skip = (
        *VOLATILE,
        "etc/group-",
        "etc/gshadow-",
        "etc/passwd-",
        "etc/shadow-",
        "etc/ld.so.cache",
        "var/lib/dpkg/",
    )
    return {"packages": _dpkg_installed(root), "files": manifest(root, skip)}


def write_json(path: Path, doc: dict) -> Path:
    import json

    path.write_text(json.dumps(doc, indent=1))
    return path
