"""gpuenv: GPU environment doctor and installer for Linux."""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from types import ModuleType


def import_module(name: str) -> ModuleType:
    """The module ``name`` (absolute), imported if it is not yet: ``importlib.import_module``
    without importing importlib, which costs a command half a millisecond of start-up."""
    import sys

    module = sys.modules.get(name)
    if module is None:
        __import__(name)
        module = sys.modules[name]
    return module
