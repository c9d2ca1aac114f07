"""``trace-hybrid`` (ours): state with rejection memory → hybrid retrieval → hard constraint filter →
stance-aware extractive evidence → verification pass; optionally an LLM reranks the tied head and
phrases the answer behind the same verification.

Ranking — candidates are ordered lexicographically by

1. ``met``: the share of the tracked constraints the card meets (``crs.kb.constraints.satisfies`` on
   price, attributes, categories, distance) — the hard filter: meeting more always ranks first. The
   understanding's *uncertain* readings of the current request (probability in ``[soft_floor,
   threshold)``: a wording it has not seen, read by meaning) count by their probability
   (:func:`weighted_match`); ``soft_floor`` 0.05, 0 turns them off (0.05 / 0.10 / 0.20 measured on the
   validation split, docs/crs-baselines.md);
2. ``backed``: the share of the review-addressable constraints (those with an aspect pattern, not the
   card's stars/distance) that a non-negative sentence of the POI's shown reviews expresses
   (the system's understanding: ``expresses``) — a recommendation must be citable;
3. ``stars`` (the card's rating);
4. ``fused``: reciprocal rank fusion of the sparse (TF-IDF), dense (MiniLM, when available), structured
   and aspect rankings — what the retrievers say about the rest;

then pool order (chosen on validation splits of the demo and yelp_dense datasets among met → {backed,
aspect, stars, positive share, TF-IDF} orders; see docs/crs-baselines.md). POIs the user rejected go
last, and the POIs earlier turns recommended just before them when the repeat memory learned from the
train split says users move on (toolkit ``novelty``).

Evidence — per tracked constraint with an aspect pattern (stated order), the supporting sentence of the
recommended POI that names the constraint in so many words (the generic keyword rules,
:mod:`~groundtrace.crs.systems.understanding.keywords`) first, then with the best stance (positive before
neutral, never negative), shortest first (a short quote keeps its words near its tag); at most
``max_quotes``. No filler quotes: when no constraint has support, one quote for the most probable
uncertain reading (``soft_floor``) that a positive sentence supports, else one positive sentence most
similar to the user's request (TF-IDF cosine + MiniLM cosine: words and meaning; TF-IDF alone without
the ``[dense]`` extra), else none.

Verification pass (every quote, whoever chose it): the quote must be found in the review its tag
resolves to (``core.evidence.quotes.quote_score`` ≥ 0.80), that review must be the recommended POI's,
its sentence's stored stance must be non-negative and carry no negation cue, and it must express the
constraint it is quoted for (the fallback quote: positive stance).

Optional LLM (``llm=SPEC``, :mod:`.trace_llm`): ``llm_rerank`` lets the model reorder the candidates
tied at the top of the hard filter (never above one that meets more); ``llm_phrasing`` lets it write
the reply around the verified quotes; a reply whose quotes do not pass the verification is cleaned
(failed quotes and stray tags removed) and, if it no longer names the recommendation or cites nothing
verified, replaced by the template answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.base import SystemReply, TurnUsage
from groundtrace.crs.systems.baselines.hybrid import _Fused
from groundtrace.crs.systems.baselines.lexical import AspectSystem
from groundtrace.crs.systems.baselines.trace_llm import TraceLLM
from groundtrace.crs.systems.predictions import SystemInput, SystemOutput, TaggedReview
from groundtrace.crs.systems.reference import TaggedSentence, render_response
from groundtrace.crs.systems.toolkit.base import Turn
from groundtrace.crs.systems.toolkit.dense import DenseUnavailable
from groundtrace.crs.systems.toolkit.memo import PoiView
from groundtrace.crs.systems.toolkit.scoring import rank_by, rrf
from groundtrace.crs.systems.toolkit.state import track_state
from groundtrace.crs.systems.toolkit.structured import anchor_of, card_satisfies
from groundtrace.crs.systems.toolkit.verify import verified
from groundtrace.crs.systems.understanding.embedding import embed
from groundtrace.crs.systems.understanding.keywords import keyword_mentions
from groundtrace.crs.systems.understanding.model import GENERIC, Understanding, default_parser_options
from groundtrace.crs.systems.understanding.parser import SINGLE_VALUED


@dataclass(frozen=True)
class Evidence:
    """A quote chosen for an answer and the constraint it is quoted for (None: general praise)."""

    sentence: TaggedSentence
    constraint: Constraint | None


def review_constraints(
    constraints: list[Constraint], understanding: Understanding = GENERIC
) -> list[Constraint]:
    """The constraints reviews can address and the card does not show (``understanding.addressable``)."""
    return [c for c in constraints if understanding.addressable(c)]


def backed_share(view: PoiView, constraints: list[Constraint]) -> float:
    """Share of ``constraints`` (review-addressable) with a supporting non-negative sentence (1.0: none)."""
    if not constraints:
        return 1.0
    usable = set(view.stance_order)
    return sum(bool(view.supporting(c) & usable) for c in constraints) / len(constraints)


def weighted_match(
    card: Any, constraints: list[Constraint], soft: list[tuple[Constraint, float]], anchor: Any
) -> float:
    """``(Σ_hard sat + Σ_soft p·sat) / (n_hard + Σ_soft p)``: the share of the stated constraints the card
    meets, the uncertain readings counted by their probability (1.0 when there is nothing to meet)."""
    total = len(constraints) + sum(p for _, p in soft)
    if total <= 0:
        return 1.0
    met = sum(card_satisfies(card, c, anchor) for c in constraints)
    met += sum(p * card_satisfies(card, c, anchor) for c, p in soft)
    return met / total


def _meaning_similarity(sentences: list[str], query: str) -> list[float] | None:
    """Cosine similarity of each sentence to ``query`` in the understanding's MiniLM space (what the user
    asked for in words the reviews may not share), or None without the ``[dense]`` extra (or with
    ``$GROUNDTRACE_PARSER_FEATURES=tfidf``)."""
    if not query.strip() or default_parser_options()["features"] != "embed":
        return None  # no MiniLM installed, or $GROUNDTRACE_PARSER_FEATURES=tfidf
    try:
        vectors = embed([query, *sentences])
    except (ImportError, DenseUnavailable):
        return None
    return [float(x) for x in vectors[1:] @ vectors[0]]


def select_evidence(
    view: PoiView,
    reviews: list[TaggedReview],
    constraints: list[Constraint],
    query: str,
    memo: Any,
    k: int,
    uncertain: Sequence[Constraint] = (),
) -> list[Evidence]:
    """The answer's quotes (module docstring, *Evidence*), in constraint order; with no quote for a
    stated constraint, one for the most probable ``uncertain`` reading reviews back, else the fallback."""
    if k <= 0 or not view.sentences:
        return []
    sent = view.sentences
    usable = view.stance_order
    chosen: list[Evidence] = []
    taken: set[str] = set()
    for c in constraints:
        if len(chosen) >= k:
            break
        if not view.understanding.addressable(c):
            continue
        support = view.supporting(c)
        hits = [i for i in usable if i in support and sent[i][1] not in taken]
        if not hits:
            continue
        best = min(hits, key=lambda i: (not keyword_mentions(sent[i][1], c), -sent[i][2], len(sent[i][1])))
        taken.add(sent[best][1])
        chosen.append(Evidence(view.tagged(reviews, [best])[0], c))
    if chosen:
        return chosen
    for c in uncertain:  # the most probable uncertain reading that reviews back, as the one quote
        if not view.understanding.addressable(c):
            continue
        hits = [i for i in usable if i in view.supporting(c) and sent[i][2] > 0]
        if hits:
            best = min(hits, key=lambda i: (-sent[i][2], len(sent[i][1])))
            return [Evidence(view.tagged(reviews, [best])[0], c)]
    positive = [i for i in usable if sent[i][2] > 0]
    if not positive:
        return []
    sims = list(memo.index.scores_texts([sent[i][1] for i in positive], query))
    meaning = _meaning_similarity([sent[i][1] for i in positive], query)
    if meaning is not None:
        sims = [a + b for a, b in zip(sims, meaning, strict=True)]
    best = min(range(len(positive)), key=lambda j: (-sims[j], len(sent[positive[j]][1]), j))
    return [Evidence(view.tagged(reviews, [positive[best]])[0], None)]


class TraceHybridSystem(_Fused):
    """Ours (module docstring). Options: ``dense`` ("auto"), ``dense_query`` ("turns"), ``rrf_k`` (60),
    ``cache_dir``, ``max_quotes`` (3); ``llm`` (SPEC, off by default), ``llm_rerank`` (true),
    ``llm_phrasing`` (true), ``llm_head`` (5: tied candidates the model may reorder), ``max_tokens``
    (300), ``llm_cache`` (true), ``llm_fallback`` (false: a failing LLM step fails the turn; true: the
    turn gets the verified offline answer, its failed calls' usage and a ``note`` saying so)."""

    stance_aware = True

    def __init__(
        self,
        *,
        dense: bool | str = "auto",
        cache_dir: str | None = None,
        rrf_k: int = 60,
        max_quotes: int = 3,
        llm: str | None = None,
        llm_rerank: bool = True,
        llm_phrasing: bool = True,
        llm_head: int = 5,
        max_tokens: int = 300,
        llm_cache: bool = True,
        client: Any = None,
        dense_query: str = "turns",
        llm_fallback: bool = False,
        soft_floor: float = 0.05,
    ) -> None:
        if not 0.0 <= soft_floor < 1.0:
            raise ValueError("soft_floor must be in [0, 1)")
        self.soft_floor = soft_floor
        super().__init__(
            dense=dense, cache_dir=cache_dir, rrf_k=rrf_k, max_quotes=max_quotes, dense_query=dense_query
        )
        self._aspect = AspectSystem()
        self.llm_spec = llm
        self.llm_fallback = llm_fallback
        self.llm = None
        if llm is not None or client is not None:
            self.llm = TraceLLM(
                llm, client=client, rerank=llm_rerank, phrasing=llm_phrasing, head=llm_head,
                max_tokens=max_tokens, cache=llm_cache,
            )  # fmt: skip

    @property
    def thread_safe(self) -> bool:  # type: ignore[override]
        return self.llm is None  # one local model per worker

    def config(self) -> dict[str, Any]:
        out = {**super().config(), "soft_floor": self.soft_floor}
        if self.llm is not None:
            out["llm"] = self.llm.config()
            if self.llm_fallback:  # only when set: earlier run keys stay valid
                out["llm"]["fallback"] = True
        return out

    def soft_constraints(self, turn: Turn) -> list[tuple[Constraint, float]]:
        """The uncertain readings of the current request's wishes (``Understanding.parse_soft`` of each
        positive part, probability ≥ ``soft_floor``), the highest probability per (kind, value); none of a
        single-valued kind the state already holds a value of, nor one the state holds."""
        if not self.soft_floor:
            return []
        u = turn.memo.understanding
        held = {(c.kind, str(c.value)) for c in turn.state.constraints}
        held_kinds = {c.kind for c in turn.state.constraints if c.kind in SINGLE_VALUED}
        best: dict[tuple[str, str], tuple[Constraint, float]] = {}
        for part in turn.state.positive_parts:
            for c, p in u.parse_soft(part, self.soft_floor):
                key = (c.kind, str(c.value))
                if key in held or c.kind in held_kinds:
                    continue
                if key not in best or best[key][1] < p:
                    best[key] = (c, p)
        return list(best.values())

    def keys(self, turn: Turn) -> dict[str, tuple[float, float, float, float]]:
        """``(met, backed, stars, fused)`` per candidate (module docstring, *Ranking*)."""
        fused = rrf([*self.rankings(turn), rank_by(self._aspect.score(turn), turn.pool)], self.rrf_k)
        anchor = anchor_of(turn.inp.anchor)
        cons = turn.state.constraints
        soft = self.soft_constraints(turn)
        review_cons = review_constraints(cons, turn.memo.understanding)
        return {
            c.poi_id: (
                weighted_match(c, cons, soft, anchor),
                backed_share(turn.view(c.poi_id), review_cons),
                c.stars,
                fused.get(c.poi_id, 0.0),
            )
            for c in turn.inp.candidates
        }

    def rank(self, turn: Turn) -> list[str]:
        keys = self.keys(turn)
        position = {p: i for i, p in enumerate(turn.pool)}
        order = sorted(turn.pool, key=lambda p: (tuple(-x for x in keys[p]), position[p]))
        return self.final_order(turn, order)

    def score(self, turn: Turn) -> dict[str, float]:
        """The rank as a score (``n − position``), for callers that fuse or prefilter with it."""
        ranking = self.rank(turn)
        return {p: float(len(ranking) - i) for i, p in enumerate(ranking)}

    def evidence(self, turn: Turn, poi_id: str) -> list[Evidence]:
        """The verified evidence of ``poi_id`` for this turn."""
        reviews = turn.reviews.get(poi_id, [])
        uncertain = [c for c, _ in sorted(self.soft_constraints(turn), key=lambda cp: -cp[1])]
        view, cons = turn.view(poi_id), turn.state.constraints
        picked = select_evidence(view, reviews, cons, turn.query, turn.memo, self.max_quotes, uncertain)
        by_tag = {r.tag: r for r in reviews}
        u = turn.memo.understanding
        return [
            e for e in picked if verified(e.sentence.text, e.sentence.tag, by_tag, poi_id, e.constraint, u)
        ]

    def answer(self, turn: Turn, ranking: list[str]) -> str:
        if not ranking:
            return "I have no candidate to recommend."
        top = ranking[0]
        return render_response(turn.cards.get(top), top, [e.sentence for e in self.evidence(turn, top)])

    def respond(self, inp: SystemInput) -> Any:
        turn = Turn(inp, track_state(inp, self.memo.understanding), self.memo)
        ranking = self.rank(turn)
        if self.llm is None or not ranking:
            return SystemOutput(ranking=ranking, response=self.answer(turn, ranking))
        if not self.llm_fallback:
            return self.llm.respond(self, turn, ranking)
        try:
            return self.llm.respond(self, turn, ranking)
        except Exception as exc:  # noqa: BLE001 - any failure of the LLM step: the verified offline answer
            offline = SystemOutput(ranking=ranking, response=self.answer(turn, ranking))
            spent = getattr(exc, "turn_usage", None) or TurnUsage()  # the failed calls still count
            note = f"llm step failed ({type(exc).__name__}: {str(exc)[:300]}); offline answer"
            return SystemReply(offline, spent, note=note)
