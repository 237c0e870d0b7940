"""The one way to reach data shipped inside gpuenv: the matrices and the JSON schemas.

Both live in real packages (``gpuenv._matrices``, mapped from the repository's ``matrices/``,
and ``gpuenv.schemas``), so ``importlib.resources`` gives a real directory whether gpuenv was
installed from a wheel, installed editable, or imported from a checkout. Nothing else in gpuenv
builds a path to its own data from ``__file__``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGES = {"matrices": "gpuenv._matrices", "schemas": "gpuenv.schemas"}


@cache
def directory(kind: str) -> Path:
    """The directory of the bundled ``kind`` ("matrices" or "schemas")."""
    from importlib.resources import files

    found = files(_PACKAGES[kind])
    path = Path(str(found))
    if not path.is_dir():  # a zip import or a namespace package: not a layout gpuenv ships
        raise FileNotFoundError(f"gpuenv's bundled {kind} are not a directory ({found!r})")
    return path


def path(kind: str, name: str) -> Path:
    """A bundled file: ``path("matrices", "repos.json")``, ``path("schemas", "plan.schema.json")``."""
    return directory(kind) / name
