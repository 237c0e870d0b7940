"""A repository's signature checked as apt in the root will check it: with the same program and,
for sqv, the same policy.

apt 3.0 (Debian 13) verifies with sqv (Sequoia) where /usr/bin/sqv is installed and no
APT::Key::GPGVCommand is set, under a policy of its own that refuses what gpgv accepts (SHA-1
signatures, DSA and short RSA keys, each from a cut-off date in the policy file); older apt verifies
with gpgv. A key gpgv accepts can therefore leave apt 3.0 with an unsigned repository: the
check has to be the one apt makes, with apt's reason when it fails.

sqv is run inside the root (apt's own, with the root's policy file), gpgv on the host in a
throw-away home directory, as before: neither reads or changes the machine's keyrings.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from gpuenv.execute.runner import Runner

# apt's sqv method takes the first of these that exists (apt 3.0.x, methods/sqv.cc), unless
# APT_SEQUOIA_CRYPTO_POLICY names one; sqv reads it from SEQUOIA_CRYPTO_POLICY.
_POLICIES = (
    "/etc/crypto-policies/back-ends/apt-sequoia.config",
    "/var/lib/crypto-config/profiles/current/apt-sequoia.config",
    "/etc/crypto-policies/back-ends/sequoia.config",
    "/var/lib/crypto-config/profiles/current/sequoia.config",
    "/usr/share/apt/default-sequoia.config",
)
_SIGNED = b"-----BEGIN PGP SIGNED MESSAGE-----"
_SIGNATURE = b"-----BEGIN PGP SIGNATURE-----"


def _in_root(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/"))


def verifier(root: str) -> str:
    """'sqv' or 'gpgv': what apt in ``root`` verifies repository signatures with (apt 3.0's
    acquire code: gpgv when APT::Key::GPGVCommand is set, else sqv when /usr/bin/sqv exists)."""
    if not os.path.exists(_in_root(root, "/usr/bin/sqv")) or not os.path.exists(
        _in_root(root, "/usr/lib/apt/methods/sqv")
    ):
        return "gpgv"
    return "gpgv" if _gpgv_command_set(root) else "sqv"


def _gpgv_command_set(root: str) -> bool:
    conf = [_in_root(root, "/etc/apt/apt.conf")]
    try:
        conf += [os.path.join(_in_root(root, "/etc/apt/apt.conf.d"), n)
                 for n in sorted(os.listdir(_in_root(root, "/etc/apt/apt.conf.d")))]  # fmt: skip
    except OSError:
        pass
    for path in conf:
        try:
            text = Path(path).read_text(errors="replace")
        except OSError:
            continue
        if "gpgvcommand" in text.lower():
            return True
    return False


def policy(root: str) -> str | None:
    """The policy file apt's sqv method gives sqv in ``root`` (a path inside the root)."""
    return next((p for p in _POLICIES if os.path.isfile(_in_root(root, p))), None)


def split_clearsigned(doc: bytes) -> tuple[bytes, bytes] | None:
    """(data, signature) of a cleartext-signed InRelease, as apt splits it for sqv: the text
    between the header's blank line and the signature, dash-escapes undone, without the line
    break before the signature (RFC 9580, 7.1). None when it is not one cleartext signature."""
    lines = doc.split(b"\n")
    try:
        start = next(i for i, ln in enumerate(lines) if ln.rstrip(b"\r") == _SIGNED)
        blank = next(i for i in range(start + 1, len(lines)) if not lines[i].strip())
        sig = next(i for i in range(blank + 1, len(lines)) if lines[i].rstrip(b"\r") == _SIGNATURE)
    except StopIteration:
        return None
    body = [ln[2:] if ln.startswith(b"- ") else ln for ln in lines[blank + 1 : sig]]
    return b"\n".join(body), b"\n".join(lines[sig:])


def verify(runner: Runner, root: str, keyring: bytes, signed: bytes) -> str | None:
    """None when ``signed`` (an InRelease) verifies with ``keyring`` as apt in ``root`` checks it;
    else why not, in the verifier's words."""
    if verifier(root) == "sqv":
        return _sqv(runner, root, keyring, signed)
    return _gpgv(runner, keyring, signed)


def _gpgv(runner: Runner, keyring: bytes, signed: bytes) -> str | None:
    from gpuenv.trust import temp_parent

    with tempfile.TemporaryDirectory(prefix="gpuenv-gnupg-", dir=temp_parent()) as home:
        os.chmod(home, 0o700)
        ring, doc = os.path.join(home, "keyring.gpg"), os.path.join(home, "InRelease")
        Path(ring).write_bytes(keyring)
        Path(doc).write_bytes(signed)
        res = runner.run(["gpgv", "--homedir", home, "--keyring", ring, doc], host=True, check=False)
    return None if res.ok else "gpgv: " + _last_words(res.output, res.returncode)


def _sqv(runner: Runner, root: str, keyring: bytes, signed: bytes) -> str | None:
    parts = split_clearsigned(signed)
    if parts is None:
        return "sqv: not a cleartext-signed InRelease (apt cannot split it into data and signature)"
    env = {"SEQUOIA_CRYPTO_POLICY": p} if (p := policy(root)) else {}
    # sqv runs inside the root, so its files are written there, under its /tmp (0700, removed).
    with tempfile.TemporaryDirectory(prefix="gpuenv-sqv-", dir=_in_root(root, "/tmp")) as tmp:
        os.chmod(tmp, 0o700)
        inside = "/tmp/" + os.path.basename(tmp)
        for name, data in (("keyring.gpg", keyring), ("InRelease.data", parts[0]), ("InRelease.sig", parts[1])):
            Path(tmp, name).write_bytes(data)
        argv = ["sqv", "--keyring", f"{inside}/keyring.gpg",
                "--signature-file", f"{inside}/InRelease.sig", f"{inside}/InRelease.data"]  # fmt: skip
        res = runner.run(argv, env=env, check=False)
    return None if res.ok else "sqv: " + _last_words(res.output, res.returncode)


def _last_words(output: str, code: int) -> str:
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    return "; ".join(lines[-4:]) if lines else f"exited {code} without a message"
