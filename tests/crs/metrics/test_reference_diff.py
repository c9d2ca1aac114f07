"""Differential test: the fast metrics against the slow difflib reference on a generated corpus.

Corpus (seeded random.Random): responses stitched from pieces — verbatim review snippets (>= 4 words)
tagged with their own review, with another POI's review, or with an unknown tag; long (>= 36 chars)
snippets with one letter substituted; unrelated quotes; unquoted tagged sentences; attribute words;
tag lists ``[R1, R3]`` and adjacent groups ``[R1][R3]``; two quotes in one claim closed by one tag group
(both are cited by it, whichever of them is grounded); single-quoted citations (``'...'``, ``‘...’``);
the anti-gaming shapes: negated snippets (``"Not ..."``), hedged ones (``I doubt that "..."``), one- and
two-word quotes, and a citation repeated.
Untagged quotes only close a response.

Tolerance: none on the outcome — every quote here scores >= 0.9 or < 0.6 under both quote matchers
(difflib window ratio vs. rapidfuzz partial alignment), so every grounding decision and therefore every
value must be equal (compared to 1e-12, the float noise of the ratios).
"""

from __future__ import annotations

import random
import re

import pytest

from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.metrics.lexicon import load_lexicon
from groundtrace.crs.metrics.reference import difflib_quote_score, reference_turn_values
from groundtrace.crs.systems.predictions import Prediction
from tests.crs.metrics.conftest import REVIEW_TEXTS

COMPARED = (
    "gs", "cd", "pc", "cgs", "citation_validity", "citation_rate", "hallucinated_attribute_rate",
    "spatial_coherence",
)  # fmt: skip
TAG_OF = {f"V{i}": f"R{i}" for i in range(1, 7)}  # the fixture dialogues' review_refs
ATTRIBUTE_SENTENCES = [
    "The patio is lovely.", "It is quiet and romantic.", "Free wifi and parking.", "Great sushi and wine.",
    "A cozy spot for brunch.", "Loud but fun, with TVs.", "Kid-friendly with a kids menu.",
    "No attributes here.",
]  # fmt: skip


def _snippet(rng: random.Random, text: str, min_words: int = 4) -> str:
    words = text.split()
    n = rng.randint(min(min_words, len(words)), len(words))
    start = rng.randint(0, len(words) - n)
    return " ".join(words[start : start + n]).strip(".,")


def _piece(rng: random.Random) -> str:
    rid = rng.choice(list(TAG_OF))
    text = REVIEW_TEXTS[rid][1]
    kind = rng.randrange(14)
    if kind == 0:  # verbatim, right tag
        return f'"{_snippet(rng, text)}" [{TAG_OF[rid]}].'
    if kind == 1:  # verbatim, tag list with a wrong and an unknown review
        other = rng.choice([r for r in TAG_OF if r != rid])
        tags = [TAG_OF[rid], TAG_OF[other], "R42"]
        rng.shuffle(tags)
        return f'As one guest put it, "{_snippet(rng, text)}" [{", ".join(tags)}].'
    if kind == 2:  # verbatim quote cited only by another POI's review
        other = rng.choice([r for r in TAG_OF if REVIEW_TEXTS[r][0] != REVIEW_TEXTS[rid][0]])
        return f'"{_snippet(rng, text, 5)}" [{TAG_OF[other]}]'
    if kind == 3:  # long quote of whole words with one letter of a 3+-letter word substituted
        # (whole words: core's quote check does not ground a quote that starts or ends inside a word
        # with at most half of it, nor one whose 1-2-letter word is changed — a paraphrase rule this
        # module's difflib reference does not re-implement; tests/core/evidence/test_quote_pairs.py
        # covers it)
        long_ids = [r for r in TAG_OF if len(REVIEW_TEXTS[r][1].split()) >= 6]
        rid = rng.choice(long_ids)
        words = REVIEW_TEXTS[rid][1].split()
        start = rng.randint(0, len(words) - 6)
        quote = " ".join(words[start : start + rng.randint(6, len(words) - start)])
        pos = rng.choice(
            [m.start() + k for m in re.finditer(r"[A-Za-z]{3,}", quote) for k in range(m.end() - m.start())]
        )
        quote = quote[:pos] + ("x" if quote[pos] != "x" else "y") + quote[pos + 1 :]
        return f'"{quote.strip()}" [{TAG_OF[rid]}][{rng.choice(list(TAG_OF.values()))}]'
    if kind == 4:  # unrelated quote
        return f'"zebra quantum xylophone jukebox" [{TAG_OF[rid]}].'
    if kind == 5:  # unquoted tagged sentence
        return f"{rng.choice(ATTRIBUTE_SENTENCES)[:-1]} [{TAG_OF[rid]}]."
    if kind == 6:
        return rng.choice(ATTRIBUTE_SENTENCES)
    if kind == 8:  # two quotes in one claim, one tag group: each quote verbatim or unrelated, in either order
        quotes = [f'"{_snippet(rng, text)}"', '"zebra quantum xylophone jukebox"' if rng.random() < 0.5 else
                  f'"{_snippet(rng, text)}"']  # fmt: skip
        rng.shuffle(quotes)
        return f"Guests wrote {quotes[0]} and {quotes[1]} [{TAG_OF[rid]}]."
    if kind == 9:  # single-quoted citation (straight or curly), right tag or unrelated quote
        quote = _snippet(rng, text) if rng.random() < 0.7 else "zebra quantum xylophone jukebox"
        opener, closer = rng.choice([("'", "'"), ("‘", "’")])
        return f"{opener}{quote}{closer} [{TAG_OF[rid]}]."
    if kind == 10:  # a verbatim snippet under an added negation (S4: needs an exact match, fails)
        return f'"Not {_snippet(rng, text).lower()}" [{TAG_OF[rid]}].'
    if kind == 11:  # a verbatim snippet under a hedge before the quote (S5)
        return f'I doubt that "{_snippet(rng, text)}" [{TAG_OF[rid]}].'
    if kind == 12:  # one- and two-word quotes (S1: one word is too short)
        words = text.split()
        k = rng.randint(0, len(words) - 2)
        return f'"{" ".join(words[k : k + rng.randint(1, 2)]).strip(".,")}" [{TAG_OF[rid]}].'
    if kind == 13:  # the same citation twice (a repeat counts once)
        cite = f'"{_snippet(rng, text)}" [{TAG_OF[rid]}].'
        return f"{cite} {cite}"
    return "Filler words to push tags further away from attribute mentions in the text."


def corpus(dialogues, n_copies: int, seed: int):
    rng = random.Random(seed)
    pool = ["P1", "P2", "P3", "P4", "P5", "ghost"]
    out_dialogues, preds = [], []
    for c in range(n_copies):
        for d in dialogues:
            copy = d.model_copy(update={"dialogue_id": f"{d.dialogue_id}-{c}"})
            out_dialogues.append(copy)
            for t in copy.recommendation_turns():
                ranking = rng.sample(pool, rng.randint(0, len(pool)))
                pieces = [_piece(rng) for _ in range(rng.randint(0, 5))]
                if rng.random() < 0.2:
                    pieces.append(f'"{_snippet(rng, REVIEW_TEXTS["V2"][1])}".')  # untagged quote, last
                preds.append(Prediction(dialogue_id=copy.dialogue_id, turn_index=t.index, ranking=ranking,
                                        response=" ".join(pieces)))  # fmt: skip
    return out_dialogues, preds


def test_difflib_quote_score_basics():
    source = "Classy and upscale without being stuffy."
    assert difflib_quote_score("upscale without", source) == 1.0
    assert difflib_quote_score("Classy and upscalx without being stuffy", source) == pytest.approx(1 - 1 / 39)
    assert difflib_quote_score("zebra quantum", source) < 0.6
    assert difflib_quote_score("", source) == 0.0


@pytest.mark.slow
def test_fast_equals_reference(dialogues, kb):
    lexicon = load_lexicon()
    gen_dialogues, preds = corpus(dialogues, n_copies=25, seed=7)  # 75 dialogues, 175 answered turns
    table = score_predictions(gen_dialogues, preds, kb, metrics=list(COMPARED))
    by_key = {(p.dialogue_id, p.turn_index): p for p in preds}
    refs = dialogues[0].review_refs
    users = {
        (d.dialogue_id, t.index): "\n".join(u.text for u in d.turns if u.role == "user" and u.index < t.index)
        for d in gen_dialogues
        for t in d.recommendation_turns()
    }
    places = {
        d.dialogue_id: tuple(
            dict.fromkeys(a.name for a in [d.anchor] + [leg.anchor for leg in d.legs] if a is not None)
        )
        for d in gen_dialogues
    }
    grounded_seen = {True: 0, False: 0}
    shapes_seen = {"two quotes, one claim": 0, "single-quoted": 0, "negated": 0, "hedged": 0}
    compared = 0
    for rec in table.turns:
        pred = by_key[(rec.dialogue_id, rec.turn_index)]
        user = users[(rec.dialogue_id, rec.turn_index)]
        expected = reference_turn_values(
            pred.response, pred.ranking, refs, kb, lexicon, user, places[rec.dialogue_id]
        )
        for name in COMPARED:
            got, want = rec.values[name], expected[name]
            assert (got is None) == (want is None), (name, pred.response)
            if got is not None:
                assert got == pytest.approx(want, abs=1e-12), (name, pred.response, got, want)
        compared += 1
        if expected["gs"] is not None and '"' in pred.response:
            grounded_seen[expected["gs"] > 0] += 1
        shapes_seen["two quotes, one claim"] += "Guests wrote" in pred.response
        shapes_seen["single-quoted"] += "' [R" in pred.response or "’ [R" in pred.response
        shapes_seen["negated"] += '"Not ' in pred.response
        shapes_seen["hedged"] += "I doubt that" in pred.response
    assert compared == len(preds) == 175
    # the corpus really exercises both grounded and ungrounded quotes, and both claim shapes
    assert grounded_seen[True] > 20 and grounded_seen[False] > 5
    assert min(shapes_seen.values()) > 10, shapes_seen


def test_category_labels_support_terms_in_both_implementations(dialogues):
    # P9 is a "Bed & Breakfast": no good_for_meal attribute and no review says "breakfast", yet its category
    # label names the term, so "breakfast" is supported (0 hallucinated); "brunch" is not (1 of 2 mentions).
    from groundtrace.crs.kb.knowledge_base import KnowledgeBase
    from groundtrace.crs.schema import POI, Review, ReviewRef

    poi = POI(poi_id="P9", name="Rose Inn", city="Tucson", poi_type="hotel", lat=32.2, lon=-110.95, stars=4.0,
              review_count=1, categories=["Hotels & Travel", "Bed & Breakfast"])  # fmt: skip
    kb = KnowledgeBase(
        [poi], [Review(review_id="W1", poi_id="P9", stars=4.0, text="Friendly hosts, spotless sheets.")]
    )
    refs = {"R1": ReviewRef(review_id="W1", poi_id="P9")}
    response = 'Rose Inn serves breakfast and brunch: "Friendly hosts, spotless sheets" [R1].'
    expected = reference_turn_values(response, ["P9"], refs, kb, load_lexicon())
    assert expected["hallucinated_attribute_rate"] == 0.5  # breakfast supported by the label, brunch not
    # any fixture dialogue will do (d2 has no anchor): only its tag table and turn 1 matter here
    dialogue = next(d for d in dialogues if d.dialogue_id == "d2").model_copy(
        update={"dialogue_id": "h1", "review_refs": refs}
    )
    pred = Prediction(dialogue_id="h1", turn_index=1, ranking=["P9"], response=response)
    table = score_predictions([dialogue], [pred], kb, metrics=["hallucinated_attribute_rate", "gs"])
    assert table.turns[0].values == {"hallucinated_attribute_rate": 0.5, "gs": 1.0}
