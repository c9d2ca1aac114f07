"""KB references (``GT-K*``): every POI and review id a dialogue names exists in the KB, and each
``review_refs`` entry names a review *of its POI*.

One check (:func:`_findings`) over ``(turn, kind, what, id)`` tuples, fed either from a loaded dialogue
(:func:`check_references`) or from the raw JSON of a line the schema rejects (:func:`reference_findings`):
there, every id that is a string where the schema puts one is looked up and the rest skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from groundtrace.crs.dataset import rules as R
from groundtrace.crs.dataset.checks.context import CheckContext
from groundtrace.crs.dataset.rules import Finding, Rule
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue


def _ids(value: Any) -> list[str]:
    return [x for x in value if isinstance(x, str)] if isinstance(value, list) else []


def _raw_ids(obj: dict[str, Any]) -> Iterator[tuple[int | None, str, str, str]]:
    """``(turn, kind, what, id)`` for each POI (kind "poi") and review ("review") id of raw JSON."""
    yield from ((None, "poi", "candidate", p) for p in _ids(obj.get("candidates")))
    legs = obj.get("legs")
    for leg in legs if isinstance(legs, list) else []:
        if isinstance(leg, dict):
            yield from ((None, "poi", "leg candidate", p) for p in _ids(leg.get("candidates")))
    turns = obj.get("turns")
    for pos, t in enumerate(turns if isinstance(turns, list) else []):
        if not isinstance(t, dict):
            continue
        index = t.get("index")
        turn = index if isinstance(index, int) and not isinstance(index, bool) else pos
        for pid in [*_ids(t.get("recommended")), *_ids(t.get("rejected"))]:
            yield turn, "poi", "POI", pid
        gold = t.get("gold")
        if isinstance(gold, dict):
            if isinstance(gold.get("gold_poi"), str):
                yield turn, "poi", "gold POI", gold["gold_poi"]
            yield from ((turn, "poi", "multi_ref POI", p) for p in _ids(gold.get("multi_ref")))
            yield from ((turn, "poi", "open_pool POI", p) for p in _ids(gold.get("open_pool")))
        spans = t.get("quote_spans")
        for span in spans if isinstance(spans, list) else []:
            rid = span.get("review_id") if isinstance(span, dict) else None
            if isinstance(rid, str):
                yield turn, "review", "quote span review", rid


def _raw_refs(obj: dict[str, Any]) -> Iterator[tuple[str, Any, Any]]:
    """``(tag, poi_id, review_id)`` of the written ``review_refs`` records (format v2: a list)."""
    refs = obj.get("review_refs")
    for ref in refs if isinstance(refs, list) else []:
        if isinstance(ref, dict) and isinstance(ref.get("tag"), str):
            yield ref["tag"], ref.get("poi_id"), ref.get("review_id")


def _dialogue_ids(d: Dialogue) -> Iterator[tuple[int | None, str, str, str]]:
    """:func:`_raw_ids` of a loaded dialogue, read from the models (no ``model_dump``)."""
    yield from ((None, "poi", "candidate", p) for p in d.all_candidates())
    for t in d.turns:
        yield from ((t.index, "poi", "POI", p) for p in [*t.recommended, *t.rejected])
        if t.gold is not None:
            yield t.index, "poi", "gold POI", t.gold.gold_poi
            yield from ((t.index, "poi", "multi_ref POI", p) for p in t.gold.multi_ref)
            yield from ((t.index, "poi", "open_pool POI", p) for p in t.gold.open_pool)
        yield from ((t.index, "review", "quote span review", s.review_id) for s in t.quote_spans)


def _findings(
    ids: Iterable[tuple[int | None, str, str, str]],
    refs: Iterable[tuple[str, Any, Any]],
    kb: KnowledgeBase,
) -> list[Finding]:
    """GT-K001 for unknown POI ids, GT-K002 for unknown review ids (once per turn and id), GT-K001..K003
    for each ``review_refs`` entry; ids that are not strings are skipped."""
    out: list[Finding] = []

    def add(rule: Rule, turn: int | None, **fields: Any) -> None:
        out.append(Finding(rule, turn, rule.template.format(**fields), rule.severity))

    seen: set[tuple[int | None, str]] = set()
    for turn, kind, what, ident in ids:
        known = kb.pois if kind == "poi" else kb.reviews
        if ident in known or (turn, ident) in seen:
            continue
        seen.add((turn, ident))
        if kind == "poi":
            add(R.KB_POI, turn, what=what, poi=ident)
        else:
            add(R.KB_REVIEW, turn, what=what, review=ident)
    for tag, poi_id, review_id in refs:
        if isinstance(poi_id, str) and poi_id not in kb.pois:
            add(R.KB_POI, None, what=f"{tag} points to POI", poi=poi_id)
        if not isinstance(review_id, str):
            continue
        review = kb.reviews.get(review_id)
        if review is None:
            add(R.KB_REVIEW, None, what=f"{tag} points to review", review=review_id)
        elif isinstance(poi_id, str) and review.poi_id != poi_id:
            add(R.REF_POI, None, tag=tag, review=review_id, actual=review.poi_id, poi=poi_id)
    return out


def reference_findings(obj: Any, kb: KnowledgeBase) -> list[Finding]:
    """GT-K001..K003 on the raw JSON object of one dialogue line (see the module docstring)."""
    if not isinstance(obj, dict):
        return []
    return _findings(_raw_ids(obj), _raw_refs(obj), kb)


def check_references(ctx: CheckContext) -> None:
    """GT-K001..K004 on a loaded dialogue (with a KB; GT-K004 ``kb-hash`` in ``crs validate`` only)."""
    kb, d = ctx.kb, ctx.dialogue
    if kb is None:
        return
    refs = ((tag, ref.poi_id, ref.review_id) for tag, ref in d.review_refs.items())
    ctx.findings.extend(_findings(_dialogue_ids(d), refs, kb))
    if d.kb_hash and d.kb_hash != kb.content_hash:
        ctx.report(R.KB_HASH, None, built=d.kb_hash[:12], given=kb.content_hash[:12])
