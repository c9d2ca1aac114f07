"""Stage 4 — quality control of a built dialogue against the KB.

``check_dialogue(dialogue, kb)`` returns every :class:`QCIssue` found (empty list = pass). Reasons:

=====================  ===========================================================================
``alternation``        turns are not user/system alternating from a user turn, or indexes are not 0..n-1
``unknown_act``        a user act outside ``UserAct`` or a system act outside ``SystemAct``
``few_recommendations`` fewer than 3 distinct POIs recommended over recommend/compare turns
``no_comparison``      no ``compare`` system turn
``rejection``          ``has_rejection`` disagrees with the turns; a ``reject_and_refine`` turn adds no
                       constraint or rejects nothing; the rejected POI satisfies the refined constraints;
                       or the next recommendation repeats a rejected POI
``pool``               candidate pool size differs from ``pool_size`` or has duplicates
``gold``               a recommendation turn without gold, whose gold is not its main recommendation,
                       not a candidate, or violates an active constraint; or a multi-reference POI that
                       violates one
``open_pool``          gold missing from the open pool, or its size outside [min(50, available), 100]
``missing_citation``   a recommend/compare/explain turn with no ``[Rn]`` tag
``bad_tag``            a tag not in ``review_refs`` (or a ref to a review the KB lacks)
``tag_wrong_poi``      a tag whose review belongs to no POI recommended in that turn
``cited_tags``         ``Turn.cited_tags`` differs from the distinct tags of the text, in order
``quote_mismatch``     a quoted snippet scores < 0.80 against its review (``core.evidence.quotes``)
``span_mismatch``      a ``QuoteSpan`` whose turn slice and review slice differ
``evidence_stance``    a quote whose stored sentence stance is negative cited without a warning cue
                       (``groundtrace.crs.build.evidence.is_warning``: "one reviewer warns ..."), or a
                       positive sentence introduced as a warning
=====================  ===========================================================================

Tags and quoted snippets are parsed with :mod:`groundtrace.core.evidence.citations` (the same parser the
metrics use); each quote a tagged claim cites is scored against every review its tags point to and must reach
0.80 for each.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import get_args

from groundtrace.core.evidence.citations import find_tags, parse_citations
from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, quote_score
from groundtrace.crs.build.evidence import is_warning, quote_stance
from groundtrace.crs.kb.constraints import satisfies, satisfies_all
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue, SystemAct, UserAct

USER_ACTS = frozenset(get_args(UserAct))
SYSTEM_ACTS = frozenset(get_args(SystemAct))
REASONS: tuple[str, ...] = (
    "alternation",
    "unknown_act",
    "few_recommendations",
    "no_comparison",
    "rejection",
    "pool",
    "gold",
    "open_pool",
    "missing_citation",
    "bad_tag",
    "tag_wrong_poi",
    "cited_tags",
    "quote_mismatch",
    "span_mismatch",
    "evidence_stance",
)
CITING_ACTS = frozenset({"recommend", "compare", "explain"})


@dataclass(frozen=True)
class QCIssue:
    """One failed check: ``reason`` (see module table), the turn index (-1 for dialogue-level), detail."""

    reason: str
    turn: int
    detail: str

    def __str__(self) -> str:
        where = f"turn {self.turn}" if self.turn >= 0 else "dialogue"
        return f"{self.reason} ({where}): {self.detail}"


def tags_in(text: str) -> list[str]:
    """Distinct ``Rn`` tags of ``text`` in first-appearance order (``core.evidence.citations.find_tags``)."""
    return list(dict.fromkeys(tag.label for tag in find_tags(text)))


def quoted_citations(text: str) -> list[tuple[str, list[str], int]]:
    """``(quote, tags, start offset of the quote)`` for each quote a tagged claim cites.

    Claims and quotes come from :func:`groundtrace.core.evidence.citations.parse_citations`: in
    ``"a" [R1], and "b" [R2]`` R1 cites "a" and R2 cites "b"; untagged quotes are not citations.
    """
    out: list[tuple[str, list[str], int]] = []
    for claim in parse_citations(text):
        if not claim.tags:
            continue
        labels = list(dict.fromkeys(tag.label for tag in claim.tags))
        out.extend((quote.text, labels, quote.start) for quote in claim.quotes)
    return out


def evidence_stance_issues(d: Dialogue, kb: KnowledgeBase) -> list[QCIssue]:
    """The ``evidence_stance`` rule: in recommend/compare/explain turns, every quote whose review sentence
    is negative (stored stance) must follow a warning cue, and no positive sentence may follow one.
    Quotes that are not verbatim or cite unknown tags are left to ``quote_mismatch`` / ``bad_tag``."""
    issues: list[QCIssue] = []
    for i, t in enumerate(d.turns):
        if t.role != "system" or t.act not in CITING_ACTS:
            continue
        for quote, qtags, start in quoted_citations(t.text):
            warned = is_warning(t.text, start)
            for tag in qtags:
                ref = d.review_refs.get(tag)
                stance = quote_stance(kb, ref.review_id, quote) if ref is not None else None
                if stance is None:
                    continue
                if stance.polarity < 0 and not warned:
                    detail = f"{quote[:40]!r} [{tag}] is negative but cited in support (no warning cue)"
                    issues.append(QCIssue("evidence_stance", i, detail))
                elif stance.polarity > 0 and warned:
                    detail = f"{quote[:40]!r} [{tag}] is positive but introduced as a warning"
                    issues.append(QCIssue("evidence_stance", i, detail))
    return issues


def check_dialogue(
    d: Dialogue, kb: KnowledgeBase, *, pool_size: int = 8, open_min: int = 50, open_max: int = 100
) -> list[QCIssue]:
    """Every issue of ``d`` (empty when it passes); see the module docstring for the checks."""
    issues: list[QCIssue] = []

    def add(reason: str, turn: int, detail: str) -> None:
        issues.append(QCIssue(reason, turn, detail))

    # structure and acts
    for i, t in enumerate(d.turns):
        expected = "user" if i % 2 == 0 else "system"
        if t.index != i or t.role != expected:
            add("alternation", i, f"expected {expected} turn with index {i}, got {t.role} index {t.index}")
        acts = USER_ACTS if t.role == "user" else SYSTEM_ACTS
        if t.act not in acts:
            add("unknown_act", i, f"{t.role} act {t.act!r}")
    recommended: list[str] = []
    for t in d.turns:
        if t.role == "system" and t.act in ("recommend", "compare"):
            recommended.extend(p for p in t.recommended if p not in recommended)
    if len(recommended) < 3:
        add("few_recommendations", -1, f"{len(recommended)} distinct recommended POIs")
    if not any(t.role == "system" and t.act == "compare" for t in d.turns):
        add("no_comparison", -1, "no compare turn")

    # pools and gold
    cands = set(d.candidates)
    if len(d.candidates) != pool_size or len(cands) != len(d.candidates):
        add("pool", -1, f"{len(d.candidates)} candidates ({len(cands)} distinct), expected {pool_size}")
    available = len(kb.pois_in(d.city, d.poi_type))
    rejected_so_far: set[str] = set()
    pending_rejection: tuple[int, list[str]] | None = None
    for i, t in enumerate(d.turns):
        if t.role == "user" and t.act == "reject_and_refine":
            if not t.constraints_added or not t.rejected:
                add("rejection", i, "reject_and_refine must add a constraint and reject a POI")
            rejected_so_far.update(t.rejected)
            pending_rejection = (i, list(t.rejected))
        if t.role != "system" or t.act not in ("recommend", "compare"):
            continue
        g = t.gold
        if g is None:
            add("gold", i, "recommendation turn without gold")
            continue
        if not t.recommended or t.recommended[0] != g.gold_poi:
            add("gold", i, f"gold {g.gold_poi} is not the main recommendation {t.recommended[:1]}")
        if g.gold_poi not in cands or g.gold_poi not in kb.pois:
            add("gold", i, f"gold {g.gold_poi} not a candidate")
            continue
        if not satisfies_all(kb.poi(g.gold_poi), g.active_constraints, d.anchor):
            add("gold", i, f"gold {g.gold_poi} violates an active constraint")
        for pid in g.multi_ref:
            if pid not in cands or not satisfies_all(kb.poi(pid), g.active_constraints, d.anchor):
                add("gold", i, f"multi-reference {pid} is not a satisfying candidate")
        if g.gold_poi not in g.open_pool:
            add("open_pool", i, "gold missing from the open pool")
        low = min(open_min, available)
        if not (low <= len(g.open_pool) <= open_max):
            add("open_pool", i, f"open pool of {len(g.open_pool)} outside [{low}, {open_max}]")
        if pending_rejection is not None:
            j, rejected = pending_rejection
            if g.gold_poi in rejected_so_far:
                add("rejection", i, f"recommends rejected POI {g.gold_poi}")
            added = d.turns[j].constraints_added
            for pid in rejected:
                if pid in kb.pois and all(satisfies(kb.poi(pid), c, d.anchor) for c in added):
                    add("rejection", j, f"rejected {pid} already satisfies the refinement")
            pending_rejection = None
    has_rej = any(t.role == "user" and t.act == "reject_and_refine" for t in d.turns)
    if has_rej != d.has_rejection:
        add("rejection", -1, f"has_rejection={d.has_rejection} but reject_and_refine present={has_rej}")

    # citations and quotes
    for i, t in enumerate(d.turns):
        tags = tags_in(t.text)
        if t.role == "system" and t.act in CITING_ACTS and not tags:
            add("missing_citation", i, f"{t.act} turn cites no review")
        if tags != t.cited_tags:
            add("cited_tags", i, f"text tags {tags} != cited_tags {t.cited_tags}")
        allowed = set(t.recommended)
        for tag in tags:
            ref = d.review_refs.get(tag)
            if ref is None or ref.review_id not in kb.reviews:
                add("bad_tag", i, f"[{tag}] resolves to no review")
            elif ref.poi_id not in allowed or kb.review(ref.review_id).poi_id != ref.poi_id:
                add("tag_wrong_poi", i, f"[{tag}] is a review of {ref.poi_id}, not of {sorted(allowed)}")
        for quote, qtags, _ in quoted_citations(t.text):
            for tag in qtags:
                ref = d.review_refs.get(tag)
                if ref is None or ref.review_id not in kb.reviews:
                    continue  # already reported as bad_tag
                score = quote_score(quote, kb.review(ref.review_id).text)
                if score < GROUNDED_THRESHOLD:
                    add("quote_mismatch", i, f"{quote[:40]!r} scores {score:.2f} against [{tag}]")
        for span in t.quote_spans:
            review = kb.reviews.get(span.review_id)
            ref = d.review_refs.get(span.tag)
            ok = (
                review is not None
                and ref is not None
                and ref.review_id == span.review_id
                and 0 <= span.start < span.end <= len(t.text)
                and t.text[span.start : span.end] == review.text[span.review_start : span.review_end]
            )
            if not ok:
                add(
                    "span_mismatch",
                    i,
                    f"span {span.start}:{span.end} of [{span.tag}] does not match its review",
                )
    issues.extend(evidence_stance_issues(d, kb))
    return issues


def count_reasons(issues: list[QCIssue]) -> Counter[str]:
    """How many issues per reason (each reason counted once per dialogue)."""
    return Counter({reason: 1 for reason in {i.reason for i in issues}})
