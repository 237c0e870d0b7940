"""Debian 13 "trixie": apt 3.0 verifies repository signatures with sqv, under its own policy
(SHA-1 signatures refused), and brings no gpgv. gpuenv installs there, checking signatures as apt
does, and refuses before any change a repository apt would refuse, with apt's reason.

Real apt, dpkg and sqv in a trixie minbase chroot (tests/chroot_env.trixie_chroot), against the
local signed repository of the install tests and a copy of it signed with SHA-1.
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("tests.chroot_env")

from tests.chroot_env import (  # noqa: E402 - after the rewrite hook
    AMD_GPU,
    VOLATILE,
    copy_root,
    give_machine,
    gpuenv,
    in_root,
    manifest,
    resigned,
)

pytest_plugins = ["tests.chroot_env"]  # trixie_chroot, vendor_repo
pytestmark = pytest.mark.chroot


def _install_rocm(root, repo):
    give_machine(root, AMD_GPU)
    return gpuenv("install", "rocm", "--root", str(root), "--user", "alice", "--yes", env=repo.env)


def test_the_trixie_chroot_is_what_users_get(trixie_chroot):
    assert (trixie_chroot / "etc/debian_version").read_text().startswith("13.")
    assert (trixie_chroot / "usr/bin/sqv").exists() and not (trixie_chroot / "usr/bin/gpgv").exists()


def test_rocm_installs_on_debian_13_checking_signatures_with_sqv(trixie_chroot, vendor_repo, tmp_path):
    root = copy_root(trixie_chroot, tmp_path / "root")
    res = _install_rocm(root, vendor_repo)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "installed rocm" in res.stdout
    log = (root / "var/log/gpuenv/apply.log").read_text()
    assert f"chroot {root} sqv --keyring /tmp/gpuenv-sqv-" in log, log  # the InRelease, before any change
    # The key step's done-check reads apt's own InRelease now, verified with sqv under apt's
    # policy: the keyring is done; with the InRelease changed, it is not, in sqv's words.
    key_line = "Fetch the signing key, check fingerprint"
    again = _install_rocm(root, vendor_repo)
    assert again.returncode == 0 and "Nothing to do" in again.stdout, again.stdout + again.stderr
    assert _line(again.stdout, key_line).endswith("(already done)"), again.stdout
    # AMD's suite for Debian 13 is noble (repos.json amd.suites, from AMD's docs' conf.py).
    assert "noble main" in (root / "etc/apt/sources.list.d/rocm.list").read_text()
    lists = next((root / "var/lib/apt/lists").glob("*rocm_apt_7.2.4_dists_noble_InRelease"))
    lists.write_bytes(lists.read_bytes().replace(b"Codename: noble", b"Codename: noblx"))
    dry = gpuenv("install", "rocm", "--root", str(root), "--user", "alice", "--dry-run", env=vendor_repo.env)
    assert not _line(dry.stdout, key_line).endswith("(already done)"), dry.stdout + dry.stderr


def _line(text: str, start: str) -> str:
    return next(ln.strip() for ln in text.splitlines() if start in ln)


def test_a_sha1_signed_repository_is_refused_before_any_change_with_apts_reason(
    trixie_chroot, vendor_repo, tmp_path
):
    root = copy_root(trixie_chroot, tmp_path / "root")
    give_machine(root, AMD_GPU)
    before = manifest(root, VOLATILE)
    with resigned(vendor_repo, tmp_path / "sha1", "SHA1") as sha1:
        res = _install_rocm(root, sha1)
        assert res.returncode == 3, res.stdout + res.stderr
        assert "apt here would refuse the repository" in res.stdout + res.stderr
        assert "sqv: " in res.stdout + res.stderr and "SHA1" in res.stdout + res.stderr, res.stdout + res.stderr
        assert manifest(root, VOLATILE) == before
        # apt itself refuses it for the same reason: the same source and keyring, apt-get update.
        (root / "etc/apt/keyrings").mkdir(parents=True, exist_ok=True)
        (root / "etc/apt/keyrings/t.gpg").write_bytes(sha1.keyring())
        (root / "etc/apt/sources.list.d/t.list").write_text(
            f"deb [signed-by=/etc/apt/keyrings/t.gpg] {sha1.url}/amd/rocm/apt/7.2.4 noble main\n"
        )
        update = in_root(root, "apt-get", "update", check=False)
    assert "SHA1" in update.stdout + update.stderr and "not signed" in update.stdout + update.stderr, update


# --------------------------------------------------------------------------------------------
# bootstrap.sh on a fresh Debian 13 box: gpgv installed, the install gets past the key checks


@pytest.fixture(scope="module")
def trixie_box(trixie_chroot, tmp_path_factory):
    """trixie + python3 and a local repository of what bootstrap.sh installs (test_provision's
    fresh box, on Debian 13); a wheelhouse for its python3."""
    from tests.chroot_env import in_root
    from tests.test_provision import _python_chroot, build_wheel_and_wheelhouse

    root = _python_chroot(trixie_chroot, tmp_path_factory.mktemp("trixie-provision") / "root", "trixie")
    version = in_root(root, "python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])").stdout.strip()
    return root, build_wheel_and_wheelhouse(tmp_path_factory.mktemp("gpuenv-wheel-trixie"), (version,))


@pytest.mark.timeout(1500)
def test_bootstrap_on_a_fresh_debian_13_installs_gpgv_and_gets_past_the_key_checks(trixie_box, vendor_repo, tmp_path):
    from tests.test_provision import box_of

    python_root, wheel_and_house = trixie_box
    # ROCm: the mirror serves AMD's suites; NVIDIA's Debian 13 repository (ubuntu2404) it does not.
    box = box_of(python_root, vendor_repo, wheel_and_house, tmp_path, AMD_GPU)
    args = ("sh", "/usr/local/sbin/gpuenv-bootstrap", "--stack", "rocm", "--user", "alice",
            "--wheel", box.wheel, "--sha256", box.sha256)  # fmt: skip
    assert "gpgv" not in box.packages() and "gpg" not in box.packages()
    dry = box.run(*args, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "apt-get install --no-install-recommends python3-venv ca-certificates gpg gpgv" in dry.stdout, dry.stdout
    first = box.run(*args)
    out = first.stdout + first.stderr
    assert first.returncode == 10, out  # the driver's reboot: every step before it ran
    pkgs = box.packages()
    assert "gpg" in pkgs and "gpgv" in pkgs, pkgs
    assert all(p in pkgs for p in ("rocm", "amdgpu-dkms")), pkgs
    assert "not installed on this machine" not in out + (box.root / "var/log/gpuenv/bootstrap.log").read_text()


# --------------------------------------------------------------------------------------------
# sqv under apt's policy, in the root: a weak key is refused as a SHA-1 signature is


def test_sqv_in_the_root_refuses_a_dsa_key_and_accepts_an_rsa_one(trixie_chroot, tmp_path_factory):
    """apt 3.0's policy (/usr/share/apt/default-sequoia.config) ends DSA keys on 2024-02-01:
    gpgv accepts such a signature, sqv as apt runs it does not, in its own words."""
    from gpuenv.execute import signatures
    from gpuenv.execute.runner import Runner
    from tests.gpg_home import gpg_home

    root = str(trixie_chroot)
    assert signatures.verifier(root) == "sqv" and signatures.policy(root) == "/usr/share/apt/default-sequoia.config"
    with gpg_home(tmp_path_factory) as (home, gpg):
        release = home / "Release"
        release.write_text("Origin: test\nSuite: stable\n")
        verdicts = {}
        for algo in ("dsa2048", "rsa3072"):
            gpg("--quick-gen-key", f"{algo} <{algo}@x>", algo, "sign", "0")
            signed = gpg("--local-user", f"{algo}@x", "--clearsign", "-o", "-", str(release))
            verdicts[algo] = signatures.verify(Runner(root), root, gpg("--export", f"{algo}@x"), signed)
    assert verdicts["rsa3072"] is None
    assert verdicts["dsa2048"] and verdicts["dsa2048"].startswith("sqv: ") and "DSA" in verdicts["dsa2048"], verdicts
