"""Hypothesis invariants of the metrics on generated rankings and responses over the fixture KB."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.metrics import DEFAULT_METRICS
from groundtrace.crs.schema import Dialogue
from groundtrace.crs.systems.predictions import Prediction
from tests.crs.metrics.conftest import REVIEW_TEXTS, make_kb, read_jsonl

KB = make_kb()
DIALOGUES = [Dialogue.model_validate(row) for row in read_jsonl("dialogues.jsonl")]
TURNS = [(d.dialogue_id, t.index) for d in DIALOGUES for t in d.recommendation_turns()]
POIS = ["P1", "P2", "P3", "P4", "P5", "ghost"]
METRICS = [m for m in DEFAULT_METRICS if m.setting != "open" and m.requires is None]

fragment = st.one_of(
    st.sampled_from([text for _pid, text in REVIEW_TEXTS.values()]).flatmap(
        lambda text: st.tuples(st.integers(0, len(text) - 1), st.integers(1, 40)).map(
            lambda ij: text[ij[0] : ij[0] + ij[1]]
        )
    ),
    st.sampled_from(["quiet", "romantic", "free wifi", "sushi", "cheap tacos", "patio", "zebra quantum", ""]),
)
tag = st.lists(st.sampled_from(["R1", "R2", "R3", "R4", "R5", "R6", "R7", "R9"]), min_size=1, max_size=3).map(
    lambda tags: "[" + ", ".join(tags) + "]"
)
piece = st.one_of(
    st.tuples(fragment, tag).map(lambda ft: f'"{ft[0]}" {ft[1]}'),
    fragment,
    tag,
    st.text(alphabet=st.sampled_from('abc .,!?"[]R1'), max_size=20),
)
response = st.lists(piece, max_size=6).map(" ".join)
ranking = st.lists(st.sampled_from(POIS), max_size=8)
answer = st.one_of(st.none(), st.tuples(ranking, response))


def _predictions(answers):
    out = []
    for (did, idx), ans in zip(TURNS, answers, strict=True):
        if ans is not None:
            out.append(Prediction(dialogue_id=did, turn_index=idx, ranking=ans[0], response=ans[1]))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(answer, min_size=len(TURNS), max_size=len(TURNS)))
def test_turn_invariants(answers):
    table = score_predictions(DIALOGUES, _predictions(answers), KB, metrics=METRICS)
    for rec in table.turns:
        v = rec.values
        for name, value in v.items():
            assert value is None or (0.0 <= value <= 1.0 and not math.isnan(value)), (name, value)
        assert v["recall@1"] <= v["recall@3"] <= v["recall@5"]  # recall@k monotone in k
        assert v["mrr"] >= v["recall@1"]
        assert v["recall@1"] <= v["ndcg@3"] <= v["recall@3"]
        assert v["multi_ref_hit@1"] >= v["recall@1"]
        assert v["cgs"] <= v["gs"] + 1e-12
        if v["cd"] == 0.0:
            assert v["cgs"] == 0.0
    for rec in table.dialogues:
        n_rec = len(next(d for d in DIALOGUES if d.dialogue_id == rec.dialogue_id).recommendation_turns())
        assert 1.0 <= rec.values["t2r"] <= n_rec + 1
    for name, value in table.aggregate.items():
        # None only for a metric that applies to no turn (e.g. citation_validity when no answer has a tag)
        applies = any(rec.values.get(name) is not None for rec in [*table.turns, *table.dialogues])
        assert (value is not None) == applies, name
        assert value is None or not math.isnan(value), name


@settings(max_examples=60, deadline=None)
@given(
    st.permutations(["P2", "P3", "P5", "ghost", "P4"]), st.integers(1, 5), st.randoms(use_true_random=False)
)
def test_permuting_non_gold_below_k_keeps_recall(order, k, rnd):
    # gold of d3/1 is P1: place it anywhere, then permute the non-gold items at ranks > k among themselves
    dialogue = [d for d in DIALOGUES if d.dialogue_id == "d3"]
    pos = rnd.randint(0, len(order))
    ranking = list(order[:pos]) + ["P1"] + list(order[pos:])
    slots = [i for i in range(k, len(ranking)) if ranking[i] != "P1"]
    items = [ranking[i] for i in slots]
    rnd.shuffle(items)
    other = list(ranking)
    for i, poi in zip(slots, items, strict=True):
        other[i] = poi
    metric = f"recall@{k}"

    def value(r):
        preds = [Prediction(dialogue_id="d3", turn_index=1, ranking=r, response="")]
        table = score_predictions(dialogue, preds, KB, metrics=[metric, "mrr"])
        return next(t.values for t in table.turns if t.turn_index == 1)

    a, b = value(ranking), value(other)
    assert a[metric] == b[metric]
    assert a["mrr"] == b["mrr"]  # the gold kept its rank


@settings(max_examples=40, deadline=None)
@given(ranking, response)
def test_single_turn_score_is_deterministic(r, text):
    preds = [Prediction(dialogue_id="d3", turn_index=3, ranking=r, response=text)]
    a = score_predictions(DIALOGUES, preds, KB, metrics=METRICS).to_dict()
    b = score_predictions(DIALOGUES, list(reversed(preds)), KB, metrics=METRICS).to_dict()
    assert a == b


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(answer, min_size=len(TURNS), max_size=len(TURNS)))
def test_dialogue_invariants(answers):
    table = score_predictions(DIALOGUES, _predictions(answers), KB, metrics=METRICS)
    for rec in table.dialogues:
        for name in ("rejection_recovery", "task_success", "rejected_repeat"):
            value = rec.values[name]
            assert value is None or 0.0 <= value <= 1.0, (name, value)
        # T2R = 1 exactly when the first recommendation turn's top-1 is the gold (R@1 of that turn)
        first = min(t.turn_index for t in table.turns if t.dialogue_id == rec.dialogue_id)
        r1 = next(
            t.values["recall@1"]
            for t in table.turns
            if (t.dialogue_id, t.turn_index) == (rec.dialogue_id, first)
        )
        assert (rec.values["t2r"] == 1.0) == (r1 == 1.0)


def _turn_values(ranking, text, metrics):
    preds = [Prediction(dialogue_id="d3", turn_index=1, ranking=ranking, response=text)]
    table = score_predictions([d for d in DIALOGUES if d.dialogue_id == "d3"], preds, KB, metrics=metrics)
    return next(t.values for t in table.turns if t.turn_index == 1)


@settings(max_examples=60, deadline=None)
@given(st.permutations(["P1", "P2", "P3", "P4", "P5"]))
def test_moving_the_gold_up_never_hurts(order):
    # gold of d3/1 is P1; swapping it with the item just above can only raise every accuracy metric
    ranking = list(order)
    pos = ranking.index("P1")
    if pos == 0:
        return
    better = list(ranking)
    better[pos - 1], better[pos] = better[pos], better[pos - 1]
    names = ["recall@1", "recall@3", "mrr", "ndcg@3", "multi_ref_hit@1"]
    a, b = _turn_values(ranking, "", names), _turn_values(better, "", names)
    assert all(b[m] >= a[m] for m in names), (a, b)
    assert b["mrr"] > a["mrr"]  # the reciprocal rank strictly increases


# well-formed quotes only (no space inside the marks: '"Classy " [R1]' has no valid closing mark, so a quote
# appended later would pair with its opening mark — a different response, not a metric property)
clean_piece = st.one_of(
    st.tuples(fragment.map(str.strip), tag).map(lambda ft: f'"{ft[0]}" {ft[1]}.' if ft[0] else f"{ft[1]}."),
    st.sampled_from(["It is quiet.", "Great sushi [R3].", "Nice patio.", "Loud but fun [R4, R6]."]),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(clean_piece, max_size=5).map(" ".join), ranking)
def test_adding_text_moves_grounding_metrics_the_right_way(text, r):
    names = ["gs", "cd", "citation_rate"]
    base = _turn_values(r, text, names)
    # 1. a verbatim quote of V2 under its own tag R2 is grounded: GS cannot drop, the turn now cites
    grounded = _turn_values(r, f'{text} "Quiet enough to talk" [R2].'.strip(), names)
    assert grounded["gs"] >= base["gs"] - 1e-12 and grounded["citation_rate"] == 1.0
    # 2. an unrelated quote under a tag is never grounded: GS cannot rise (and is < 1)
    fake = _turn_values(r, f'{text} "zebra quantum xylophone jukebox" [R2].'.strip(), names)
    assert fake["gs"] <= base["gs"] + 1e-12 and fake["gs"] < 1.0
    # 3. a sentence with no quote, tag or attribute adds only non-citation tokens: CD cannot rise, GS
    # unchanged
    padded = _turn_values(r, f"{text} Thanks for asking and have a lovely evening.".strip(), names)
    assert padded["cd"] <= base["cd"] + 1e-12 and padded["gs"] == base["gs"]
