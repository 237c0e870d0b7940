"""sha256, the one digest gpuenv computes (facts, plans, matrix bundles).

Through CPython's built-in implementation when there is one: ``hashlib`` loads OpenSSL first,
which costs a doctor run (whose report carries the facts' digest) about 4% of its start-up. The
algorithm and the digests are the same; ``hashlib`` is the fallback where the built-in module is
missing (3.12 renamed it ``_sha2``; builds may leave it out).
"""

from __future__ import annotations

import sys

try:
    # The name of this Python's module first: a failed import costs a search of every sys.path
    # entry.
    if sys.version_info >= (3, 12):
        from _sha2 import sha256 as _sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12 and newer; no stub
    else:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found,unused-ignore]  # 3.11 and older; no stub
except ImportError:  # a build without the built-in hashes
    from hashlib import sha256 as _sha256

__all__ = ["sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data`` in lower-case hex (what ``sha256sum`` prints)."""
    digest: str = _sha256(data).hexdigest()
    return digest
