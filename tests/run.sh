#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian/Ubuntu machine (only python3
# present) and runs the whole suite. Extra arguments go to pytest. Run as root (or with sudo
# available): the chroot tests need debootstrap and root, but never touch the host's system.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# gcc/libc6-dev: the fake libnvidia-ml.so.1; gnupg, dpkg-dev, debootstrap: the local signed APT
# repository and the Debian chroot of the install tests; pci.ids: NVIDIA names on real machines.
$SUDO apt-get install -y -qq --no-install-recommends \
    python3-venv python3-pip gcc libc6-dev gnupg dpkg-dev apt-utils debootstrap pci.ids ca-certificates >/dev/null

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'

.venv/bin/ruff check .
exec .venv/bin/python -m pytest -q "$@"
