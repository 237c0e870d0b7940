"""advise's NVIDIA-only table (issue 41): every package of class cuda-only cites the page that says
it has no ROCm build and the day it was read (``checked``), or says why no page could be cited
(``unsourced``); the freshness tool reports the oldest date offline and fails on an entry that has
neither. The re-fetch of each page needs the network and is not run here."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
from pathlib import Path

MATRICES = Path(__file__).resolve().parent.parent / "matrices"
TOOLS = MATRICES / "tools"
sys.path.insert(0, str(TOOLS))

import advise_table  # noqa: E402


def freshness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", str(TOOLS / "freshness"), "--offline", *args],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip


def bundled() -> dict:
    return json.loads((MATRICES / "advise.json").read_text(encoding="utf-8"))


def test_every_nvidia_only_entry_cites_a_page_and_the_day_it_was_read():
    doc = bundled()
    entries = advise_table.cuda_only(doc)
    assert len(entries) >= 10 and advise_table.problems(doc, datetime.date(2026, 12, 7)) == []
    for e in entries:
        assert e.get("unsourced") or (advise_table.cited(e) or "").startswith("https://"), e["id"]
    ident, day = advise_table.oldest(doc)
    assert day == min(datetime.date.fromisoformat(e["checked"]) for e in entries if "checked" in e)


def test_the_consistency_rule_names_an_entry_without_a_page_or_a_date():
    doc = {"packages": [
        {"id": "ok", "class": "cuda-only", "source": "https://example.org/req (NVIDIA GPU)", "checked": "2026-12-01"},
        {"id": "undated", "class": "cuda-only", "source": "https://example.org/req"},
        {"id": "no-url", "class": "cuda-only", "source": "the README", "checked": "2026-12-02"},
        {"id": "bad-day", "class": "cuda-only", "source": "https://example.org/x", "checked": "December"},
        {"id": "future", "class": "cuda-only", "source": "https://example.org/x", "checked": "2027-01-01"},
        {"id": "why-not", "class": "cuda-only", "source": "vendor slides", "unsourced": "no public page found"},
        {"id": "silent", "class": "cuda-only", "source": "x", "unsourced": " "},
        {"id": "portable", "class": "official", "source": "x"},
    ], "images": [
        {"id": "nim-like", "class": "cuda-only", "source": "https://example.org/nim"},
        {"id": "rocm-tag", "class": "official", "source": "x"},
    ]}  # fmt: skip
    found = advise_table.problems(doc, datetime.date(2026, 12, 7))
    named = [line.split(":", 1)[0].rsplit(" ", 1)[-1] for line in found]
    assert named == ["undated", "no-url", "bad-day", "future", "silent", "nim-like"]
    assert found[-1].startswith("advise.json images nim-like: no 'checked' date")
    assert advise_table.oldest(doc) == ("ok", datetime.date(2026, 12, 1))
    assert "unsourced: why-not, silent" in advise_table.summary(doc, datetime.date(2026, 12, 7))


def test_freshness_reports_the_oldest_check_offline_and_fails_on_an_undated_entry(tmp_path):
    done = freshness("--today", "2027-06-01")
    assert done.returncode == 0, done.stdout + done.stderr
    ident, day = advise_table.oldest(bundled())
    line = next(x for x in done.stdout.splitlines() if x.strip().startswith("NVIDIA-only table"))
    assert f"oldest checked: {ident} on {day} ({(datetime.date(2027, 6, 1) - day).days} days ago)" in line
    copy = tmp_path / "matrices"
    shutil.copytree(MATRICES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    doc = bundled()
    del next(e for e in doc["packages"] if e["id"] == "tensorrt")["checked"]
    (copy / "advise.json").write_text(json.dumps(doc))
    done = freshness("--dir", str(copy), "--today", "2027-06-01")
    assert done.returncode == 1
    assert "inconsistent: advise.json packages tensorrt: no 'checked' date (YYYY-MM-DD) for its cited page" in done.stdout


def test_recheck_reads_each_cited_page_and_says_which_were_not_reached():
    def get(url: str) -> str:
        if "rapids" in url:
            raise OSError("no network")
        return "<html>NVIDIA GPU</html>"

    lines = advise_table.recheck(bundled(), get)
    assert any(x.startswith("rapids: https://docs.rapids.ai/platform-support not reached (OSError)") for x in lines)
    assert any(x.startswith("tensorrt: https://docs.nvidia.com/") and "reached (23 characters)" in x for x in lines)
