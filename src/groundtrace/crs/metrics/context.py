"""Per-run, per-dialogue and per-turn views the metric kernels read (lazy, computed once each).

Conventions shared by every metric (documented in docs/crs-metrics.md):

* **Ranking** — the prediction's ``ranking`` with repeats after the first occurrence removed; ids outside
  the pool are kept (they are simply never relevant).
* **Recommended set** — the first :data:`RECOMMENDED_K` (= 3) distinct ids of the ranking that exist in
  the KB: the POIs a response is taken to recommend or compare.
* **Tag resolution** — a tag resolves through the dialogue's ``review_refs`` (closed setting) or through
  ``groundtrace.crs.kb.knowledge_base.open_review_refs(kb, review_refs, gold.open_pool)`` (open setting;
  :class:`OpenRefs` is that mapping, computed only as far as the tags asked for).

The dialogue may be a pydantic :class:`~groundtrace.crs.schema.Dialogue` or any record with its
attributes (``groundtrace.crs.dataset.lean.LeanDialogue``): the views read attributes only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from typing import Any, TypeVar

from groundtrace.core.evidence.quotes import normalize_text
from groundtrace.core.evidence.tokens import token_spans
from groundtrace.crs.kb.knowledge_base import KnowledgeBase, open_review_refs
from groundtrace.crs.metrics._evidence import Claim, QuotedCitation, TagGroup, find_groups_and_claims
from groundtrace.crs.metrics._evidence import quote_score as _quote_score
from groundtrace.crs.metrics.lexicon import Lexicon, Mention, outside_place_names
from groundtrace.crs.metrics.support import (
    MAX_QUOTES_PER_TURN,
    MAX_RESPONSE_CHARS,
    Grounding,
    QuoteContext,
    analyse,
)
from groundtrace.crs.schema import POI, Anchor, Dialogue, ReviewRef, Turn, TurnGold
from groundtrace.crs.systems.predictions import Prediction

RECOMMENDED_K = 3
T = TypeVar("T")

_QUOTE_MARKS = re.compile(r"[\"“”„«»]")
_SPACES = re.compile(r"\s+")


_TAG_NUMBER = re.compile(r"R([1-9][0-9]*)")
_RESOLVED = "\x00resolved"  # TurnContext.memo key of the per-turn tag resolutions


class OpenRefs(Mapping[str, ReviewRef]):
    """``open_review_refs(run.kb, base, pool)`` as a mapping whose extension is built lazily.

    ``get(tag)`` / ``[tag]`` of a tag ``Rn`` with ``n > len(base)`` numbers the pool's reviews on only as
    far as ``n`` (the rule of ``open_review_refs``: per POI of the pool in order, its first 5 reviews by
    id that are not tagged yet); any other tag is a base tag. Iterating, ``len`` and the rest of the
    ``Mapping`` API use the full ``open_review_refs`` result. Equal to it for every key, order included
    (``tests/crs/metrics/test_open_refs.py``). A response cites a few tags; building the whole table for
    each open pool (hundreds of refs) dominated open-setting scoring time and memory.
    """

    def __init__(self, run: RunState, base: Mapping[str, ReviewRef], pool: tuple[str, ...]) -> None:
        self.run = run
        self.base = base
        self.pool = pool
        self._extension: dict[str, ReviewRef] = {}
        self._tagged: set[str] | None = None
        self._n = len(base)
        self._poi_index = 0
        self._full: dict[str, ReviewRef] | None = None
        self._got: dict[str, ReviewRef | None] = {}

    def _extend_to(self, number: int) -> None:
        """Number the pool's untagged reviews on until tag ``R{number}`` exists or the pool is used up."""
        if self._tagged is None:
            self._tagged = {ref.review_id for ref in self.base.values()}
        tagged, run = self._tagged, self.run
        while self._n < number and self._poi_index < len(self.pool):
            poi_id = self.pool[self._poi_index]
            self._poi_index += 1
            for review_id in run.first_reviews(poi_id):
                if review_id in tagged:
                    continue
                self._n += 1
                self._extension[f"R{self._n}"] = run.review_ref(review_id, poi_id)
                tagged.add(review_id)

    def get(self, tag: str, default: ReviewRef | None = None) -> ReviewRef | None:  # type: ignore[override]
        if isinstance(tag, str):  # a tag's ref never changes: kept once looked up
            if tag in self._got:
                found = self._got[tag]
            else:
                found = self._got[tag] = self._lookup(tag)
            return default if found is None else found
        return self.base.get(tag, default)

    def _lookup(self, tag: str) -> ReviewRef | None:
        match = _TAG_NUMBER.fullmatch(tag)
        if match is not None and int(match.group(1)) > len(self.base):
            self._extend_to(int(match.group(1)))
            found = self._extension.get(tag)
            if found is not None:
                return found
        return self.base.get(tag)

    def __getitem__(self, tag: str) -> ReviewRef:
        found = self.get(tag)
        if found is None:
            raise KeyError(tag)
        return found

    def __contains__(self, tag: object) -> bool:
        return isinstance(tag, str) and self.get(tag) is not None

    def _table(self) -> dict[str, ReviewRef]:
        if self._full is None:
            self._full = open_review_refs(self.run.kb, dict(self.base), list(self.pool))
        return self._full

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


class RunState:
    """What is shared by all turns of one scoring run: the KB, the lexicon and the caches."""

    #: reviews per POI that ``open_review_refs`` tags (its ``per_poi`` default)
    OPEN_PER_POI = 5

    def __init__(self, kb: KnowledgeBase, lexicon: Lexicon, setting: str) -> None:
        self.kb = kb
        self.lexicon = lexicon
        self.setting = setting
        self.quote_cache: dict[tuple[str, str], float] = {}
        self._poi_review_terms: dict[str, frozenset[str]] = {}
        self.entailment: dict[tuple[str, str], float] | None = None
        self._first_reviews: dict[str, tuple[str, ...]] = {}
        self._refs: dict[tuple[str, str], ReviewRef] = {}
        self._supports: dict[tuple[str, str], bool] = {}
        #: per-run caches of pure functions of the KB and their arguments, for the metric kernels
        #: (``stance_evidence``: quote polarity, aspect matches; ``practicality``: walkable pairs)
        self.cache: dict[Any, Any] = {}

    def first_reviews(self, poi_id: str) -> tuple[str, ...]:
        """Ids of the first :attr:`OPEN_PER_POI` reviews of ``poi_id`` by id (cached)."""
        found = self._first_reviews.get(poi_id)
        if found is None:
            reviews = self.kb.reviews_of(poi_id)[: self.OPEN_PER_POI]
            found = self._first_reviews[poi_id] = tuple(r.review_id for r in reviews)
        return found

    def review_ref(self, review_id: str, poi_id: str) -> ReviewRef:
        """One shared ``ReviewRef`` per (review, POI) of the run (never mutated)."""
        key = (review_id, poi_id)
        found = self._refs.get(key)
        if found is None:
            found = self._refs[key] = ReviewRef(review_id=review_id, poi_id=poi_id)
        return found

    def quote_score(self, quote: str, review_id: str) -> float:
        """``quote_score(quote, review.text)``, cached per (quote, review_id) for the run."""
        key = (quote, review_id)
        score = self.quote_cache.get(key)
        if score is None:
            score = _quote_score(quote, self.kb.reviews[review_id].text)
            self.quote_cache[key] = score
        return score

    def review_terms(self, poi_id: str) -> frozenset[str]:
        """Lexicon terms named by ``poi_id``'s category labels or by any of its KB reviews (cached).

        Category labels count as support: a "Bed & Breakfast" card may say "breakfast" without the POI
        having ``good_for_meal: breakfast``.
        """
        terms = self._poi_review_terms.get(poi_id)
        if terms is None:
            found: set[str] = set(self.lexicon.term_ids_in(" | ".join(self.kb.pois[poi_id].categories)))
            for review in self.kb.reviews_of(poi_id):
                found |= self.lexicon.term_ids_in(review.text)
            terms = frozenset(found)
            self._poi_review_terms[poi_id] = terms
        return terms

    def category_terms(self, poi_id: str) -> frozenset[str]:
        """Lexicon terms named by ``poi_id``'s category labels (cached)."""
        key = ("category_terms", poi_id)
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = self.lexicon.term_ids_in(" | ".join(self.kb.pois[poi_id].categories))
        return found  # type: ignore[no-any-return]

    def supports(self, poi: POI, term_id: str) -> bool:
        """The KB supports ``term_id`` for ``poi``: by an attribute/category rule or by one of its reviews
        (cached per POI id and term: ``poi`` is the KB's)."""
        key = (poi.poi_id, term_id)
        found = self._supports.get(key)
        if found is None:
            found = self._supports[key] = self.lexicon.terms[term_id].supported_by_kb(
                poi
            ) or term_id in self.review_terms(poi.poi_id)
        return found


class DialogueState:
    """Per-dialogue lookups: the tag table of the setting (cached per open pool until :meth:`release`)."""

    def __init__(self, dialogue: Dialogue, run: RunState) -> None:
        self.dialogue = dialogue
        self.run = run
        self._open_refs: dict[tuple[str, ...], OpenRefs] = {}
        self._user: list[tuple[int, str, str | None]] | None = None

    @cached_property
    def place_names(self) -> tuple[str, ...]:
        """Names of the places the dialogue measures distances from (its anchor and every leg's
        anchor): attribute words inside them are no mentions (``lexicon.outside_place_names``)."""
        anchors = [self.dialogue.anchor] + [leg.anchor for leg in self.dialogue.legs]
        return tuple(dict.fromkeys(a.name for a in anchors if a is not None and a.name))

    def user_norm(self, index: int) -> str:
        """``normalize_text`` of the dialogue's user turns before turn ``index``, joined by line breaks.

        ASCII turns are normalised once each and joined by a space (the same text: ASCII normalisation
        works word by word and a line break only separates words); otherwise the joined text is
        normalised whole."""
        if self._user is None:
            self._user = [
                (t.index, t.text, normalize_text(t.text) if t.text.isascii() else None)
                for t in self.dialogue.turns
                if t.role == "user"
            ]
        before = [u for u in self._user if u[0] < index]
        if all(u[2] is not None for u in before):
            return " ".join(u[2] for u in before if u[2])  # type: ignore[misc]
        return normalize_text("\n".join(u[1] for u in before))

    def refs(self, gold: TurnGold) -> Mapping[str, ReviewRef]:
        if self.run.setting != "open":
            return self.dialogue.review_refs
        key = tuple(gold.open_pool)
        refs = self._open_refs.get(key)
        if refs is None:
            refs = self._open_refs[key] = OpenRefs(self.run, self.dialogue.review_refs, key)
        return refs

    def release(self) -> None:
        """Drop the open-setting tag tables (recomputed if asked again): the scorer calls it once the
        dialogue's turn values are known, so a run keeps no table of more than one dialogue."""
        self._open_refs.clear()
        self._user = None


class TurnContext:
    """One recommendation turn with its prediction (``None`` when missing or errored = unscorable)."""

    def __init__(
        self, dstate: DialogueState, turn: Turn, position: int, prediction: Prediction | None
    ) -> None:
        assert turn.gold is not None
        self.dstate = dstate
        self.run = dstate.run
        self.dialogue = dstate.dialogue
        self.turn = turn
        self.gold: TurnGold = turn.gold
        self.position = position
        self.prediction = prediction
        self.memo: dict[str, Any] = {}  # per-turn values shared by metrics (GS, CD, PC feed CGS)
        self.limited = False  # set by release(): the answer hit a size limit of the grounding metrics

    @property
    def scorable(self) -> bool:
        return self.prediction is not None

    @property
    def anchor(self) -> Anchor | None:
        """Where the turn's distances are measured from (its itinerary leg's anchor, else the
        dialogue's)."""
        return self.dialogue.anchor_at(self.turn.index)

    def memoised(self, key: str, compute: Callable[[TurnContext], T]) -> T:
        """``compute(self)``, computed once per turn and kept under ``key`` until :meth:`release`."""
        value = self.memo.get(key)
        if value is None:
            value = self.memo[key] = compute(self)
        return value

    _HEAVY = (
        "parsed", "quoted_citations", "mentions", "token_spans", "claims", "refs",
        "grounding",
    )  # fmt: skip

    def release(self) -> None:
        """Drop the parsed response (tags, claims, mentions, tokens) once the turn's values are computed;
        the ranking stays for the dialogue metrics. Anything dropped is recomputed if asked again."""
        grounding = self.__dict__.get("grounding")
        self.limited = (
            self.limited
            or self.over_limit
            or (grounding is not None and grounding.n_quoted > MAX_QUOTES_PER_TURN)
        )
        for name in self._HEAVY:
            self.__dict__.pop(name, None)
        self.memo.clear()

    # -- ranking -----------------------------------------------------------------------------------
    @cached_property
    def ranking(self) -> tuple[str, ...]:
        if self.prediction is None:
            return ()
        return tuple(dict.fromkeys(self.prediction.ranking))

    @property
    def top1(self) -> str | None:
        return self.ranking[0] if self.ranking else None

    @cached_property
    def top1_poi(self) -> POI | None:
        top = self.top1
        return self.run.kb.pois.get(top) if top is not None else None

    @cached_property
    def recommended(self) -> tuple[str, ...]:
        """First RECOMMENDED_K ranked ids that exist in the KB."""
        pois = self.run.kb.pois
        return tuple([p for p in self.ranking if p in pois][:RECOMMENDED_K])

    def rank_of(self, poi_id: str) -> int | None:
        """1-based rank of ``poi_id`` in the ranking, or None."""
        try:
            return self.ranking.index(poi_id) + 1
        except ValueError:
            return None

    # -- response analysis -------------------------------------------------------------------------
    @property
    def response(self) -> str:
        """The response as analysed: its first MAX_RESPONSE_CHARS characters (see :attr:`over_limit`)."""
        return self.prediction.response[:MAX_RESPONSE_CHARS] if self.prediction is not None else ""

    @property
    def over_limit(self) -> bool:
        """The response is longer than MAX_RESPONSE_CHARS: GS, CD, PC and CGS score it 0."""
        return self.prediction is not None and len(self.prediction.response) > MAX_RESPONSE_CHARS

    @cached_property
    def grounding(self) -> Grounding:
        """The response's citations sorted by the anti-gaming rules (:mod:`.support`)."""

        def resolve(tag: str) -> str | None:
            ref = self.resolve(tag)
            return ref.review_id if ref is not None else None

        quoted = any(claim.quotes for claim in self.tagged_claims)

        return analyse(
            self.tagged_claims,
            self.tag_groups,
            resolve,
            lambda rid: self.run.kb.reviews[rid].text,
            self.run.quote_score,
            # the user's text is read by the echo rule only, for a quoted citation
            QuoteContext(self.response, self.dstate.user_norm(self.turn.index) if quoted else ""),
            self.over_limit,
        )

    @cached_property
    def parsed(self) -> tuple[list[TagGroup], list[Claim]]:
        """``(tag_groups, tagged_claims)``: the response's tags are found once for both."""
        return find_groups_and_claims(self.response)

    @property
    def tag_groups(self) -> list[TagGroup]:
        return self.parsed[0]

    @property
    def tagged_claims(self) -> list[Claim]:
        return self.parsed[1]

    @cached_property
    def quoted_citations(self) -> list[QuotedCitation]:
        return [q for c in self.tagged_claims for q in c.quotes]

    @cached_property
    def mentions(self) -> list[Mention]:
        return outside_place_names(
            self.run.lexicon.mentions(self.response), self.response, self.dstate.place_names
        )

    @cached_property
    def token_spans(self) -> list[tuple[int, int]]:
        return token_spans(self.response)

    @cached_property
    def refs(self) -> Mapping[str, ReviewRef]:
        return self.dstate.refs(self.gold)

    def resolve(self, tag: str) -> ReviewRef | None:
        """The review a tag points to, when it exists in the tag table and in the KB (kept per turn until
        :meth:`release`: the metrics resolve the same few tags many times)."""
        resolved = self.memo.get(_RESOLVED)
        if resolved is None:
            resolved = self.memo[_RESOLVED] = {}
        elif tag in resolved:
            return resolved[tag]  # type: ignore[no-any-return]
        ref = self.refs.get(tag)
        if ref is not None and ref.review_id not in self.run.kb.reviews:
            ref = None
        resolved[tag] = ref
        return ref

    @cached_property
    def claims(self) -> list[tuple[str, tuple[str, ...]]]:
        """NLI claims: ``(hypothesis, review_ids)`` for each claim carrying at least one tag.

        The hypothesis is the claim text (tag groups removed by ``core.citations``) without double quote
        marks, whitespace collapsed; ``review_ids`` are the distinct resolvable reviews its tags cite
        (possibly none: such a claim is never entailed).
        """
        out = []
        for claim in self.tagged_claims:
            hypothesis = _SPACES.sub(" ", _QUOTE_MARKS.sub("", claim.text)).strip()
            review_ids: list[str] = []
            for tag in claim.tags:
                ref = self.resolve(tag)
                if ref is not None and ref.review_id not in review_ids:
                    review_ids.append(ref.review_id)
            out.append((hypothesis, tuple(review_ids)))
        return out


class DialogueContext:
    """One dialogue with the turn contexts of its recommendation turns, in order."""

    def __init__(self, dstate: DialogueState, turns: list[TurnContext]) -> None:
        self.dstate = dstate
        self.dialogue = dstate.dialogue
        self.run = dstate.run
        self.turns = turns
        self._by_index = {t.turn.index: t for t in turns}

    def turn_context(self, index: int) -> TurnContext | None:
        return self._by_index.get(index)

    @property
    def scorable(self) -> bool:
        return all(t.scorable for t in self.turns)
