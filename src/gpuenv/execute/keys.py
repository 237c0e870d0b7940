"""Vendor signing keys: fetched over HTTPS only, held to the fingerprint the plan pins, with a
signing key that is neither expired nor revoked, and written as the binary keyring apt reads.

gpg reads the keys in a throw-away home directory: the machine's own keyrings are never consulted
or changed. Repository signatures are checked with apt's own verifier (gpuenv.execute.signatures:
gpgv, or sqv on apt 3.0). A gpg that exits non-zero is a refusal with its words, never a crash.
"""

from __future__ import annotations

import ipaddress
import os
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from gpuenv.execute import apt, signatures
from gpuenv.execute.context import Context, Refused, path_of
from gpuenv.execute.runner import Runner
from gpuenv.exitcodes import Exit
from gpuenv.plan.plan import Kind, Plan, Step
from gpuenv.trust import temp_parent

_KEY_MAX = 1 << 20


def _need_gpg(root: str) -> None:
    """gpg reads the fingerprint the plan pins; without it every key would look like 'no key'.
    gpgv is needed only where it is apt's verifier (apt 3.0 verifies with sqv and no longer
    brings gpgv): the refusal names what is missing, not a gpg that is installed."""
    from gpuenv.probe.host import which

    tools = ("gpg", "gpgv") if signatures.verifier(root) == "gpgv" else ("gpg",)
    missing = [t for t in tools if which(t) is None]
    if missing:
        raise Refused(
            Exit.REFUSED,
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed on this machine: "
            "gpuenv reads the vendor key's fingerprint with gpg and checks signatures with apt's verifier "
            f"({signatures.verifier(root)} here). Nothing was changed. Install {'it' if len(missing) == 1 else 'them'} "
            f"(apt-get install {' '.join(missing)}) and run again.",
        )


def _gpg(runner: Runner, home: str, *args: str, what: str) -> str:
    """gpg in the throw-away ``home``; a non-zero exit refuses, with gpg's words (gpg exits 2 on an
    armored block that holds no key: 2.2.40 and 2.4.9 alike)."""
    res = runner.run(["gpg", "--homedir", home, "--batch", "--no-autostart", *args], host=True, check=False)
    if not res.ok:
        lines = [ln.strip() for ln in res.output.strip().splitlines() if ln.strip()]
        said = "; ".join(lines[-3:]) or f"exit status {res.returncode}"
        raise Refused(Exit.REFUSED, f"{what}: gpg says: {said}. Nothing was changed")
    return res.output


def _show_keys(runner: Runner, data: bytes) -> str:
    with tempfile.TemporaryDirectory(prefix="gpuenv-gnupg-", dir=temp_parent()) as home:
        os.chmod(home, 0o700)
        path = os.path.join(home, "key")
        with open(path, "wb") as fh:
            fh.write(data)
        return _gpg(runner, home, "--show-keys", "--with-colons", path, what="the key could not be read")


_ARMOR = b"-----BEGIN PGP PUBLIC KEY BLOCK-----"


def binary_keyring(runner: Runner, data: bytes) -> bytes:
    """The keyring apt reads from a .gpg file: binary OpenPGP. An armored key (vendors publish
    them with text before the armor, too) is de-armored; anything else is refused."""
    if _ARMOR not in data:
        if data and data[0] & 0x80:  # an OpenPGP packet tag: binary already
            return data
        raise Refused(Exit.REFUSED, "the downloaded key is neither an OpenPGP key nor armored: nothing was changed")
    with tempfile.TemporaryDirectory(prefix="gpuenv-gnupg-", dir=temp_parent()) as home:
        os.chmod(home, 0o700)
        src, out = os.path.join(home, "key.asc"), os.path.join(home, "key.gpg")
        with open(src, "wb") as fh:
            fh.write(data[data.index(_ARMOR) :])
        _gpg(runner, home, "--dearmor", "--output", out, src,
             what="the downloaded key did not de-armor to an OpenPGP key")  # fmt: skip
        binary = Path(out).read_bytes() if os.path.exists(out) else b""
    if not binary or not binary[0] & 0x80:
        raise Refused(Exit.REFUSED, "the downloaded key did not de-armor to an OpenPGP key: nothing was changed")
    return binary


def keyring_state(ctx: Context, plan: Plan, step: Step) -> tuple[bool, str]:
    """Done only when apt can use the keyring: binary, exactly the pinned primary key, a signing
    key that is neither expired nor revoked, and (once apt has fetched the vendor's InRelease)
    a signature that apt's own verifier (gpgv, or sqv on apt 3.0) accepts with it."""
    data = ctx.files.read(path_of(step))
    if data is None:
        return False, "no keyring yet"
    if not data[:1] or not data[0] & 0x80:
        return False, "not a binary keyring (armored?): apt cannot read it; written again"
    _need_gpg(ctx.root)
    try:
        colons = _show_keys(ctx.runner, data)
    except Refused as exc:  # gpg cannot read what is there: it is written again, then checked
        return False, f"{exc}; written again"
    fprs, count = apt.pub_fingerprints(colons)
    if count != 1 or fprs != (step.fingerprint,):
        return False, "holds other keys: " + (" ".join(fprs) or "none")
    if not apt.signing_keys(colons):
        return False, "holds the pinned key, but no valid signing key (expired or revoked): fetch it again"
    for name in _release_files(plan, step):
        release = ctx.files.read(f"/var/lib/apt/lists/{name}")
        why = None if release is None else signatures.verify(ctx.runner, ctx.root, data, release)
        if why:
            return False, f"apt's {name} does not verify with it ({why}): fetch it again"
    return True, "holds the pinned key"


def _release_files(plan: Plan, key: Step) -> list[str]:
    """apt's InRelease files of the sources this plan writes that trust ``key``'s keyring."""
    return [apt.lists_name(uri, suite) for uri, suite in _sources(plan, key)]


def _sources(plan: Plan, key: Step) -> list[tuple[str, str]]:
    return [
        source
        for s in plan.steps
        if s.kind is Kind.APT_SOURCE and s.content
        for source in apt.sources_of(s.content, key.path or "")
    ]


def check_releases(ctx: Context, plan: Plan, step: Step, keyring: bytes) -> None:
    """Before any change: each repository that will trust ``keyring`` is signed as apt here
    accepts (apt 3.0's sqv refuses SHA-1 signatures and weak keys that gpgv took), else the
    plan is refused with apt's reason. An InRelease that cannot be fetched is left to apt-get
    update, which fetches it again and fails on its own; what is fetched and does not verify is
    what apt would refuse."""
    for uri, suite in _sources(plan, step):
        url = apt.release_url(uri, suite)
        try:
            signed = (ctx.fetch or default_fetch)(url)
        except Refused:
            continue
        why = signatures.verify(ctx.runner, ctx.root, keyring, signed)
        if why:
            raise Refused(
                Exit.REFUSED,
                f"apt here would refuse the repository {uri} ({suite}): its InRelease does not verify with the "
                f"key at {step.url} ({step.fingerprint}) under apt's own check: {why}. Nothing was changed. "
                "The vendor must re-sign it (or publish a stronger key); check the vendor's announcement.",
            )


def _check_scheme(url: str, loopback_http: bool) -> None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "https" and not (loopback_http and _loopback(parts)):
        raise Refused(Exit.REFUSED, f"refusing to fetch a signing key over {parts.scheme or 'no scheme'}: {url}")


class HttpsRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to a URL the first one could have been (no https -> http)."""

    def __init__(self, loopback_http: bool) -> None:
        self.loopback_http = loopback_http

    def redirect_request(  # type: ignore[no-untyped-def]  # urllib's API, untyped in its stub too
        self, req, fp, code, msg, headers, newurl
    ):
        _check_scheme(newurl, self.loopback_http)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def default_fetch(url: str, loopback_http: bool = False) -> bytes:
    _check_scheme(url, loopback_http)
    opener = urllib.request.build_opener(HttpsRedirects(loopback_http))
    try:
        with opener.open(url, timeout=30) as resp:  # scheme checked above and on every redirect
            data: bytes = resp.read(_KEY_MAX + 1)
    except OSError as exc:
        raise Refused(Exit.REFUSED, f"cannot fetch the signing key {url}: {exc}") from exc
    if len(data) > _KEY_MAX:
        raise Refused(Exit.REFUSED, f"the signing key at {url} is larger than 1 MiB")
    return data


def _loopback(parts: urllib.parse.SplitResult) -> bool:
    # Plain http is accepted only from this machine: the tests' local repository (the
    # fingerprint is still checked, as for any key).
    try:
        return parts.scheme == "http" and ipaddress.ip_address(parts.hostname or "").is_loopback
    except ValueError:
        return False


def fetch_key(ctx: Context, step: Step, fetch: Callable[[str], bytes] | None = None) -> bytes:
    data = (fetch or default_fetch)(step.url or "")
    _need_gpg(ctx.root)
    # What is checked is exactly what apt is given: the file is made a binary keyring once (an
    # armored key is de-armored, whatever comes before its armor: AMD's ROCm 10.0 key file is a
    # binary key followed by an armored copy, which gpg cannot read as one file), and those bytes
    # are checked and returned. Converting again after the check would de-armor any armor the
    # checked key carries inside a packet (a user ID can hold one), giving apt another key.
    data = binary_keyring(ctx.runner, data)
    colons = _show_keys(ctx.runner, data)
    fprs, count = apt.pub_fingerprints(colons)
    if count != 1 or fprs != (step.fingerprint,):
        got = ", ".join(fprs) or "no OpenPGP key"
        raise Refused(
            Exit.REFUSED,
            f"the key at {step.url} has fingerprint {got}; the plan pins {step.fingerprint}. "
            "Nothing was changed. The vendor may have rotated its key: check the vendor's announcement "
            "and update the bundled matrices before trusting a new key.",
        )
    if not apt.signing_keys(colons):
        # apt would refuse every signature it made: fail now, before any change, and say why.
        validity = apt.pub_validity(colons)
        what = (
            "has expired" if validity[:1] == ("e",)
            else "is revoked" if validity[:1] == ("r",)
            else "has no signing key that is neither expired nor revoked"
        )  # fmt: skip
        raise Refused(
            Exit.REFUSED,
            f"the key at {step.url} ({step.fingerprint}) {what}. Nothing was changed. The vendor may "
            "have extended or replaced it: check the vendor's announcement and update the bundled matrices.",
        )
    return data
