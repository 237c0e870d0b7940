from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="fastsum",
    install_requires=["torch>=2.1", "numpy"],
    ext_modules=[
        CUDAExtension("fastsum._C", ["csrc/bindings.cpp", "csrc/reduce.cu", "csrc/gemm.cu"]),
    ],
    cmdclass={"build_ext": BuildExtension},
)
