"""The provisioning scripts, shipped inside the wheel as the package ``gpuenv._install_scripts``.

A real package (as ``matrices/`` is ``gpuenv._matrices``) so that ``gpuenv provision cloud-init``
embeds the very bootstrap.sh of this directory, from a wheel, an editable install or a checkout.
Read it through ``gpuenv.standins.bundled``.
"""
