"""The bundled compatibility data, shipped inside the wheel as the package ``gpuenv._matrices``.

A real package (not a bare data directory) so that ``importlib.resources`` hands back a real
directory in a wheel, an editable install and a checkout alike. Read it through
``gpuenv.standins.bundled``, never by a path relative to a source file.
"""
