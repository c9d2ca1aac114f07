"""Adversarial answers: every way of gaming GS/CD/PC/CGS we know of scores CGS <= 0.2 (issue 9, item 6).

Each answer is scored at d3/1 of the metric fixtures (ranking [P1]; tags R1 -> V1, R2 -> V2), by the fast
path and, where short enough, by the difflib reference (metrics/reference.py), which must agree. Values
are computed by hand in the comments (tokens: groundtrace.core.evidence.tokens; each quote mark, bracket
and period is one token); the rules S1–S5 and GS's denominator are in docs/crs-metrics.md.

    V1 = "Classy and upscale without being stuffy. The patio is lovely at sunset."
    V2 = "Quiet enough to talk, and the lamb was perfect."

Before the anti-gaming rules, the first four answers scored CGS 1.0 (issue 9).
"""

from __future__ import annotations

import pytest

from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.metrics.context import RunState
from groundtrace.crs.metrics.lexicon import load_lexicon
from groundtrace.crs.metrics.reference import reference_turn_values
from groundtrace.crs.metrics.support import MAX_QUOTES_PER_TURN, MAX_RESPONSE_CHARS
from groundtrace.crs.systems.predictions import Prediction

GROUNDING = ("gs", "cd", "pc", "cgs")
V1_SENTENCE = "Classy and upscale without being stuffy"


def _d3(dialogues, user_text: str | None = None):
    d3 = next(d for d in dialogues if d.dialogue_id == "d3")
    if user_text is None:
        return d3
    turns = [t.model_copy(update={"text": user_text}) if t.index == 0 else t for t in d3.turns]
    return d3.model_copy(update={"turns": turns})


def score(dialogues, kb, response: str, *, user_text: str | None = None, reference: bool = True) -> dict:
    d3 = _d3(dialogues, user_text)
    pred = Prediction(dialogue_id="d3", turn_index=1, ranking=["P1"], response=response)
    fast = score_predictions([d3], [pred], kb, metrics=list(GROUNDING)).turns[0].values
    if reference:
        user = "\n".join(t.text for t in d3.turns if t.role == "user" and t.index < 1)
        ref = reference_turn_values(response, ["P1"], d3.review_refs, kb, load_lexicon(), user)
        assert {k: ref[k] for k in GROUNDING} == pytest.approx(fast), (response, fast, ref)
    return fast


@pytest.mark.parametrize(
    ("response", "want"),
    [
        # A bare tag: [ R1 ] = 3 tokens. The claim carries R1 but no quote -> a bare group: not a citation.
        # GS = 0 counted / (0 quotes + 1 bare group + 0 unresolved) = 0; CD = 0/3 (a bare group's tokens do
        # not count); PC = 1 (no attribute mention); CGS = 0 × min(1, 0) × 1 = 0.   (before: 1, 1, 1, 1)
        ("[R1]", {"gs": 0.0, "cd": 0.0, "pc": 1.0, "cgs": 0.0}),
        # An unresolved tag: bare group (1) + unresolved R999 (1) -> GS = 0/2 = 0; CD 0; CGS 0. (before: 1.0)
        ("[R999]", {"gs": 0.0, "cd": 0.0, "pc": 1.0, "cgs": 0.0}),
        # A false unquoted claim plus a tag: no quote -> the [R1] group is bare -> GS = 0/1; CD = 0;
        # PC: "wifi" and "jazz"-free mention "free wifi" has no backed group nearby -> 0/1; CGS = 0.
        ("Olive Grove has free wifi [R1].", {"gs": 0.0, "cd": 0.0, "pc": 0.0, "cgs": 0.0}),
        # A negated review sentence: quote_score = 1 - 4/86 = 0.95 (the 4 inserted characters "not ") but the
        # quote holds the cue "not", so S4 needs an exact match, which fails -> GS = 0/1; CD 0; PC: Classy and
        # upscale have no backed group nearby -> 0/2; CGS 0.   (before: GS 1, CGS 1.0)
        (f'"Not {V1_SENTENCE.lower()}" [R1].', {"gs": 0.0, "cd": 0.0, "pc": 0.0, "cgs": 0.0}),
        # A hedge outside the quote: the scope "I doubt that" holds "doubt", and "doubt that classy and
        # upscale without being stuffy" is not in V1 (S5) -> as above, all 0.
        (f'I doubt that "{V1_SENTENCE}" [R1].', {"gs": 0.0, "cd": 0.0, "pc": 0.0, "cgs": 0.0}),
        # Empty quotes: '""' is no quote (an opening mark must be followed by a non-space and the quote must
        # hold one character), so [R1] is bare -> GS 0/1, CD 0, CGS 0.
        ('"" [R1].', {"gs": 0.0, "cd": 0.0, "pc": 1.0, "cgs": 0.0}),
        # A punctuation-only quote: "." has 0 words < MIN_QUOTE_WORDS = 2 (S1) -> GS 0/1, CD 0, CGS 0.
        ('"." [R1].', {"gs": 0.0, "cd": 0.0, "pc": 1.0, "cgs": 0.0}),
        # A one-word quote that is in V2: 'perfect' has 1 word < 2 (S1) -> GS 0/1, CGS 0.
        ('"perfect" [R2].', {"gs": 0.0, "cd": 0.0, "pc": 1.0, "cgs": 0.0}),
    ],
)
def test_cheats_score_nothing(dialogues, kb, response, want):
    got = score(dialogues, kb, response)
    assert got == pytest.approx(want)
    assert got["cgs"] <= 0.2


def test_honest_control_scores_full(dialogues, kb):
    # The same quote, cited honestly: 'It is "Classy and upscale without being stuffy" [R1].'
    # 14 tokens: It is " Classy and upscale without being stuffy " [ R1 ] . ; citation tokens 6 + 3 = 9
    # GS = 1/1; CD = 9/14; PC: Classy (7-13), upscale (18-25), [R1] at 48-52 -> both within 80 -> 1; CGS = 1.
    got = score(dialogues, kb, f'It is "{V1_SENTENCE}" [R1].')
    assert got == pytest.approx({"gs": 1.0, "cd": 9 / 14, "pc": 1.0, "cgs": 1.0})


def test_quote_copied_from_the_user(dialogues, kb):
    # The user asked for "somewhere classy and upscale without being stuffy"; the answer quotes the user's
    # words back with a tag. They happen to be in V1 too, but an echo of the user is no evidence (S2):
    # GS = 0/1, CD 0, PC 0/2 (Classy, upscale, no backed group), CGS 0.
    user = "Somewhere classy and upscale without being stuffy, please."
    got = score(dialogues, kb, f'"{V1_SENTENCE}" [R1].', user_text=user)
    assert got == pytest.approx({"gs": 0.0, "cd": 0.0, "pc": 0.0, "cgs": 0.0})
    # the same answer when the user did not say it: full score (1, 9/12, 1, 1)
    got = score(dialogues, kb, f'"{V1_SENTENCE}" [R1].', user_text="A romantic dinner, please.")
    assert got == pytest.approx({"gs": 1.0, "cd": 9 / 12, "pc": 1.0, "cgs": 1.0})


def test_one_review_cited_ten_times(dialogues, kb):
    # '"Classy and upscale without being stuffy" [R1].' ten times, space-separated (48 characters each).
    # Only the first counts; the nine others repeat (n(q), V1) -> GS = 1/10.
    # Tokens: 12 per copy (" + 6 words + " + [ R1 ] + .) -> 120; citation tokens: the first copy's 6 words
    # + its backed [ R1 ] (3) = 9 -> CD = 9/120 = 0.075 -> min(1, 0.075/0.05) = 1.
    # PC: mentions Classy (48k+1..48k+7) and upscale (48k+12..48k+19) in copy k; the one backed group is at
    # 41-45; covered when the gap <= 80: copies 0, 1, 2 (upscale of copy 2 starts at 108, 108-45 = 63),
    # copy 3 starts at 145 (gap 100) -> 6 of 20 = 0.3.
    # CGS = 0.1 × 1 × (0.5 + 0.5 × 0.3) = 0.065.   (before: GS 1, CD 0.75, PC 1, CGS 1.0)
    response = " ".join([f'"{V1_SENTENCE}" [R1].'] * 10)
    got = score(dialogues, kb, response)
    assert got == pytest.approx({"gs": 0.1, "cd": 9 / 120, "pc": 0.3, "cgs": 0.065})


def test_ten_thousand_quotes_are_bounded(dialogues, kb, monkeypatch):
    # 10,000 one-word quotes in one claim closed by [R1]: '"a" "a" ... "a" [R1].' (40,005 characters,
    # under MAX_RESPONSE_CHARS). Only the first MAX_QUOTES_PER_TURN = 64 quotes are examined (each fails
    # S1, one word), the other 9,936 never count: GS = 0 / 10,000 = 0, CD 0, CGS 0. The quote matcher is
    # called at most 64 times (bounded work), not 10,000.
    calls = []
    original = RunState.quote_score

    def counting(self, quote, review_id):
        calls.append(quote)
        return original(self, quote, review_id)

    monkeypatch.setattr(RunState, "quote_score", counting)
    response = " ".join(['"a"'] * 10_000) + " [R1]."
    got = score(dialogues, kb, response, reference=False)
    assert got == pytest.approx({"gs": 0.0, "cd": 0.0, "pc": 1.0, "cgs": 0.0})
    assert len(calls) <= MAX_QUOTES_PER_TURN
    # 10,000 verbatim copies of a review sentence, each tagged: 480,000 characters > MAX_RESPONSE_CHARS
    # -> over the limit: GS = CD = PC = CGS = 0, whatever the content.
    calls.clear()
    response = " ".join([f'"{V1_SENTENCE}" [R1].'] * 10_000)
    assert len(response) > MAX_RESPONSE_CHARS
    got = score(dialogues, kb, response, reference=False)
    assert got == {"gs": 0.0, "cd": 0.0, "pc": 0.0, "cgs": 0.0}
    assert len(calls) <= MAX_QUOTES_PER_TURN


def test_answers_over_a_limit_are_counted(dialogues, kb):
    # the excess is never silent: the run's prediction stats count the answers that hit a limit
    d3 = _d3(dialogues)
    over_quotes = " ".join(['"a b"'] * (MAX_QUOTES_PER_TURN + 1)) + " [R1]."  # 65 quotes in one claim
    for response, limited in [("fine [R1].", 0), (over_quotes, 1), ("x" * (MAX_RESPONSE_CHARS + 1), 1)]:
        pred = Prediction(dialogue_id="d3", turn_index=1, ranking=["P1"], response=response)
        table = score_predictions([d3], [pred], kb, metrics=list(GROUNDING))
        assert table.predictions.over_limit == limited, response[:20]
