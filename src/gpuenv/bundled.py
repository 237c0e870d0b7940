"""The one way to reach data shipped inside gpuenv: the matrices and the JSON schemas.

Both live in real packages (``gpuenv._matrices``, mapped from the repository's ``matrices/``,
and ``gpuenv.schemas``), so the package's own location is the data's, whether gpuenv was
installed from a wheel, installed editable, or imported from a checkout. (``importlib.resources``
would give the same directory and cost 8 ms of start-up: it imports zipfile and tempfile.)
Nothing else in gpuenv builds a path to its own data.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGES = {"matrices": "gpuenv._matrices", "schemas": "gpuenv.schemas"}


@cache
def directory(kind: str) -> Path:
    """The directory of the bundled ``kind`` ("matrices" or "schemas")."""
    import importlib

    package = importlib.import_module(_PACKAGES[kind])
    where = getattr(package, "__file__", None)
    path = Path(where).parent if where else None
    if path is None or not path.is_dir():  # a zip import or a namespace package: not what gpuenv ships
        raise FileNotFoundError(f"gpuenv's bundled {kind} are not a directory ({where!r})")
    return path


def path(kind: str, name: str) -> Path:
    """A bundled file: ``path("matrices", "repos.json")``, ``path("schemas", "plan.schema.json")``."""
    return directory(kind) / name
