"""gpuenv.standins.checksum: the built-in sha256 and its hashlib fallback give sha256sum's digests."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from gpuenv.standins.checksum import sha256_hex

VECTORS = [
    (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
]


@pytest.mark.parametrize("data, hexdigest", VECTORS)
def test_known_vectors(data, hexdigest):
    assert sha256_hex(data) == hexdigest


def test_same_as_hashlib_on_a_megabyte():
    data = bytes(range(256)) * 4096
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


# Without its own built-in module (3.12 renamed _sha256 to _sha2) a Python goes to hashlib; the
# other name is never its.
@pytest.mark.parametrize(
    "blocked, via_hashlib",
    [
        (("_sha2",), sys.version_info >= (3, 12)),
        (("_sha256",), sys.version_info < (3, 12)),
        (("_sha2", "_sha256"), True),
    ],
)
def test_the_fallbacks_give_the_same_digest(blocked, via_hashlib):
    # A build without the newer (or without any) built-in module: blocked in sys.modules, so
    # importing it raises ImportError as a missing module would.
    code = (
        "import sys\n"
        + "".join(f"sys.modules[{name!r}] = None\n" for name in blocked)
        + "from gpuenv.standins import checksum\n"
        "print('hashlib' in sys.modules, checksum.sha256_hex(b'abc'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(via_hashlib), VECTORS[1][1]]


def test_the_doctor_path_does_not_load_openssl():
    code = "import sys; from gpuenv.standins import checksum; checksum.sha256_hex(b''); print('_hashlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
