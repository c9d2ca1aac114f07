"""Reference systems: the oracle is an upper bound, random is at chance level; the SYSTEMS registry."""

from __future__ import annotations

import pytest

from groundtrace.core.evidence.citations import find_tags
from groundtrace.core.registry import Registry, UnknownNameError
from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.systems import SYSTEMS, CRSSystem, build_system
from groundtrace.crs.systems.reference import OracleSystem, RandomSystem
from tests.crs.report.demo_data import make_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("refsys"), n_dialogues=100)


def test_registry_lists_and_resolves_reference_systems() -> None:
    assert {"oracle", "random"} <= set(SYSTEMS.names())
    assert SYSTEMS.get("gold") is OracleSystem  # alias
    assert build_system("oracle").name == "oracle"
    assert OracleSystem.needs_gold and not RandomSystem.needs_gold
    with pytest.raises(UnknownNameError, match="Did you mean 'random'"):
        SYSTEMS.get("randon")


def test_registry_rejects_non_systems_and_accepts_subclasses() -> None:
    with pytest.raises(TypeError):
        SYSTEMS.add("not-a-system-xyz", dict)  # checked before the name is claimed: nothing registered
    assert "not-a-system-xyz" not in SYSTEMS

    class Echo(CRSSystem):
        def respond(self, inp):
            raise NotImplementedError

    local = Registry("CRS system", base=CRSSystem)  # not the global one: other tests count its entries
    local.add("echo", Echo)
    local.register_lazy("lazy-random", "groundtrace.crs.systems.reference:RandomSystem")
    assert local.get("echo") is Echo and local.get("lazy-random") is RandomSystem


@pytest.mark.slow
def test_oracle_is_perfect_on_a_built_dataset(demo, tmp_path) -> None:
    closed = run_system(
        build_system("oracle"), demo.dialogues, demo.kb, tmp_path / "c", setting="closed", split="all"
    )
    agg = closed.table.aggregate
    assert closed.table.n_turns >= 250
    assert agg["recall@1"] == 1.0 and agg["mrr"] == 1.0 and agg["gs"] == 1.0
    assert agg["multi_ref_hit@1"] == 1.0 and agg["task_success"] == 1.0
    assert agg["citation_validity"] == 1.0  # every tag names a review of the gold POI (top-1)
    opened = run_system(
        build_system("oracle"), demo.dialogues, demo.kb, tmp_path / "o", setting="open", split="all"
    )
    assert opened.table.aggregate["open_recall@1"] == 1.0 and opened.table.aggregate["gs"] == 1.0


def test_oracle_ranks_gold_then_multi_ref_then_rest(demo) -> None:
    oracle = OracleSystem()
    for dialogue in demo.dialogues[:10]:
        for turn, inp in system_inputs(dialogue, demo.kb, "closed"):
            out = oracle.respond(inp, turn.gold)
            pool = [c.poi_id for c in inp.candidates]
            assert sorted(out.ranking) == sorted(pool)  # a permutation of the pool
            assert out.ranking[0] == turn.gold.gold_poi
            others = [p for p in turn.gold.multi_ref if p != turn.gold.gold_poi and p in pool]
            assert out.ranking[1 : 1 + len(others)] == [p for p in pool if p in others]
            # every quote is verbatim from a review of the gold POI under the right tag
            tagged = {r.tag: r for r in inp.reviews}
            for tag in find_tags(out.response):
                assert tagged[tag.label].poi_id == turn.gold.gold_poi
    with pytest.raises(ValueError, match="gold"):
        oracle.respond(inp)


def test_random_is_at_chance_level_closed(demo, tmp_path) -> None:
    result = run_system(RandomSystem(seed=3), demo.dialogues, demo.kb, tmp_path / "r", split="all", workers=3)
    n = result.table.n_turns
    r1 = result.table.aggregate["recall@1"]
    # R@1 ~ Binomial(n, 1/8)/n: sd = sqrt(0.125·0.875/n) ≈ 0.019 at n = 300; 4 sd ≈ 0.077
    sd = (0.125 * 0.875 / n) ** 0.5
    assert n >= 250
    assert abs(r1 - 0.125) < 4 * sd
    # its quotes are verbatim and correctly tagged to its top-1
    assert result.table.aggregate["gs"] == 1.0
    assert result.table.aggregate["citation_validity"] == 1.0


def test_random_is_deterministic_per_turn_and_seeded(demo) -> None:
    dialogue = demo.dialogues[0]
    inputs = [inp for _, inp in system_inputs(dialogue, demo.kb, "closed")]
    a, b, c = RandomSystem(seed=1), RandomSystem(seed=1), RandomSystem(seed=2)
    first = [a.respond(i) for i in inputs]
    again = [b.respond(i) for i in reversed(inputs)][::-1]  # call order does not matter
    assert first == again
    assert [o.ranking for o in first] != [c.respond(i).ranking for i in inputs]
    assert a.config() == {"seed": 1}


def test_render_response_hand_written() -> None:
    from groundtrace.crs.systems.predictions import CandidateCard
    from groundtrace.crs.systems.reference import TaggedSentence, render_response

    card = CandidateCard(
        poi_id="p", name="Starling Pizza Co.", city="X", poi_type="restaurant", lat=0, lon=0, stars=4
    )
    quotes = [TaggedSentence("R2", "Great crust"), TaggedSentence("R5", "Friendly staff")]
    assert render_response(card, "p", quotes) == (
        'I recommend Starling Pizza Co. Reviewers say: "Great crust" [R2]. "Friendly staff" [R5].'
    )
    assert render_response(None, "p-7", []) == "I recommend p-7."
