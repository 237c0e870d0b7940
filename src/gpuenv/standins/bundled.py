"""The one way to reach data shipped inside gpuenv: the matrices, the JSON schemas, and the
provisioning scripts.

They live in real packages (``gpuenv._matrices`` and ``gpuenv._install_scripts``, mapped from the
repository's ``matrices/`` and ``install-scripts/``, and ``gpuenv.schemas``), so the package's own location is the data's, whether gpuenv was
installed from a wheel, installed editable, or imported from a checkout. (``importlib.resources``
would give the same directory and cost 8 ms of start-up: it imports zipfile and tempfile.)
Nothing else in gpuenv builds a path to its own data. Paths are strings: pathlib (with the
urllib.parse and ipaddress it imports) is not on the start-up path of doctor and torch.
"""

from __future__ import annotations

import os
from functools import cache

_PACKAGES = {
    "matrices": "gpuenv._matrices",
    "schemas": "gpuenv.schemas",
    "install-scripts": "gpuenv._install_scripts",
}


@cache
def directory(kind: str) -> str:
    """The directory of the bundled ``kind`` ("matrices", "schemas" or "install-scripts")."""
    from gpuenv import import_module

    package = import_module(_PACKAGES[kind])
    where: str | None = getattr(package, "__file__", None)
    path = os.path.dirname(where) if where else None
    if path is None or not os.path.isdir(path):  # a zip import or a namespace package: not what gpuenv ships
        raise FileNotFoundError(f"gpuenv's bundled {kind} are not a directory ({where!r})")
    return path


def path(kind: str, name: str) -> str:
    """A bundled file: ``path("matrices", "repos.json")``, ``path("schemas", "plan.schema.json")``."""
    return os.path.join(directory(kind), name)
