"""Stage 3a: plans honour constraints, alternate, recommend 3+ POIs, compare, and reject correctly."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundtrace.crs.build.planner import PlanContext, PlanningError, plan_dialogue, refine
from groundtrace.crs.build.realise import TemplateRealiser
from groundtrace.crs.kb.constraints import satisfies, satisfies_all
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.schema import Constraint


@pytest.fixture(scope="module")
def ctx():
    return PlanContext(generate_demo_kb(4, n_per_type=40, reviews_per_poi=6))


def _plans(ctx, n, with_rejection):
    plans = []
    for i in range(n):
        for p in range(25):
            try:
                plans.append(
                    plan_dialogue(ctx, f"d{i}", random.Random(f"t:{i}:{p}"), with_rejection=with_rejection)
                )
                break
            except PlanningError:
                continue
    assert len(plans) == n
    return plans


@pytest.fixture(scope="module")
def dialogues(ctx):
    out = []
    for flag in (True, False):
        for plan in _plans(ctx, 60, flag):
            out.append(TemplateRealiser().realise(plan, random.Random(plan.dialogue_id)))
    return out


def test_refine_replaces_single_valued_kinds_and_adds_others() -> None:
    sushi = Constraint(kind="cuisine", value="Sushi Bars", label="sushi")
    quiet = Constraint(kind="noise_max", value="quiet", label="quiet")
    greek = Constraint(kind="cuisine", value="Greek", label="Greek")
    patio = Constraint(kind="amenity", value="outdoor_seating", label="patio")
    assert refine([sushi, quiet], greek) == ([quiet, greek], [sushi])
    assert refine([sushi, quiet], patio) == ([sushi, quiet, patio], [])


def test_alternation_starting_with_user(dialogues) -> None:
    for d in dialogues:
        assert [t.role for t in d.turns] == ["user", "system"] * (len(d.turns) // 2)
        assert [t.index for t in d.turns] == list(range(len(d.turns)))


def test_three_unique_recommendations_and_a_comparison(dialogues) -> None:
    for d in dialogues:
        recs = {p for t in d.turns if t.act in ("recommend", "compare") for p in t.recommended}
        assert len(recs) >= 3
        assert any(t.act == "compare" for t in d.turns)


def test_gold_and_multi_ref_satisfy_and_the_rest_violate(dialogues, ctx) -> None:
    kb = ctx.kb
    for d in dialogues:
        assert len(d.candidates) == 8
        for t in d.recommendation_turns():
            g = t.gold
            active = g.active_constraints
            assert g.gold_poi == t.recommended[0]
            assert satisfies_all(kb.poi(g.gold_poi), active, d.anchor)
            assert all(satisfies_all(kb.poi(p), active, d.anchor) for p in g.multi_ref)
            others = set(d.candidates) - {g.gold_poi} - set(g.multi_ref)
            assert all(not satisfies_all(kb.poi(p), active, d.anchor) for p in others)
            # the city has 40 POIs of each type: the open pool is widened to 50 with other types
            assert set(d.candidates) <= set(g.open_pool) and len(g.open_pool) == 50
        final = d.recommendation_turns()[-1].gold.active_constraints
        distractors = [p for p in d.candidates if not satisfies_all(kb.poi(p), final, d.anchor)]
        assert len(distractors) >= 3  # 8 - 3 recommendations - at most 2 extra satisfiers


def test_rejection_changes_gold_to_a_poi_meeting_the_refinement(dialogues, ctx) -> None:
    kb = ctx.kb
    with_rej = [d for d in dialogues if d.has_rejection]
    assert len(with_rej) == 60
    for d in with_rej:
        i = next(i for i, t in enumerate(d.turns) if t.act == "reject_and_refine")
        turn = d.turns[i]
        (rejected,) = turn.rejected
        (added,) = turn.constraints_added
        before = [t for t in d.turns[:i] if t.gold is not None][-1]
        after = next(t for t in d.turns[i:] if t.gold is not None)
        assert rejected == before.recommended[0]
        assert satisfies_all(kb.poi(rejected), before.gold.active_constraints, d.anchor)
        assert not satisfies(kb.poi(rejected), added, d.anchor)
        assert after.gold.gold_poi != rejected
        assert any(c.kind == added.kind and c.value == added.value for c in after.gold.active_constraints)
        assert satisfies_all(kb.poi(after.gold.gold_poi), after.gold.active_constraints, d.anchor)
    assert not any(t.act == "reject_and_refine" for d in dialogues if not d.has_rejection for t in d.turns)


def test_planning_is_deterministic(ctx) -> None:
    for seed in range(50):  # the first feasible draw (an infeasible one raises PlanningError)
        try:
            a = plan_dialogue(ctx, "x", random.Random(f"same{seed}"), with_rejection=True)
        except PlanningError:
            continue
        break
    b = plan_dialogue(ctx, "x", random.Random(f"same{seed}"), with_rejection=True)
    assert a.candidates == b.candidates and a.review_refs == b.review_refs
    assert [(t.act, t.recommended) for t in a.turns] == [(t.act, t.recommended) for t in b.turns]


def test_tiny_kb_cannot_be_planned() -> None:
    with pytest.raises(PlanningError, match="no city"):
        PlanContext(generate_demo_kb(0, n_per_type=5, reviews_per_poi=2))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**9), with_rejection=st.booleans())
def test_plan_invariants_hold_for_any_seed(ctx, seed: int, with_rejection: bool) -> None:
    kb = ctx.kb
    plan = None
    for p in range(25):
        try:
            plan = plan_dialogue(ctx, "h", random.Random(f"{seed}:{p}"), with_rejection=with_rejection)
            break
        except PlanningError:
            continue
    assert plan is not None
    assert [t.role for t in plan.turns] == ["user", "system"] * (len(plan.turns) // 2)
    recs = [t for t in plan.turns if t.gold is not None]
    assert len({p for t in recs for p in t.recommended}) >= 3
    assert any(t.act == "compare" for t in plan.turns)
    assert (plan.middle in ("early", "late")) == with_rejection
    for t in recs:
        assert satisfies_all(kb.poi(t.gold.gold_poi), t.gold.active_constraints, plan.anchor)
        assert t.gold.gold_poi in plan.candidates
        for pid, quotes in t.quotes.items():
            assert quotes and all(plan.review_refs[q.tag].poi_id == pid for q in quotes)
    assert satisfies_all(kb.poi(recs[-1].gold.gold_poi), plan.final_constraints, plan.anchor)
