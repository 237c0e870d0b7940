from setuptools import setup

setup(
    name="every-manifest",
    install_requires=[
        "apex",
    ],
)
