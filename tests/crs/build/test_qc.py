"""Stage 4: QC passes built dialogues and catches broken ones, each by its dataset rule (code and name)."""

from __future__ import annotations

import pytest

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.build.qc import QC_RULES, check_dialogue
from groundtrace.crs.kb.demo import generate_demo_kb


@pytest.fixture(scope="module")
def kb():
    return generate_demo_kb(6, n_per_type=30, reviews_per_poi=5)


@pytest.fixture(scope="module")
def good(kb):
    dialogues, report = build_dialogues(kb, 12, seed=1)
    assert report.built == 12
    return dialogues


def _reasons(d, kb) -> set[str]:
    return {i.name for i in check_dialogue(d, kb)}


def _first_quoting_turn(d):
    return next(t for t in d.turns if t.act == "recommend" and t.quote_spans)


def test_built_dialogues_pass(good, kb) -> None:
    assert all(check_dialogue(d, kb) == [] for d in good)


def test_corrupted_quote_is_caught(good, kb) -> None:
    d = good[0].model_copy(deep=True)
    t = _first_quoting_turn(d)
    span = t.quote_spans[0]
    quote = t.text[span.start : span.end]
    fake = "The lobster thermidor was served by a juggling octopus wearing a tiny hat"
    t.text = t.text[: span.start] + fake + t.text[span.end :]
    issues = check_dialogue(d, kb)
    assert {"quote-not-in-review", "quote-span-mismatch"} <= {i.name for i in issues}
    assert any(i.code == "GT-Q003" and i.turn == t.index for i in issues)
    assert quote not in t.text


def test_small_typo_in_a_long_quote_still_passes_the_fuzzy_check(good, kb) -> None:
    d = good[1].model_copy(deep=True)
    t = _first_quoting_turn(d)
    span = max(t.quote_spans, key=lambda s: s.end - s.start)
    quote = t.text[span.start : span.end]
    if len(quote) < 30:
        pytest.skip("needs a long quote")
    typo = quote[:10] + quote[11:]  # one character dropped
    t.text = t.text[: span.start] + typo + t.text[span.end :]
    reasons = _reasons(d, kb)
    # fuzzy-matched (>= 0.80) but not verbatim: the builder requires verbatim spans
    assert "quote-not-in-review" not in reasons and "quote-span-verbatim" in reasons


def test_bad_tag_and_tag_of_another_poi(good, kb) -> None:
    d = good[2].model_copy(deep=True)
    t = _first_quoting_turn(d)
    tag = t.cited_tags[0]
    t.text = t.text.replace(f"[{tag}]", "[R999]")
    t.cited_tags = ["R999" if x == tag else x for x in t.cited_tags]
    assert "tag-unknown" in _reasons(d, kb)

    d = good[2].model_copy(deep=True)
    t = _first_quoting_turn(d)
    quote = t.text[t.quote_spans[0].start : t.quote_spans[0].end]
    other = next(  # a review of another POI that does not happen to hold the same sentence
        tag
        for tag, ref in d.review_refs.items()
        if ref.poi_id not in t.recommended and quote not in kb.review(ref.review_id).text
    )
    tag = t.cited_tags[0]
    t.text = t.text.replace(f"[{tag}]", f"[{other}]")
    t.cited_tags = list(dict.fromkeys(other if x == tag else x for x in t.cited_tags))
    reasons = _reasons(d, kb)
    assert "tag-wrong-poi" in reasons and "quote-not-in-review" in reasons


def test_structure_problems(good, kb) -> None:
    d = good[3].model_copy(deep=True)
    d.turns[1].role = "user"
    assert {"alternation", "act"} <= _reasons(d, kb)

    d = good[3].model_copy(deep=True)
    for t in d.turns:
        if t.act == "compare":
            t.act = "recommend"
    assert "comparison" in _reasons(d, kb)

    d = good[3].model_copy(deep=True)
    d.has_rejection = not d.has_rejection
    assert "has-rejection" in _reasons(d, kb)

    d = good[3].model_copy(deep=True)
    t = _first_quoting_turn(d)
    t.cited_tags = []
    assert _reasons(d, kb) == {"cited-tags"}


def test_gold_violating_its_constraints_is_caught(good, kb) -> None:
    d = good[4].model_copy(deep=True)
    t = d.recommendation_turns()[0]
    violator = next(p for p in d.candidates if p != t.gold.gold_poi and p not in t.gold.multi_ref)
    t.gold.gold_poi = violator
    t.recommended = [violator, *t.recommended[1:]]
    assert "gold-violates" in _reasons(d, kb)


def test_qc_reports_errors_of_builder_rules_only(good, kb) -> None:
    """QC findings are errors of rules the builder runs (never the tier, file or release rules)."""
    d = good[5].model_copy(deep=True)
    d.turns[1].role = "user"
    d.difficulty = "Easy" if d.difficulty != "Easy" else "Expert"  # the tier is not QC's business
    issues = check_dialogue(d, kb)
    assert issues and all(i.severity == "error" and i.rule in QC_RULES for i in issues)
    assert "tier" not in {i.name for i in issues}
    assert str(issues[0]).startswith(f"{issues[0].code} {issues[0].name} (turn ")
