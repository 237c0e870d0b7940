"""Reports people paste: --format markdown (no ANSI, findings with fenced fixes, facts folded in
<details>), --redact (nothing identifying of a fixture survives, stable placeholders, the one
notice line), and the facts round trip (doctor on a sysroot = doctor on its probe --json)."""

from __future__ import annotations

import json
import re

import pytest

from gpuenv.redact import Redactor
from tests.cli_runner import invoke
from tests.probe_helpers import ROOTS, args_of, cli_args, machines
from tests.schemas import validate

MACHINES = machines()
ANSI = re.compile(r"\x1b\[")


def identifying(machine: str) -> list[str]:
    """What identifies the machine or its people in a fixture: hostname, user names and their home
    paths, GPU UUIDs, and the command line's secrets and addresses."""
    root = ROOTS / machine
    out = []
    hostname = (root / "etc/hostname").read_text().strip() if (root / "etc/hostname").is_file() else ""
    if hostname:
        out.append(hostname)
    user = args_of(machine).get("user")
    if user and user != "root":
        out.append(f"/home/{user}")
        if user not in ("ubuntu", "admin"):  # generic names stay where they are words (os ID "ubuntu")
            out.append(user)
    cmdline = (root / "proc/cmdline").read_text() if (root / "proc/cmdline").is_file() else ""
    for m in re.finditer(r"UUID=([^\s]+)", cmdline):
        out.append(m.group(1))
    out += re.findall(r"(?:\d{1,3}\.){3}\d{1,3}", cmdline)
    out += re.findall(r"://([^@/\s]+)@", cmdline)
    out += re.findall(r"\.token=([^\s]+)", cmdline)
    return out


@pytest.mark.parametrize("machine", MACHINES)
def test_markdown_report_of_every_fixture_hides_what_identifies_it(machine):
    res = invoke(["doctor", "--format", "markdown", *cli_args(machine)])
    assert res.exit_code in (0, 1), res.stderr
    md = res.stdout
    assert not ANSI.search(md)
    assert (
        md.startswith("**gpuenv doctor: ") and "<details><summary>Facts (gpuenv probe --json)</summary>" in md
    )
    assert "> redacted: " in md and "pass --no-redact to keep them" in md
    for secret in identifying(machine):
        assert secret not in md, f"{machine}: {secret!r} survived redaction"
    probe = invoke(["probe", "--format", "markdown", *cli_args(machine)])
    assert probe.exit_code == 0 and not ANSI.search(probe.stdout)
    for secret in identifying(machine):
        assert secret not in probe.stdout, f"{machine}: {secret!r} survived in probe markdown"


def test_the_loader_fixture_has_secrets_to_hide():
    secrets = identifying("debian12-kvm-cuda118-gcc12-loader")
    assert {"gpu-box-07", "carol", "/home/carol", "3f1b2c4d-5e6f-4a1b-9c2d-7e8f9a0b1c2d", "192.168.10.20",
            "deploy:Kick5tart", "a8f3c1d9e7b2"} <= set(secrets)  # fmt: skip
    md = invoke(["doctor", "--format", "markdown", *cli_args("debian12-kvm-cuda118-gcc12-loader")]).stdout
    line = next(ln for ln in md.splitlines() if ln.startswith("> redacted: "))
    for kind in (
        "hostname",
        "user names",
        "UUIDs",
        "kernel command line secrets",
        "IP addresses",
        "URL credentials",
    ):
        assert kind in line
    assert (
        "| User | &lt;user-1&gt; (groups: " in md
    )  # escaped outside code blocks (GitHub would eat <user-1>)
    assert "root=UUID=<uuid-1>" in md  # the command line, in the facts JSON block
    assert '"hostname": "<host-1>"' in md  # and literal inside the JSON block


def test_markdown_findings_have_their_fix_in_a_fenced_block():
    md = invoke(["doctor", "--format", "markdown", *cli_args("debian12-kvm-cuda118-gcc12-loader")]).stdout
    assert (
        "#### ! warning: nvcc of CUDA 11.8 does not support GCC 12 (newer than GCC 11) (`cuda.host-compiler`)"
        in md
    )
    block = md.split("(`cuda.host-compiler`)", 1)[1]
    assert "Fix:\n\n```sh\nsudo apt-get install gcc-11 g++-11" in block
    assert md.count("<details>") == 3 and md.count("</details>") == 3


def test_no_redact_keeps_the_hostname():
    args = cli_args("debian12-kvm-cuda118-gcc12-loader")
    md = invoke(["doctor", "--format", "markdown", "--no-redact", *args]).stdout
    assert "gpu-box-07" in md and "> not redacted: " in md and "pass --redact to hide them" in md


def test_json_is_not_redacted_by_default_and_adds_nothing_on_stderr():
    args = cli_args("debian12-kvm-cuda118-gcc12-loader")
    res = invoke(["probe", "--json", *args])
    assert json.loads(res.stdout)["host"]["hostname"] == "gpu-box-07"
    assert res.stderr == ""  # a notice on every scripted run is noise: markdown, for sharing, says it
    res = invoke(["probe", "--format", "json", "--redact", *args])
    doc = json.loads(res.stdout)
    validate(doc, "facts")  # placeholders keep the document valid
    assert doc["host"]["hostname"] == "<host-1>" and doc["user"]["name"] == "<user-1>"
    assert res.stderr == ""
    res = invoke(["doctor", "--json", "--redact", *args])
    validate(json.loads(res.stdout), "report")


def test_json_and_markdown_together_is_a_usage_error():
    res = invoke(["doctor", "--json", "--format", "markdown", *cli_args("vm-xen-debian12")])
    assert res.exit_code == 2 and "alternatives" in res.stderr


def test_markdown_with_many_facts_files_is_a_usage_error():
    facts = ROOTS.parent / "facts"
    res = invoke(["doctor", "--format", "markdown", "--facts", str(facts / "doctor-healthy-cuda.json"),
                  "--facts", str(facts / "doctor-healthy-rocm.json")])  # fmt: skip
    assert res.exit_code == 2 and "one machine" in res.stderr


def test_placeholders_are_stable_within_one_redactor():
    facts = {"host": {"hostname": "lab-ws-12"}, "user": {"name": "zoe", "groups": ["zoe", "video"]},
             "gpus": [{"uuid": "GPU-11111111-2222-4333-8444-555555555555"}],
             "kernel": {"cmdline": "root=UUID=aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee quiet"}}  # fmt: skip
    r = Redactor.for_facts(facts)
    doc = r.apply(facts)
    assert doc["host"]["hostname"] == "<host-1>" and doc["user"] == {
        "name": "<user-1>",
        "groups": ["<user-1>", "video"],
    }
    assert doc["gpus"][0]["uuid"] == "<uuid-1>" and doc["kernel"]["cmdline"] == "root=UUID=<uuid-2> quiet"
    again = r.text("zoe on lab-ws-12 with GPU-11111111-2222-4333-8444-555555555555, /home/zoe and /home/yan")
    assert again == "<user-1> on <host-1> with <uuid-1>, /home/<user-1> and /home/<user-2>"


def test_generic_names_are_not_replaced_inside_words():
    facts = {"host": {"hostname": "ubuntu"}, "user": {"name": "ubuntu", "groups": ["ubuntu"]},
             "os": {"id": "ubuntu", "pretty_name": "Ubuntu 24.04.3 LTS"}}  # fmt: skip
    doc = Redactor.for_facts(facts).apply(facts)
    assert (
        doc["os"] == facts["os"]
        and doc["user"]["name"] == "<user-1>"
        and doc["host"]["hostname"] == "<host-1>"
    )


@pytest.mark.parametrize("machine", MACHINES)
def test_facts_round_trip_gives_the_same_findings(machine, tmp_path):
    direct = invoke(["doctor", "--json", *cli_args(machine)])
    probed = invoke(["probe", "--json", *cli_args(machine)])
    path = tmp_path / "facts.json"
    path.write_text(probed.stdout)
    judged = invoke(["doctor", "--json", "--facts", str(path)])
    assert direct.exit_code == judged.exit_code
    a, b = json.loads(direct.stdout), json.loads(judged.stdout)
    assert a["findings"] == b["findings"] and a["facts_digest"] == b["facts_digest"]
