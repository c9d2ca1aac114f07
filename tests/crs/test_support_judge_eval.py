"""benchmarks/eval_support_judge.py: the scores are computed correctly (hand-computed confusion matrices), a
bad line of the labelled set is reported as file:line and the rest is read, and the whole evaluation runs
on the committed hand-labelled set (skipped without ../shared/data/yelp_dense)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.eval_support_judge import (
    PAIRS,
    Pair,
    check_offsets,
    confusion,
    disagreements,
    evaluate,
    hypothesis,
    judge_es_rule,
    judge_lexicon,
    judge_support_judge,
    load_pairs,
    polarity_model,
    read_reviews,
    scores,
    support_verdicts,
)
from groundtrace.crs.schema import Constraint, Review


def _pair(i: int, kind: str, label: bool, stratum: str = "topical") -> Pair:
    value = {"amenity": "outdoor_seating", "noise_max": "quiet"}[kind]
    return Pair(
        id=f"p{i}",
        constraint=Constraint(kind=kind, value=value, label=value),
        review_id=f"r{i}",
        start=0,
        end=5,
        quote="quote",
        stars=4.0,
        stratum=stratum,
        label=label,
        line=i + 1,
    )


def test_confusion_and_scores_hand_computed() -> None:
    gold = [True, True, True, False, False, False, False]
    pred = [True, True, False, True, False, False, False]
    cm = confusion(gold, pred)
    assert cm == {"tp": 2, "fp": 1, "fn": 1, "tn": 3}
    s = scores(cm)
    assert s["n"] == 7
    assert s["accuracy"] == pytest.approx(5 / 7)
    assert s["precision"] == pytest.approx(2 / 3)
    assert s["recall"] == pytest.approx(2 / 3)
    assert s["f1"] == pytest.approx(2 / 3)


def test_scores_with_empty_denominators_are_none() -> None:
    s = scores(confusion([False, False], [False, False]))
    assert (s["accuracy"], s["precision"], s["recall"], s["f1"]) == (1.0, None, None, None)
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        confusion([True, False], [True])


def test_evaluate_groups_by_kind_and_stratum() -> None:
    pairs = [
        _pair(0, "amenity", True),
        _pair(1, "amenity", False, "cued"),
        _pair(2, "noise_max", True, "cued"),
        _pair(3, "noise_max", False),
    ]
    res = evaluate(pairs, [True, True, False, False], [1, 0, -1, -1])
    assert res["overall"]["tp"] == 1 and res["overall"]["fp"] == 1 and res["overall"]["fn"] == 1
    amenity = res["by_kind"]["amenity"]
    assert (amenity["tp"], amenity["fp"], amenity["fn"], amenity["tn"]) == (1, 1, 0, 0)
    assert amenity["precision"] == 0.5 and amenity["recall"] == 1.0
    noise = res["by_kind"]["noise_max"]
    assert (noise["tp"], noise["fn"], noise["tn"]) == (0, 1, 1) and noise["precision"] is None
    assert noise["recall"] == 0.0 and noise["accuracy"] == 0.5
    cued = res["by_stratum"]["cued"]
    assert (cued["fp"], cued["fn"]) == (1, 1) and cued["accuracy"] == 0.0
    stance = res["by_polarity"]
    assert sorted(stance) == ["+1", "-1", "0"]
    assert (stance["-1"]["fn"], stance["-1"]["tn"], stance["+1"]["tp"], stance["0"]["fp"]) == (1, 1, 1, 1)
    assert "by_polarity" not in evaluate(pairs, [True, True, False, False])


def test_load_pairs_reports_bad_lines_and_keeps_the_rest(tmp_path: Path) -> None:
    good = {
        "id": "s0",
        "constraint": {"kind": "amenity", "value": "wifi", "label": "free wifi"},
        "review_id": "R",
        "start": 4,
        "end": 20,
        "quote": "Free wifi here.",
        "stars": 5.0,
        "stratum": "topical",
        "label": True,
    }
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({**good, "label": "yes"}),
        json.dumps({**good, "constraint": {"kind": "teleport", "value": 1, "label": "x"}}),
        json.dumps({k: v for k, v in good.items() if k != "quote"}),
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pairs, errors = load_pairs(path)
    assert [p.id for p in pairs] == ["s0"] and pairs[0].constraint.value == "wifi"
    assert [e.split(": ")[0] for e in errors] == [f"{path}:{n}" for n in (2, 3, 4, 5)]
    assert "label must be true or false" in errors[1] and "quote" in errors[3]


def test_check_offsets_leaves_out_pairs_that_do_not_cut_their_quote() -> None:
    review = Review(review_id="r0", poi_id="b", stars=4.0, text="Nice patio. Loud music.")
    ok = Pair("a", Constraint(kind="amenity", value="outdoor_seating", label="o"), "r0", 0, 11,
              "Nice patio.", 4.0, "topical", True, 1)  # fmt: skip
    moved = Pair("b", ok.constraint, "r0", 1, 12, "Nice patio.", 4.0, "topical", True, 2)
    missing = Pair("c", ok.constraint, "r9", 0, 11, "Nice patio.", 4.0, "topical", True, 3)
    good, errors = check_offsets([ok, moved, missing], {"r0": review}, Path("x.jsonl"))
    assert good == [ok]
    assert (
        errors[0].startswith("x.jsonl:2: offsets 1-12")
        and errors[1] == "x.jsonl:3: review r9 not in the data"
    )


def test_rule_judges_on_hand_made_pairs() -> None:
    text = "We sat on the patio. The patio was filthy and the staff rude. Great coffee."
    review = Review(review_id="r0", poi_id="b", stars=4.0, text=text)
    c = Constraint(kind="amenity", value="outdoor_seating", label="outdoor seating")
    spans = [(0, 20), (21, 61), (62, 74)]
    pairs = [
        Pair(f"p{i}", c, "r0", a, b, text[a:b], 4.0, "topical", True, i) for i, (a, b) in enumerate(spans)
    ]
    polarity = {"p0": 1, "p1": -1, "p2": 1}
    pol = lambda p: polarity[p.id]
    assert judge_lexicon(pairs, {"r0": review}, pol) == [True, True, False]
    assert judge_es_rule(pairs, {"r0": review}, pol) == [True, False, False]
    assert judge_support_judge(pairs, {"r0": review}, pol) == [True, False, False]
    wrong = disagreements(pairs, support_verdicts(pairs, {"r0": review}, pol))
    assert [(w["id"], w["error"], w["reason"]) for w in wrong] == [
        ("p1", "FN", "negative_as_support"),
        ("p2", "FN", "not_about_constraint"),
    ]
    assert hypothesis(c) == "The place has outdoor seating."
    assert (
        hypothesis(Constraint(kind="meal", value="latenight", label="late"))
        == "The place is open late at night."
    )


def test_committed_set_is_complete_and_balanced() -> None:
    """Needs no review text: every line parses, is labelled, quotes at most 300 characters of one review."""
    pairs, errors = load_pairs(PAIRS)
    assert errors == [] and len(pairs) >= 400
    assert len({p.id for p in pairs}) == len(pairs)
    assert all(0 < len(p.quote) <= 300 and p.end - p.start == len(p.quote) for p in pairs)
    share = sum(p.label for p in pairs) / len(pairs)
    assert 0.4 <= share <= 0.6, share  # the set is balanced by construction (guide: ~40-60 % positives)


def test_evaluation_runs_on_the_committed_set() -> None:
    from tests.conftest import shared_path

    data = shared_path("yelp_dense")
    pairs, _errors = load_pairs(PAIRS)
    reviews, _train = read_reviews(data, {p.review_id for p in pairs})
    good, bad = check_offsets(pairs, reviews, PAIRS)
    assert bad == [] and len(good) == len(pairs)
    polarity = polarity_model("lexical", [])
    pred = judge_es_rule(good, reviews, polarity)
    res = evaluate(good, pred)
    # the summary is the confusion matrix of these very predictions, and the groups add up to it
    manual = confusion([p.label for p in good], pred)
    assert {k: res["overall"][k] for k in manual} == manual
    for group in ("by_kind", "by_stratum"):
        for key in ("tp", "fp", "fn", "tn"):
            assert sum(s[key] for s in res[group].values()) == manual[key]
    assert res["overall"]["n"] == len(good)


def test_sampler_rebuilds_the_committed_pairs() -> None:
    """``benchmarks/support_pairs.py`` is seeded: drawing again from yelp_dense gives exactly the committed
    pairs (constraint, review, offsets, quote, stratum), in order."""
    from benchmarks.support_pairs import candidates, draw, pair_key
    from tests.conftest import shared_path

    data = shared_path("yelp_dense")
    committed = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    drawn = draw(list(candidates(data, 23)), 23)
    assert [pair_key(p) for p in drawn] == [pair_key(p) for p in committed]
    assert [(p["quote"], p["stratum"]) for p in drawn] == [(p["quote"], p["stratum"]) for p in committed]
