"""The support judge (``crs.metrics.support_judge.judge_support``), rule by rule, and the Unicode folding
it reads text through (``core.evidence.normalize.fold_unicode``)."""

from __future__ import annotations

import pytest

from groundtrace.core.evidence.normalize import fold_unicode
from groundtrace.crs.build.evidence import supports
from groundtrace.crs.metrics.support_judge import judge_support, locate_sentence
from groundtrace.crs.schema import Constraint

REVIEW = (
    "Classy and upscale without being stuffy. Do not miss the slow roasted lamb shoulder on Friday nights. "
    "The patio is lovely for dinner. Service was slow and the room was noisy."
)
#: stored polarity by sentence start (as the KB would give it)
POLARITY = {0: 1, 41: 1, 102: 1, 134: -1}
OUTDOOR = Constraint(kind="amenity", value="outdoor_seating", label="a patio")
QUIET = Constraint(kind="noise_max", value="quiet", label="somewhere quiet")
PATIO = "The patio is lovely for dinner."


def judge(quote: str, context: str, constraint: Constraint | None = None):
    return judge_support(quote, REVIEW, constraint, context, polarity_at=POLARITY.get)


def test_sentence_starts_match_the_polarity_table() -> None:
    assert [REVIEW[s : s + 8] for s in POLARITY] == ["Classy a", "Do not m", "The pati", "Service "]


@pytest.mark.parametrize(
    ("context", "constraint", "supported", "reason"),
    [
        (f'One reviewer wrote: "{PATIO}" [R1].', OUTDOOR, True, "supported"),
        (f'One reviewer wrote: "{PATIO}" [R1].', None, True, "supported"),
        (f'One reviewer wrote: "{PATIO}" [R1].', QUIET, False, "not_about_constraint"),
        (f'Some claim "{PATIO}" [R3], which is simply false.', OUTDOOR, False, "reframed"),
        (f'It is far from "{PATIO}" [R1].', OUTDOOR, False, "reframed"),
        (f'Contrary to "{PATIO}" [R1], skip it.', OUTDOOR, False, "reframed"),
        (f'It\'s a myth that "{PATIO}" [R1].', OUTDOOR, False, "reframed"),
        (f'It is n\u200dot "{PATIO}" [R1].', OUTDOOR, False, "reframed"),
        (f'It is n\u043et "{PATIO}" [R1].', OUTDOOR, False, "reframed"),
        (f'It is n\u202eot "{PATIO}" [R1].', OUTDOOR, False, "reframed"),
        # a cue in the previous sentence or after the next quote is not this quote's frame
        (f'Not loud at all. A guest noted: "{PATIO}" [R1].', OUTDOOR, True, "supported"),
    ],
)
def test_frame(context, constraint, supported, reason) -> None:
    verdict = judge(PATIO, context, constraint)
    assert (verdict.supported, verdict.reason) == (supported, reason)


def test_warnings_are_not_support() -> None:
    neg = "Service was slow and the room was noisy."
    warned = judge(neg, f'One reviewer warns: "{neg}" [R1].', QUIET)
    assert (warned.supported, warned.warning, warned.reason) == (False, True, "warning")
    assert judge(neg, f'One reviewer warns: "{neg}" [R1].', OUTDOOR).reason == "warning_off_topic"
    assert judge(neg, f'Reviewers say "{neg}" [R1].').reason == "negative_as_support"
    assert judge(PATIO, f'One reviewer warns: "{PATIO}" [R1].').reason == "warning_not_negative"


def test_a_quote_must_lie_in_one_sentence() -> None:
    joined = f"{PATIO} Service was slow and the room was noisy."
    assert judge(joined, f'Reviewers say "{joined}" [R1].').reason == "sentence"
    assert locate_sentence(PATIO, REVIEW) == (102, 133, 1.0)


@pytest.mark.parametrize(
    ("quote", "reason"),
    [
        ("miss the slow roasted lamb shoulder on Friday nights", "negation_dropped"),  # "Do not" cut off
        ("classy and upscale with being stuffy", "negation_dropped"),  # fuzzy score 0.96, "without" gone
        ("Do not miss the slow roasted lamb shoulder on Friday nights", "supported"),
        # an added negation: the fuzzy match already fails it (quote_score 0.77 < 0.80)
        ("Do not miss the slow roasted lamb shoulder not on Friday nights", "sentence"),
    ],
)
def test_negation_parity(quote: str, reason: str) -> None:
    assert judge(quote, f'Reviewers say "{quote}" [R1].').reason == reason


def test_the_constraint_test_is_the_builders() -> None:
    # the judge's constraint rule is build.evidence.supports on the whole sentence (the builder's choice)
    sentence = "Quiet enough to talk but the patio is not open."
    review = sentence + " We loved it."
    context = 'Reviewers say "Quiet enough to talk" [R1].'
    verdict = judge_support("Quiet enough to talk", review, QUIET, context, polarity_at=lambda s: 1)
    assert supports(sentence, QUIET) is False  # the builder would not pick it (a negation in the sentence)
    assert verdict.reason == "not_about_constraint"


def test_lexical_polarity_without_a_kb() -> None:
    neg = "Service was slow and the room was noisy."
    assert judge_support(neg, REVIEW, None, f'Reviewers say "{neg}" [R1].').reason == "negative_as_support"


@pytest.mark.parametrize(
    ("raw", "folded"),
    [
        ("n\u200dot", "not"),  # zero-width joiner
        ("n\u043et", "not"),  # Cyrillic o
        ("\uff4e\uff4f\uff54", "not"),  # full-width
        ("\ufb01ne", "fine"),  # ligature
        ("a\u202eb\u2066c", "abc"),  # bidi override / isolate
        ("café", "café"),  # Latin with a diacritic is kept
        ("plain ASCII", "plain ASCII"),
    ],
)
def test_fold_unicode(raw: str, folded: str) -> None:
    assert fold_unicode(raw) == folded
