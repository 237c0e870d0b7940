"""A throwaway gpg home for tests that make their own keys (skipped where gpg is missing)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

import pytest


@contextlib.contextmanager
def gpg_home(tmp_path_factory):
    """(home, gpg) where gpg(*args) runs gpg in that home and returns its stdout; the agent it
    starts is stopped afterwards (tests leave no process running)."""
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    home = tmp_path_factory.mktemp("gnupg")
    os.chmod(home, 0o700)

    def gpg(*args):
        return subprocess.run(
            ["gpg", "--homedir", str(home), "--batch", "--passphrase", "", *args], capture_output=True, check=True
        ).stdout

    try:
        yield home, gpg
    finally:
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], check=False, capture_output=True)
