#!/usr/bin/env bash
# The whole test suite, on a fresh Debian/Ubuntu machine with only python3 present. Run it as
# root, or as a user with sudo (it re-runs itself through sudo: the chroot tests need root).
# Extra arguments go to pytest.
#
# What it tests is what users get: the wheel is built from a copy of this tree and installed,
# not editable, into throwaway venvs outside the checkout:
#   - a test venv (the wheel plus the test dependencies) that pytest runs in;
#   - a bare venv (the wheel alone, no test dependencies) whose console script the end-to-end
#     tests run (tests/test_e2e_installed.py, GPUENV_E2E_BIN).
# The checkout is left as it was: no .venv touched, no build/ or egg-info, no caches, no bytecode.
# Nothing outside a temporary directory changes on the host but the apt packages installed below;
# the install tests build their own Debian chroot.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
    exec sudo --preserve-env=GPUENV_CHROOT_CACHE,GPUENV_DEBIAN_MIRROR bash "$0" "$@"
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# gcc/libc6-dev: the fake libnvidia-ml.so.1; gnupg, dpkg-dev, debootstrap: the local signed APT
# repository and the Debian chroot of the install tests; pci.ids: NVIDIA names on real machines;
# shellcheck, cloud-init, systemd (systemd-analyze): the provisioning hook's checks
# (tests/test_provision.py).
apt-get install -y -qq --no-install-recommends \
    python3-venv python3-pip gcc libc6-dev gnupg dpkg-dev apt-utils debootstrap pci.ids ca-certificates \
    shellcheck cloud-init systemd \
    >/dev/null

work=$(mktemp -d /tmp/gpuenv-tests.XXXXXX)
trap 'rm -rf "$work"' EXIT
export PYTHONDONTWRITEBYTECODE=1

# Build from a copy: setuptools writes build/ and *.egg-info next to the sources, and those must
# not land (root-owned) in the user's clone.
mkdir "$work/src"
tar --exclude=./.git --exclude='./.venv*' --exclude=./build --exclude=./dist --exclude='*.egg-info' \
    --exclude=__pycache__ -cf - . | tar -xf - -C "$work/src"
python3 -m venv "$work/build"
"$work/build/bin/python" -m pip install -q --upgrade pip
"$work/build/bin/python" -m pip wheel -q --no-deps -w "$work/dist" "$work/src"
wheel=$(ls "$work"/dist/gpuenv-*.whl)

python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
"$work/venv/bin/python" -m pip install -q "$wheel[test]"

python3 -m venv "$work/e2e"
"$work/e2e/bin/python" -m pip install -q "$wheel"
export GPUENV_E2E_BIN="$work/e2e/bin/gpuenv" GPUENV_TEST_INSTALLED=1

"$work/venv/bin/ruff" check --no-cache .
# -p no:cacheprovider: no .pytest_cache in the clone; the hypothesis database is off (conftest).
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
