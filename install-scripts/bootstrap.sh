#!/bin/sh
# gpuenv bootstrap: provision a fresh Ubuntu 22.04/24.04 or Debian 12 box (python3 only) with a
# GPU stack, unattended: cloud-init runcmd or by hand, as root.
#
#   sh bootstrap.sh (--wheel PATH|URL --sha256 HEX | --git URL --commit SHA)
#                   [--stack auto|rocm|cuda] [--version V] [--torch V --venv DIR] [--user NAME]
#                   [--no-reboot] [--dry-run]
#   sh bootstrap.sh --resume        what gpuenv-resume.service runs after each boot
#
# Where gpuenv comes from, one of (required: no package name is ever looked up on an index):
#   --wheel PATH|URL --sha256 HEX  a wheel (`pip wheel . -w dist`) as a file, or an https:// or
#       http:// URL, and its sha256sum. It is read once into a root-only temporary directory;
#       that copy is hashed, and only that copy is installed.
#   --git URL --commit SHA  a git repository (https://, http://, ssh:// or file://) at a pinned
#       commit (40 hex digits); git is installed when missing, and pip builds the wheel.
# pip fetches gpuenv's dependencies from its index (PIP_INDEX_URL, PIP_FIND_LINKS... apply).
#
# Each flag has a variable (the flag wins): GPUENV_WHEEL GPUENV_WHEEL_SHA256 GPUENV_GIT
# GPUENV_COMMIT GPUENV_STACK GPUENV_VERSION GPUENV_TORCH GPUENV_VENV GPUENV_USER, and
# GPUENV_NO_REBOOT, GPUENV_DRY_RUN (0, 1 or empty).
# GPUENV_LOCK_RETRIES (20) x GPUENV_RETRY_DELAY (15 s): how long to wait for a dpkg/apt lock
# (cloud-init's own apt) or another apply.
#
# What it does: installs python3-venv, ca-certificates, gpg and gpgv when missing; gpuenv into the venv
# /opt/gpuenv (and this script as /opt/gpuenv/bootstrap.sh); writes
# /etc/systemd/system/gpuenv-resume.service; runs `gpuenv apply --resume --yes` (an apply a crash
# left unfinished), then `gpuenv install STACK --yes`. When the plan needs a reboot it enables
# the unit (the symlink `systemctl enable` makes), writes /var/lib/gpuenv/reboot-pending and
# reboots (not with --no-reboot, nor where systemd is not running: chroot, container). After
# each boot the unit runs `gpuenv apply --resume --yes` and disables itself once nothing is left.
# Every run ends by writing /var/lib/gpuenv/status.json (schema gpuenv.status/1: state
# done|reboot-pending|failed, exit, doctor and verify JSON with their exit codes), atomically.
# Logs: /var/log/gpuenv/bootstrap.log (gpuenv's own: /var/log/gpuenv/apply.log).
# A re-run on a finished box changes nothing (status.json and the log aside).
# --dry-run changes nothing: it says what it would install and write, and shows gpuenv's plan
# for this box (`gpuenv install STACK --dry-run`); it needs no root.
#
# Root runs what is in /opt/gpuenv and writes into /var/log/gpuenv and /var/lib/gpuenv: each of
# them, everything in them and every directory above them must be root's and writable by no one
# else (the rule of README "Security", check_path below), and none of the three may be a
# symbolic link; otherwise the run is refused before any change (exit 3), naming the directory,
# its owner and mode. A distribution's group-writable /var/log (Ubuntu: root:syslog 0775) is
# accepted above /var/log/gpuenv only: the log is opened from inside the directory as checked.
# Files are written to a new temporary name in their directory and renamed into place, never
# through a link. Every python3 runs isolated (-I: no PYTHON* variables, no user site, not the
# working directory) and from /; temporary files go to a directory of root's alone (TMPDIR too).
# The log (/var/log/gpuenv/bootstrap.log) is root's alone (0600); a URL's query string (a
# presigned URL's signature) is never printed or logged.
# --resume reads back /var/lib/gpuenv/bootstrap.env (root's, mode 0600) line by line: known
# keys only, each once, every value checked as its flag is.
#
# Exit status (also "exit" in status.json):
#   0  done: the plan is applied, or there was nothing to do (health: doctor/verify in status.json)
#   1  failed: a plan step failed (see /var/log/gpuenv/apply.log)
#   2  usage: a bad or missing flag or value, not root, a bad bootstrap.env (no status written);
#      or gpuenv's own usage error, e.g. --stack auto on a box without a GPU a stack could use
#   3  refused before any change: gpuenv refused the plan (blockers, a bad key, ...), or a
#      directory above is another account's (no status written then)
#   4  busy: a dpkg/apt lock or another apply held on past the retries
#   5  could not install python3-venv or gpuenv (apt, download, sha256, pip)
#  10  reboot pending: applied up to the reboot the plan needs; rebooting now, or, with --no-reboot
#      or without systemd, waiting for one (gpuenv-resume.service finishes after it)
# --dry-run: 0 (the plan shown), 2, 3 (the plan has blockers) or 5, as above.

set -eu
umask 022

PREFIX=/opt/gpuenv
UNIT=/etc/systemd/system/gpuenv-resume.service
WANTS=/etc/systemd/system/multi-user.target.wants/gpuenv-resume.service
LOGDIR=/var/log/gpuenv
STATEDIR=/var/lib/gpuenv
GPUENV=$PREFIX/bin/gpuenv
MARKER=$PREFIX/.gpuenv-source
SETTINGS=$STATEDIR/bootstrap.env
PENDING=$STATEDIR/reboot-pending
STATUS=$STATEDIR/status.json
REBOOT_MARK='reboot to load the new driver'
# Spelled out, not a range: what [a-z] matches depends on the shell and the locale.
ALNUM=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789
HEX=0123456789abcdef
export DEBIAN_FRONTEND=noninteractive NO_COLOR=1 COLUMNS="${COLUMNS:-160}" PIP_DISABLE_PIP_VERSION_CHECK=1
# The system's own directories only: the caller's PATH never chooses what root runs.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Python reads PYTHON* (PYTHONPATH, PYTHONSTARTUP, PYTHONHOME...) before any of its own code: none
# reaches the gpuenv root runs (its python3 calls run with -I, which ignores them anyway).
for _v in $(env | sed -n 's/^\(PYTHON[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$_v"; done
LOG=
# Descriptor 9: the log (open_log), /dev/null until it is open (a dry run never opens it).
exec 9>/dev/null

say() {
	printf 'gpuenv-bootstrap: %s\n' "$*"
	printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&9 || true
}
# noquery URL: URL without its query string (a presigned URL's X-Amz-Signature is a secret)
noquery() { case $1 in *'?'*) printf '%s?(query redacted)' "${1%%\?*}" ;; *) printf '%s' "$1" ;; esac; }
usage() { say "usage: $*" >&2; exit 2; }
refuse() { say "refused: $*; nothing was changed" >&2; exit 3; }

STACK=${GPUENV_STACK:-auto} VERSION=${GPUENV_VERSION:-} TORCH=${GPUENV_TORCH:-} VENV=${GPUENV_VENV:-}
TUSER=${GPUENV_USER:-} WHEEL=${GPUENV_WHEEL:-} SHA256=${GPUENV_WHEEL_SHA256:-} GIT=${GPUENV_GIT:-}
COMMIT=${GPUENV_COMMIT:-} NO_REBOOT=${GPUENV_NO_REBOOT:-} DRY=${GPUENV_DRY_RUN:-} RESUME=
RETRIES=${GPUENV_LOCK_RETRIES:-20} DELAY=${GPUENV_RETRY_DELAY:-15}
while [ $# -gt 0 ]; do
	case $1 in
	--stack | --version | --torch | --venv | --user | --wheel | --sha256 | --git | --commit)
		[ $# -ge 2 ] || usage "$1 needs a value"
		case $1 in
		--stack) STACK=$2 ;;
		--version) VERSION=$2 ;;
		--torch) TORCH=$2 ;;
		--venv) VENV=$2 ;;
		--user) TUSER=$2 ;;
		--wheel) WHEEL=$2 ;;
		--sha256) SHA256=$2 ;;
		--git) GIT=$2 ;;
		--commit) COMMIT=$2 ;;
		esac
		shift 2
		;;
	--no-reboot) NO_REBOOT=1; shift ;;
	--dry-run) DRY=1; shift ;;
	--resume) RESUME=1; shift ;;
	-h | --help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) usage "unknown argument: $1 (see --help)" ;;
	esac
done

# -- checking what is asked -------------------------------------------------------------------
# Every value goes to gpuenv or pip as one argument, never through a shell, and is kept in
# bootstrap.env one per line; each is checked here, from the flags and again from that file.
FROM=
bad() { usage "$FROM$1: $2"; }
flag01() { case $2 in '' | 0 | 1) ;; *) bad "$1" "0, 1 or empty" ;; esac; }
# version FLAG V: empty, or a release such as 12.8, 7.2.4 or 2.7.1+cu128
version() {
	case $2 in
	'') ;;
	[0-9]*) case $2 in *[!"$ALNUM".+~-]*) bad "$1" "a version such as 12.8, not '$2'" ;; esac ;;
	*) bad "$1" "a version such as 12.8, not '$2'" ;;
	esac
}
validate_settings() {
	case $STACK in auto | rocm | cuda) ;; *) bad --stack "auto, rocm or cuda, not '$STACK'" ;; esac
	flag01 GPUENV_NO_REBOOT "$NO_REBOOT"
	version --version "$VERSION"
	version --torch "$TORCH"
	case $VENV in
	'') ;;
	/*) case $VENV in *[!"$ALNUM"/._+-]*) bad --venv "letters, digits and /._+- only" ;; esac ;;
	*) bad --venv "an absolute path" ;;
	esac
	[ -z "$TORCH" ] || [ -n "$VENV" ] || bad --torch "needs --venv DIR"
	# What useradd accepts: letters, digits, _ . -, not first a - or a digit, a $ at the end.
	case ${TUSER%\$} in
	'') [ -z "$TUSER" ] || bad --user "not a user name: '$TUSER'" ;;
	[0-9.-]* | *[!"$ALNUM"_.-]*) bad --user "not a user name: '$TUSER'" ;;
	esac
	[ ${#TUSER} -le 32 ] || bad --user "at most 32 characters"
}
hex() { case $2 in *[!$HEX]*) false ;; *) [ ${#2} -eq "$1" ] ;; esac; }
# url VALUE: characters a URL needs, and none that a shell, pip (#, spaces) or YAML would read
url() { case $1 in *[!"$ALNUM"._~:/?@!\$\&+,\;=%-]*) false ;; *) true ;; esac; }
validate_source() {
	[ -z "$WHEEL" ] || [ -z "$GIT" ] || usage "--wheel or --git: one source, not both"
	[ -n "$WHEEL$GIT" ] ||
		usage "no source for gpuenv: give --wheel PATH|URL --sha256 HEX, or --git URL --commit SHA"
	if [ -n "$WHEEL" ]; then
		case $WHEEL in
		https://* | http://*) url "$WHEEL" || usage "--wheel: a URL without spaces, quotes or #" ;;
		*://*) usage "--wheel: an https:// or http:// URL, or a path" ;;
		-*) usage "--wheel: a path or a URL, not '$WHEEL'" ;;
		esac
		WHEEL_NAME=$(basename "${WHEEL%%[?]*}")
		case $WHEEL_NAME in
		gpuenv-*.whl) case $WHEEL_NAME in *[!"$ALNUM"_.+-]*) usage "--wheel: not a wheel's file name: $WHEEL_NAME" ;; esac ;;
		*) usage "--wheel: a gpuenv wheel (gpuenv-VERSION-py3-none-any.whl), not $WHEEL_NAME" ;;
		esac
		hex 64 "$SHA256" || usage "--wheel needs --sha256 HEX: the wheel's sha256sum, 64 lower-case hex digits"
		[ -z "$COMMIT" ] || usage "--commit goes with --git"
	else
		case $GIT in
		https://* | http://* | ssh://* | file:///*) url "$GIT" || usage "--git: a URL without spaces, quotes or #" ;;
		*) usage "--git: an https://, http://, ssh:// or file:/// URL" ;;
		esac
		hex 40 "$COMMIT" || usage "--git needs --commit SHA: the full commit, 40 lower-case hex digits"
		[ -z "$SHA256" ] || usage "--sha256 goes with --wheel"
	fi
}

validate_settings
flag01 GPUENV_DRY_RUN "$DRY"
case $RETRIES$DELAY in *[!0-9]*) usage "GPUENV_LOCK_RETRIES, GPUENV_RETRY_DELAY: whole numbers" ;; esac
[ -n "$DRY" ] || [ "$(id -u)" -eq 0 ] || usage "run as root (or with --dry-run)"
[ -n "$RESUME" ] || validate_source
[ -f "$0" ] || usage "run from a file (sh bootstrap.sh), not from a pipe"
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
case $WHEEL in '' | /* | https://* | http://*) ;; *) WHEEL=$PWD/$WHEEL ;; esac
# From here on, nothing is read from the working directory (another account's, maybe), and
# every program, python3 above all, starts in /.
cd /

# -- the rule: what root runs from, reads and writes into --------------------------------------
# Root executes, imports or reads as trusted only what root owns and no other account can write,
# and so is every directory from / down to it; a symbolic link on the way counts as what it
# points at (README "Security"; gpuenv.trust is the same rule in Python).
# root_only PATH: PATH itself (a link not followed) is root's and no one else can write it
root_only() { [ -n "$(find "$1" -maxdepth 0 -user 0 ! -perm /022 -print 2>/dev/null)" ]; }
# judge PATH [group]: refuse PATH (itself, a link not followed) unless root_only; with "group",
# a directory of a system group (gid below 1000, not writable by everyone) passes too
judge() {
	root_only "$1" && return 0
	if [ "${2:-}" = group ] &&
		[ -n "$(find "$1" -maxdepth 0 -type d -user 0 ! -perm -0002 -gid -1000 -print 2>/dev/null)" ]; then
		return 0
	fi
	refuse "$1 (owner $(stat -c %U "$1" 2>/dev/null || echo '?'), group $(stat -c %G "$1" 2>/dev/null || echo '?'), mode $(stat -c %a "$1" 2>/dev/null || echo '?')) could be changed by another account"
}
# check_path PATH [group]: the rule for PATH and every directory above it, as far as they exist
# (stricter than the rule by one thing: no sticky directory either, none is there on a
# distribution's own layout);
# a link is followed (at most 40), the directory holding it judged strictly (a group member could
# re-point it). "group": a system group's directory may stand above PATH (for the log, which is
# written through a descriptor opened inside its directory: open_log). CHECKED: PATH as checked,
# its links resolved.
check_path() {
	_rest=${1#/} _cur='' _links=0
	judge /
	while [ -n "$_rest" ]; do
		_name=${_rest%%/*}
		case $_rest in */*) _rest=${_rest#*/} ;; *) _rest= ;; esac
		case $_name in
		'' | .) continue ;;
		..) _cur=${_cur%/*} && continue ;;
		esac
		_next=$_cur/$_name
		if [ -L "$_next" ]; then
			_links=$((_links + 1))
			[ "$_links" -le 40 ] || refuse "too many symbolic links resolving $1"
			judge "${_cur:-/}"
			_t=$(readlink "$_next")
			case $_t in /*) _cur= ;; esac
			_rest=${_t#/}${_rest:+/$_rest}
			continue
		fi
		if [ ! -e "$_next" ]; then
			CHECKED=$_next${_rest:+/$_rest}
			return 0
		fi
		if [ -n "$_rest" ]; then judge "$_next" "${2:-}"; else judge "$_next"; fi
		_cur=$_next
	done
	CHECKED=${_cur:-/}
}
# check_dir DIR [group]: refuse DIR when another account controls it, something in it, or a
# directory above it
check_dir() {
	if [ -L "$1" ]; then refuse "$1 is a symbolic link"; fi
	check_path "$1" "${2:-}"
	[ -e "$1" ] || return 0
	[ -d "$1" ] || refuse "$1 is not a directory"
	_bad=$(find "$1" -xdev \( ! -user 0 -o ! -type l -perm /022 \) -printf '%p (uid %U, mode %m)\n' 2>/dev/null | head -n 1)
	[ -z "$_bad" ] || refuse "$1 is not root's alone: $_bad"
}
check_dirs() {
	check_dir "$PREFIX"
	check_dir "$STATEDIR"
	check_dir "$LOGDIR" group
	LOG_CHECKED=$CHECKED
}
check_dirs
# The python3 root starts: the system's, passing the rule (a /usr/local/bin/python3 found first
# must too).
PY=$(command -v python3 || true)
[ -z "$PY" ] || check_path "$PY"

# open_log: bootstrap.log on descriptor 9, opened from inside LOGDIR once entered and checked
# (what was entered is the directory check_dirs judged, root's alone: a rename in a group's
# /var/log cannot send the log elsewhere); root's to read alone (0600)
open_log() {
	cd "$LOGDIR" || exit 5
	{ [ "$(pwd -P)" = "$LOG_CHECKED" ] && root_only .; } || refuse "$LOGDIR changed while it was checked"
	if [ -L bootstrap.log ]; then rm -f bootstrap.log; fi
	_mask=$(umask)
	umask 077
	exec 9>>bootstrap.log
	umask "$_mask"
	chmod 0600 bootstrap.log
	cd /
	LOG=$LOGDIR/bootstrap.log
}

# Root's alone (0700 in the sticky /tmp), and every child's TMPDIR (pip's build, gpg).
TMP=$(mktemp -d /tmp/gpuenv-bootstrap.XXXXXX)
export TMPDIR="$TMP"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
if [ -z "$DRY" ]; then
	mkdir -p "$LOGDIR" "$STATEDIR" || exit 5
	check_dirs
	open_log
fi

# run OUT CMD...: CMD's output to the terminal, the log and OUT; its exit status in $rc
run() {
	_o=$1
	shift
	if [ "$1" = target ]; then _d=$(shift && target echo "$@"); else _d=$*; fi
	say "\$ $_d"
	{
		_rc=0
		"$@" 2>&1 || _rc=$?
		echo "$_rc" >"$TMP/rc"
	} | tee -a "$_o" | to_log
	rc=$(cat "$TMP/rc")
}
# to_log: stdin to the terminal and to the log (descriptor 9), line by line
to_log() {
	while IFS= read -r _l || [ -n "$_l" ]; do
		printf '%s\n' "$_l"
		printf '%s\n' "$_l" >&9 || true
	done
}
# target CMD...: CMD with the target's options appended (called through run)
# shellcheck disable=SC2317 # reached through run's "$@"
target() {
	[ -z "$VERSION" ] || set -- "$@" --version "$VERSION"
	[ -z "$TORCH" ] || set -- "$@" --torch "$TORCH" --venv "$VENV"
	[ -z "$TUSER" ] || set -- "$@" --user "$TUSER"
	"$@"
}
# retry CMD...: run CMD again while it exits 4 (gpuenv: another apply or dpkg holds the lock)
retry() {
	_n=0
	while run "$TMP/out" "$@" && [ "$rc" -eq 4 ] && [ "$_n" -lt "$RETRIES" ]; do
		_n=$((_n + 1))
		say "locked; retry $_n/$RETRIES in ${DELAY}s"
		sleep "$DELAY"
	done
}
boot_id() { cat /proc/sys/kernel/random/boot_id 2>/dev/null || true; }
# same_boot: the reboot-pending mark was made in this very boot (an unknown boot id never is)
same_boot() {
	_b=$(boot_id)
	[ -n "$_b" ] && [ -f "$PENDING" ] && [ "$(cat "$PENDING")" = "$_b" ]
}
has_systemd() { [ -d /run/systemd/system ]; }
pkg_ok() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q ' installed$'; }
gpuenv_current() { [ -x "$GPUENV" ] && [ "$(cat "$MARKER" 2>/dev/null || true)" = "$SOURCE" ]; }
# write_file DEST MODE: stdin becomes DEST through a new file of its own, renamed over DEST (a
# link at DEST is replaced, not followed; -T: nor is DEST taken for a directory to move into)
write_file() {
	_t=
	if mkdir -p "$(dirname "$1")" && _t=$(mktemp "$(dirname "$1")/.gpuenv-bootstrap.XXXXXX") &&
		cat >"$_t" && chmod "$2" "$_t" && mv -fT "$_t" "$1"; then
		return 0
	fi
	[ -z "$_t" ] || rm -f "$_t"
	say "cannot write $1"
	return 1
}
# write_if_changed DEST MODE: stdin becomes DEST unless DEST already holds exactly that
write_if_changed() {
	cat >"$TMP/new" || return 1
	if [ ! -L "$1" ] && cmp -s "$TMP/new" "$1"; then return 0; fi
	write_file "$1" "$2" <"$TMP/new" && say "wrote $1"
}

unit_text() {
	cat <<'EOF'
[Unit]
Description=gpuenv: finish the GPU stack install after a reboot (gpuenv apply --resume)
Documentation=file:/opt/gpuenv/bootstrap.sh
Wants=network-online.target
After=network-online.target
ConditionPathExists=/opt/gpuenv/bootstrap.sh

[Service]
Type=oneshot
ExecStart=/bin/sh /opt/gpuenv/bootstrap.sh --resume
# 10: applied up to another reboot, which the script has asked systemd for.
SuccessExitStatus=10
TimeoutStartSec=infinity
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
EOF
}

enable_unit() {
	[ "$(readlink "$WANTS" 2>/dev/null || true)" != "$UNIT" ] || return 0
	mkdir -p "$(dirname "$WANTS")"
	ln -sfn "$UNIT" "$WANTS"
	say "enabled gpuenv-resume.service"
	if has_systemd; then systemctl daemon-reload || true; fi
}
disable_unit() {
	[ -L "$WANTS" ] || return 0
	rm -f "$WANTS"
	say "disabled gpuenv-resume.service: nothing left to resume"
	if has_systemd; then systemctl daemon-reload || true; fi
}

# status STATE EXIT: doctor and verify into status.json, atomically; then exit EXIT
status() {
	_state=$1 _exit=$2 _de=null _ve=null
	: >"$TMP/doctor.json"
	: >"$TMP/verify.json"
	if [ -x "$GPUENV" ]; then
		set --
		[ -z "$VENV" ] || set -- --python "$VENV/bin/python"
		if [ -n "$TUSER" ]; then
			_de=0; "$GPUENV" doctor --json --user "$TUSER" "$@" >"$TMP/doctor.json" 2>&9 || _de=$?
		else
			_de=0; "$GPUENV" doctor --json "$@" >"$TMP/doctor.json" 2>&9 || _de=$?
		fi
		# verify exits 1 when a check fails (no torch, no GPU): that is data, not an error here.
		_ve=0; "$GPUENV" verify --json "$@" >"$TMP/verify.json" 2>&9 || _ve=$?
	fi
	"$PY" -I - "$STATUS" "$_state" "$_exit" "$TMP/doctor.json" "$_de" "$TMP/verify.json" "$_ve" \
		"$STACK" "$VERSION" "$TORCH" "$VENV" "$TUSER" "$(cat "$MARKER" 2>/dev/null || true)" "$LOG" <<'EOF'
import json, os, socket, sys, tempfile, time
(path, state, code, dpath, dexit, vpath, vexit,
 stack, version, torch, venv, user, source, log) = sys.argv[1:]
def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
doc = {
    "schema": "gpuenv.status/1",
    "state": state,
    "exit": int(code),
    "host": socket.gethostname(),
    "request": {"stack": stack, "version": version or None, "torch": torch or None,
                "venv": venv or None, "user": user or None},
    "gpuenv": source or None,
    "doctor": load(dpath), "doctor_exit": json.loads(dexit),
    "verify": load(vpath), "verify_exit": json.loads(vexit),
    "log": log,
    "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
}
# A new file of its own (O_EXCL: never through a link), renamed over status.json.
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".status.", suffix=".tmp")
try:
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
        f.flush()
        os.fchmod(f.fileno(), 0o644)
        os.fsync(f.fileno())
    os.replace(tmp, path)
except BaseException:
    os.unlink(tmp)
    raise
EOF
	say "state $_state, exit $_exit: $STATUS"
	exit "$_exit"
}

# finish RC: gpuenv's exit status (install or apply --resume, output in $TMP/out) -> the end
finish() {
	[ "$1" -eq 0 ] || status failed "$1"
	if grep -q "$REBOOT_MARK" "$TMP/out"; then
		boot_id | write_file "$PENDING" 0644 || exit 5
		reboot_pending
	fi
	rm -f "$PENDING"
	disable_unit
	status "done" 0
}
reboot_pending() {
	enable_unit
	_reboot=
	if [ -n "$NO_REBOOT" ]; then
		say "a reboot is needed: reboot this machine (--no-reboot); gpuenv-resume.service finishes after it"
	elif ! has_systemd; then
		say "a reboot is needed, but systemd is not running here (chroot or container): reboot it yourself"
	else
		say "rebooting to load the new driver; gpuenv-resume.service finishes after the boot"
		_reboot=1
	fi
	# The status first: monitoring sees reboot-pending while the box is down.
	(status reboot-pending 10) || true
	[ -z "$_reboot" ] || systemctl --no-block reboot || say "systemctl reboot failed: reboot this machine"
	exit 10
}

# -- the source, python3-venv, gpuenv ---------------------------------------------------------
# get_source: SOURCE (what .gpuenv-source records) and PIP_REQ (what pip installs). A wheel is
# read once into $TMP (mode 0700, root's); the hash and pip see only that copy, so a file
# swapped at the given path after the check is never installed.
get_source() {
	if [ -n "$GIT" ]; then
		SOURCE="git:$GIT@$COMMIT"
		PIP_REQ="gpuenv @ git+$GIT@$COMMIT"
		return 0
	fi
	mkdir -m 0700 "$TMP/wheel"
	_f=$TMP/wheel/$WHEEL_NAME
	case $WHEEL in
	https://* | http://*)
		say "downloading $(noquery "$WHEEL")"
		"$PY" -I -c 'import shutil, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=120) as r, open(sys.argv[2], "xb") as f:
    shutil.copyfileobj(r, f)' "$WHEEL" "$_f" 2>&9 || { say "cannot download $(noquery "$WHEEL")"; exit 5; }
		;;
	*)
		[ -f "$WHEEL" ] || { say "no such wheel: $WHEEL"; exit 5; }
		cat -- "$WHEEL" >"$_f" || { say "cannot read $WHEEL"; exit 5; }
		;;
	esac
	_sum=$(sha256sum "$_f" | cut -d' ' -f1)
	if [ "$_sum" != "$SHA256" ]; then
		say "sha256 mismatch for $(noquery "$WHEEL"): $_sum, expected $SHA256; nothing was installed"
		exit 5
	fi
	PIP_REQ=$_f
	SOURCE="sha256:$_sum"
}

# need_packages: true when a package gpuenv needs is missing; NEED: their names. python3-venv
# for this python3 (absent on fresh Ubuntu), ca-certificates (pip over https), gpg (gpuenv
# reads the vendors' signing keys with it; apt does not bring it), gpgv (gpuenv checks
# signatures with it where apt does; Debian 13's apt 3.0 verifies with sqv and no longer brings
# gpgv, and gnupg only recommends it), git for --git.
need_packages() {
	_v=$("${PY:-python3}" -I -c 'import sys; print("python%d.%d-venv" % sys.version_info[:2])') || {
		say "python3 does not run"
		exit 5
	}
	NEED=
	pkg_ok "$_v" || NEED="python3-venv"
	pkg_ok ca-certificates || NEED="${NEED:+$NEED }ca-certificates"
	command -v gpg >/dev/null 2>&1 || NEED="${NEED:+$NEED }gpg"
	command -v gpgv >/dev/null 2>&1 || NEED="${NEED:+$NEED }gpgv"
	[ -z "$GIT" ] || command -v git >/dev/null 2>&1 || NEED="${NEED:+$NEED }git"
	[ -n "$NEED" ]
}

apt_install() {
	_i=1
	while [ "$_i" -le 5 ]; do
		run "$TMP/apt" apt-get -q -y -o DPkg::Lock::Timeout=300 update
		if [ "$rc" -eq 0 ]; then
			# shellcheck disable=SC2086 # NEED: package names, one word each
			run "$TMP/apt" apt-get -q -y -o DPkg::Lock::Timeout=300 install --no-install-recommends $NEED
			[ "$rc" -ne 0 ] || return 0
		fi
		say "apt failed (try $_i/5)"
		_i=$((_i + 1))
		[ "$_i" -gt 5 ] || sleep "$DELAY"
	done
	say "cannot install $NEED"
	exit 5
}

pip_install() { run "$TMP/pip" "$1" -I -m pip install -q --no-cache-dir "$2"; }
install_gpuenv() {
	if gpuenv_current; then
		say "gpuenv in $PREFIX is up to date ($SOURCE)"
		return 0
	fi
	if [ ! -x "$PREFIX/bin/python" ]; then
		run "$TMP/pip" "$PY" -I -m venv "$PREFIX"
		[ "$rc" -eq 0 ] || { say "python3 -m venv $PREFIX failed"; exit 5; }
	fi
	pip_install "$PREFIX/bin/python" "$PIP_REQ"
	# The given source wins over an installed gpuenv of the same version.
	[ "$rc" -ne 0 ] || run "$TMP/pip" "$PREFIX/bin/python" -I -m pip install -q --no-cache-dir \
		--force-reinstall --no-deps "$PIP_REQ"
	if [ "$rc" -ne 0 ] || [ ! -x "$GPUENV" ]; then
		say "pip could not install gpuenv"
		exit 5
	fi
	echo "$SOURCE" | write_if_changed "$MARKER" 0644 || exit 5
}

# bootstrap.env: what --resume needs, KEY=value a line (read back as data, never sourced)
SETTING_KEYS="STACK VERSION TORCH VENV TUSER NO_REBOOT"
settings_text() {
	printf 'STACK=%s\nVERSION=%s\nTORCH=%s\nVENV=%s\nTUSER=%s\nNO_REBOOT=%s\n' \
		"$STACK" "$VERSION" "$TORCH" "$VENV" "$TUSER" "$NO_REBOOT"
}
# read_settings: bootstrap.env back, strictly: a file of root's that only root can write, each
# line KEY=VALUE with a known KEY, each key once; then every value checked as the flags are.
read_settings() {
	[ -e "$SETTINGS" ] || [ -L "$SETTINGS" ] || return 0
	FROM="$SETTINGS: "
	{ [ ! -L "$SETTINGS" ] && [ -f "$SETTINGS" ] && root_only "$SETTINGS"; } ||
		usage "$SETTINGS: not a file of root's that only root can write"
	_seen=" "
	while IFS= read -r _line || [ -n "$_line" ]; do
		case $_line in *=*) ;; *) usage "$SETTINGS: not KEY=VALUE: '$_line'" ;; esac
		_key=${_line%%=*} _val=${_line#*=}
		case " $SETTING_KEYS " in *" $_key "*) ;; *) usage "$SETTINGS: unknown setting '$_key'" ;; esac
		case $_seen in *" $_key "*) usage "$SETTINGS: $_key twice" ;; esac
		_seen="$_seen$_key "
		case $_key in
		STACK) STACK=$_val ;;
		VERSION) VERSION=$_val ;;
		TORCH) TORCH=$_val ;;
		VENV) VENV=$_val ;;
		TUSER) TUSER=$_val ;;
		NO_REBOOT) NO_REBOOT=$_val ;;
		esac
	done <"$SETTINGS"
	validate_settings
	FROM=
}

# -- the three modes --------------------------------------------------------------------------
dry_run() {
	say "dry run: nothing is changed; stack $STACK${VERSION:+ $VERSION}${TORCH:+, torch $TORCH into $VENV}${TUSER:+, user $TUSER}"
	get_source
	if need_packages; then
		say "would run: apt-get update; apt-get install --no-install-recommends $NEED"
	else
		say "python3-venv, ca-certificates, gpg, gpgv${GIT:+, git}: installed"
	fi
	if gpuenv_current; then
		say "gpuenv in $PREFIX: up to date ($SOURCE)"
	else
		say "would install gpuenv into $PREFIX ($SOURCE)"
	fi
	cmp -s "$SELF" "$PREFIX/bootstrap.sh" || say "would write $PREFIX/bootstrap.sh"
	unit_text | cmp -s - "$UNIT" || say "would write $UNIT"
	settings_text | cmp -s - "$SETTINGS" || say "would write $SETTINGS"
	if [ -f "$PENDING" ]; then
		if same_boot; then
			say "a reboot the plan needs is pending: would enable gpuenv-resume.service and reboot"
		else
			say "the reboot the plan needed has happened: would resume"
		fi
	fi
	say "would run: gpuenv apply --resume --yes (an unfinished apply, if any), then gpuenv install $STACK --yes"
	say "would write $STATUS (gpuenv doctor --json, gpuenv verify --json)"
	_g=$GPUENV
	if ! gpuenv_current; then
		if need_packages; then
			say "the plan: not shown (gpuenv needs $NEED, which the real run installs first)"
			exit 0
		fi
		say "the plan, from gpuenv in a throwaway venv:"
		run "$TMP/pip" "$PY" -I -m venv "$TMP/venv"
		[ "$rc" -eq 0 ] || exit 5
		pip_install "$TMP/venv/bin/python" "$PIP_REQ"
		[ "$rc" -eq 0 ] || exit 5
		_g=$TMP/venv/bin/gpuenv
	fi
	run "$TMP/out" target "$_g" install "$STACK" --dry-run
	exit "$rc"
}

resume() {
	read_settings
	say "resume after boot $(boot_id)"
	if same_boot; then
		say "still in the boot that needs a reboot"
		reboot_pending
	fi
	retry "$GPUENV" apply --resume --yes
	finish "$rc"
}

main() {
	say "bootstrap: stack $STACK${VERSION:+ $VERSION}${TORCH:+, torch $TORCH into $VENV}${TUSER:+, user $TUSER}"
	get_source
	if need_packages; then apt_install; fi
	install_gpuenv
	write_if_changed "$PREFIX/bootstrap.sh" 0755 <"$SELF" || exit 5
	settings_text | write_if_changed "$SETTINGS" 0600 || exit 5
	unit_text | write_if_changed "$UNIT" 0644 || exit 5
	if [ -f "$PENDING" ]; then
		if same_boot; then
			say "the reboot the plan needs has not happened yet"
			reboot_pending
		fi
		rm -f "$PENDING"
	fi
	retry "$GPUENV" apply --resume --yes
	if [ "$rc" -ne 0 ] || grep -q "$REBOOT_MARK" "$TMP/out"; then finish "$rc"; fi
	retry target "$GPUENV" install "$STACK" --yes
	finish "$rc"
}

if [ -n "$DRY" ]; then
	dry_run
elif [ -n "$RESUME" ]; then
	[ -x "$GPUENV" ] || { say "no gpuenv in $PREFIX: run bootstrap.sh without --resume"; exit 5; }
	resume
else
	main
fi
