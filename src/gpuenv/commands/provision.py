"""`gpuenv provision cloud-init`: a ready cloud-init user-data that runs gpuenv's bootstrap.

The user-data embeds the bootstrap this gpuenv ships (``install-scripts/bootstrap.sh``, in the
wheel as ``gpuenv._install_scripts``) byte for byte, and runs it once with the settings given
here. Every value is checked as the bootstrap checks it, so that a user-data written here is one
the bootstrap accepts. Over the 16 KB that common clouds take as user-data, it is gzipped
(cloud-init reads gzip user-data as it is).
"""

from __future__ import annotations

import argparse
import re
import sys

from gpuenv.commands import Command, Usage

USER_DATA_LIMIT = 16384  # bytes: EC2's limit, and others' (gzip is counted, not what it holds)
BOOTSTRAP_PATH = "/usr/local/sbin/gpuenv-bootstrap"

# The bootstrap's own rules (install-scripts/bootstrap.sh, validate_settings/validate_source).
_URL = re.compile(r"[A-Za-z0-9._~:/?@!$&+,;=%-]+")
_WHEEL_NAME = re.compile(r"gpuenv-[A-Za-z0-9_.+-]*\.whl")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_VERSION = re.compile(r"[0-9][A-Za-z0-9.+~-]*")
_VENV = re.compile(r"/[A-Za-z0-9/._+-]*")
# What useradd accepts: letters, digits, _ . -, not first a - or a digit, a $ at the end.
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\$?")

DESCRIPTION = f"""\
Writes #cloud-config user-data (to standard output, or --out FILE) that, on the first boot,
writes gpuenv's bootstrap.sh to {BOOTSTRAP_PATH} and runs it once as root: it installs
gpuenv from the wheel (checked against --sha256) or the pinned git commit, then the stack, and
reboots where the plan needs it. Watch /var/lib/gpuenv/status.json.

The wheel: `pip wheel . -w dist` in a clone of gpuenv, served by any static file server or
object store; --sha256 is `sha256sum dist/gpuenv-*.whl`. The bootstrap fetches gpuenv's own
dependencies from the package index.

Over {USER_DATA_LIMIT} bytes (the user-data limit of EC2 and others) the output is gzipped, and a
note says so on standard error; cloud-init reads gzip user-data as it is. Gzip is binary: give
--out FILE or redirect standard output.

Example:
  gpuenv provision cloud-init --wheel-url https://files.example/gpuenv-0.1.0-py3-none-any.whl \\
      --sha256 HEX --stack rocm --user alice > user-data

Exit status: 0 written; 2 a bad value (nothing written)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", choices=("cloud-init",), help="what to write: cloud-init user-data")
    source = p.add_argument_group("where the box gets gpuenv (one of)")
    source.add_argument("--wheel-url", metavar="URL", help="an https:// or http:// URL of gpuenv's wheel")
    source.add_argument("--sha256", metavar="HEX", help="the wheel's sha256sum (64 hex digits); needed with --wheel-url")
    source.add_argument("--git", metavar="URL", help="a git repository of gpuenv (https://, http://, ssh://)")
    source.add_argument("--commit", metavar="SHA", help="the commit to install from --git (40 hex digits)")
    p.add_argument("--stack", choices=("auto", "rocm", "cuda"), default="auto", help="the stack (default: auto)")
    p.add_argument("--version", metavar="VER", help="the ROCm or CUDA release (default: the matrices' choice)")
    p.add_argument("--torch", metavar="VER", help="also install this PyTorch release into --venv")
    p.add_argument("--venv", metavar="DIR", help="the venv for --torch (an absolute path)")
    p.add_argument("--user", metavar="NAME", help="the account added to render/video and owning the venv")
    p.add_argument("--no-reboot", action="store_true", help="leave the reboot the plan needs to you")
    p.add_argument("--out", metavar="FILE", help="write the user-data to FILE instead of standard output")


def bootstrap_argv(args: argparse.Namespace) -> list[str]:
    """The bootstrap's command line for these options; Usage for a value it would refuse."""
    argv = ["sh", BOOTSTRAP_PATH]
    if bool(args.wheel_url) == bool(args.git):
        raise Usage("give --wheel-url URL --sha256 HEX, or --git URL --commit SHA (one source)")
    if args.wheel_url:
        _check(args.wheel_url, _URL, "--wheel-url", "a URL without spaces, quotes or #")
        if not args.wheel_url.startswith(("https://", "http://")):
            raise Usage(f"--wheel-url: an https:// or http:// URL, not {args.wheel_url!r}")
        name = args.wheel_url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        _check(name, _WHEEL_NAME, "--wheel-url", "a gpuenv wheel (gpuenv-VERSION-py3-none-any.whl)")
        _check(args.sha256 or "", _SHA256, "--sha256", "the wheel's sha256sum, 64 lower-case hex digits")
        if args.commit:
            raise Usage("--commit goes with --git")
        argv += ["--wheel", args.wheel_url, "--sha256", args.sha256]
    else:
        _check(args.git, _URL, "--git", "a URL without spaces, quotes or #")
        if not args.git.startswith(("https://", "http://", "ssh://")):
            raise Usage(f"--git: an https://, http:// or ssh:// URL, not {args.git!r}")
        _check(args.commit or "", _COMMIT, "--commit", "the full commit, 40 lower-case hex digits")
        if args.sha256:
            raise Usage("--sha256 goes with --wheel-url")
        argv += ["--git", args.git, "--commit", args.commit]
    argv += ["--stack", args.stack]
    for flag, value, rule, what in (
        ("--version", args.version, _VERSION, "a version such as 12.8"),
        ("--torch", args.torch, _VERSION, "a version such as 2.7.1"),
        ("--venv", args.venv, _VENV, "an absolute path of letters, digits and /._+-"),
        ("--user", args.user, _USER, "a user name useradd accepts"),
    ):
        if value is not None:
            _check(value, rule, flag, what)
            argv += [flag, value]
    if args.torch and not args.venv:
        raise Usage("--torch needs --venv DIR")
    if args.user and len(args.user) > 32:
        raise Usage("--user: at most 32 characters")
    if args.no_reboot:
        argv.append("--no-reboot")
    return argv


def _check(value: str, rule: re.Pattern[str], flag: str, what: str) -> None:
    if not rule.fullmatch(value):
        raise Usage(f"{flag}: {what}, not {value!r}")


def user_data(bootstrap: str, argv: list[str], version: str) -> str:
    """The #cloud-config text: the bootstrap as a literal block, then the one runcmd line."""
    import json

    block = "".join(("      " + line) if line.strip() else "\n" for line in bootstrap.splitlines(True))
    return (
        "#cloud-config\n"
        f"# Written by `gpuenv provision cloud-init` (gpuenv {version}). On the first boot, cloud-init\n"
        f"# writes gpuenv's bootstrap.sh (below, byte for byte) to {BOOTSTRAP_PATH} and runs it\n"
        "# once, as root, with the settings on the runcmd line. Watch /var/lib/gpuenv/status.json\n"
        "# (state done | reboot-pending | failed) and /var/log/gpuenv/. On the boot that reboots,\n"
        "# cloud-init records the bootstrap's exit 10 (reboot pending) as a failure: status.json is\n"
        "# the verdict.\n"
        "write_files:\n"
        f"  - path: {BOOTSTRAP_PATH}\n"
        "    owner: root:root\n"
        '    permissions: "0755"\n'
        "    content: |\n"
        f"{block}"
        "runcmd:\n"
        f"  - {json.dumps(argv)}\n"
    )


def packed(text: str, limit: int = USER_DATA_LIMIT) -> tuple[bytes, bool]:
    """The user-data's bytes, gzipped (reproducibly: no time stamp) when over ``limit``."""
    data = text.encode()
    if len(data) <= limit:
        return data, False
    import gzip

    return gzip.compress(data, compresslevel=9, mtime=0), True


def run(args: argparse.Namespace) -> int:
    from gpuenv import __version__
    from gpuenv.standins import bundled

    argv = bootstrap_argv(args)
    with open(bundled.path("install-scripts", "bootstrap.sh"), encoding="utf-8") as f:
        text = user_data(f.read(), argv, __version__)
    data, gzipped = packed(text)
    if gzipped and args.out is None and sys.stdout.isatty():
        raise Usage(f"the user-data is over {USER_DATA_LIMIT} bytes and gzipped: give --out FILE or redirect")
    if args.out is not None:
        try:
            with open(args.out, "wb") as out:
                out.write(data)
        except OSError as exc:
            raise Usage(f"--out {args.out}: {exc.strerror or exc}") from None
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    if gzipped:
        sys.stderr.write(
            f"gpuenv provision: the user-data is {len(text.encode())} bytes, over the {USER_DATA_LIMIT} "
            f"that clouds take: written gzipped ({len(data)} bytes), which cloud-init reads as it is\n"
        )
    return 0


COMMANDS = {
    "provision": Command(
        "provision",
        "write cloud-init user-data that installs gpuenv and a GPU stack on a fresh box",
        configure,
        run,
        DESCRIPTION,
    )
}
