"""The GPU vendors' own package repositories, by the host in a source's URI: how the probe records
where an installed stack came from (``toolkits[].origin``) and how the checks tell a vendor's apt
source from the distribution's."""

from __future__ import annotations

# AMD: repo.radeon.com (ROCm, amdgpu, graphics) and the new release stream's repositories
# (repo.amd.com/rocm/packages-multi-arch for 7.14, stable.repo.amd.com/rocm for 10.x: repos.json);
# NVIDIA: the CUDA repositories and the container toolkit's.
_VENDORS = (
    ("repo.radeon.com", "amd"),
    ("repo.amd.com/rocm/", "amd"),
    ("developer.download.nvidia.com/compute", "nvidia"),
    ("nvidia.github.io", "nvidia"),
)


def vendor_of(uri: str) -> str | None:
    """'amd' or 'nvidia' for a URI of that vendor's repository; None for any other."""
    for needle, vendor in _VENDORS:
        if needle in uri:
            return vendor
    return None
