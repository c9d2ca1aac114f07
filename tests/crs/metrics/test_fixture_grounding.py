"""Grounding metrics on the fixture runs, computed by hand.

Token counts use groundtrace.core.evidence.tokens (each quote mark, bracket, comma and period is one token).
Character offsets below were counted on the response strings of predictions_closed.jsonl.
"""

from __future__ import annotations

import pytest

from groundtrace.crs.evaluation.score import score_predictions


@pytest.fixture(scope="module")
def table(dialogues, closed_predictions, kb):
    return score_predictions(dialogues, closed_predictions, kb, setting="closed")


def values_of(table, dialogue_id, turn_index):
    return next(t.values for t in table.turns if (t.dialogue_id, t.turn_index) == (dialogue_id, turn_index))


def per_turn(table, metric):
    return {(t.dialogue_id, t.turn_index): t.values[metric] for t in table.turns}


def test_d1_1_fully_grounded(table):
    # 'Try Sakura Sushi: "the room feels elegant" [R3].'
    # 14 tokens: Try Sakura Sushi : " the room feels elegant " [ R3 ] .
    v = values_of(table, "d1", 1)
    assert v["gs"] == 1.0  # "the room feels elegant" is verbatim in V3 (R3)
    assert v["cd"] == pytest.approx(7 / 14)  # the room feels elegant (4) + [ R3 ] (3)
    # mentions: "Sushi" (japanese) ends at 16, "elegant" (classy) ends at 41; [R3] spans 43-47
    # -> both within 80
    assert v["pc"] == 1.0
    assert v["cgs"] == 1.0  # 1 × min(1, 0.5/0.05) × (0.5 + 0.5 × 1)
    assert v["citation_validity"] == 1.0  # R3 -> V3 of P2, P2 is ranked first
    assert v["citation_rate"] == 1.0
    # japanese: P2 categories include Japanese; classy: P2 ambience includes classy -> 0 of 2 unsupported
    assert v["hallucinated_attribute_rate"] == 0.0


def test_d1_3_no_citation_loophole(table):
    # 'Trattoria Roma is quiet and Italian.' — 7 tokens, no tag, no quote
    v = values_of(table, "d1", 3)
    assert v["gs"] == 1.0  # vacuous: no quoted citation (the known loophole)
    assert v["cd"] == 0.0
    assert v["pc"] == 0.0  # mentions Trattoria (italian), quiet, Italian: none has a tag nearby -> 0/3
    assert v["cgs"] == 0.0  # 1 × min(1, 0/0.05) × 0.5 — CGS closes the loophole
    assert v["citation_validity"] is None  # no tag: not applicable
    assert v["citation_rate"] == 0.0
    assert v["hallucinated_attribute_rate"] == 0.0  # P4 is Italian and quiet


def test_d2_1_partly_grounded(table):
    # 'Burger Barn has "good burgers" [R6] and "huge portions" [R6, R9]. It also has free wifi.'
    # 27 tokens. Anti-gaming rules (docs/crs-metrics.md): "good burgers" is in V6 -> counted, [R6] backed;
    # "huge portions" is not in V6 and R9 resolves to nothing -> not counted, [R6, R9] not backed, and the
    # unresolved R9 is an error in GS's denominator.
    v = values_of(table, "d2", 1)
    # GS = counted / (quoted citations + bare groups + unresolved tags) = 1 / (2 + 0 + 1) = 1/3
    # (before the anti-gaming rules: 1/2, R9 was ignored)
    assert v["gs"] == pytest.approx(1 / 3)
    # citation tokens: good burgers (2) + [ R6 ] (3) = 5 (before: + huge portions (2) + [ R6 , R9 ] (5) = 12)
    assert v["cd"] == pytest.approx(5 / 27)
    assert v["pc"] == 1.0  # "wifi" at 83-87; the backed [R6] ends at 35 -> gap 48 <= 80
    assert v["cgs"] == pytest.approx(1 / 3)  # 1/3 × min(1, (5/27)/0.05 = 3.7) × (0.5 + 0.5)
    assert v["citation_validity"] == pytest.approx(
        2 / 3
    )  # tags R6 R6 R9: R6 -> P5 (ranked 1st) twice, R9 unknown
    # wifi: support set = recommended {P5, P3, P1} ∪ cited {P5}; none has wifi, none of their reviews
    # mentions it (V5 does, but P4 is not in the set) -> 1/1 hallucinated
    assert v["hallucinated_attribute_rate"] == 1.0


def test_d3_1_mention_out_of_window(table):
    # 'Olive Grove is romantic: "Classy and upscale without being stuffy" [R1]. Regulars ... glass of wine.'
    # 37 tokens; citation tokens: 6 quoted words + [ R1 ] = 9
    v = values_of(table, "d3", 1)
    assert v["cd"] == pytest.approx(9 / 37)
    # mentions romantic (15-23), Classy (26-32), upscale (37-44) near [R1] (67-71);
    # "wine" at 159: gap 159-71 = 88 > 80
    assert v["pc"] == pytest.approx(3 / 4)
    assert v["cgs"] == pytest.approx(0.875)  # 1 × min(1, 0.243/0.05) × (0.5 + 0.5 × 0.75)
    # romantic, classy: P1 ambience; upscale: not a P1 attribute but V1 (a P1 review) says it;
    # wine: P1 full bar
    assert v["hallucinated_attribute_rate"] == 0.0


def test_unscorable_defaults_and_aggregates(table):
    # d1/5 (error) and d2/3 (missing) take the defaults: 0 for every grounding metric, 1 for hallucination
    for key in (("d1", 5), ("d2", 3)):
        assert per_turn(table, "gs")[key] == 0.0
        assert per_turn(table, "hallucinated_attribute_rate")[key] == 1.0
    agg = table.aggregate
    assert agg["gs"] == pytest.approx((1 + 1 + 0 + 1 / 3 + 0 + 1 + 1) / 7)  # d3/3 "Quiet enough to talk" ∈ V2
    # d3/3: 14 tokens, 4 quoted + 3 tag tokens -> 0.5
    assert agg["cd"] == pytest.approx((0.5 + 0 + 0 + 5 / 27 + 0 + 9 / 37 + 0.5) / 7)
    assert agg["pc"] == pytest.approx((1 + 0 + 0 + 1 + 0 + 0.75 + 1) / 7)
    assert agg["cgs"] == pytest.approx((1 + 0 + 0 + 1 / 3 + 0 + 0.875 + 1) / 7)
    # citation validity: d1/3 not applicable -> mean over 6 = (1 + 0 + 2/3 + 0 + 1 + 1) / 6
    assert agg["citation_validity"] == pytest.approx((1 + 2 / 3 + 1 + 1) / 6)
    assert agg["citation_rate"] == pytest.approx(4 / 7)
    assert agg["hallucinated_attribute_rate"] == pytest.approx((0 + 0 + 1 + 1 + 1 + 0 + 0) / 7)
    assert table.counts["gs"].unscorable == 2 and table.counts["gs"].scored == 5


def test_open_setting_resolves_extended_tags(dialogues, open_predictions, kb):
    # d1/1 open: '"The salsa bar is the best in town" [R7].' — R7 exists only in the open numbering:
    # review_refs has R1-R6 (V1-V6); open_review_refs appends P3's untagged V7 as R7.
    table = score_predictions(
        dialogues, open_predictions, kb, setting="open", metrics=["gs", "citation_validity"]
    )
    v = {(t.dialogue_id, t.turn_index): t.values for t in table.turns}
    assert v[("d1", 1)] == {"gs": 1.0, "citation_validity": 1.0}  # V7 is a review of P3, ranked first
    # the same response scored as closed: R7 does not resolve -> ungrounded, invalid
    closed = [p.model_copy(update={"setting": "closed"}) for p in open_predictions]
    table = score_predictions(dialogues, closed, kb, setting="closed", metrics=["gs", "citation_validity"])
    v = {(t.dialogue_id, t.turn_index): t.values for t in table.turns}
    assert v[("d1", 1)] == {"gs": 0.0, "citation_validity": 0.0}


class FakeEntailment:
    """Entails when every word of the hypothesis (lower-cased, letters only) occurs in the premise."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []

    def score(self, pairs):
        self.calls.append(list(pairs))
        out = []
        for premise, hypothesis in pairs:
            words = {w.strip(".,:;!?").lower() for w in hypothesis.split()}
            out.append(0.9 if words <= {w.strip(".,:;!?").lower() for w in premise.split()} else 0.1)
        return out


def test_nli_unavailable_without_scorer(table):
    assert "nli_entailment" in table.unavailable
    assert "nli_entailment" not in table.aggregate
    assert "entailment" in table.unavailable["nli_entailment"]


def test_nli_with_fake_scorer(dialogues, closed_predictions, kb):
    scorer = FakeEntailment()
    table = score_predictions(dialogues, closed_predictions, kb, metrics=["nli"], entailment=scorer)
    assert len(scorer.calls) == 1  # one batched call per run
    pairs = scorer.calls[0]
    assert len(pairs) == len(set(pairs))
    # Tagged claims (core.citations: the stretch a tag group closes),
    # hypothesis = claim without tags/quote marks:
    # d1/1 "Try Sakura Sushi: the room feels elegant." vs V3            -> "try", "sakura" not in V3: 0.1
    # d2/1 "Burger Barn has good burgers" vs V6                          -> 0.1
    # d2/1 "and huge portions." vs V6 (R9 does not resolve)              -> 0.1
    # d3/1 "Olive Grove is romantic: Classy and upscale without being stuffy." vs V1 -> 0.1
    # d3/3 "Olive Grove again: Quiet enough to talk." vs V2              -> 0.1
    # d1/3 has no tag -> no claim. Pooled: 0 entailed / (5 claims + 2 unscorable turns as 1 claim each)
    assert (
        "Quiet enough to talk, and the lamb was perfect.",
        "Olive Grove again: Quiet enough to talk.",
    ) in pairs
    assert ("Big screens everywhere, good burgers.", "and huge portions.") in pairs
    assert len(pairs) == 5
    assert table.aggregate["nli_entailment"] == 0.0
    values = {(t.dialogue_id, t.turn_index): t.values["nli_entailment"] for t in table.turns}
    assert values[("d1", 3)] is None  # no claim: not applicable
    assert table.counts["nli_entailment"].not_applicable == 1


def test_nli_pooled_counts_entailed_claims(dialogues, kb):
    from groundtrace.crs.systems.predictions import Prediction

    preds = [
        # two claims: the first is entailed by V1 (all its words are in V1),
        # the second cites nothing resolvable
        Prediction(dialogue_id="d3", turn_index=1, ranking=["P1"],
                   response='"Classy and upscale without being stuffy" [R1]. It is very romantic [R99].'),
        # one claim entailed by V5
        Prediction(dialogue_id="d3", turn_index=3, ranking=["P4"], response='"homemade pasta" [R5].'),
    ]  # fmt: skip
    scorer = FakeEntailment()
    table = score_predictions([d for d in dialogues if d.dialogue_id == "d3"], preds, kb, metrics=["nli"],
                              entailment=scorer)  # fmt: skip
    # d3/1: 1 entailed of 2; d3/3: 1 of 1 -> pooled (1 + 1) / (2 + 1) = 2/3 (the turn mean would be 0.75)
    assert table.aggregate["nli_entailment"] == pytest.approx(2 / 3)
    assert len(scorer.calls[0]) == 2  # the [R99] claim has no premise and is never sent


# -- hand-computed single responses (scored on d3/1, ranking [P1]; d3's tags: R1 -> V1, R2 -> V2) ----------
# V1 = "Classy and upscale without being stuffy. The patio is lovely at sunset."
# V2 = "Quiet enough to talk, and the lamb was perfect."
GROUNDING = ("gs", "cd", "pc", "cgs")


def score_response(dialogues, kb, response: str) -> tuple[dict, dict]:
    """The fast values and the difflib reference's values of one response at d3/1."""
    from groundtrace.crs.metrics.lexicon import load_lexicon
    from groundtrace.crs.metrics.reference import reference_turn_values
    from groundtrace.crs.systems.predictions import Prediction

    d3 = next(d for d in dialogues if d.dialogue_id == "d3")
    pred = Prediction(dialogue_id="d3", turn_index=1, ranking=["P1"], response=response)
    fast = score_predictions([d3], [pred], kb, metrics=list(GROUNDING)).turns[0].values
    ref = reference_turn_values(response, ["P1"], d3.review_refs, kb, load_lexicon())
    return fast, {name: ref[name] for name in GROUNDING}


def test_two_quotes_in_one_claim_are_both_cited(dialogues, kb):
    # One sentence, one tag group: the claim is the whole sentence and [R1] cites BOTH quotes in it, not only
    # the one right before the tag (docs/crs-metrics.md, "Citations").
    # 16 tokens: I like " zebra quantum " and " Classy and upscale " [ R1 ] .
    # citation tokens: Classy and upscale (3) + [ R1 ] (3) = 6 — "zebra quantum" is not counted (not in V1);
    # before the anti-gaming rules every tagged quote's tokens counted: + zebra quantum (2) = 8
    fast, ref = score_response(dialogues, kb, 'I like "zebra quantum" and "Classy and upscale" [R1].')
    want = {
        "gs": 0.5,  # "zebra quantum" is not in V1, "Classy and upscale" is -> 1/2
        "cd": 6 / 16,
        "pc": 1.0,  # mentions Classy (28-34), upscale (39-46); [R1] at 48-52 -> both within 80
        "cgs": 0.5,  # 0.5 × min(1, 0.5/0.05) × (0.5 + 0.5 × 1)
    }
    assert fast == pytest.approx(want) and ref == pytest.approx(want)


@pytest.mark.parametrize(
    ("response", "want"),
    [
        # 9 tokens: ' Classy and upscale ' [ R1 ] .   citation tokens: Classy and upscale (3) + [ R1 ] (3) = 6
        # GS: "Classy and upscale" is in V1 -> 1/1; CGS = 1 × min(1, (6/9)/0.05) × (0.5 + 0.5 × 1) = 1
        ("'Classy and upscale' [R1].", {"gs": 1.0, "cd": 6 / 9, "pc": 1.0, "cgs": 1.0}),
        # Two claims ([R1] closes the first; ", but ..." starts the second),
        # each with one single-quoted citation.
        # 18 tokens: ' zebra quantum ' [ R1 ] , but ' Classy and upscale ' [ R1 ] .
        # citation tokens: Classy and upscale (3) + its backed [ R1 ] (3) = 6; 'zebra quantum' is not in
        # V1, so it and the [R1] closing it do not count (before the anti-gaming rules: + 2 + 3 = 11)
        # GS: "zebra quantum" not in V1, "Classy and upscale" is -> 1/2 (single quotes ignored: vacuous 1.0)
        # CGS = 0.5 × min(1, (6/18)/0.05) × (0.5 + 0.5 × 1) = 0.5
        (
            "'zebra quantum' [R1], but 'Classy and upscale' [R1].",
            {"gs": 0.5, "cd": 6 / 18, "pc": 1.0, "cgs": 0.5},
        ),
        # curly single quotes behave the same: ‘ Classy and upscale ’ [ R1 ] . -> 9 tokens, 6 citation tokens
        ("‘Classy and upscale’ [R1].", {"gs": 1.0, "cd": 6 / 9, "pc": 1.0, "cgs": 1.0}),
    ],
)
def test_single_quoted_citations(dialogues, kb, response, want):
    fast, ref = score_response(dialogues, kb, response)
    assert fast == pytest.approx(want) and ref == pytest.approx(want)


def test_cgs_cd_below_saturation_scales_linearly(dialogues, kb):
    # Pins the CD saturation constant 0.05: a long response with one short tagged quote.
    # 'Olive Grove: "lamb was perfect" [R2].' = Olive Grove : " lamb was perfect " [ R2 ] .  -> 12 tokens
    # + 19 × 'We walked there after a long day in the old town.' (12 tokens each) -> 228
    # = 240 tokens; citation tokens: lamb was perfect (3) + [ R2 ] (3) = 6 -> CD = 6/240 = 1/40 = 0.025 < 0.05
    # (the quote used to be the single word "perfect"; one word is now below MIN_QUOTE_WORDS = 2)
    filler = " ".join(["We walked there after a long day in the old town."] * 19)
    fast, ref = score_response(dialogues, kb, f'Olive Grove: "lamb was perfect" [R2]. {filler}')
    want = {
        "gs": 1.0,  # "lamb was perfect" is in V2 ("the lamb was perfect")
        "cd": 6 / 240,
        "pc": 1.0,  # no attribute term in the response
        "cgs": 0.5,  # 1 × min(1, 0.025/0.05) × (0.5 + 0.5 × 1) = 0.5 (with 0.001 instead of 0.05: 1.0)
    }
    assert fast == pytest.approx(want) and ref == pytest.approx(want)


def test_words_inside_an_anchor_name_are_no_mentions(dialogues, kb):
    # 'Try Trattoria Roma, 0.4 km from Sushi Garden Hotel.' ranking P4 (Trattoria Roma: Italian, quiet).
    # Mentions: "Trattoria" (italian, supported by P4's categories) and "Sushi" (japanese) — but "Sushi"
    # sits inside the anchor's name, a reference point, not a claim about P4. Without an anchor of that
    # name "Sushi" is a mention P4 does not support: HAR 1/2; with it, HAR 0/1 = 0.
    from groundtrace.crs.metrics.lexicon import load_lexicon, outside_place_names
    from groundtrace.crs.metrics.reference import reference_turn_values
    from groundtrace.crs.schema import Anchor
    from groundtrace.crs.systems.predictions import Prediction

    response = "Try Trattoria Roma, 0.4 km from Sushi Garden Hotel."
    found = load_lexicon().mentions(response)
    assert [m.term for m in found] == ["italian", "japanese"]
    assert [m.term for m in outside_place_names(found, response, ("sushi garden hotel",))] == ["italian"]
    d1 = next(d for d in dialogues if d.dialogue_id == "d1")
    turn = d1.recommendation_turns()[0]
    pred = [Prediction(dialogue_id="d1", turn_index=turn.index, ranking=["P4"], response=response)]
    metrics = ["hallucinated_attribute_rate", "pc"]
    plain = score_predictions([d1.model_copy(update={"anchor": None})], pred, kb, metrics=metrics)
    # without the anchor "Sushi" is a claim about Trattoria Roma (false); "Trattoria" is part of the
    # recommended POI's name, no claim (v2; v1 counted it: 1/2)
    assert plain.turns[0].values["hallucinated_attribute_rate"] == 1.0
    anchored = d1.model_copy(update={"anchor": Anchor(name="Sushi Garden Hotel", lat=0.0, lon=0.0)})
    table = score_predictions([anchored], pred, kb, metrics=metrics)
    assert table.turns[0].values["hallucinated_attribute_rate"] == 0.0
    assert table.turns[0].values["pc"] == 0.0  # one mention ("Trattoria"), no tag near it
    ref = reference_turn_values(
        response, ["P4"], d1.review_refs, kb, load_lexicon(), "", ("Sushi Garden Hotel",)
    )
    assert ref["hallucinated_attribute_rate"] == 0.0 and ref["pc"] == 0.0
