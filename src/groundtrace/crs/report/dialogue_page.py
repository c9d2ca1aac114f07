"""One HTML page per dialogue (``dialogues/<id>.html`` next to ``report.html``).

A page shows the **full transcript** (every user and system turn of the dataset, with the constraints a
user adds and the POIs they reject); at each recommendation turn the gold (POI, the other satisfying
POIs) and, per run of the report, its **ranking against the gold** (the top :data:`TOP_K` by name, the
gold and the other references marked, the gold's rank), its per-turn values and its response with every
``[Rn]`` linked to the cited review and the quoted span highlighted (:func:`.html.evidence_view`; the
dataset's own system turns get the same view). Everything shown is untrusted text (reviews, responses,
names, labels) and escaped by the report's jinja environment (:mod:`.html`); the page name is the
dialogue id reduced to ``[A-Za-z0-9_-]`` plus a short hash (no path tricks, no collisions).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from groundtrace.crs.kb.knowledge_base import KnowledgeBase, open_review_refs
from groundtrace.crs.report.html import TurnValues, _environment, _values_line, evidence_view
from groundtrace.crs.schema import Dialogue, ReviewRef, Turn
from groundtrace.crs.systems.predictions import Prediction

TOP_K = 5
FOLDER = "dialogues"


def page_name(dialogue_id: str) -> str:
    """``dialogues/<safe id>-<hash8>.html`` (relative to the report folder)."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", dialogue_id)[:80]
    digest = hashlib.sha256(dialogue_id.encode("utf-8")).hexdigest()[:8]
    return f"{FOLDER}/{safe}-{digest}.html"


def _poi_name(kb: KnowledgeBase | None, poi_id: str) -> str:
    poi = kb.pois.get(poi_id) if kb is not None else None
    return poi.name if poi is not None else poi_id


def _ranking(pred: Prediction, turn: Turn, kb: KnowledgeBase | None) -> dict[str, Any]:
    """Top-k by name with the gold and the other references marked, and where the gold is."""
    gold = turn.gold
    refs = set(gold.multi_ref) if gold is not None else set()
    items = []
    for poi_id in pred.ranking[:TOP_K]:
        mark = "gold" if gold is not None and poi_id == gold.gold_poi else "ref" if poi_id in refs else ""
        items.append({"name": _poi_name(kb, poi_id), "poi_id": poi_id, "mark": mark})
    if gold is None:
        where = ""
    elif gold.gold_poi in pred.ranking:
        where = f"gold at rank {pred.ranking.index(gold.gold_poi) + 1} of {len(pred.ranking)}"
    else:
        where = f"gold not in the ranking ({len(pred.ranking)} POIs)"
    return {"items": items, "where": where}


def _refs(
    dialogue: Dialogue, turn: Turn, setting: str, kb: KnowledgeBase, cache: dict[tuple[str, ...], Any]
) -> Mapping[str, ReviewRef]:
    if setting != "open" or turn.gold is None:
        return dialogue.review_refs
    key = tuple(turn.gold.open_pool)
    if key not in cache:
        cache[key] = open_review_refs(kb, dialogue.review_refs, list(key))
    return cache[key]


RunTurns = tuple[str, str, Mapping[tuple[str, int], Prediction], TurnValues | None]


def _answers(
    dialogue: Dialogue, turn: Turn, runs: Sequence[RunTurns], kb: KnowledgeBase | None
) -> list[dict[str, Any]]:
    """What each run answered at ``turn`` (runs without a prediction there are left out)."""
    out = []
    open_cache: dict[tuple[str, ...], Any] = {}
    for i, (label, setting, preds, values) in enumerate(runs):
        pred = preds.get((dialogue.dialogue_id, turn.index))
        if pred is None:
            continue
        view: dict[str, Any] = {
            "label": label,
            "setting": setting,
            "error": pred.error,
            "ranking": _ranking(pred, turn, kb),
            "scored": _values_line(values.get((dialogue.dialogue_id, turn.index), {})) if values else "",
            "response": pred.response,
            "evidence": None,
        }
        if pred.error is None and kb is not None:
            refs = _refs(dialogue, turn, setting, kb, open_cache)
            view["evidence"] = Markup(evidence_view(pred.response, refs, kb, f"r{i}-t{turn.index}"))
        out.append(view)
    return out


def _turns(dialogue: Dialogue, runs: Sequence[RunTurns], kb: KnowledgeBase | None) -> list[dict[str, Any]]:
    out = []
    for turn in dialogue.turns:
        view: dict[str, Any] = {"index": turn.index, "role": turn.role, "act": turn.act, "text": turn.text}
        view["constraints"] = ", ".join(c.label for c in turn.constraints_added)
        view["rejected"] = ", ".join(_poi_name(kb, p) for p in turn.rejected)
        view["evidence"] = None
        if turn.role == "system" and kb is not None and turn.cited_tags:
            view["evidence"] = Markup(evidence_view(turn.text, dialogue.review_refs, kb, f"g-t{turn.index}"))
        view["gold"] = None
        if turn.gold is not None:
            view["gold"] = {
                "poi": _poi_name(kb, turn.gold.gold_poi),
                "others": ", ".join(_poi_name(kb, p) for p in turn.gold.multi_ref),
                "constraints": ", ".join(c.label for c in turn.gold.active_constraints),
            }
            view["answers"] = _answers(dialogue, turn, runs, kb)
        out.append(view)
    return out


def render_dialogue_page(dialogue: Dialogue, runs: Sequence[RunTurns], kb: KnowledgeBase | None) -> str:
    """The page of ``dialogue``; ``runs`` = (label, setting, predictions by (dialogue id, turn), values)."""
    page = (
        _environment()
        .get_template("dialogue.html.j2")
        .render(
            dialogue={
                "id": dialogue.dialogue_id,
                "city": dialogue.city,
                "poi_type": dialogue.poi_type,
                "difficulty": dialogue.difficulty,
                "split": dialogue.split,
                "persona": dialogue.persona,
                "anchor": dialogue.anchor.name if dialogue.anchor is not None else "",
                "candidates": ", ".join(_poi_name(kb, p) for p in dialogue.candidates),
            },
            turns=_turns(dialogue, runs, kb),
            runs=[{"label": label, "setting": setting} for label, setting, _, _ in runs],
            evidence_available=kb is not None,
        )
    )
    return page.rstrip("\n") + "\n"


def write_dialogue_pages(
    out: Path,
    dialogue_ids: Sequence[str],
    dialogues: Mapping[str, Dialogue],
    runs: Sequence[RunTurns],
    kb: KnowledgeBase | None,
) -> dict[str, str]:
    """Write the page of each of ``dialogue_ids`` found in ``dialogues`` into ``out/dialogues/``; returns
    ``{dialogue_id: relative href}`` of the pages written."""
    written: dict[str, str] = {}
    for did in dict.fromkeys(dialogue_ids):
        dialogue = dialogues.get(did)
        if dialogue is None:
            continue
        name = page_name(did)
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_dialogue_page(dialogue, runs, kb), encoding="utf-8")
        written[did] = name
    return written
