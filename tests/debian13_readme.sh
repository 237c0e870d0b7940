#!/usr/bin/env bash
# The README's set-up line and test command, verbatim, on a fresh Debian 13 minbase, as root and
# as a sudo user with Debian 13's default umask (0002, pam_umask). Run by hand, as root, on a
# Debian/Ubuntu host with debootstrap; not part of tests/run.sh or CI (it runs the whole suite,
# platform runs included, inside the chroot: an hour or more).
#
#   bash tests/debian13_readme.sh [root|user|both] [BRANCH]     (default: both, the current branch)
#   bash tests/debian13_readme.sh root|user|both BRANCH -- PYTEST-ARGS
#       (a fix re-checked: the account's chroot and clone of the last run are reused, BRANCH's new
#       commits pulled into the clone, and the test command run with PYTEST-ARGS; not fresh)
#
# For each account, in a chroot of its own under $GPUENV_D13_WORK (default /var/tmp/gpuenv-d13):
#   - `debootstrap --variant=minbase trixie` plus what a new user has: python3, git, sudo and
#     ca-certificates (the README asks for python3 and a clone; sudo for the user);
#   - /proc, /sys, /dev and /dev/pts mounted; every mount is undone at the end, even on failure,
#     and any process still running inside the chroot then is named and ended (a failure);
#   - a clean `git clone` of BRANCH (committed work only) made by that account in its home: root
#     in /root, and `tester` (NOPASSWD sudo) in /home/tester through `su -l`, a login shell,
#     so that pam_umask gives it 0002 (checked: the run stops if `umask` says otherwise);
#   - the README's "Run the doctor" line, then `bash tests/run.sh`, each read from README.md.
# The host's TLS set-up goes in with it, as a user behind the same proxy would have it: the local
# CAs (/usr/local/share/ca-certificates, then update-ca-certificates) and /etc/pip.conf. The host's
# other pip settings (local wheel directories) are not copied: the chroot's pip uses PyPI.
# Debian packages are cached in $GPUENV_D13_CACHE (default /var/cache/gpuenv-d13) for reruns (bound
# on the chroot's /var/cache/apt/archives); GPUENV_DEBIAN_MIRROR is debootstrap's mirror. Nothing
# else of the host's environment goes in: each account's commands start from `env -i` and `su -l`.
# The test command must leave the clone as it was: every path it adds (ignored ones too) is named
# and fails the run. Logs: $GPUENV_D13_WORK/ACCOUNT.log (ACCOUNT-recheck.log); the last lines say
# how each step ended. Exit 0 if all passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
which=${1:-both}
branch=${2:-$(git rev-parse --abbrev-ref HEAD)}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" != -- ] || shift
extra=("$@")
work=${GPUENV_D13_WORK:-/var/tmp/gpuenv-d13}
cache=${GPUENV_D13_CACHE:-/var/cache/gpuenv-d13}
mirror=${GPUENV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
case $which in root) accounts=(root) ;; user) accounts=(tester) ;; both) accounts=(root tester) ;;
*) echo "usage: $0 [root|user|both] [BRANCH]" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "$0: run it as root (debootstrap, chroot, mount)" >&2; exit 2; }
commit=$(git rev-parse --verify "$branch^{commit}") || { echo "$0: no branch $branch" >&2; exit 2; }
mkdir -p "$work"

# The README's two commands, as a user copies them: the line in the sh block after each heading.
readme_line() { awk -v h="$1" 'index($0, h) { f = 1 } f && /^```sh/ { getline; print; exit }' README.md; }
setup_line=$(readme_line '**Run the doctor:**')
test_line=$(readme_line '**Run the whole test suite**')
[ -n "$setup_line" ] && [ -n "$test_line" ] || { echo "$0: README's commands not found" >&2; exit 2; }

root_of() { echo "$work/chroot-$1"; }
mounted=()
umount_all() {  # innermost first
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || echo "NOT UNMOUNTED: ${mounted[i]}"
    done
    mounted=()
}
# Processes whose root is the chroot: none may outlive the run.
leftovers() {
    local p r
    for p in /proc/[0-9]*; do
        r=$(readlink "$p/root" 2>/dev/null) || continue
        [ "$r" = "$1" ] && echo "${p#/proc/}"
    done
}
end_leftovers() {
    local pids
    pids=$(leftovers "$1")
    [ -n "$pids" ] || return 0
    echo "LEFT RUNNING in $1:"
    # shellcheck disable=SC2086 # pids: numbers
    ps -o pid=,args= -p "$(echo $pids | tr ' ' ,)" || true
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null; sleep 2
    pids=$(leftovers "$1")
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null
    return 1
}
cleanup() {
    local a
    for a in "${accounts[@]}"; do end_leftovers "$(root_of "$a")" || true; done
    umount_all
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mnt() {  # mnt TARGET mount-args...
    local target=$1; shift
    mount "$@" "$target" && mounted+=("$target")
}

results=()
for account in "${accounts[@]}"; do
    root=$(root_of "$account")
    home=/root
    [ "$account" = root ] || home=/home/$account
    log="$work/$account${extra[0]:+-recheck}.log"
    : >"$log"
    say() { echo "== $(date -u +%H:%M:%S) $account: $*" | tee -a "$log"; }
    box() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb "$@"; }
    # su -l: a login shell through PAM's common-session, whose pam_umask gives a user 0002 on
    # Debian 13 (runuser's PAM stack has no common-session: its umask stays 0022).
    as() { box su -l "$account" -c "$1"; }
    mount_all() {
        # The chroot's / a mount point of its own, as a machine's root filesystem is: unshare's
        # private propagation (tests/platform_run.sh, the namespace tests) needs one. Private:
        # nothing mounted under it reaches the host's mount table.
        mnt "$root" --bind "$root" && mount --make-private "$root" && mnt "$root/proc" -t proc proc \
            && mnt "$root/sys" -t sysfs sysfs && mnt "$root/dev" --bind /dev && mnt "$root/dev/pts" --bind /dev/pts \
            && { ! mountpoint -q /dev/shm || mnt "$root/dev/shm" --bind /dev/shm; } \
            && mnt "$root/var/cache/apt/archives" --bind "$cache/apt-$account"
    }
    if [ ${#extra[@]} -gt 0 ]; then
        say "re-check in the last run's chroot $root: branch $branch at $commit, pytest ${extra[*]}"
        [ -d "$root$home/gpuenv/.git" ] || { results+=("$account: NOT RUN, no earlier run in $root"); continue; }
        mount_all || { results+=("$account: NOT RUN, mount failed"); umount_all; continue; }
        box chown -R root: /srv/gpuenv.git  # git pushes only into a repository of its own account's
        git push -q --force "$root/srv/gpuenv.git" "$commit:refs/heads/$branch"
        box chown -R "$account:" /srv/gpuenv.git
        as "git -C $home/gpuenv pull -q --ff-only && git -C $home/gpuenv log --oneline -1" 2>&1 | tee -a "$log"
        say "umask in $account's login shell: $(as umask)"
        say "test command: $test_line ${extra[*]}"
        as "git -C $home/gpuenv status --porcelain --ignored" >"$work/$account.status-before"
        start=$SECONDS
        as "cd $home/gpuenv && $test_line $(printf '%q ' "${extra[@]}")" >>"$log" 2>&1
        rc=$?
        changed=$(as "git -C $home/gpuenv status --porcelain --ignored" | grep -vxF -f "$work/$account.status-before")
        [ -z "$changed" ] || { echo "$changed" | sed 's/^/CLONE CHANGED BY THE TEST COMMAND: /' | tee -a "$log"; rc="$rc, clone changed"; }
        results+=("$account: test command ${extra[*]}: rc $rc ($((SECONDS - start)) s)")
        say "test command: rc $rc"
        end_leftovers "$root" | tee -a "$log"
        umount_all
        continue
    fi
    say "fresh chroot $root (trixie minbase), branch $branch at $commit"
    rm -rf --one-file-system "$root"
    # A cache per account: two instances (root, user) may run at once.
    mkdir -p "$cache/debootstrap-$account" "$cache/apt-$account"
    if ! debootstrap --variant=minbase --cache-dir="$cache/debootstrap-$account" \
        --include=python3,git,sudo,ca-certificates trixie "$root" "$mirror" >>"$log" 2>&1; then
        results+=("$account: NOT RUN, debootstrap failed: $(tail -n1 "$log")"); continue
    fi
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # The machine's name resolves, as the Debian installer's /etc/hosts makes it (sudo asks).
    printf '127.0.1.1\t%s\n' "$(hostname)" >>"$root/etc/hosts"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
    [ -f /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
    mount_all || { results+=("$account: NOT RUN, mount failed"); umount_all; continue; }
    box update-ca-certificates >>"$log" 2>&1
    # The branch, as a bare repository the account owns (git refuses another user's repository).
    git clone -q --bare --no-local --branch "$branch" --single-branch . "$root/srv/gpuenv.git"
    if [ "$account" = tester ]; then
        box useradd --create-home --shell /bin/bash tester
        echo 'tester ALL=(ALL) NOPASSWD:ALL' >"$root/etc/sudoers.d/tester"
        chmod 0440 "$root/etc/sudoers.d/tester"
        box chown -R tester: /srv/gpuenv.git
    fi
    um=$(as umask)
    say "umask in $account's login shell: $um"
    if [ "$account" = tester ] && [ "$um" != 0002 ]; then
        results+=("$account: NOT RUN, umask is $um, not Debian 13's 0002"); umount_all; continue
    fi
    as "git clone -q /srv/gpuenv.git $home/gpuenv && ls -ld $home/gpuenv/README.md" 2>&1 | tee -a "$log"
    say "set-up line: $setup_line"
    start=$SECONDS
    as "cd $home/gpuenv && $setup_line" >>"$log" 2>&1
    rc=$?
    results+=("$account: set-up line: rc $rc ($((SECONDS - start)) s)")
    say "set-up line: rc $rc"
    say "test command: $test_line"
    # The README promises the test command leaves the clone as it was (the set-up line's .venv,
    # build/ and egg-info are its own): every path it adds or changes, ignored ones too, is named.
    as "git -C $home/gpuenv status --porcelain --ignored" >"$work/$account.status-before"
    start=$SECONDS
    as "cd $home/gpuenv && $test_line" >>"$log" 2>&1
    rc=$?
    changed=$(as "git -C $home/gpuenv status --porcelain --ignored" | grep -vxF -f "$work/$account.status-before")
    [ -z "$changed" ] || { echo "$changed" | sed 's/^/CLONE CHANGED BY THE TEST COMMAND: /' | tee -a "$log"; rc="$rc, clone changed"; }
    summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|^[0-9]+ (passed|failed)' "$log" | head -n1)
    results+=("$account: test command: rc $rc ($((SECONDS - start)) s); main suite: ${summary:-?}")
    say "test command: rc $rc"
    sed -n '/^== interpreters covered/,$p' "$log" | tee -a "$work/summary-$account.txt"
    end_leftovers "$root" | tee -a "$log"
    umount_all
done
echo "== results (branch $branch at $commit)"
printf '%s\n' "${results[@]}"
for r in "${results[@]}"; do case $r in *"rc 0 "*) ;; *) exit 1 ;; esac; done
exit 0
