"""How well an understanding parses labelled turns: precision / recall per constraint kind.

Over the user turns of ``dialogues`` that state preferences (not ``ask_comparison`` / ``ask_detail`` /
``accept``; a ``reject_and_refine`` turn's positive part), with the candidate pool of the dialogue: the
gold set is the turn's ``constraints_added`` as ``(kind, value)``, the predicted set what
:meth:`Understanding.parse` returns. Per kind ``k``: ``TP_k`` = predicted ∩ gold pairs of kind ``k``,
``FP_k`` = predicted − gold, ``FN_k`` = gold − predicted; ``P = TP/(TP+FP)``, ``R = TP/(TP+FN)``
(None when the denominator is 0); ``all`` sums every kind (micro average).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from groundtrace.crs.systems.predictions import CandidateCard
from groundtrace.crs.systems.understanding.model import Understanding
from groundtrace.crs.systems.understanding.parser import class_key, split_rejection

_SKIP = ("ask_comparison", "ask_detail", "accept")


def _cards(dialogue: Any, kb: Any) -> list[CandidateCard]:
    if kb is None:
        return []
    out = []
    for poi_id in dialogue.all_candidates() if hasattr(dialogue, "all_candidates") else dialogue.candidates:
        try:
            poi = kb.poi(poi_id)
        except KeyError:
            continue
        out.append(
            CandidateCard(
                poi_id=poi.poi_id, name=poi.name, city=poi.city, poi_type=poi.poi_type,
                categories=list(poi.categories), stars=poi.stars, lat=poi.lat, lon=poi.lon,
            )
        )  # fmt: skip
    return out


def parse_scores(u: Understanding, dialogues: Iterable[Any], kb: Any = None) -> dict[str, dict[str, Any]]:
    """``{kind: {"tp", "fp", "fn", "precision", "recall"}}`` plus ``"all"`` (module docstring)."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for d in dialogues:
        cards = _cards(d, kb)
        for turn in getattr(d, "turns", None) or []:
            if turn.role != "user" or turn.act in _SKIP:
                continue
            text = turn.text
            if turn.act == "reject_and_refine":
                text = split_rejection(text, [c.name for c in cards])[1]
            gold = {class_key(c.kind, c.value) for c in turn.constraints_added}
            pred = {class_key(c.kind, c.value) for c in u.parse(text, cards)}
            for key, counter in ((pred & gold, tp), (pred - gold, fp), (gold - pred, fn)):
                for k in key:
                    counter[k.split("|", 1)[0]] += 1
    out: dict[str, dict[str, Any]] = {}
    for kind in sorted(set(tp) | set(fp) | set(fn)):
        out[kind] = _row(tp[kind], fp[kind], fn[kind])
    out["all"] = _row(sum(tp.values()), sum(fp.values()), sum(fn.values()))
    return out


def _row(tp: int, fp: int, fn: int) -> dict[str, Any]:
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
    }
