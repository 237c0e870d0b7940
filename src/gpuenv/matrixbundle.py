"""Installing, checking and removing a matrices bundle (``gpuenv matrix update|check|reset``).

A bundle is a directory, or a .tar.gz of one, holding bundle.json and the subject files
(amd_gpus, nvidia_gpus, rocm, cuda, torch), and optionally repos.json: the vendor repositories and
pinned keys the planner then uses instead of the shipped ones (a mirror; the fingerprints decide). Integrity: the user passes the bundle's sha256
(required; no signed manifest in this version). For a .tar.gz that is the sha256 of the archive
file (what ``sha256sum`` prints); for a directory it is ``digest(dir)``, printed by
``gpuenv matrix check DIR``. Nothing on disk changes until the bundle has been fetched, matched
against the sha256, parsed, validated and found newer than both the installed and the shipped
bundle; the swap into place is a rename.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

from gpuenv.exitcodes import Exit
from gpuenv.matrices import (
    FILES,
    OPTIONAL_FILES,
    MatrixError,
    bundled_dir,
    clear_cache,
    parse_dir,
    state_dir,
    vkey,
)
from gpuenv.standins.checksum import sha256_hex
from gpuenv.standins.record import record

MAX_BYTES = 32 * 1024 * 1024  # a bundle is ~0.5 MB; anything this large is not one
# The JSON schema of each file (gpuenv/schemas); the tests validate bundles against them.
SCHEMAS = {
    "bundle.json": "matrices-bundle.json",
    "amd_gpus.json": "matrices-amd_gpus.json",
    "nvidia_gpus.json": "matrices-nvidia_gpus.json",
    "rocm.json": "matrices-rocm.json",
    "cuda.json": "matrices-cuda.json",
    "torch.json": "matrices-torch.json",
}


class BundleError(Exception):
    """An update that was refused; ``exit`` says how (USAGE, REFUSED or PROBLEMS)."""

    def __init__(self, message: str, exit: Exit) -> None:
        super().__init__(message)
        self.exit = exit


@record(frozen=True)
class Installed:
    version: str
    previous: str  # the version that was in effect before
    path: str


def digest(directory: Path) -> str:
    """sha256 of a bundle directory: of "name sha256(content)" lines, one per file, sorted."""
    return _digest_of(_read_files(directory))


def _digest_of(files: dict[str, bytes]) -> str:
    return sha256_hex("".join(f"{name} {sha256_hex(files[name])}\n" for name in sorted(files)).encode())


def _read_files(directory: Path) -> dict[str, bytes]:
    """The bundle files of a directory by name, each read once: what is hashed is what is
    installed, whatever the directory's owner changes meanwhile. Regular files only (never a
    FIFO, a device or a symbolic link), at most MAX_BYTES each; a missing file is left out."""
    from gpuenv.rootpath import NotRegular, TooLarge, read_regular

    files = {}
    for name in FILES + OPTIONAL_FILES:
        path = directory / name
        try:
            files[name] = read_regular(path, MAX_BYTES, nofollow=True)
        except FileNotFoundError:
            continue
        except TooLarge:
            raise BundleError(f"{path}: larger than {MAX_BYTES} bytes; not a bundle file", Exit.USAGE) from None
        except NotRegular:
            raise BundleError(f"{path}: not a regular file", Exit.USAGE) from None
        except OSError as exc:
            raise BundleError(f"{path}: cannot read: {exc.strerror or exc}", Exit.USAGE) from None
    return files


def check(directory: str | os.PathLike[str]) -> list[str]:
    """Problems with a bundle directory (empty when it is good): every file present, then the
    loader's own parse, which checks every field gpuenv reads (types, well-formed versions and
    targets, torch index URLs on https://download.pytorch.org/whl/ only). The same answer with or
    without jsonschema installed: the JSON schemas (gpuenv/schemas) document the format and
    validate the shipped data in the tests; they are not a run-time dependency."""
    directory = Path(directory)
    try:  # read as an update reads them: a link, a FIFO or a device is no bundle file
        files = _read_files(directory)
    except BundleError as exc:
        return [str(exc)]
    problems = [f"{name}: missing" for name in FILES if name not in files]
    if problems:
        return problems
    try:
        bundle = parse_dir(directory, "check")
        ours, releases = bundle.rocm_routes(), [r.version for r in bundle.rocm_releases()]
    except MatrixError as exc:
        return [str(exc)]
    from gpuenv.matrices import routes
    from gpuenv.plan import repos
    from gpuenv.plan.plan import PlanError
    from gpuenv.standins import bundled

    # The planner reads the bundle's repos.json, else the shipped one; the doctor reads rocm.json's
    # copy of its routes (#42): a bundle whose two disagree would have them choose different releases.
    # A bundle from before the copy (no rocm.json `repository` entries) is not compared.
    path = directory / "repos.json" if "repos.json" in files else Path(bundled.path("matrices", "repos.json"))
    try:
        theirs = repos.load(path).rocm_routes()
    except PlanError as exc:
        return [str(exc)]
    said = routes.disagreement(releases, ours, theirs) if ours else None
    return [f"{said} (rebuild rocm.json from repos.json: matrices/tools/build.py)"] if said else []


def _fetch(url: str) -> bytes:
    import requests

    try:
        with requests.get(url, timeout=30, stream=True) as resp:
            resp.raise_for_status()
            data = io.BytesIO()
            for chunk in resp.iter_content(65536):
                data.write(chunk)
                if data.tell() > MAX_BYTES:
                    raise BundleError(
                        f"{url}: larger than {MAX_BYTES} bytes; not a matrices bundle", Exit.USAGE
                    )
            return data.getvalue()
    except requests.RequestException as exc:
        raise BundleError(f"{url}: download failed: {exc}", Exit.PROBLEMS) from exc


def _unpack(data: bytes, dest: Path, label: str) -> None:
    """Extract the bundle files of a .tar.gz into dest: regular files only, known names only
    (at the top or under one directory), so a hostile archive cannot write anywhere else."""
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
    except tarfile.TarError as exc:
        raise BundleError(f"{label}: not a .tar.gz bundle: {exc}", Exit.USAGE) from exc
    with tar:
        for member in tar.getmembers():
            name = Path(member.name).name
            parts = Path(member.name).parts
            known = name in FILES or name in OPTIONAL_FILES
            if not member.isfile() or not known or len(parts) > 2 or member.name.startswith("/"):
                continue
            if ".." in parts:
                continue
            src = tar.extractfile(member)
            if src is None:
                continue
            (dest / name).write_bytes(src.read(MAX_BYTES))


def stage(source: str, sha256: str, workdir: Path) -> Path:
    """Fetch or copy ``source`` into ``workdir`` after checking its sha256; returns the bundle dir."""
    want = sha256.strip().lower()
    if len(want) != 64 or any(c not in "0123456789abcdef" for c in want):
        raise BundleError(f"--sha256 {sha256!r}: expected 64 hex digits", Exit.USAGE)
    if source.startswith("http://"):
        raise BundleError(f"{source}: refusing plain HTTP; use an https:// URL", Exit.USAGE)
    if "://" in source and not source.startswith(("https://", "file://")):
        raise BundleError(f"{source}: only https:// URLs or local paths are accepted", Exit.USAGE)
    bundle = workdir / "bundle"
    bundle.mkdir()
    if source.startswith("https://"):
        data = _fetch(source)
    else:
        path = Path(source[len("file://") :] if source.startswith("file://") else source)
        if path.is_dir():
            files = _read_files(path)
            got = _digest_of(files)
            if got != want:
                raise BundleError(f"{path}: sha256 {got} does not match --sha256 {want}", Exit.REFUSED)
            for name, data in files.items():
                (bundle / name).write_bytes(data)
            return bundle
        from gpuenv.rootpath import TooLarge, read_regular

        try:
            data = read_regular(path, MAX_BYTES)  # never a FIFO or /dev/zero
        except TooLarge:
            raise BundleError(
                f"{path}: larger than {MAX_BYTES} bytes; not a matrices bundle", Exit.USAGE
            ) from None
        except OSError as exc:
            raise BundleError(f"{path}: cannot read: {exc.strerror or exc}", Exit.USAGE) from exc
    got = sha256_hex(data)
    if got != want:
        raise BundleError(f"{source}: sha256 {got} does not match --sha256 {want}", Exit.REFUSED)
    _unpack(data, bundle, source)
    return bundle


def current_version(state: Path) -> str:
    """The newest of the shipped bundle and a valid installed one: what an update must beat."""
    versions = [parse_dir(bundled_dir(), "bundled", lazy=True).bundle.version]
    if (state / "bundle.json").is_file():
        try:
            versions.append(parse_dir(state, "installed", lazy=True).bundle.version)
        except MatrixError:
            pass  # a broken installed bundle may be replaced by any valid newer-than-shipped one
    return max(versions, key=vkey)


def install(source: str, sha256: str, state: Path | None = None) -> Installed:
    """Fetch, check and install a bundle. Everything is checked in a private temporary directory
    first: a refused update leaves no trace, not even the state directory."""
    state = state or state_dir()
    _root_may_write(state)
    # Staged where only root can change it ($TMPDIR only where it passes trust's rule): a TMPDIR
    # of another account's (sudo -E) would let it swap repos.json after its sha256 check.
    from gpuenv.trust import UntrustedDir, temp_parent

    try:
        parent = temp_parent()
    except UntrustedDir as exc:
        raise BundleError(f"refusing to stage the bundle: {exc}", Exit.REFUSED) from None
    with tempfile.TemporaryDirectory(prefix="gpuenv-matrices-", dir=parent) as tmp:
        bundle = stage(source, sha256, Path(tmp))
        problems = check(bundle)
        if problems:
            raise BundleError("the bundle is not valid:\n  " + "\n  ".join(problems), Exit.USAGE)
        new = parse_dir(bundle, "staged", lazy=True).bundle.version
        old = current_version(state)
        if vkey(new) <= vkey(old):
            what = "the same version as" if vkey(new) == vkey(old) else "older than"
            raise BundleError(f"bundle {new} is {what} the one in use ({old}); refusing", Exit.REFUSED)
        # Only now: beside the state directory (one file system, so the swap is a rename). The
        # modes are exact, whatever the umask: root passes over an installed bundle that another
        # account could have changed (matrices.load), so its own must never look like one.
        from gpuenv.rootpath import make_dirs

        make_dirs(state.parent, Path(state.anchor))
        with tempfile.TemporaryDirectory(prefix=".matrices-", dir=state.parent) as swap:
            staged = Path(swap) / "bundle"
            shutil.copytree(bundle, staged)
            os.chmod(staged, 0o755)
            for name in os.listdir(staged):
                os.chmod(staged / name, 0o644)
            if state.exists():
                os.replace(state, Path(swap) / "retired")
            os.replace(staged, state)
    clear_cache()
    return Installed(version=new, previous=old, path=str(state))


def _root_may_write(state: Path) -> None:
    """As root, refuse a state directory another account could change (GPUENV_STATE_DIR may name
    any): root would write into, or remove from, a tree someone else controls, and then pass over
    what it wrote there anyway (``matrices.load``)."""
    if os.geteuid() != 0:
        return
    from gpuenv.trust import untrusted

    why = untrusted(str(state))
    if why and not why.endswith("does not exist"):
        raise BundleError(
            f"refusing {state} as root: {why} (as root, the state directory must be one only root can change)",
            Exit.REFUSED,
        )


def reset(state: Path | None = None) -> bool:
    """Remove the installed bundle; False when there was none."""
    state = state or state_dir()
    _root_may_write(state)
    if state.is_symlink():
        raise BundleError(f"{state}: a symbolic link, not a bundle gpuenv installed; not removed", Exit.USAGE)
    if not state.exists():
        return False
    shutil.rmtree(state)
    clear_cache()
    return True
