"""Reference systems that bound the benchmark: ``oracle`` (upper bound) and ``random`` (chance level).

* **oracle** (``needs_gold``): ranking = the gold POI, then the other satisfying candidates
  (``gold.multi_ref``, in pool order), then the rest of the pool in input order. Response: the gold POI's
  name, then verbatim sentences of its tagged reviews that express the turn's active constraints (one
  per constraint, at most :data:`MAX_ORACLE_QUOTES`, by the dataset's aspect lexicon
  ``groundtrace.crs.build.evidence.supports``, never a sentence whose stored stance is negative, positive
  ones first), each as ``"sentence" [Rn]`` with the review's own tag; when no sentence expresses a
  constraint, its first positive (else first non-negative) quotable sentence.
* **random**: ranking = the pool shuffled by ``random.Random(f"{seed}:{dialogue_id}:{turn_index}:{setting}")``
  (identical on every run, independent of thread scheduling); response quotes :data:`MAX_QUOTES` random
  sentences of its top-1's tagged reviews with their correct tags. Expected closed R@1 = 1/8.

Both are stateless and thread-safe. This module is the one exemption from the rule that no system reads
the dataset builder (tests/test_layering.py): the oracle replays gold by definition and quotes with the
builder's evidence lexicon (imported inside ``OracleSystem.respond`` only); ``random`` and the helpers
the other systems share (:func:`quotable_sentences`, :func:`render_response`) read nothing of it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from groundtrace.crs.kb.stance import split_sentences
from groundtrace.crs.schema import TurnGold
from groundtrace.crs.systems.base import SYSTEMS, CRSSystem
from groundtrace.crs.systems.predictions import CandidateCard, SystemInput, SystemOutput, TaggedReview

MAX_QUOTES = 2
#: Shortest quotable sentence (characters).
MIN_QUOTE_CHARS = 12
MAX_ORACLE_QUOTES = 4


@dataclass(frozen=True, slots=True)
class TaggedSentence:
    """A quotable sentence of a tagged review."""

    tag: str
    text: str
    polarity: int = 0


def quotable_sentences(reviews: list[TaggedReview], poi_id: str) -> list[TaggedSentence]:
    """Sentences (>= MIN_QUOTE_CHARS characters, no double quote or bracket) of ``poi_id``'s reviews, in
    input order. A sentence spanning a line break is quoted line by line (a claim, and so a quote, ends at
    a line break), each line with the sentence's stored polarity."""
    out: list[TaggedSentence] = []
    for review in reviews:
        if review.poi_id != poi_id:
            continue
        polarity = {start: p for start, _end, p in review.stance}
        for start, end in split_sentences(review.text):
            for line in review.text[start:end].splitlines():
                text = line.strip()
                if len(text) >= MIN_QUOTE_CHARS and '"' not in text and "[" not in text:
                    out.append(TaggedSentence(review.tag, text, polarity.get(start, 0)))
    return out


def render_response(card: CandidateCard | None, poi_id: str, quotes: list[TaggedSentence]) -> str:
    """``I recommend NAME. Reviewers say: "q1" [Rn]. "q2" [Rm].`` (no claims outside the quotes)."""
    name = card.name if card is not None else poi_id
    # "Starling Pizza Co." is not followed by another "."
    stop = "" if name.endswith((".", "!", "?")) else "."
    if not quotes:
        return f"I recommend {name}{stop}"
    cited = " ".join(f'"{q.text}" [{q.tag}].' for q in quotes)
    return f"I recommend {name}{stop} Reviewers say: {cited}"


@SYSTEMS.register(
    "oracle",
    aliases=("gold",),
    description="Upper bound: gold POI first, quotes its reviews on the stated aspects (uses gold labels).",
)
class OracleSystem(CRSSystem):
    """Upper bound: ranks the gold POI first and quotes its reviews on the user's stated aspects."""

    needs_gold = True

    def respond(self, inp: SystemInput, gold: TurnGold | None = None) -> SystemOutput:
        if gold is None:
            raise ValueError("the oracle needs the turn's gold labels (needs_gold=True)")
        pool = [c.poi_id for c in inp.candidates]
        satisfying = set(gold.multi_ref)
        ranking = [gold.gold_poi]
        ranking += [p for p in pool if p in satisfying and p != gold.gold_poi]
        ranking += [p for p in pool if p not in ranking]
        # non-negative sentences only, positive ones first (stable: input order within a polarity)
        sentences = sorted(
            (s for s in quotable_sentences(inp.reviews, gold.gold_poi) if s.polarity >= 0),
            key=lambda s: -s.polarity,
        )
        # the one exemption from the systems' layering rule (tests/test_layering.py): the oracle replays
        # gold by definition, so it may quote by the dataset's own evidence lexicon
        from groundtrace.crs.build.evidence import supports

        quotes: list[TaggedSentence] = []
        for constraint in gold.active_constraints:
            hit = next((s for s in sentences if s not in quotes and supports(s.text, constraint)), None)
            if hit is not None:
                quotes.append(hit)
            if len(quotes) == MAX_ORACLE_QUOTES:
                break
        if not quotes and sentences:
            quotes.append(sentences[0])
        card = next((c for c in inp.candidates if c.poi_id == gold.gold_poi), None)
        return SystemOutput(ranking=ranking, response=render_response(card, gold.gold_poi, quotes))


@SYSTEMS.register("random", description="Chance level: seeded random ranking, random quotes of its top-1.")
class RandomSystem(CRSSystem):
    """Chance level: a seeded random ranking; quotes random sentences of its top-1 with correct tags."""

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed

    def config(self) -> dict[str, object]:
        return {"seed": self.seed}

    def respond(self, inp: SystemInput) -> SystemOutput:
        rng = random.Random(f"{self.seed}:{inp.dialogue_id}:{inp.turn_index}:{inp.setting}")
        ranking = [c.poi_id for c in inp.candidates]
        rng.shuffle(ranking)
        if not ranking:
            return SystemOutput(ranking=[], response="I have no candidate to recommend.")
        top = ranking[0]
        sentences = quotable_sentences(inp.reviews, top)
        quotes = rng.sample(sentences, min(MAX_QUOTES, len(sentences)))
        card = next(c for c in inp.candidates if c.poi_id == top)
        return SystemOutput(ranking=ranking, response=render_response(card, top, quotes))
