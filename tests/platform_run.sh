#!/usr/bin/env bash
# One platform run of tests/run.sh: the suite's platform-sensitive tests inside a fresh Debian
# minbase chroot of SUITE, with that release's own python3, gpg and apt. As root:
#   trixie (Debian 13: apt 3.0 with sqv and no gpgv, Python 3.13, systemd 257, cloud-init 25):
#     the key, apt-refusal, provisioning, verify, journal and start-up tests and the end-to-end
#     tests, as root and as a user whose umask is 0002 (Debian 13's default) with a clone made so;
#   sid (Python 3.14): the end-to-end and start-up tests.
# Usage: tests/platform_run.sh SUITE WHEEL WORKDIR. The last line is the run's covered-line.
# Nothing on the host changes: the chroot lives in WORKDIR; /proc and /dev are mounted in a
# private mount namespace of the run's own (unshare -m), gone when it ends.
set -uo pipefail
suite=$1 wheel=$2 work=$3
mirror=${GPUENV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$work/platform-$suite
log=$work/platform-$suite.log
say() { echo "== $suite: $*"; }
covered() { echo "PLATFORM $suite ($what): $*"; }
case $suite in
trixie) what="Debian 13, its python3" ;;
sid) what="Debian sid, Python 3.14" ;;
*) echo "unknown suite $suite" >&2; exit 2 ;;
esac
# The runs mount /proc and /dev in a private mount namespace. Where none can be made (a container
# or chroot whose / is no mount point of its own), say so rather than fail every test in it.
if ! ns=$(unshare -m --propagation private true 2>&1); then
    covered "NOT COVERED, no private mount namespace here (is / a mount point?): ${ns:-unshare failed}"; exit 1
fi

if [ ! -e "$root/etc/debian_version" ]; then
    say "debootstrap --variant=minbase $suite"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$log" 2>&1 || {
        covered "NOT COVERED, debootstrap failed: $(tail -n1 "$log")"; exit 1; }
fi
# The host's resolver and certificate authorities (a proxy's CA too), for apt and pip in the box.
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/gpuenv-host-ca.crt" 2>/dev/null || true
box() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"; }
pkgs="python3 python3-venv python3-pip gnupg gpgv ca-certificates"
[ "$suite" = trixie ] && pkgs="$pkgs systemd cloud-init shellcheck dpkg-dev apt-utils"
say "apt-get install $pkgs"
# shellcheck disable=SC2086 # pkgs: package names, one word each
{ box apt-get -o Acquire::Check-Valid-Until=false update -q \
    && box apt-get install -y -q --no-install-recommends $pkgs; } >>"$log" 2>&1 || {
    covered "NOT COVERED, apt-get failed: $(tail -n1 "$log")"; exit 1; }
[ -s "$root/etc/gpuenv-host-ca.crt" ] && cat "$root/etc/gpuenv-host-ca.crt" >>"$root/etc/ssl/certs/ca-certificates.crt"
version=$(box python3 -c 'import platform; print(platform.python_version())')

# The tree as a user's clone: root's (umask 0022) and a user's made with umask 0002.
rm -rf "$root/srv/src" "$root/srv/dist"
mkdir -p "$root/srv/src" "$root/srv/dist"
cp "$wheel" "$root/srv/dist/"
tar --exclude=./.git --exclude='./.venv*' --exclude=./build --exclude=./dist --exclude='*.egg-info' --exclude=./.hypothesis \
    --exclude=__pycache__ -cf - . | tar -xf - -C "$root/srv/src"
if [ "$suite" = trixie ]; then  # before the root run writes its caches (.hypothesis) into /srv/src
    box sh -c 'id tester >/dev/null 2>&1 || useradd --create-home tester'
    box sh -c 'rm -rf /home/tester/src && su tester -c "umask 0002 && cp -r /srv/src /home/tester/src"'
fi
name=$(basename "$wheel")
say "venvs of the wheel on CPython $version"
# The test venv holds what these tests import, not the whole [test] extra (ansible: minutes of pip).
{ box python3 -m venv /opt/tv && box /opt/tv/bin/pip install -q "/srv/dist/$name" "pytest>=7.3" pytest-timeout \
    "hypothesis>=6,<6.170.10" "jsonschema>=4.17" pyyaml \
    && box python3 -m venv /opt/e2e && box /opt/e2e/bin/pip install -q "/srv/dist/$name"; } >>"$log" 2>&1 || {
    covered "NOT COVERED, pip failed: $(tail -n1 "$log")"; exit 1; }

tests="tests/test_startup_imports.py tests/test_e2e_installed.py"
[ "$suite" != trixie ] || tests="$tests tests/test_keys_verify.py tests/test_execute_safety.py \
tests/test_apply_refusals.py tests/test_provision.py tests/test_verify.py tests/test_journal.py"
pytest_in() { echo "cd $1 && GPUENV_E2E_BIN=/opt/e2e/bin/gpuenv GPUENV_E2E_PYTHON=$version GPUENV_TEST_INSTALLED=1 \
/opt/tv/bin/python -m pytest -q -p no:cacheprovider -m 'not chroot' --basetemp $2 $tests"; }
# shellcheck disable=SC2016 # expanded inside the namespace
inside='mount -t proc proc "$R/proc" && mount --rbind /dev "$R/dev" && exec "$@"'
result=()
say "the tests as root"
if unshare -m --propagation private env R="$root" sh -c "$inside" sh chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 HOME=/root sh -c "$(pytest_in /srv/src /tmp/pytest-root)"; then
    result+=("as root: passed")
else
    result+=("as root: FAILED")
fi
if [ "$suite" = trixie ]; then
    say "the tests as a user with umask 0002, in a clone made with it"
    if unshare -m --propagation private env R="$root" sh -c "$inside" sh chroot "$root" env -i \
        PATH=/usr/bin:/bin LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 \
        su tester -c "umask 0002 && $(pytest_in /home/tester/src /tmp/pytest-tester)"; then
        result+=("as a user with umask 0002: passed")
    else
        result+=("as a user with umask 0002: FAILED")
    fi
fi
joined=$(IFS=';'; echo "${result[*]}")
covered "CPython $version: ${joined//;/; }"
case "${result[*]}" in *FAILED*) exit 1 ;; esac
exit 0
