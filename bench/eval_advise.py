"""`gpuenv advise` on real projects' source distributions from PyPI: verdicts and timings.

    python3 bench/eval_advise.py [NAME[==VERSION] ...]

For each project (default: flash-attn, bitsandbytes, xformers, vllm) it finds the sdist through
PyPI's simple API (PEP 691 JSON, what pip reads), downloads it (at most 128 MiB, checked against
the index's sha256), unpacks it into a temporary directory (regular files and directories only:
no links, no absolute or .. paths) and times ``python -m gpuenv advise DIR --json``. For vLLM it
also advises on its requirements files alone. Nothing from the archives is built or run. It
prints, per tree: verdict, blockers and work by table entry, the share of lines needing a person,
and seconds. The verdicts are for a person to check against what each project documents about
ROCm (see the closing note of issue 11).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path, PurePosixPath

import requests

DEFAULT = ["flash-attn", "bitsandbytes", "xformers", "vllm"]
INDEX = "https://pypi.org/simple/{name}/"
MAX_BYTES = 128 << 20


def sdist(name: str, version: str | None) -> tuple[str, str, str]:
    """(filename, url, sha256) of the project's newest (or the given version's) .tar.gz sdist."""
    r = requests.get(INDEX.format(name=name), headers={"Accept": "application/vnd.pypi.simple.v1+json"}, timeout=60)
    r.raise_for_status()
    files = [f for f in r.json()["files"] if f["filename"].endswith(".tar.gz") and not f.get("yanked")]
    if version is not None:
        files = [f for f in files if f["filename"].rsplit("-", 1)[-1][: -len(".tar.gz")] == version]
    if not files:
        raise SystemExit(f"{name}: no sdist{' ' + version if version else ''} on PyPI")
    # Newest by upload time (PEP 700): file names sort 0.0.9 after 0.0.28.
    f = max(files, key=lambda f: f.get("upload-time") or "")
    return f["filename"], f["url"], f["hashes"]["sha256"]


def download(url: str, sha256: str) -> bytes:
    with requests.get(url, stream=True, timeout=120) as r:
        r.raise_for_status()
        data = io.BytesIO()
        for chunk in r.iter_content(1 << 20):
            data.write(chunk)
            if data.tell() > MAX_BYTES:
                raise SystemExit(f"{url}: larger than {MAX_BYTES} bytes")
    blob = data.getvalue()
    if hashlib.sha256(blob).hexdigest() != sha256:
        raise SystemExit(f"{url}: sha256 does not match the index")
    return blob


def unpack(blob: bytes, dest: Path) -> Path:
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts
            if not (member.isfile() or member.isdir()) or member.name.startswith("/") or ".." in parts:
                continue  # links, devices and paths out of dest are never unpacked
            target = dest.joinpath(*parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
    tops = [p for p in dest.iterdir()]
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else dest


def advise(tree: Path) -> tuple[float, dict]:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gpuenv", "advise", str(tree), "--json"], capture_output=True,
                          text=True)  # fmt: skip
    seconds = time.perf_counter() - t
    if done.returncode not in (0, 1, 5):  # 5: unknown, nothing to judge (a stub sdist)
        raise SystemExit(f"advise {tree}: exit {done.returncode}: {done.stderr.strip()}")
    return seconds, json.loads(done.stdout)


def report(label: str, seconds: float, doc: dict) -> None:
    lines = doc["lines"]
    print(f"{label}: {doc['verdict']}  ({seconds:.2f} s; {lines['need_person']:,} of {lines['source']:,} source "
          f"lines need a person = {lines['share']:.2%}; {doc['files']['sources']} sources, "
          f"{doc['files']['manifests']} manifests)")  # fmt: skip
    for level in ("blocker", "work"):
        uses: Counter[str] = Counter()
        for f in doc["findings"]:
            if f["verdict"] == level:
                uses[f"{f['name']} [{f['rule']}]"] += f["count"]
        for name, n in uses.most_common(8):
            print(f"    {level:7} {n:6,}  {name}")
    portable = sorted({f["name"] for f in doc["findings"] if f["verdict"] == "portable"})
    print(f"    portable: {', '.join(portable) if portable else '-'}")


def main() -> int:
    wanted = sys.argv[1:] or DEFAULT
    with tempfile.TemporaryDirectory(prefix="gpuenv-advise-eval.") as tmp:
        for spec in wanted:
            name, _, version = spec.partition("==")
            filename, url, sha = sdist(name, version or None)
            dest = Path(tmp) / name
            dest.mkdir()
            tree = unpack(download(url, sha), dest)
            seconds, doc = advise(tree)
            report(filename, seconds, doc)
            if name == "vllm":  # its requirements alone: what a project depending on vLLM pulls in
                reqs = Path(tmp) / "vllm-requirements"
                reqs.mkdir()
                for p in [*tree.glob("requirements*.txt"), *tree.glob("requirements/*.txt")]:
                    (reqs / p.relative_to(tree)).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(p, reqs / p.relative_to(tree))
                seconds, doc = advise(reqs)
                report(f"{filename} requirements only", seconds, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
