"""`gpuenv report PATH...`: the fleet view, through the CLI, over fixture trees of mixed files.

tests/fleet/fetched/ is a fleet as the files arrive: one directory per host holding facts.json
(gpuenv probe --json), doctor.json and verify.json, a bootstrap's status.json where Ansible's fetch
puts it (boot1/var/lib/gpuenv/status.json), and what goes wrong: an empty file, a truncated one,
a file of another gpuenv schema, a text file. tests/fleet/plain/ holds files named for their
host (web7.doctor.json) or named by their document (laptop-probe.json: hostname ana-laptop).
The fixtures are dated 2026-12-01; tests that judge staleness copy them and re-date the copies.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gpuenv.fleet.model import Entry, Seen, Unreadable, parse_time, summarize
from gpuenv.fleet.sources import File, entries_of, host_of
from tests.cli_runner import invoke
from tests.schemas import validate

HERE = Path(__file__).resolve().parent
FLEET = HERE / "fleet"
HOSTS = [
    "a100-old",
    "ada-01",
    "ana-laptop",
    "boot1",
    "broken",
    "mi300x-01",
    "mi300x-02",
    "odd",
    "rtx-ws",
    "web7",
]
NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def stamp(when: datetime.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def redated(tmp_path: Path, old: dict[str, float] | None = None) -> Path:
    """A copy of tests/fleet dated an hour ago, except the hosts in ``old`` (host -> age in days)."""
    dest = tmp_path / "fleet"
    shutil.copytree(FLEET, dest)
    for path in dest.rglob("*.json"):
        try:
            doc = json.loads(path.read_text())
        except ValueError:
            continue
        rel = path.relative_to(dest).parts
        host = rel[1]  # fetched/HOST/...
        if rel[0] == "plain":
            host = "ana-laptop" if path.name == "laptop-probe.json" else path.name.split(".")[0]
        when = stamp(NOW - datetime.timedelta(days=(old or {}).get(host, 1 / 24)))
        if isinstance(doc, dict):
            for key in ("collected_at", "finished_at"):
                if key in doc:
                    doc[key] = when
            if isinstance(doc.get("verify"), dict):
                doc["verify"]["collected_at"] = when
        path.write_text(json.dumps(doc))
    return dest


def report_json(*args) -> tuple[int, dict]:
    result = invoke(["report", "--json", *map(str, args)])
    assert result.exception is None, repr(result.exception)
    doc = json.loads(result.stdout)
    validate(doc, "fleet")
    return result.exit_code, doc


def by_code(doc: dict) -> dict[str, dict]:
    return {c["code"]: c for c in doc["codes"]}


def by_host(doc: dict) -> dict[str, dict]:
    return {h["name"]: h for h in doc["hosts"]}


# -- what the report says -----------------------------------------------------------------------


def test_each_code_with_how_many_hosts_and_which():
    code, doc = report_json(FLEET, "--max-age", "100000")
    assert code == 1  # hosts with errors, and unreadable files
    codes = by_code(doc)
    assert (
        codes["torch.arch-missing"]["hosts"] == ["boot1", "rtx-ws"]
        and codes["torch.arch-missing"]["count"] == 2
    )
    assert codes["verify.arch-missing"]["hosts"] == ["rtx-ws"]
    assert codes["verify.no-gpu-visible"]["hosts"] == ["boot1"]  # from the status file's verify result
    assert codes["nvidia.nouveau-loaded"] == {
        "code": "nvidia.nouveau-loaded",
        "severity": "error",
        "title": codes["nvidia.nouveau-loaded"]["title"],
        "count": 1,
        "hosts": ["a100-old"],
    }
    assert codes["torch.not-installed"]["severity"] == "info"
    counts = [c["count"] for c in doc["codes"]]
    assert counts == sorted(counts, reverse=True)  # most hosts first
    s = doc["summary"]
    assert s["hosts"] == len(HOSTS) and s["files"] == 19 and s["verify_failed"] == 2
    assert (s["hosts_with_errors"], s["hosts_ok"], s["hosts_facts_only"]) == (
        3,
        4,
        1,
    )  # ana-laptop: facts only
    assert sorted({h["name"] for h in doc["hosts"]} | {u["host"] for u in doc["unreadable"]}) == HOSTS


def test_machines_grouped_by_gpu_model_driver_and_stack():
    _, doc = report_json(FLEET, "--max-age", "100000")
    groups = {(g["gpu_model"], g["driver"], g["stack"]): g["hosts"] for g in doc["groups"]}
    assert groups[("8× AMD Instinct MI300X", "amdgpu 6.12.12", "ROCm 7.2.0")] == ["mi300x-01", "mi300x-02"]
    # boot1 has no facts file: its verify result carries the machine, and groups it with rtx-ws.
    assert groups[("1× NVIDIA GeForce RTX 5090", "nvidia 570.133.07", "none")] == ["boot1", "rtx-ws"]
    assert groups[("1× NVIDIA A100 SXM4 80GB", "nouveau", "none")] == ["a100-old"]
    assert groups[("no GPU", "none", "none")] == ["ana-laptop"]
    # A doctor report alone: the stack it judged, the rest unknown.
    assert groups[("unknown", "unknown", "ROCm 7.2.4")] == ["web7"]
    assert doc["groups"][0]["count"] == 2


def test_unreadable_files_are_named_with_their_host_and_never_fatal():
    _, doc = report_json(FLEET, "--max-age", "100000")
    why = {u["host"]: u["error"] for u in doc["unreadable"]}
    assert set(why) == {"broken", "mi300x-02", "odd"}
    assert "not valid JSON" in why["broken"] and "broken/doctor.json" in why["broken"]
    assert "not valid JSON" in why["mi300x-02"]
    assert "schema 'gpuenv.plan/1' is not a gpuenv facts, doctor, verify or status document" in why["odd"]
    hosts = by_host(doc)
    assert hosts["mi300x-02"]["kinds"] == ["facts", "doctor"]  # its other files still count
    assert doc["summary"]["files_unreadable"] == 3 and doc["summary"]["hosts_unreadable"] == 3
    assert "README.txt" not in json.dumps(doc)  # only *.json files are read


@pytest.mark.parametrize("schema", [["gpuenv.facts/1"], {"name": "gpuenv.facts/1"}, 1])
def test_a_schema_that_is_no_string_is_no_gpuenv_document(schema):
    # A list or an object is unhashable: it once ended as "could not be summarised (TypeError)".
    with pytest.raises(ValueError, match="is not a gpuenv facts, doctor, verify or status document"):
        entries_of(File("odd/x.json"), {"schema": schema}, None)


def test_each_host_merges_its_files():
    _, doc = report_json(FLEET, "--max-age", "100000")
    rtx = by_host(doc)["rtx-ws"]
    assert rtx["kinds"] == ["facts", "doctor", "verify"] and rtx["verify"] == "failed"
    assert rtx["torch"] == "2.6.0+cu126"  # the facts' torch (what doctor judged)
    assert rtx["summary"] == {"error": 2, "warning": 0, "info": 0}
    boot = by_host(doc)["boot1"]
    assert boot["kinds"] == ["doctor", "verify"] and boot["state"] == "done"
    assert boot["files"] == [str(FLEET / "fetched/boot1/var/lib/gpuenv/status.json")]
    assert by_host(doc)["ada-01"]["verify"] == "passed" and by_host(doc)["ada-01"]["summary"]["error"] == 0


def test_stale_hosts_are_listed_with_their_age(tmp_path):
    fleet = redated(tmp_path, old={"a100-old": 30})
    code, doc = report_json(fleet)
    (stale,) = doc["stale"]
    assert stale["host"] == "a100-old" and 29.9 <= stale["age_days"] <= 30.1
    assert sorted(Path(f).name for f in stale["files"]) == ["facts.json"]  # doctor.json carries no date
    assert doc["summary"]["hosts_stale"] == 1
    _, doc = report_json(fleet, "--max-age", "45")
    assert doc["stale"] == []


def test_a_healthy_fresh_fleet_exits_0(tmp_path):
    fleet = redated(tmp_path)
    assert report_json(fleet / "fetched" / "ada-01", fleet / "fetched" / "mi300x-01")[0] == 0
    assert report_json(fleet / "fetched")[0] == 1


def test_the_newest_document_of_each_kind_counts(tmp_path):
    host = tmp_path / "fleet" / "gpu7"
    (host / "var/lib/gpuenv").mkdir(parents=True)
    doctor = json.loads((FLEET / "fetched/a100-old/doctor.json").read_text())
    (host / "doctor.json").write_text(json.dumps(doctor))  # undated, with errors
    healthy = json.loads((FLEET / "fetched/ada-01/doctor.json").read_text())
    status = {"schema": "gpuenv.status/1", "state": "done", "exit": 0, "doctor": healthy, "verify": None,
              "finished_at": stamp(NOW)}  # fmt: skip
    (host / "var/lib/gpuenv/status.json").write_text(json.dumps(status))
    code, doc = report_json(tmp_path / "fleet")
    (gpu7,) = doc["hosts"]
    assert gpu7["name"] == "gpu7" and gpu7["summary"]["error"] == 0 and code == 0
    assert len(gpu7["files"]) == 2


def test_the_ansible_roles_layout_one_directory_of_host_kind_files(tmp_path):
    flat = tmp_path / "gpuenv-reports"
    flat.mkdir()
    for host in ("mi300x-01", "rtx-ws"):
        for kind in ("facts", "doctor", "verify"):
            shutil.copy(FLEET / "fetched" / host / f"{kind}.json", flat / f"{host}.example.com.{kind}.json")
    _, doc = report_json(flat, "--max-age", "100000")
    assert [h["name"] for h in doc["hosts"]] == ["mi300x-01.example.com", "rtx-ws.example.com"]
    assert all(h["kinds"] == ["facts", "doctor", "verify"] for h in doc["hosts"])


def test_the_same_file_named_twice_counts_once():
    _, doc = report_json(FLEET / "plain", FLEET / "plain" / "web7.doctor.json", "--max-age", "100000")
    assert doc["summary"]["files"] == 2 and [h["name"] for h in doc["hosts"]] == ["ana-laptop", "web7"]


@pytest.mark.parametrize(
    "path, named, host",
    [
        ("fleet/gpu1/doctor.json", None, "gpu1"),
        ("fleet/gpu1/facts.json", "ip-10-0-0-1", "gpu1"),  # the directory is the inventory's name
        ("out/gpu1/var/lib/gpuenv/status.json", None, "gpu1"),
        ("reports/gpu1.example.com.verify.json", "localhost", "gpu1.example.com"),
        ("reports/laptop-probe.json", "ana-laptop", "ana-laptop"),
        ("reports/web3.json", None, "web3"),
    ],
)
def test_which_host_a_file_belongs_to(path, named, host):
    assert host_of(File(path), named) == host


# -- robustness ---------------------------------------------------------------------------------


def test_a_fifo_or_a_directory_named_json_does_not_hang_or_stop_the_report(tmp_path):
    fleet = tmp_path / "fleet"
    shutil.copytree(FLEET / "fetched" / "ada-01", fleet / "ada-01")
    os.mkfifo(fleet / "ada-01" / "pipe.json")
    code, doc = report_json(fleet, "--max-age", "100000")
    (bad,) = doc["unreadable"]
    assert bad["host"] == "pipe" and "not a regular file" in bad["error"]
    assert code == 1 and [h["name"] for h in doc["hosts"]] == ["ada-01"]


@pytest.mark.parametrize(
    "doc, words",
    [
        ([1, 2], "expected a JSON object"),
        ({"schema": "gpuenv.facts/1", "gpus": "many"}, "facts"),
        ({"schema": "gpuenv.report/1", "findings": {"a": 1}}, "without its findings list"),
        (
            {"schema": "gpuenv.report/1", "findings": [{"code": "x.y", "severity": "fatal"}]},
            "a code and a severity",
        ),
        ({"schema": "gpuenv.verify/1", "findings": [None]}, "a code and a severity"),
        (
            {"schema": "gpuenv.status/1", "state": "failed", "doctor": "x", "verify": None},
            "holding no doctor",
        ),
        (
            {"schema": "gpuenv.report/1", "source": "a.json", "error": "facts a.json: not valid JSON"},
            "unreadable",
        ),
    ],
)
def test_documents_of_the_wrong_shape_are_unreadable_not_fatal(tmp_path, doc, words):
    (tmp_path / "h1.json").write_text(json.dumps(doc))
    shutil.copy(FLEET / "plain" / "web7.doctor.json", tmp_path)
    code, out = report_json(tmp_path, "--max-age", "100000")
    (bad,) = out["unreadable"]
    assert bad["host"] == "h1" and words in bad["error"], bad
    assert [h["name"] for h in out["hosts"]] == ["web7"] and code == 1


def test_hostile_strings_are_escaped_in_the_page(tmp_path):
    doc = json.loads((FLEET / "fetched/ada-01/doctor.json").read_text())
    doc["findings"] = [{"code": "gpu.unknown", "severity": "warning", "title": "<script>alert(1)</script>",
                        "detail": "", "fix": ""}]  # fmt: skip
    (tmp_path / "evil&co.doctor.json").write_text(json.dumps(doc))
    page = tmp_path / "out.html"
    assert invoke(["report", tmp_path / "evil&co.doctor.json", "--html", page]).exit_code == 0
    text = page.read_text()
    assert "<script" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "evil&amp;co" in text


# -- the page, the terminal, usage --------------------------------------------------------------


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []
        self.rects = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        self.rects += tag == "rect"

    def handle_data(self, data):
        self.text.append(data)


def test_the_html_page_is_self_contained_and_holds_every_host_and_code(tmp_path):
    page_path = tmp_path / "fleet.html"
    result = invoke(["report", FLEET, "--max-age", "100000", "--html", page_path])
    assert result.exit_code == 1 and f"wrote {page_path}" in result.stdout
    _, doc = report_json(FLEET, "--max-age", "100000")
    page = Page()
    page.feed(page_path.read_text())
    text = " ".join(page.text)
    for host in HOSTS:
        assert host in text, host
    for code in (c["code"] for c in doc["codes"]):
        assert code in text, code
    assert page.rects == len(doc["codes"])  # one bar per code in the chart
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    links = [v for k, v in page.attrs if k in ("src", "href") and v]
    assert links == []
    assert not [
        v for _, v in page.attrs if v and v.startswith(("http://", "https://")) and "w3.org/2000/svg" not in v
    ]


def test_the_terminal_view():
    result = invoke(["report", FLEET, "--max-age", "100000"], env={"COLUMNS": "200"})
    assert result.exit_code == 1 and result.stderr == ""
    out = result.stdout
    assert out.startswith("10 hosts (19 files), 3 with errors")
    assert "2 failed verify" in out and "3 unreadable files" in out
    for words in ("Findings by host count", "torch.arch-missing", "boot1, rtx-ws", "Machines by GPU model",
                  "8× AMD Instinct MI300X", "Unreadable files", "broken"):  # fmt: skip
        assert words in out, words


def test_many_hosts_are_summarised_in_the_terminal():
    entries = [Entry(f"/f/h{i}.doctor.json", f"h{i}", "doctor", findings=(Seen("gpu.none", "info", "t"),))
               for i in range(20)]  # fmt: skip
    report = summarize(entries, [], NOW)
    from gpuenv.render.fleet import names

    assert names(report.codes[0].hosts) == "h0, h1, h2, h3, h4, h5, h6, h7, … and 12 more"
    assert report.hosts[2].name == "h2" and report.hosts[10].name == "h10"  # natural order


def test_summarize_is_pure_and_counts_unreadable_only_hosts():
    report = summarize([], [Unreadable("/f/x/facts.json", "x", "file /f/x/facts.json: not valid JSON")], NOW)
    assert report.summary()["hosts"] == 1 and report.summary()["hosts_unreadable"] == 1
    assert report.exit_code() == 1 and report.hosts == ()
    assert parse_time("2026-12-01T10:00:00Z") == datetime.datetime(
        2026, 12, 1, 10, tzinfo=datetime.timezone.utc
    )
    assert parse_time("yesterday") is None


@pytest.mark.parametrize(
    "args, words",
    [
        (["/nonexistent/fleet"], "no such file or directory"),
        (["{empty}"], "no .json files found"),
        (["{fleet}", "--max-age", "0"], "positive number"),
        (["{fleet}", "--html", "/nonexistent/dir/x.html"], "cannot write"),
        ([], "the following arguments are required: PATH"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, words, tmp_path):
    (tmp_path / "empty").mkdir()
    args = [a.format(empty=tmp_path / "empty", fleet=FLEET / "plain") for a in args]
    result = invoke(["report", *args])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and words in result.stderr, result.stderr


def test_html_is_never_written_through_a_planted_temporary_name(tmp_path):
    """Issue 40: `report --html FILE` wrote FILE.tmpPID without O_EXCL: a link planted under that
    name (in a directory others can write) sent root's page into the file it leads to. Now the
    page goes through a new file of its own, and the link and its target are left alone."""
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    shutil.copy(Path(__file__).parent / "fleet/plain/web7.doctor.json", fleet)
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    page = tmp_path / "out.html"
    (tmp_path / f"out.html.tmp{os.getpid()}").symlink_to(victim)  # the old name, in this process
    result = invoke(["report", str(fleet), "--html", str(page)])
    assert result.exception is None and result.exit_code in (0, 1), result.stderr
    assert victim.read_text() == "keep me\n"
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["fleet", "victim", "out.html", f"out.html.tmp{os.getpid()}"])
