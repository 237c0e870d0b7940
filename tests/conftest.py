"""Suite-wide settings: no hypothesis database in the clone (the suite runs as root from the
user's checkout and must leave it as it found it), a longer timeout for the chroot tests, whose
session fixture runs debootstrap, and no sudo variables from whoever started the run."""

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


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("chroot") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(900))
