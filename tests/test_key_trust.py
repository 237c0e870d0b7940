"""A repository key whose fingerprint no vendor page publishes (#42): the new ROCm stream's key was
read only in AMD's build code and a third-party script, so repos.json marks it confirmed=false and
for review, and the planner pins it only when --trust-unconfirmed-key repeats the fingerprint. Without
it an explicit release is refused (one line, exit 3) and install auto plans the newest release whose
key it may pin, saying why the newer one is not planned; with it the plan says the key is unconfirmed
and where it was read, and a saved plan keeps the trust in its request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuenv import facts as facts_mod
from gpuenv.exitcodes import Exit
from gpuenv.matrices import load as load_matrices
from gpuenv.plan import planfile, planner, repos
from gpuenv.plan.builders import pin_key
from gpuenv.plan.plan import Action, KeyNotTrusted, PlanError, Request
from gpuenv.probe import collect
from tests.cli_runner import CliRunner, app
from tests.probe_helpers import ROOTS

runner = CliRunner()
RX9070XT = ROOTS / "ubuntu2404-rx9070xt-fresh"
KEY = "D0F004A0025A1145C7807FCD0701EAC4D5E02107"


@pytest.fixture(scope="module")
def facts():
    return collect(root=str(RX9070XT))


def make(facts, **kw):
    req = Request(action=Action.INSTALL, stack="rocm", user="alice", **kw)
    return planner.make_plan(facts, load_matrices(), repos.load(), req)


def test_every_new_stream_key_is_unconfirmed_and_says_where_it_was_read():
    for rel in repos.load().section("amd_therock")["releases"]:
        key = rel["key"]
        assert key["confirmed"] is False and key["fingerprint"] == KEY
        assert "no AMD documentation page publishes this fingerprint" in key["review"]
        assert "ROCm/TheRock build_tools/packaging/linux/build_repo_package.py @ " in key["source"]


def test_an_explicit_release_is_refused_naming_the_flag_and_where_the_key_was_read(facts):
    with pytest.raises(KeyNotTrusted) as err:
        make(facts, version="10.1.0")
    text = str(err.value)
    assert text.startswith("ROCm 10.1.0's repository key " + KEY + " is not confirmed by AMD")
    assert "ROCm/TheRock build_tools/packaging/linux/build_repo_package.py @ " in text
    assert text.endswith(f"to pin it anyway, repeat it: --trust-unconfirmed-key {KEY}")
    assert "\n" not in text


def test_another_fingerprint_does_not_trust_the_key(facts):
    with pytest.raises(KeyNotTrusted, match="names another key"):
        make(facts, version="10.1.0", trust_key="0" * 40)


def test_install_auto_without_the_flag_plans_the_legacy_release_and_says_why(facts):
    p = make(facts)
    assert p.target.version == "7.2.4"
    [note] = [n for n in p.notes if n.startswith("ROCm 10.1.0 (the new release stream) is newer")]
    assert f"not confirmed by AMD (--trust-unconfirmed-key {KEY} plans it)" in note


def test_with_the_flag_the_plan_pins_the_key_and_says_it_is_unconfirmed(facts):
    p = make(facts, trust_key=KEY)
    assert p.target.version == "10.1.0"
    [key] = [s for s in p.steps if s.fingerprint]
    assert key.fingerprint == KEY
    [note] = [n for n in p.notes if "repository key" in n]
    assert note.startswith(f"ROCm 10.1.0's repository key {KEY} is NOT confirmed by AMD, pinned because")
    assert "FOR REVIEW (#42)" in note


def test_the_trust_travels_in_a_saved_plan(facts, tmp_path):
    p = make(facts, trust_key=KEY)
    path = tmp_path / "plan.json"
    planfile.save(p, str(path))
    again = planfile.load(str(path))
    assert again.request is not None and again.request.trust_key == KEY
    assert f"--trust-unconfirmed-key {KEY}" in again.request.line()
    # a plan without it saves no trust_key: plans saved before #42 read the same
    legacy = make(facts, version="7.2.4")
    assert "trust_key" not in json.dumps(legacy.request.to_dict())


def test_a_malformed_fingerprint_is_a_usage_error():
    with pytest.raises(PlanError, match="expected a key.s full fingerprint"):
        Request(action=Action.INSTALL, stack="rocm", trust_key="d0f0")


def test_the_cli_refuses_in_one_line_with_exit_3():
    done = runner.invoke(app, ["install", "rocm", "--version", "10.1.0", "--dry-run", "--root", str(RX9070XT),
                               "--user", "alice"])  # fmt: skip
    assert done.exit_code == Exit.REFUSED, done.stdout + done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "not confirmed by AMD" in lines[0] and "Traceback" not in done.stderr
    assert f"--trust-unconfirmed-key {KEY}" in done.stderr


def test_the_cli_takes_the_fingerprint_as_gpg_prints_it():
    spaced = " ".join(KEY[i : i + 4] for i in range(0, 40, 4)).lower()
    done = runner.invoke(app, ["install", "rocm", "--version", "10.1.0", "--dry-run", "--root", str(RX9070XT),
                               "--user", "alice", "--trust-unconfirmed-key", spaced])  # fmt: skip
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "NOT confirmed by AMD" in done.stdout
    bad = runner.invoke(app, ["install", "rocm", "--dry-run", "--root", str(RX9070XT), "--user", "alice",
                              "--trust-unconfirmed-key", "xyz"])  # fmt: skip
    assert bad.exit_code == Exit.USAGE and "expected a key's full fingerprint" in bad.stderr


LEGACY = "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"


def legacy_unconfirmed(tmp_path):
    """repos.json with AMD's legacy key marked confirmed=false (#42: no AMD page publishes its
    fingerprint either; see its review note)."""
    doc = json.loads(Path(repos.default_path()).read_text())
    assert doc["amd"]["key"]["fingerprint"] == LEGACY
    doc["amd"]["key"]["confirmed"] = False
    path = tmp_path / "repos.json"
    path.write_text(json.dumps(doc))
    return repos.load(path)


def test_an_unconfirmed_legacy_key_refuses_install_auto_in_one_line_naming_the_check_and_the_flag(tmp_path, facts):
    r = legacy_unconfirmed(tmp_path)
    req = Request(action=Action.INSTALL, stack="rocm", user="alice")
    with pytest.raises(KeyNotTrusted) as err:
        planner.make_plan(facts, load_matrices(), r, req)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"ROCm 7.2.4's repository key {LEGACY} is not confirmed by AMD")
    assert "check that `curl -fsSL https://repo.radeon.com/rocm/rocm.gpg.key | gpg --show-keys` prints it" in text
    assert text.endswith(f"to pin it anyway, repeat it: --trust-unconfirmed-key {LEGACY}")
    # The flag it names plans that release, pinning that key, and says it is unconfirmed.
    p = planner.make_plan(facts, load_matrices(), r, Request(action=Action.INSTALL, stack="rocm", user="alice",
                                                              trust_key=LEGACY))  # fmt: skip
    assert p.target.version == "7.2.4"
    assert [s.fingerprint for s in p.steps if s.fingerprint] == [LEGACY]
    assert any(n.startswith(f"ROCm 7.2.4's repository key {LEGACY} is NOT confirmed by AMD") for n in p.notes)


def test_with_no_confirmed_key_install_auto_refuses_the_release_the_flag_then_plans(tmp_path):
    """An MI50 (gfx906): the newest release that lists it is 6.3.3; refused, the line names the legacy key,
    and with it the plan is 6.3.3, not the default 7.2.4 (routes.choosable)."""
    r = legacy_unconfirmed(tmp_path)
    mi50 = facts_mod.loads((Path(__file__).parent / "facts" / "rocm-auto-ubuntu2204-mi50.json").read_text())
    with pytest.raises(KeyNotTrusted, match=r"^ROCm 6\.3\.3's repository key " + LEGACY):
        planner.make_plan(mi50, load_matrices(), r, Request(action=Action.INSTALL, stack="rocm", user="alice"))
    p = planner.make_plan(mi50, load_matrices(), r, Request(action=Action.INSTALL, stack="rocm", user="alice",
                                                             trust_key=LEGACY))  # fmt: skip
    assert p.target.version == "6.3.3"


def test_matrix_show_gives_each_key_the_trust_the_planner_applies():
    """Three states, each from the data: confirmed; confirmed but for review (AMD's legacy key: read
    from AMD's key file, no AMD page prints the fingerprint); not confirmed (pinned only when
    repeated)."""
    done = runner.invoke(app, ["matrix", "show"])
    assert done.exit_code == 0, done.stderr
    legacy, nvidia = repos.load().section("amd")["key"], repos.load().section("nvidia")["key"]
    assert legacy["confirmed"] is True and "review" in legacy and "review" not in nvidia
    state = {fpr: ln.split(f"{fpr}: ", 1)[1] for ln in done.stdout.splitlines() if ln.startswith("key ")
             for fpr in (legacy["fingerprint"], nvidia["fingerprint"], KEY) if fpr in ln}
    assert state == {
        nvidia["fingerprint"]: "confirmed",
        legacy["fingerprint"]: "confirmed, for review (no vendor page prints it: repos.json's review)",
        KEY: "NOT confirmed by the vendor, for review (pinned only with --trust-unconfirmed-key)",
    }


def test_the_plan_says_the_legacy_key_is_confirmed_for_review_and_where_it_was_read(facts):
    """The note quotes the review once (where the fingerprint was read and why it is kept), not the
    source and the review both; a key without a review cites its source."""
    legacy = repos.load().section("amd")["key"]
    notes = [n for n in make(facts).notes if legacy["fingerprint"] in n]
    assert notes == [f"ROCm 7.2.4's repository key {legacy['fingerprint']} is confirmed, for review: {legacy['review']}"]
    plain: list[str] = []
    pin_key({k: v for k, v in legacy.items() if k != "review"}, "7.2.4", None, plain)
    assert plain == [f"ROCm 7.2.4's repository key {legacy['fingerprint']} is confirmed: {legacy['source']}"]


def test_the_flag_is_named_exactly_where_the_planner_would_refuse_without_it():
    """RocmRoute.trust_flag, the one rule behind every sentence that names --trust-unconfirmed-key
    (the doctor's target line and its fixes), agrees with key_may_pin on every route shape."""
    from gpuenv.matrices.routes import RocmRoute

    for fpr in (None, KEY):
        for confirmed in (True, False):
            route = RocmRoute(rocm="10.1.0", fingerprint=fpr, key_confirmed=confirmed)
            flag = route.trust_flag()
            assert flag == (KEY if fpr and not confirmed else None)
            if fpr:
                assert route.key_may_pin() == (flag is None) and route.key_may_pin(flag or None)
    for rel in load_matrices().rocm_releases():
        route = rel.repository
        if route is not None:
            assert (route.trust_flag() is None) == (route.key_may_pin() or not route.fingerprint), rel.version


def test_where_a_key_was_read_names_the_files_only():
    """The refusal names the files the fingerprint was read in ('owner/repo path @ commit'), once each
    and without the source's prose, nor what follows 'the key URL' (that cites the URL's page); a
    source naming no file is given whole."""
    from gpuenv.plan.builders import _where_read

    source = ("read in ROCm/TheRock build_tools/x.py @ acbc9ecc (the build code); ROCm/TheRock build_tools/x.py "
              "@ acbc9ecc; Azure/AgentBaker a/b.json @ 59638272 (a pin); the key URL: ROCm/docs page.rst @ 1234567")  # fmt: skip
    assert _where_read({"source": source}) == "ROCm/TheRock build_tools/x.py @ acbc9ecc; Azure/AgentBaker a/b.json @ 59638272"
    assert _where_read({"source": "a forum post; "}) == "a forum post"
    assert _where_read({"source": "the key URL only"}) == "the key URL only"
