"""The facts seam: JSON round trip, digest and rejection of malformed documents."""

from __future__ import annotations

import json

import pytest

from gpuenv import facts as F

MINIMAL = {
    "schema": "gpuenv.facts/1",
    "host": {"arch": "x86_64"},
    "os": {"id": "ubuntu", "version_id": "24.04"},
    "kernel": {"release": "6.8.0-51-generic"},
    "platform": {"container": None, "wsl": False},
    "gpus": [{"vendor": "amd", "pci_id": "1002:7550", "pci_slot": "0000:03:00.0"}],
}


def test_round_trip_keeps_every_field():
    doc = json.loads(json.dumps(MINIMAL))
    doc["kernel"]["dkms"] = [{"module": "amdgpu", "version": "6.16.6", "kernel": "6.8.0-51-generic", "status": "installed"}]
    doc["packages"] = {"manager": "dpkg", "installed": {"rocm": "7.2.4.70204-1"}, "unconfigured": []}
    doc["python"] = {"packages": {"torch": "2.7.1+rocm6.3"}, "torch": {"version": "2.7.1+rocm6.3", "arch_list": ["gfx1201"]}}
    doc["device_nodes"] = {"/dev/kfd": {"exists": True, "mode": "0660", "group": "render", "accessible": False}}
    facts = F.from_dict(doc)
    assert facts.kernel.dkms[0].status == "installed"
    assert facts.python.torch.arch_list == ("gfx1201",)
    assert facts.device_nodes["/dev/kfd"].group == "render"
    again = F.from_dict(json.loads(facts.to_json()))
    assert again == facts


def test_unknown_fields_are_ignored_for_forward_compatibility():
    doc = dict(MINIMAL, fleet_tag="rack-7")
    assert F.from_dict(doc).host.arch == "x86_64"


def test_digest_ignores_volatile_fields_but_not_machine_state():
    a = F.from_dict(dict(MINIMAL, collected_at="2026-01-01T00:00:00Z"))
    b = F.from_dict(dict(MINIMAL, collected_at="2026-02-01T00:00:00Z"))
    assert a.digest() == b.digest()
    changed = json.loads(json.dumps(MINIMAL))
    changed["kernel"]["release"] = "6.8.0-52-generic"
    assert F.from_dict(changed).digest() != a.digest()
    assert a.digest().startswith("sha256:") and len(a.digest()) == 7 + 64


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("host"), "facts.host: required field missing"),
        (lambda d: d.update(schema="gpuenv.facts/2"), "schema"),
        (lambda d: d["host"].update(arch=64), "facts.host.arch: expected a string"),
        (lambda d: d["platform"].update(wsl="no"), "facts.platform.wsl: expected true or false"),
        (lambda d: d.update(gpus={"a": 1}), "facts.gpus: expected a list"),
        (lambda d: d["gpus"][0].update(pci_id="1002:ZZZZ"), "pci_id"),
        (lambda d: d["gpus"][0].update(vendor="matrox"), "vendor"),
        (lambda d: d["gpus"][0].update(revision="rev DF"), "revision 'rev DF' is not two hex digits"),
        (lambda d: d["os"].update(id=None), "facts.os.id: must not be null"),
        (lambda d: d.update(host={"arch": "x86_64", "memory_mib": True}), "expected an integer"),
    ],
)
def test_malformed_documents_are_refused_with_the_path(mutate, message):
    doc = json.loads(json.dumps(MINIMAL))
    mutate(doc)
    with pytest.raises(F.FactsError, match=message.replace(".", r"\.")):
        F.from_dict(doc)


def test_not_json_is_a_facts_error():
    with pytest.raises(F.FactsError, match="not valid JSON"):
        F.loads("{nope")
    with pytest.raises(F.FactsError):
        F.loads("[]")


def test_to_dict_validates_against_the_contract():
    jsonschema = pytest.importorskip("jsonschema")
    from tests.schemas import load_schema

    jsonschema.validate(F.from_dict(MINIMAL).to_dict(), load_schema("facts"))
