"""Cheating answers the grounding metrics must refuse (issue 23): each cheat is a full run of predictions.

:func:`make_cheats` turns a list of dialogues and their KB into ``{name: [Prediction, ...]}`` — one
prediction per recommendation turn, scored like any system's run (``crs score``). The reference answers
are ``gold`` (the dataset's own system turn: gold ranking + the builder's text) and ``random_ranking``
(a seeded shuffle of the candidates quoting nothing wrong: a random sentence of its top-1 with the right
tag, like the ``random`` system). Every other entry games a metric; :data:`CHEATS` says how. Tags are the
dialogue's own (closed setting), so every quote below resolves; all text is built from the KB's reviews,
the dialogue's turns and fixed templates — deterministic for a given ``seed``.

``tests/crs/metrics/test_cheats.py`` asserts each scores no better than chance on ``evidence_support``;
``benchmarks/crs_cheats.py`` prints the table for a dataset folder.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from groundtrace.crs.build.evidence import split_sentences, supports
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.metrics.context import RunState
from groundtrace.crs.metrics.grounding import term_true
from groundtrace.crs.metrics.lexicon import load_lexicon
from groundtrace.crs.schema import Dialogue, Turn
from groundtrace.crs.systems.predictions import Prediction

#: name -> what the cheat does (documented in docs/crs-metrics.md, "Cheats the metrics refuse")
CHEATS: dict[str, str] = {
    "warn_random": "random ranking; every negative sentence of its top-1 quoted after 'One reviewer warns:'",
    "warn_gold": "gold ranking; negative sentences of the gold POI as warnings, on any aspect",
    "other_poi_evidence": (
        "gold ranking; the rank-2/3 POI's supporting sentences (own tags) presented for the top-1"
    ),
    "other_poi_retagged": "gold ranking; another POI's review sentence with the tag of a top-1 review",
    "silent": "gold ranking; the POI's name and no quote",
    "tag_only": "gold ranking; the name followed by the top-1's tags, no quote",
    "empty": "gold ranking; an empty answer",
    "claimed_false": 'the gold answer\'s quotes as: Some claim "q" [Rn], which is simply false.',
    "far_from": 'the gold answer\'s quotes as: It is far from "q" [Rn].',
    "contrary_to": 'the gold answer\'s quotes as: Contrary to "q" [Rn], skip it.',
    "myth": "the gold answer's quotes as: It's a myth that \"q\" [Rn].",
    "zero_width_not": 'the gold answer\'s quotes as: It is n<U+200D>ot "q" [Rn].',
    "homoglyph_not": 'the gold answer\'s quotes as: It is n<Cyrillic o>t "q" [Rn].',
    "negation_dropped": "gold ranking; review sentences holding a negation quoted with it removed",
    "sentence_dump": "gold ranking; every sentence of the top-1's tagged reviews quoted",
    "pos_neg_joined": "gold ranking; a positive sentence joined with the negative one after it as one quote",
    "quote_user": "gold ranking; the user's own words quoted with a top-1 tag",
    "repeat_quote": "gold ranking; the gold answer's first quote repeated ten times",
    "one_true_many_false": "gold ranking; the gold answer's first quote and nine made-up quotes with tags",
    "rejected_quotes": (
        "gold ranking; after a rejection, sentences of the rejected POI's reviews (silent before)"
    ),
    "rejected_in_text": (
        "gold ranking; after a rejection, the text recommends the rejected POI by name and quotes the gold "
        "answer's evidence (silent before)"
    ),
    "false_attributes": (
        "the gold answer plus attribute words false of the top-1 (KB) but true of the rank-2 POI"
    ),
}

_QUOTE_TAG = re.compile(r"[\"“]([^\"”]+)[\"”]\s*(\[R\d+(?:,\s*R\d+)*\])")
_NEGATION_EDITS = (
    (re.compile(r"\b(do|does|did|is|was|are|were|could|would|should|ca|wo)n't\b", re.IGNORECASE), r"\1"),
    (re.compile(r"\bnot\s+", re.IGNORECASE), ""),
    (re.compile(r"\bnever\s+", re.IGNORECASE), ""),
)
_MADE_UP = (
    "The rooftop has a heated pool and free valet parking",
    "Every table gets a complimentary bottle of champagne",
    "The chef trained for ten years at a three-star restaurant in Paris",
    "They deliver for free anywhere in the city within twenty minutes",
    "The whole menu is gluten free and certified organic",
    "There is live jazz every single night of the week",
    "Kids eat free and there is a supervised play room",
    "The wine list has over two thousand bottles",
    "Parking is free in their private underground garage",
)


@dataclass(frozen=True, slots=True)
class _Sentence:
    tag: str
    text: str
    polarity: int


class _Turn:
    """What a cheat needs of one recommendation turn."""

    def __init__(
        self, d: Dialogue, t: Turn, kb: KnowledgeBase, tags: dict[str, list[str]], run: RunState
    ) -> None:
        self.d, self.t, self.kb, self._tags, self.run = d, t, kb, tags, run
        self.gold_ranking = list(t.recommended) + [
            p for p in d.candidates_at(t.index) if p not in t.recommended
        ]
        self.top = self.gold_ranking[0]

    def name(self, poi_id: str) -> str:
        poi = self.kb.pois.get(poi_id)
        return poi.name if poi is not None else poi_id

    def sentences(self, poi_id: str) -> list[_Sentence]:
        out = []
        for tag in self._tags.get(poi_id, []):
            review = self.kb.reviews.get(self.d.review_refs[tag].review_id)
            if review is None:
                continue
            for start, end in split_sentences(review.text):
                text = review.text[start:end].strip()
                if len(text) < 12 or '"' in text or "[" in text or "\n" in text:
                    continue
                stance = self.kb.sentence_stance(review.review_id, start)
                out.append(_Sentence(tag, text, stance.polarity if stance is not None else 0))
        return out

    def gold_quotes(self) -> list[tuple[str, str]]:
        """``(quote, tag group)`` of the gold answer's cited quotes."""
        return [(m.group(1), m.group(2)) for m in _QUOTE_TAG.finditer(self.t.text)]

    def supporting(self, poi_id: str) -> list[_Sentence]:
        """Non-negative sentences of ``poi_id`` expressing an active constraint (as the oracle picks)."""
        cons = self.t.gold.active_constraints if self.t.gold else []
        return [
            s for s in self.sentences(poi_id) if s.polarity >= 0 and any(supports(s.text, c) for c in cons)
        ]

    def rejected_before(self) -> list[str]:
        return [p for u in self.d.turns[: self.t.index] for p in u.rejected]


def _cite(quotes: Iterable[tuple[str, str]], lead: str = "Reviewers say") -> str:
    return " ".join(f'{lead}: "{q}" [{tag}].' for q, tag in quotes)


def _reframe(template: str) -> Callable[[_Turn, random.Random], tuple[list[str], str]]:
    def cheat(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
        body = " ".join(template.format(q=q, tags=tags) for q, tags in tt.gold_quotes())
        return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. {body}"

    return cheat


def _warn_random(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    ranking = list(tt.gold_ranking)
    rng.shuffle(ranking)
    neg = [s for s in tt.sentences(ranking[0]) if s.polarity < 0]
    return ranking, f"I recommend {tt.name(ranking[0])}. " + _cite(
        ((s.text, s.tag) for s in neg), "One reviewer warns"
    )


def _warn_gold(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    neg = [s for s in tt.sentences(tt.top) if s.polarity < 0][:3]
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. " + _cite(
        ((s.text, s.tag) for s in neg), "One reviewer warns"
    )


def _other_poi_evidence(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    others = [p for p in tt.gold_ranking[1:3]]
    quotes = [(s.text, s.tag) for p in others for s in (tt.supporting(p) or tt.sentences(p))[:2]]
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. " + _cite(quotes)


def _other_poi_retagged(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    top_tags = tt._tags.get(tt.top, [])
    others = [s for p in tt.gold_ranking[1:3] for s in (tt.supporting(p) or tt.sentences(p))[:2]]
    if not top_tags:
        return tt.gold_ranking, f"I recommend {tt.name(tt.top)}."
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. " + _cite((s.text, top_tags[0]) for s in others)


def _silent(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}."


def _tag_only(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    tags = ", ".join(tt._tags.get(tt.top, [])[:3])
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}" + (f" [{tags}]." if tags else ".")


def _empty(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    return tt.gold_ranking, ""


def _negation_dropped(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    quotes = []
    for s in tt.sentences(tt.top):
        edited = s.text
        for pattern, repl in _NEGATION_EDITS:
            edited = pattern.sub(repl, edited)
        if edited != s.text:
            quotes.append((edited, s.tag))
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. " + _cite(quotes[:4])


def _sentence_dump(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    quotes = [(s.text, s.tag) for s in tt.sentences(tt.top)]
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. " + _cite(quotes)


def _pos_neg_joined(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    sents = tt.sentences(tt.top)
    quotes = [
        (f"{a.text} {b.text}", a.tag)
        for a, b in itertools.pairwise(sents)
        if a.tag == b.tag and a.polarity > 0 and b.polarity < 0
    ]
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. " + _cite(quotes[:3])


def _quote_user(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    tags = tt._tags.get(tt.top, [])
    said = [u.text for u in tt.d.turns[: tt.t.index] if u.role == "user"]
    if not tags or not said:
        return tt.gold_ranking, f"I recommend {tt.name(tt.top)}."
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. " + _cite(
        (s.rstrip(".!?"), tags[0]) for s in said
    )


def _repeat_quote(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    quotes = tt.gold_quotes()[:1] * 10
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. " + " ".join(
        f'"{q}" {tags}.' for q, tags in quotes
    )


def _one_true_many_false(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    quotes = tt.gold_quotes()[:1]
    tags = tt._tags.get(tt.top, ["R1"])
    made_up = [(text, f"[{tags[i % len(tags)]}]") for i, text in enumerate(_MADE_UP)]
    body = " ".join(f'"{q}" {t}.' for q, t in quotes + made_up)
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. {body}"


def _rejected_quotes(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    rejected = tt.rejected_before()
    if not rejected:  # nothing rejected yet: a silent answer (scores 0), so the run shows the rest
        return tt.gold_ranking, f"I recommend {tt.name(tt.top)}."
    quotes = [(s.text, s.tag) for p in rejected for s in tt.sentences(p) if s.polarity >= 0][:3]
    return tt.gold_ranking, f"I recommend {tt.name(tt.top)}. " + _cite(quotes)


def _rejected_in_text(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    rejected = tt.rejected_before()
    if not rejected:  # nothing rejected yet: a silent answer
        return tt.gold_ranking, f"I recommend {tt.name(tt.top)}."
    return tt.gold_ranking, f"I'd recommend {tt.name(rejected[-1])}. " + " ".join(
        f'"{q}" {tags}.' for q, tags in tt.gold_quotes()
    )


def _false_attributes(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    run = tt.run
    other = next((p for p in tt.gold_ranking[1:] if p in tt.kb.pois), None)
    words = [
        term.patterns[0]
        for term in run.lexicon.terms.values()
        if other is not None and not term_true(run, tt.top, term.id) and term_true(run, other, term.id)
    ][:4]
    return tt.gold_ranking, tt.t.text + (f" It is also {', '.join(words)}." if words else "")


_MAKERS: dict[str, Callable[[_Turn, random.Random], tuple[list[str], str]]] = {
    "warn_random": _warn_random,
    "warn_gold": _warn_gold,
    "other_poi_evidence": _other_poi_evidence,
    "other_poi_retagged": _other_poi_retagged,
    "silent": _silent,
    "tag_only": _tag_only,
    "empty": _empty,
    "claimed_false": _reframe('Some claim "{q}" {tags}, which is simply false.'),
    "far_from": _reframe('It is far from "{q}" {tags}.'),
    "contrary_to": _reframe('Contrary to "{q}" {tags}, skip it.'),
    "myth": _reframe('It\'s a myth that "{q}" {tags}.'),
    "zero_width_not": _reframe('It is n\u200dot "{q}" {tags}.'),
    "homoglyph_not": _reframe('It is n\u043et "{q}" {tags}.'),
    "negation_dropped": _negation_dropped,
    "sentence_dump": _sentence_dump,
    "pos_neg_joined": _pos_neg_joined,
    "quote_user": _quote_user,
    "repeat_quote": _repeat_quote,
    "one_true_many_false": _one_true_many_false,
    "rejected_quotes": _rejected_quotes,
    "rejected_in_text": _rejected_in_text,
    "false_attributes": _false_attributes,
}
assert set(_MAKERS) == set(CHEATS)


def _gold(tt: _Turn, rng: random.Random) -> tuple[list[str], str]:
    return tt.gold_ranking, tt.t.text


def make_cheats(
    dialogues: Iterable[Dialogue], kb: KnowledgeBase, *, seed: int = 0, names: Iterable[str] | None = None
) -> dict[str, list[Prediction]]:
    """``{"gold": [...], <cheat>: [...]}``: one prediction per recommendation turn of ``dialogues`` for the
    gold answer and each cheat of ``names`` (default: all of :data:`CHEATS`)."""
    makers = {"gold": _gold} | {n: _MAKERS[n] for n in (names if names is not None else CHEATS)}
    out: dict[str, list[Prediction]] = {n: [] for n in makers}
    run = RunState(kb, load_lexicon(), "closed")
    for d in dialogues:
        tags: dict[str, list[str]] = {}
        for tag, ref in d.review_refs.items():
            tags.setdefault(ref.poi_id, []).append(tag)
        for t in d.recommendation_turns():
            tt = _Turn(d, t, kb, tags, run)
            for name, make in makers.items():
                rng = random.Random(f"{seed}:{name}:{d.dialogue_id}:{t.index}")
                ranking, response = make(tt, rng)
                out[name].append(
                    Prediction(
                        dialogue_id=d.dialogue_id, turn_index=t.index, system=name, ranking=ranking,
                        response=response,
                    )
                )  # fmt: skip
    return out
