"""Stage 4: QC passes built dialogues and catches broken ones, each by its reason."""

from __future__ import annotations

import pytest

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.build.qc import check_dialogue, count_reasons, quoted_citations, tags_in
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
    return {i.reason for i in check_dialogue(d, kb)}


def _first_quoting_turn(d):
    return next(t for t in d.turns if t.act == "recommend" and t.quote_spans)


def test_tag_parsing_forms() -> None:
    assert tags_in("a [R1] b [R3, R2] c [R1][R4] [R5; R6]") == ["R1", "R3", "R2", "R4", "R5", "R6"]
    # offsets: 'x "' is 3 chars, so the first quote starts at 3; 'Quiet room." [R2] y "' adds 21 → 24
    assert quoted_citations('x "Quiet room." [R2] y "Nice" [R1, R3]') == [
        ("Quiet room.", ["R2"], 3),
        ("Nice", ["R1", "R3"], 24),
    ]


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
    assert {"quote_mismatch", "span_mismatch"} <= {i.reason for i in issues}
    assert any(i.reason == "quote_mismatch" and i.turn == t.index for i in issues)
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
    assert "quote_mismatch" not in reasons and "span_mismatch" in reasons


def test_bad_tag_and_tag_of_another_poi(good, kb) -> None:
    d = good[2].model_copy(deep=True)
    t = _first_quoting_turn(d)
    tag = t.cited_tags[0]
    t.text = t.text.replace(f"[{tag}]", "[R999]")
    t.cited_tags = ["R999" if x == tag else x for x in t.cited_tags]
    assert "bad_tag" in _reasons(d, kb)

    d = good[2].model_copy(deep=True)
    t = _first_quoting_turn(d)
    other = next(tag for tag, ref in d.review_refs.items() if ref.poi_id not in t.recommended)
    tag = t.cited_tags[0]
    t.text = t.text.replace(f"[{tag}]", f"[{other}]")
    t.cited_tags = list(dict.fromkeys(other if x == tag else x for x in t.cited_tags))
    reasons = _reasons(d, kb)
    assert "tag_wrong_poi" in reasons and "quote_mismatch" in reasons


def test_structure_problems(good, kb) -> None:
    d = good[3].model_copy(deep=True)
    d.turns[1].role = "user"
    assert {"alternation", "unknown_act"} <= _reasons(d, kb)

    d = good[3].model_copy(deep=True)
    for t in d.turns:
        if t.act == "compare":
            t.act = "recommend"
    assert "no_comparison" in _reasons(d, kb)

    d = good[3].model_copy(deep=True)
    d.has_rejection = not d.has_rejection
    assert "rejection" in _reasons(d, kb)

    d = good[3].model_copy(deep=True)
    t = _first_quoting_turn(d)
    t.cited_tags = []
    assert _reasons(d, kb) == {"cited_tags"}


def test_gold_violating_its_constraints_is_caught(good, kb) -> None:
    d = good[4].model_copy(deep=True)
    t = d.recommendation_turns()[0]
    violator = next(p for p in d.candidates if p != t.gold.gold_poi and p not in t.gold.multi_ref)
    t.gold.gold_poi = violator
    t.recommended = [violator, *t.recommended[1:]]
    assert "gold" in _reasons(d, kb)


def test_count_reasons_counts_each_reason_once() -> None:
    from groundtrace.crs.build.qc import QCIssue

    issues = [QCIssue("bad_tag", 1, "a"), QCIssue("bad_tag", 3, "b"), QCIssue("gold", 1, "c")]
    assert count_reasons(issues) == {"bad_tag": 1, "gold": 1}
