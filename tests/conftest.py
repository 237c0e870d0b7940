"""Suite-wide settings: no hypothesis database in the clone (the suite runs as root from the
user's checkout and must leave it as it found it), and a longer timeout for the chroot tests,
whose session fixture runs debootstrap."""

from __future__ import annotations

import pytest
from hypothesis import settings

settings.register_profile("gpuenv", database=None, deadline=None)
settings.load_profile("gpuenv")


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("chroot") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(900))
