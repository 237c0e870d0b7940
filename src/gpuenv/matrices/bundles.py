"""Where the data comes from, whether to trust it, and the per-process caches.

``$GPUENV_STATE_DIR/matrices`` (or /var/lib/gpuenv/matrices as root, ~/.cache/gpuenv/matrices
otherwise) when ``gpuenv matrix update`` installed a bundle there and it parses; else the copy
shipped inside gpuenv (``gpuenv.standins.bundled``: the package gpuenv._matrices).
"""

from __future__ import annotations

import os

from gpuenv.matrices.parsers import SUBJECTS, _fill, _parse_host_compilers
from gpuenv.matrices.query import Matrices
from gpuenv.matrices.reader import _BUNDLE_VERSION, Reader, _read
from gpuenv.matrices.records import BundleInfo, HostCompilers, MatrixError

TYPE_CHECKING = False  # typing's flag without importing typing or pathlib (start-up time)
if TYPE_CHECKING:
    from pathlib import Path

FILES = ("bundle.json", "amd_gpus.json", "nvidia_gpus.json", "rocm.json", "cuda.json", "torch.json")
# A bundle may also carry the vendor repositories, keys and purge rules (an admin's mirror); the
# planner reads them from the bundle in effect (gpuenv.plan.repos), else the shipped ones.
OPTIONAL_FILES = ("repos.json",)


def parse_dir(directory: str | os.PathLike[str], origin: str, lazy: bool = False) -> Matrices:
    """Parse one bundle directory; MatrixError (file and path) on the first problem.

    ``lazy`` reads bundle.json now and each subject on first use (for the shipped data, which
    the tests validate); otherwise every file is parsed before this returns."""
    directory = os.fspath(directory)
    bundle = _read(directory, "bundle.json")
    reader = Reader("bundle.json")
    version = reader.text(bundle, "version", "$", _BUNDLE_VERSION)
    material = reader.get(bundle, "material_dated_up_to", "$", str, optional=True)
    m = Matrices(
        bundle=BundleInfo(version=version, path=str(directory), origin=origin, material=material), _dir=directory
    )
    if lazy:
        m._pending = set(SUBJECTS)
    else:
        for subject in SUBJECTS:
            _fill(m, subject, directory)
    return m


def bundled_dir() -> str:
    """The matrices shipped with this gpuenv (the package gpuenv._matrices)."""
    from gpuenv.standins import bundled

    return bundled.directory("matrices")


def state_dir() -> Path:
    """Where ``gpuenv matrix update`` keeps an installed bundle."""
    from pathlib import Path

    return Path(_state_dir())


def _state_dir() -> str:
    env = os.environ.get("GPUENV_STATE_DIR")
    if env:
        return os.path.join(env, "matrices")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return "/var/lib/gpuenv/matrices"
    return os.path.join(os.path.expanduser("~"), ".cache", "gpuenv", "matrices")


_CACHE: dict[str, Matrices] = {}


def load(path: str | None = None) -> Matrices:
    """Load (once per process and path) the installed bundle if any, else the bundled one.

    ``path`` reads that directory only (no fallback): a bad one raises MatrixError. Without it,
    a broken installed bundle, or for root one that another account could have changed, is
    passed over (``bundle.skipped`` says why) for the bundled data."""
    key = path or f"default:{_state_dir()}"
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    result: Matrices | None
    if path is not None:
        result = parse_dir(path, "given")
    else:
        skipped = None
        result = None
        installed = _state_dir()
        if os.path.isfile(os.path.join(installed, "bundle.json")):
            why = _untrusted(installed)
            if why:
                skipped = f"installed bundle at {installed} ignored: {why}"
            else:
                try:
                    result = parse_dir(installed, "installed")
                except MatrixError as exc:
                    skipped = f"installed bundle at {installed} ignored: {exc}"
        if result is None:
            result = parse_dir(bundled_dir(), "bundled", lazy=True)
            if skipped:
                b = result.bundle
                result.bundle = BundleInfo(b.version, b.path, b.origin, skipped, b.material)
    _CACHE[key] = result
    return result


def _untrusted(directory: str) -> str | None:
    """For root, why another account could have changed the installed bundle (it decides what
    root's plans install: GPUENV_STATE_DIR may point anywhere); None when none could, and for
    any other user, whose bundle steers only their own runs."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    from gpuenv.trust import untrusted

    for name in FILES + OPTIONAL_FILES:
        path = os.path.join(directory, name)
        why = untrusted(path) if name in FILES or os.path.lexists(path) else None
        if why:
            return why
    return None


def clear_cache() -> None:
    """Forget parsed bundles (after ``matrix update``/``reset`` in the same process, and in tests)."""
    _CACHE.clear()


# -- host compilers (host_compilers.json) --------------------------------------------------------
# Read on first use. A bundle installed by `gpuenv matrix update` carries only FILES; without its
# own host_compilers.json the shipped copy answers.


_HOST_COMPILERS: dict[str, dict[str, HostCompilers]] = {}


def _host_compilers(directory: str | None) -> dict[str, HostCompilers]:
    if directory is None or not os.path.isfile(os.path.join(directory, "host_compilers.json")):
        directory = bundled_dir()
    if directory not in _HOST_COMPILERS:
        _HOST_COMPILERS[directory] = _parse_host_compilers(_read(directory, "host_compilers.json"))
    return _HOST_COMPILERS[directory]

