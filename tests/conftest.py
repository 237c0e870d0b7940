"""Suite-wide settings: no hypothesis database in the clone (the suite runs as root from the
user's checkout and must leave it as it found it), a longer timeout for the chroot tests, whose
session fixture runs debootstrap, no sudo variables from whoever started the run, and fixtures
copied with normalized modes (the clone's permission bits are not the test's)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("gpuenv", database=None, deadline=None)
settings.load_profile("gpuenv")

# tests/run.sh re-runs itself through sudo, which sets these; gpuenv reads them (SUDO_USER is the
# default --user, SUDO_UID a trusted plan owner), so a test that wants them sets them itself.
SUDO_VARIABLES = ("SUDO_USER", "SUDO_UID", "SUDO_GID", "SUDO_COMMAND", "SUDO_HOME")


@pytest.fixture(autouse=True)
def _no_sudo_environment(monkeypatch):
    for name in SUDO_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def open_tmp():
    """A directory under /tmp that another account can reach (pytest's own are root's alone, and a
    clone in root's home is too), removed after the test."""
    import shutil
    import tempfile
    from pathlib import Path

    top = Path(tempfile.mkdtemp(prefix="gpuenv-test-", dir="/tmp"))
    os.chmod(top, 0o755)
    yield top
    shutil.rmtree(top)


# A clone made with umask 0002 (Debian 13 enables pam_umask with USERGROUPS_ENAB) has group-
# writable files. Copied with their modes into a root-owned tree (a sysroot, a venv's site
# directory), they are what gpuenv rightly refuses to trust, and the test would test the clone's
# umask. Every copy a test makes with shutil (copy, copy2, copytree) keeps the mode's execute and
# read bits but drops group and other write, as a clone made with umask 0022 has them. A test
# that wants a writable file makes it so after copying.
def _normalized(copy):
    import functools

    @functools.wraps(copy)
    def wrapper(src, dst, *args, **kwargs):
        result = copy(src, dst, *args, **kwargs)
        try:
            mode = os.stat(dst, follow_symlinks=False).st_mode
            if mode & 0o022 and not os.path.islink(dst) and os.stat(src, follow_symlinks=False).st_mode & 0o022:
                os.chmod(dst, mode & 0o7755)
        except OSError:
            pass
        return result

    return wrapper


def _normalize_fixture_copies() -> None:
    import shutil

    shutil.copystat = _normalized(shutil.copystat)  # copy2 and copytree's directories
    shutil.copymode = _normalized(shutil.copymode)  # copy


_normalize_fixture_copies()


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("chroot") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(900))
