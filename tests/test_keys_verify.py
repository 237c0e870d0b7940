"""Keys and repository signatures on every apt: gpg's failures are refusals with its words, the
missing tool is named, and a signature is checked with apt's own verifier (gpgv, or sqv on apt
3.0, Debian 13). The sqv checks against apt 3.0's real policy are in test_trixie_chroot.py."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from gpuenv.execute import apt, executor, signatures
from gpuenv.execute import keys as keymod
from gpuenv.execute.context import Context
from gpuenv.execute.runner import Runner, SimulatingRunner, _read_only
from gpuenv.plan.plan import Kind, Step
from tests.gpg_home import gpg_home

EMPTY_ARMOR = b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n"


@pytest.fixture(scope="module")
def signer(tmp_path_factory):
    """An RSA key and a Release file clear-signed with it (with a dash line to escape)."""
    with gpg_home(tmp_path_factory) as (home, gpg):
        gpg("--quick-gen-key", "Repo <repo@x>", "ed25519", "sign", "0")
        colons = gpg("--with-colons", "--list-keys", "repo@x").decode()
        fpr = next(ln.split(":")[9] for ln in colons.splitlines() if ln.startswith("fpr:"))
        release = home / "Release"
        release.write_text("Origin: test\nSuite: stable\n- a line that starts with a dash\nSHA256:\n abc 1 main\n")
        gpg("--yes", "--clearsign", "-o", str(home / "InRelease"), str(release))
        yield {
            "fpr": fpr,
            "keyring": gpg("--export", fpr),
            "armored": gpg("--armor", "--export", fpr),
            "release": release.read_bytes(),
            "inrelease": (home / "InRelease").read_bytes(),
            "home": home,
        }


def _ctx(root) -> Context:
    return Context(root=str(root), runner=Runner(str(root)), files=executor.Files(str(root)))


def _key_step(fpr: str) -> Step:
    return Step(id="key", kind=Kind.APT_KEY, title="key", url="https://x/k", fingerprint=fpr, path="/etc/k.gpg")


def _path_with(tmp_path, *tools: str) -> str:
    """A PATH directory holding only ``tools`` (links to the real ones)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in tools:
        real = shutil.which(tool)
        if real is None:
            pytest.skip(f"{tool} is not installed")
        (bin_ / tool).symlink_to(real)
    return str(bin_)


def _apt3(root) -> None:
    """What makes apt 3.0 verify with sqv: its sqv method and /usr/bin/sqv."""
    for path in ("usr/bin/sqv", "usr/lib/apt/methods/sqv"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("")


# --------------------------------------------------------------------------------------------
# The missing tool is named


@pytest.mark.parametrize(
    "tools, match",
    [
        ((), r"^gpg and gpgv are not installed .*\(gpgv here\).*apt-get install gpg gpgv\)"),
        (("gpg",), r"^gpgv is not installed .*\(gpgv here\).*apt-get install gpgv\)"),
        (("gpgv",), r"^gpg is not installed .*apt-get install gpg\)"),
    ],
)
def test_the_refusal_names_the_tool_that_is_missing(signer, tmp_path, monkeypatch, tools, match):
    monkeypatch.setenv("PATH", _path_with(tmp_path, *tools))
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(executor.Refused, match=match):
        keymod.fetch_key(_ctx(root), _key_step(signer["fpr"]), lambda url: signer["armored"])
    assert list(root.iterdir()) == []


def test_where_apt_verifies_with_sqv_gpgv_is_not_needed(signer, tmp_path, monkeypatch):
    """Debian 13: apt 3.0 verifies with sqv and gnupg only recommends gpgv. A box without gpgv
    fetches and checks the key all the same (gpg reads it; sqv, apt's verifier, checks signatures)."""
    monkeypatch.setenv("PATH", _path_with(tmp_path, "gpg"))
    root = tmp_path / "root"
    _apt3(root)
    assert signatures.verifier(str(root)) == "sqv"
    data = keymod.fetch_key(_ctx(root), _key_step(signer["fpr"]), lambda url: signer["armored"])
    assert data == signer["keyring"]
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(executor.Refused, match=r"^gpg is not installed .*\(sqv here\).*apt-get install gpg\)"):
        keymod.fetch_key(_ctx(root), _key_step(signer["fpr"]), lambda url: signer["armored"])


def test_apt_configured_for_gpgv_keeps_gpgv(tmp_path):
    _apt3(tmp_path)
    assert signatures.verifier(str(tmp_path)) == "sqv"
    (tmp_path / "etc/apt/apt.conf.d").mkdir(parents=True)
    (tmp_path / "etc/apt/apt.conf.d/99gpgv").write_text('APT::Key::GPGVCommand "/usr/bin/gpgv";\n')
    assert signatures.verifier(str(tmp_path)) == "gpgv"
    assert signatures.verifier(str(tmp_path / "nothing")) == "gpgv"


# --------------------------------------------------------------------------------------------
# gpg's failures are refusals


def test_an_empty_armored_key_is_refused_not_a_crash(tmp_path):
    """gpg 2.4.9 (and 2.2.40 here) exits 2 on an armor that holds no key: a refusal in gpg's words."""
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    with pytest.raises(executor.Refused, match=r"did not de-armor to an OpenPGP key") as err:
        keymod.binary_keyring(Runner(str(tmp_path)), EMPTY_ARMOR)
    assert "Nothing was changed" in str(err.value) or "nothing was changed" in str(err.value)


def test_a_damaged_armor_is_refused_with_gpgs_words(tmp_path):
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    damaged = b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBGZZ!!!!\n=AAAA\n-----END PGP PUBLIC KEY BLOCK-----\n"
    with pytest.raises(executor.Refused, match=r"did not de-armor to an OpenPGP key: gpg says: .*(CRC|OpenPGP)"):
        keymod.binary_keyring(Runner(str(tmp_path)), damaged)


def test_a_keyring_gpg_cannot_read_is_written_again(signer, tmp_path):
    """The done-check of a keyring gpg rejects: not done, with gpg's words (then fetched and
    checked before it is written)."""
    from gpuenv.plan.plan import Action, Plan, PlanTarget

    step = _key_step(signer["fpr"])
    plan = Plan(Action.INSTALL, PlanTarget("rocm"), "sha256:" + "0" * 64, (step,))
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/k.gpg").write_bytes(b"\x99\x00\x05garbage")
    done, detail = keymod.keyring_state(_ctx(tmp_path), plan, step)
    assert not done and detail.startswith("the key could not be read: gpg says: ") and "written again" in detail


# --------------------------------------------------------------------------------------------
# Signatures, as apt checks them


def test_split_clearsigned_gives_what_the_signature_covers(signer, tmp_path):
    """The split apt makes for sqv: the data and a detached signature that a real verifier
    (gpgv, with the key) accepts together, and rejects for the data changed."""
    data, sig = signatures.split_clearsigned(signer["inrelease"])
    assert data == signer["release"].rstrip(b"\n")  # no dash-escape left; no line break before the signature
    assert sig.startswith(b"-----BEGIN PGP SIGNATURE-----")
    ring = tmp_path / "ring.gpg"
    ring.write_bytes(signer["keyring"])
    (tmp_path / "sig").write_bytes(sig)
    for content, ok in ((data, True), (data + b"\nextra", False)):
        (tmp_path / "data").write_bytes(content)
        res = subprocess.run(["gpgv", "--homedir", str(tmp_path), "--keyring", str(ring), str(tmp_path / "sig"),
                              str(tmp_path / "data")], capture_output=True, check=False)  # fmt: skip
        assert (res.returncode == 0) is ok, res.stderr
    assert signatures.split_clearsigned(signer["release"]) is None


def test_gpgv_verdicts_carry_gpgvs_words(signer, tmp_path):
    if shutil.which("gpgv") is None:
        pytest.skip("gpgv is not installed")
    runner = Runner(str(tmp_path))
    assert signatures.verify(runner, str(tmp_path), signer["keyring"], signer["inrelease"]) is None
    forged = signer["inrelease"].replace(b"Suite: stable", b"Suite: stolen")
    why = signatures.verify(runner, str(tmp_path), signer["keyring"], forged)
    assert why and why.startswith("gpgv: ") and "BAD signature" in why


def test_release_urls_as_apt_fetches_them():
    assert apt.release_url("https://repo.radeon.com/rocm/apt/7.2.4/", "noble") == (
        "https://repo.radeon.com/rocm/apt/7.2.4/dists/noble/InRelease"
    )
    flat = "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64"
    assert apt.release_url(flat + "/", "/") == flat + "/InRelease"
    assert apt.lists_name(flat, "/") == "developer.download.nvidia.com_compute_cuda_repos_debian12_x86_64_InRelease"
    assert apt.lists_name("https://repo.radeon.com/rocm/apt/7.2.4", "noble") == (
        "repo.radeon.com_rocm_apt_7.2.4_dists_noble_InRelease"
    )


def test_a_dry_run_may_verify_with_sqv_but_not_write_with_it():
    assert _read_only(["sqv", "--keyring", "/k", "--signature-file", "/s", "/d"])
    for writes in (["sqv", "--output", "/etc/x", "--message", "/m"], ["sqv", "-o", "/x", "/m"],
                   ["sqv", "--output=/x", "--cleartext", "/m"]):  # fmt: skip
        assert not _read_only(writes)
    with pytest.raises(Exception, match="dry run refused"):
        SimulatingRunner("/nonexistent-root").run(["sqv", "--output", "/x", "/m"])


def test_sqv_runs_inside_the_root_with_the_policy_apt_gives_it(tmp_path):
    _apt3(tmp_path)
    assert signatures.policy(str(tmp_path)) is None
    (tmp_path / "usr/share/apt").mkdir(parents=True)
    (tmp_path / "usr/share/apt/default-sequoia.config").write_text("")
    assert signatures.policy(str(tmp_path)) == "/usr/share/apt/default-sequoia.config"
    (tmp_path / "etc/crypto-policies/back-ends").mkdir(parents=True)
    (tmp_path / "etc/crypto-policies/back-ends/apt-sequoia.config").write_text("")
    assert signatures.policy(str(tmp_path)) == "/etc/crypto-policies/back-ends/apt-sequoia.config"
