#!/usr/bin/env bash
# The whole test suite, on a fresh Debian/Ubuntu machine with only python3 present. Run it as
# root, or as a user with sudo (it re-runs itself through sudo: the chroot tests need root).
# Extra arguments go to pytest.
#
# What it tests is what users get: the wheel is built from a copy of this tree and installed,
# not editable, into throwaway venvs outside the checkout, all made by the distribution's own
# interpreter, /usr/bin/python3 (what a fresh box has), whatever comes first on PATH:
#   - a test venv (the wheel plus the test dependencies) that pytest runs in;
#   - a bare venv (the wheel alone, no test dependencies) whose console script the end-to-end
#     tests run (tests/test_e2e_installed.py, GPUENV_E2E_BIN).
# Without pytest arguments (the whole suite), the end-to-end tests then run again against a bare
# venv of every other CPython >= 3.10 on the machine (python3.X on PATH, pyenv's versions; see
# tests/pythons.py); the last lines name each interpreter covered and how its run ended.
# The checkout is left as it was: no .venv touched, no build/ or egg-info, no caches, no bytecode.
# Nothing outside a temporary directory changes on the host but the apt packages installed below;
# the install tests build their own Debian chroot. pytest's temporary files live in that
# directory too, which is removed at the end; the size of /tmp before and after is printed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
    exec sudo --preserve-env=GPUENV_CHROOT_CACHE,GPUENV_DEBIAN_MIRROR bash tests/run.sh "$@"
fi
PY=/usr/bin/python3

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# gcc/libc6-dev: the fake libnvidia-ml.so.1; gnupg, gpgv (Debian 13's apt no longer brings it),
# dpkg-dev, debootstrap: the local signed APT repository and the Debian chroot of the install
# tests; pci.ids: NVIDIA names on real machines; the provisioning hook's checks
# (tests/test_provision.py): shellcheck, cloud-init, systemd (systemd-analyze); zsh, fish: the completion scripts are loaded by the real shells;
# git: the README tests clone this tree's files as a user would (a tarball's box may lack it);
# strace: tests/test_strace_rule.py watches every file root runs and reads.
apt-get install -y -qq --no-install-recommends \
    python3-venv python3-pip gcc libc6-dev gnupg gpgv dpkg-dev apt-utils debootstrap pci.ids ca-certificates \
    shellcheck cloud-init systemd zsh fish git strace \
    >/dev/null

# What the run leaves in /tmp: its size, and the entries that were not there before (on a busy
# machine other processes' too; on CI, only the run's).
tmp_size() { du -skx /tmp 2>/dev/null | cut -f1; }
tmp_entries() { find /tmp -mindepth 1 -maxdepth 1 -printf '%f\n' | sort; }
work=$(mktemp -d /tmp/gpuenv-tests.XXXXXX)
# mktemp makes it 0700; the end-to-end tests run the installed console script as a normal user
# too (nobody), which must be able to reach it, as on a user's machine. Nothing secret is in it.
chmod 0755 "$work"
tmp_before=$(tmp_size) || true
tmp_entries >"$work/tmp-before"
finish() {
    local before tmp_after name
    before=$(cat "$work/tmp-before")
    rm -rf "$work"
    tmp_after=$(tmp_size) || true
    echo "/tmp: ${tmp_before:-?} KiB before the run, ${tmp_after:-?} KiB after"
    comm -13 <(printf '%s\n' "$before") <(tmp_entries) | while IFS= read -r name; do
        echo "/tmp: new since the run started: $(du -sk -- "/tmp/$name" 2>/dev/null | cut -f1) KiB /tmp/$name"
    done
}
trap finish EXIT
export PYTHONDONTWRITEBYTECODE=1
# Hypothesis keeps its caches (unicode tables, constants) in ./.hypothesis, root's files in the
# user's clone, even with no database: they go to the temporary directory.
export HYPOTHESIS_STORAGE_DIRECTORY="$work/hypothesis"

# Build from a copy: setuptools writes build/ and *.egg-info next to the sources, and those must
# not land (root-owned) in the user's clone.
mkdir "$work/src"
tar --exclude=./.git --exclude='./.venv*' --exclude=./build --exclude=./dist --exclude='*.egg-info' \
    --exclude=__pycache__ -cf - . | tar -xf - -C "$work/src"
"$PY" -m venv "$work/build"
"$work/build/bin/python" -m pip install -q --upgrade pip
"$work/build/bin/python" -m pip wheel -q --no-deps -w "$work/dist" "$work/src"
wheel=$(ls "$work"/dist/gpuenv-*.whl)

"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
"$work/venv/bin/python" -m pip install -q "${wheel}[test]"

"$PY" -m venv "$work/e2e"
"$work/e2e/bin/python" -m pip install -q "$wheel"
export GPUENV_E2E_BIN="$work/e2e/bin/gpuenv" GPUENV_TEST_INSTALLED=1
main_version=$("$PY" -c 'import platform; print(platform.python_version())')
export GPUENV_E2E_PYTHON=$main_version

# A lint error fails the run, after the tests have run too (CI's log then shows both).
failed=0
"$work/venv/bin/ruff" check --no-cache . || failed=1
# -p no:cacheprovider: no .pytest_cache in the clone; the hypothesis database is off (conftest).
# --basetemp: pytest's temporary files in $work, removed at exit (by default pytest keeps them).
suite=passed
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp "$work/pytest" "$@" || { suite=FAILED; failed=1; }
covered=("CPython $main_version ($PY): $([ $# -eq 0 ] && echo 'the whole suite' || echo 'the tests asked for'): $suite")

# The type checker, after the tests (as ruff, a failure fails the run): pyproject.toml's
# [tool.mypy], strict on src/gpuenv. Its cache goes to $work, not the clone.
echo "== mypy"
typed=passed
"$work/venv/bin/mypy" --cache-dir "$work/mypy-cache" || { typed=FAILED; failed=1; }

# The other interpreters: a bare venv of each holding only the wheel, whose console script the
# end-to-end tests (run by the test venv's pytest) drive. Only for the whole suite.
if [ $# -eq 0 ]; then
    others=$("$PY" -B -c '
import os, sys
from tests.pythons import pythons
for version, path in pythons().items():
    real = os.stat(os.path.realpath(path))
    if version != sys.version_info[:3] and real.st_uid == 0 and not real.st_mode & 0o022:
        print(".".join(map(str, version)), path)
') || { covered+=("the other interpreters: NOT COVERED, tests/pythons.py failed"); failed=1; others=; }
    # Read from fd 3: pip and pytest inside the loop must not eat the list on stdin.
    while read -r version python <&3; do
        [ -n "$version" ] || continue
        venv="$work/e2e-$version"
        if ! "$python" -m venv "$venv" >"$work/venv-$version.log" 2>&1; then
            covered+=("CPython $version ($python): NOT COVERED, no venv: $(tail -n1 "$work/venv-$version.log")")
            continue
        fi
        echo "== the end-to-end tests on CPython $version ($python)"
        if "$venv/bin/python" -m pip install -q "$wheel" \
            && GPUENV_E2E_BIN="$venv/bin/gpuenv" GPUENV_E2E_PYTHON=$version "$work/venv/bin/python" -m pytest \
                -q -p no:cacheprovider --basetemp "$work/pytest-$version" tests/test_e2e_installed.py; then
            covered+=("CPython $version ($python): the end-to-end tests: passed")
        else
            covered+=("CPython $version ($python): the end-to-end tests: FAILED")
            failed=1
        fi
        # The stand-ins for the standard library and for distro/packaging/dpkg, held to what they
        # replace on this interpreter too: a venv of its own with the wheel, pytest and the oracles.
        echo "== the stand-ins against their oracles on CPython $version"
        oracle="$work/oracle-$version"
        if "$python" -m venv "$oracle" >/dev/null 2>&1 \
            && "$oracle/bin/python" -m pip install -q "$wheel" pytest pytest-timeout "hypothesis>=6,<6.170.10" \
                distro packaging \
            && "$oracle/bin/python" -m pytest -q -p no:cacheprovider --basetemp "$work/pytest-oracle-$version" \
                tests/test_oracle_*.py tests/test_record.py tests/test_jsonout.py tests/test_checksum.py; then
            covered+=("CPython $version ($python): the stand-ins against their oracles: passed")
        else
            covered+=("CPython $version ($python): the stand-ins against their oracles: FAILED")
            failed=1
        fi
    done 3<<<"$others"
fi
# The platform runs (README "Platforms"): Debian 13 (the platform-sensitive tests as root and as
# a user with umask 0002) and Python 3.14 (Debian sid's), each in a minbase chroot under $work.
# Only for the whole suite; GPUENV_PLATFORMS=none skips them, GPUENV_PLATFORMS=trixie runs one.
platforms=()
if [ $# -eq 0 ]; then
    for suite in ${GPUENV_PLATFORMS:-trixie sid}; do
        [ "$suite" != none ] || continue
        start=$SECONDS
        # Its output comes on this script's stdout as it goes, and into a log its PLATFORM line is
        # read from (never `tee /dev/stderr`: reopening it truncates a log file stderr is sent to,
        # and the host suite's lines above would be lost). || true: a failed run is said by its
        # line, and set -e must not end this script first.
        log="$work/platform-$suite.out"  # not .log: platform_run.sh keeps its own log there
        bash tests/platform_run.sh "$suite" "$wheel" "$work" 2>&1 | tee "$log" || true
        line=$(grep '^PLATFORM ' "$log" | tail -n1) || true
        [ -n "$line" ] || line="PLATFORM $suite: NOT COVERED, tests/platform_run.sh said nothing"
        case $line in *FAILED* | *"NOT COVERED"*) failed=1 ;; esac
        platforms+=("${line#PLATFORM } ($((SECONDS - start)) s)")
    done
fi
echo "== interpreters covered"
printf '%s\n' "${covered[@]}"
if [ ${#platforms[@]} -gt 0 ]; then
    echo "== platforms covered"
    printf '%s\n' "${platforms[@]}"
fi
echo "== the type checker (mypy, strict on src/gpuenv): $typed"
exit $failed
