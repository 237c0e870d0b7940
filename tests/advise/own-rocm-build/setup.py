import os

from setuptools import setup

# Built with hipcc when PyTorch is a ROCm build.
IS_ROCM = os.environ.get("ROCM_HOME") is not None
setup(name="own-rocm-build", version="0.1")
