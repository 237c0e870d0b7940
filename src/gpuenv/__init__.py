"""gpuenv: GPU environment doctor and installer for Linux."""

__version__ = "0.1.0"
