"""Small stand-ins for standard-library and third-party modules on gpuenv's start-up path.

What each replaces, what it saves (measured by bench/standins.py) and which test holds it equal to
the real module: README.md in this directory. Nothing is imported here: each command imports only
the stand-ins it uses.
"""
