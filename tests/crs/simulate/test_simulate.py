"""The simulated user against every offline system, the oracle, stubborn and broken systems, and the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.core.llm.wire_server import WireServer
from groundtrace.crs.schema import Constraint
from groundtrace.crs.simulate import simulate
from groundtrace.crs.simulate.loop import simulate_dialogue
from groundtrace.crs.simulate.user import SimulatedUser, hidden_constraints
from groundtrace.crs.systems import OFFLINE_SYSTEMS, CRSSystem, build_system
from groundtrace.crs.systems.baselines.dense import DenseSystem
from groundtrace.crs.systems.predictions import SystemOutput
from groundtrace.crs.systems.toolkit.dense import Encoder
from tests.crs.report.demo_data import make_demo
from tests.crs.systems.test_baselines import TinyModel


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("sim"), n_dialogues=8)


@pytest.fixture(scope="module")
def three(demo):
    with_rejection = [d for d in demo.dialogues if d.has_rejection][:2]
    return with_rejection + [d for d in demo.dialogues if d not in with_rejection][:1]


class Stubborn(CRSSystem):
    """Always the pool in the same order (its top-1 is recommended again after a rejection)."""

    def respond(self, inp):
        return SystemOutput(ranking=[c.poi_id for c in inp.candidates], response="<script>x</script> [R1]")


class Broken(CRSSystem):
    def respond(self, inp):
        raise RuntimeError("boom")


def _system(name, tmp_path):
    if name == "dense":
        system = DenseSystem(encoder=Encoder(TinyModel(), name="tiny", cache_dir=tmp_path))
        system.name = "dense"
        return system
    return build_system(name, dense=False) if name in ("hybrid-rrf", "trace-hybrid") else build_system(name)


@pytest.mark.parametrize("name", [*OFFLINE_SYSTEMS, "oracle", "random"])
def test_every_offline_system_is_simulated(name, demo, three, tmp_path) -> None:
    summary, transcripts = simulate(_system(name, tmp_path), three, demo.kb, tmp_path / name, max_turns=4)
    assert summary["dialogues"] == 3 and summary["errors"] == 0
    for t in transcripts:
        user = SimulatedUser(next(d for d in three if d.dialogue_id == t.dialogue_id), demo.kb)
        tops = [x.ranking[0] for x in t.turns if x.role == "system"]
        assert t.success == user.satisfied(tops[-1])  # accepted exactly when the last top-1 fits
        assert t.system_turns == len(tops) <= 4
        assert all(not user.satisfied(p) for p in tops[:-1])  # every earlier top-1 was rejected
        assert t.rejections + t.repeats == len(tops) - t.success
    assert 0.0 <= summary["grounding"]["gs"] <= 1.0
    for f in ("transcripts.jsonl", "summary.json", "transcripts.html"):
        assert (tmp_path / name / f).is_file()
    if name == "oracle":  # its gold POI meets every hidden constraint: accepted at once
        assert summary["success_rate"] == 1.0 and summary["turns_to_success"] == 1.0
    if name in OFFLINE_SYSTEMS:  # rejection memory: never recommends a rejected POI again
        assert summary["repeats"] == 0


def test_stubborn_system_repeats_and_html_is_escaped(demo, three, tmp_path) -> None:
    stubborn = Stubborn()
    stubborn.name = "stubborn"
    d = next(d for d in three if not SimulatedUser(d, demo.kb).satisfied(d.candidates[0]))
    summary, [t] = simulate(stubborn, [d], demo.kb, tmp_path, max_turns=3)
    assert (t.success, t.rejections, t.repeats, t.recovered) == (False, 1, 2, 0)
    user_lines = [x.text for x in t.turns if x.role == "user"][1:]
    assert "ideally" in user_lines[0] and "again" in user_lines[1]
    page = (tmp_path / "transcripts.html").read_text()
    assert "<script>x" not in page and "&lt;script&gt;x" in page
    assert summary["grounding"]["gs"] < 1.0  # a bare tag with no quote is not grounding


def test_broken_system_ends_the_dialogue_with_the_error(demo, three) -> None:
    broken = Broken()
    broken.name = "broken"
    t = simulate_dialogue(broken, three[0], demo.kb)
    assert not t.success and t.error == "RuntimeError: boom" and t.system_turns == 1


def test_user_reveals_the_violated_constraint_by_its_label(demo, three) -> None:
    d = three[0]
    user = SimulatedUser(d, demo.kb)
    assert user.hidden == hidden_constraints(d) and user.hidden
    bad = next(p for p in d.candidates if not user.satisfied(p))
    line = user.reply(bad)
    labels = [c.label for c in user.violated(bad)]
    assert line.act == "reject_and_refine" and line.rejected == bad
    assert any(line.text.endswith(f"ideally {label}?") for label in labels)
    assert user.reply(bad).repeat
    unknown = SimulatedUser(d, demo.kb)
    unknown.hidden = [Constraint(kind="amenity", value="wifi", label="with wifi")]
    assert unknown.violated("no-such-poi") == unknown.hidden


def test_llm_phrasing_is_kept_only_with_name_and_label(demo, three) -> None:
    from groundtrace.core.llm.factory import make_llm

    d = three[0]
    bad = next(p for p in d.candidates if not SimulatedUser(d, demo.kb).satisfied(p))
    name = demo.kb.pois[bad].name

    def respond(request):
        line = request["messages"][-1]["content"]
        label = line.split("ideally ")[-1].split("?")[0]
        return f"Hmm, {name} is not for me; I'd love something {label}!"

    with WireServer(respond) as server:
        llm = make_llm(f"{server.base_url}#user", no_cache=True)
        user = SimulatedUser(d, demo.kb, llm)
        assert user.reply(bad).text.startswith(f"Hmm, {name} is not for me")
    with WireServer(lambda r: "I would like something else.") as server:
        user = SimulatedUser(d, demo.kb, make_llm(f"{server.base_url}#user", no_cache=True))
        assert user.reply(bad).text.startswith(f"Actually, not {name}")  # dropped the name: template kept


def test_cli_simulate(demo, tmp_path) -> None:
    out = tmp_path / "sim"
    args = ["crs", "simulate", "--system", "tfidf", "--dataset", str(demo.dataset), "--split", "all"]
    result = CliRunner().invoke(app, [*args, "--kb", str(demo.kb_path), "--out", str(out), "--limit", "3"])
    assert result.exit_code == 0, result.output
    assert "tfidf: success" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dialogues"] == 3 and len((out / "transcripts.jsonl").read_text().splitlines()) == 3
    bad = CliRunner().invoke(
        app, ["crs", "simulate", "--system", "nope", "--dataset", str(demo.dataset), "--out", str(out)]
    )
    assert bad.exit_code == 2
