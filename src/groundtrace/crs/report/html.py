"""One self-contained HTML report (inline CSS and SVG, no external assets), rendered from jinja2 templates.

The templates live in ``crs/report/templates/`` (``report.html.j2`` the page, ``macros.html.j2`` its
pieces); this module only prepares the values they show. Autoescaping is on, and every value is escaped
with :func:`html.escape` (``quote=True``) on output (the environment's ``finalize``): every piece of text
from a run, a dataset or a KB (responses, review texts, POI names, labels, error messages) is untrusted
and can never become markup. Only the inline SVG plots, read from the files this report wrote, are
inserted as markup. In each shown response, every ``[Rn]`` tag links to the cited review below it; the
spans of the review that the response quotes are highlighted (located with
``groundtrace.core.evidence.quotes.locate_quote``; a span scoring >= 0.80 is *grounded*, lower is weak).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from groundtrace.core.evidence.citations import find_tags, parse_citations
from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, locate_quote
from groundtrace.crs.kb.knowledge_base import KnowledgeBase, open_review_refs
from groundtrace.crs.metrics import parse_metric
from groundtrace.crs.report.leaderboard import Report
from groundtrace.crs.report.render import discrimination_line, fmt, row_name, sort_line
from groundtrace.crs.report.tables import HEADLINE, MAIN, all_metrics, discrimination
from groundtrace.crs.schema import Dialogue, ReviewRef
from groundtrace.crs.systems.predictions import Prediction


def _finalize(value: object) -> object:
    """Escape every shown value with :func:`html.escape` (``&quot;``/``&#x27;`` in attributes too);
    :class:`Markup` (rendered macros, the inline SVG) passes through."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


@cache
def _environment() -> Environment:
    """The jinja2 environment of the report templates (autoescape on, undefined names are errors)."""
    return Environment(
        loader=PackageLoader("groundtrace.crs.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        finalize=_finalize,
        keep_trailing_newline=True,
    )


def _macro(name: str) -> Any:
    return getattr(_environment().get_template("macros.html.j2").module, name)


def _anchor(prefix: str, label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", f"{prefix}-{label}")


def _segments(text: str, spans: list[tuple[int, int, bool]]) -> list[tuple[str, str | None]]:
    """``text`` cut into (piece, mark class or None); overlapping spans merge (weak if any part is weak)."""
    merged: list[list] = []
    for a, b, ok in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
            merged[-1][2] = merged[-1][2] and ok
        else:
            merged.append([a, b, ok])
    out: list[tuple[str, str | None]] = []
    cursor = 0
    for a, b, ok in merged:
        out.append((text[cursor:a], None))
        out.append((text[a:b], "ok" if ok else "weak"))
        cursor = b
    out.append((text[cursor:], None))
    return [(piece, cls) for piece, cls in out if piece or cls]


def highlighted(text: str, spans: list[tuple[int, int, bool]]) -> str:
    """``text`` escaped, with ``spans`` (start, end, grounded) wrapped in ``<mark>`` (overlaps merged)."""
    return str(_macro("highlighted")(_segments(text, spans)))


def _quote_spans(
    response: str, refs: Mapping[str, ReviewRef], kb: KnowledgeBase
) -> tuple[dict[str, list[tuple[int, int, bool]]], dict[str, list[float]]]:
    """Per tag label: the located spans of the quotes citing it, and their scores."""
    spans: dict[str, list[tuple[int, int, bool]]] = {}
    scores: dict[str, list[float]] = {}
    for claim in parse_citations(response):
        for quote in claim.quotes:
            for tag in claim.tags:
                ref = refs.get(tag.label)
                if ref is None or ref.review_id not in kb.reviews:
                    continue
                match = locate_quote(quote.text, kb.reviews[ref.review_id].text)
                scores.setdefault(tag.label, []).append(match.score)
                if match.score > 0:
                    spans.setdefault(tag.label, []).append(
                        (match.start, match.end, match.score >= GROUNDED_THRESHOLD)
                    )
    return spans, scores


def evidence_view(response: str, refs: Mapping[str, ReviewRef], kb: KnowledgeBase, prefix: str) -> str:
    """The response with linked tags, then each cited review with its quoted spans highlighted."""
    tags = find_tags(response)
    parts: list[tuple[str, str | None, str | None]] = []  # (text, tag label, link target)
    cursor = 0
    for tag in tags:
        parts.append((response[cursor : tag.start], None, None))
        resolves = tag.label in refs and refs[tag.label].review_id in kb.reviews
        parts.append(("", tag.label, _anchor(prefix, tag.label) if resolves else None))
        cursor = tag.end
    parts.append((response[cursor:], None, None))
    spans, scores = _quote_spans(response, refs, kb)
    reviews: list[dict[str, Any]] = []
    for label in dict.fromkeys(t.label for t in tags):
        ref = refs.get(label)
        if ref is None or ref.review_id not in kb.reviews:
            reviews.append({"label": label, "missing": True})
            continue
        review = kb.reviews[ref.review_id]
        poi = kb.pois.get(ref.poi_id)
        best = max(scores.get(label, [0.0]), default=0.0)
        reviews.append(
            {
                "label": label,
                "missing": False,
                "anchor": _anchor(prefix, label),
                "poi": poi.name if poi else ref.poi_id,
                "review_id": review.review_id,
                "quoted": f" · best quote score {best:.2f}" if label in scores else " · no quote",
                "segments": _segments(review.text, spans.get(label, [])),
            }
        )
    return str(_macro("evidence")(parts, reviews))


def _cell(row: Any, metric: str) -> dict[str, Any]:
    """A leaderboard cell: value with its CI, or why the metric is unavailable (``—`` when not asked)."""
    c = row.cells.get(metric)
    if c is None:
        return {"missing": True, "why": row.unavailable.get(metric)}
    ci = f"[{fmt(c.ci_low)}, {fmt(c.ci_high)}]" if c.ci_low is not None else ""
    return {"missing": False, "value": fmt(c.value), "ci": ci}


def _usage(usage: Mapping[str, float]) -> dict[str, str] | None:
    """Latency (mean, p95 below) and LLM cost (USD, tokens below) of a leaderboard row."""
    if not usage:
        return None
    return {
        "latency": f"{usage['latency_mean_s']:.4f}",
        "p95": f"{usage['latency_p95_s']:.4f}",
        "cost": f"{usage['cost_usd']:.4f}",
        "tokens": str(int(usage["prompt_tokens"] + usage["completion_tokens"])),
    }


#: column heads of the compact main table (the metric's name is the cell's title)
SHORT_NAMES = {
    "recall@1": "R@1",
    "mrr": "MRR",
    "open_recall@1": "R@1",
    "open_mrr": "MRR",
    "cgs": "CGS",
    "evidence_support": "evidence support",
    "rejection_recovery": "recovery",
}


def _main_rows(report: Report, setting: str, metrics: list[str]) -> list[dict[str, Any]]:
    """Rows of the compact main table: letter, label, role, cells (value, superscript, CI), usage."""
    out = []
    for r in report.setting_rows(setting):
        cells = []
        for m in metrics:
            c = r.cells.get(m)
            if c is None:
                cells.append({"missing": True, "why": r.unavailable.get(m)})
                continue
            ci = f"[{fmt(c.ci_low)}, {fmt(c.ci_high)}]" if c.ci_low is not None else ""
            cells.append(
                {"missing": False, "value": fmt(c.value), "sup": "".join(r.beats.get(m, [])), "ci": ci}
            )
        role = row_name(r)[len(r.label) :].strip(" ()")
        out.append(
            {
                "letter": r.letter,
                "label": r.label,
                "role": role,
                "cls": "bound" if r.bound else "baseline" if r.baseline else "",
                "cells": cells,
                "usage": _usage(r.usage),
            }
        )
    return out


def _settings(report: Report) -> list[dict[str, Any]]:
    """Per setting: the compact main table, the headline table and every metric (rows) by run (columns)."""
    out = []
    for setting in report.settings():
        rows = report.setting_rows(setting)
        metrics = [m for m in HEADLINE[setting] if any(m in r.cells for r in rows)]
        main = [m for m in MAIN[setting] if any(m in r.cells or m in r.unavailable for r in rows)]
        every = []
        spread = discrimination(report, setting)
        for m in all_metrics(report, setting):
            spec = parse_metric(m)
            every.append(
                {
                    "name": m,
                    "axis": spec.axis,
                    "arrow": "↑" if spec.higher_is_better else "↓",
                    "cells": [_cell(r, m) for r in rows],
                    "discrimination": fmt(spread.get(m)),
                }
            )
        out.append(
            {
                "name": setting,
                "title": setting.capitalize(),
                "sort_line": sort_line(report, setting),
                "discrimination_line": discrimination_line(report, setting, main),
                "main_metrics": [{"name": m, "short": SHORT_NAMES.get(m, m)} for m in main],
                "main_rows": _main_rows(report, setting, main),
                "n_tests": len(report.tests_of(setting)),
                "metrics": metrics,
                "rows": [
                    {
                        "label": r.label,
                        "cells": [_cell(r, m) for m in metrics],
                        "unscorable": r.unscorable_turns,
                        "n_turns": r.n_turns,
                        "usage": _usage(r.usage),
                    }
                    for r in rows
                ],
                "all_metrics": every,
            }
        )
    return out


def _tests(report: Report) -> list[dict[str, Any]]:
    return [
        {
            "setting": t.setting,
            "metric": t.metric,
            "a": t.a,
            "b": t.b,
            "n": t.n,
            "n_dialogues": t.n_dialogues,
            "diff": fmt(t.mean_diff),
            "p_permutation": f"{t.p_permutation:.4g}",
            "p_holm": f"{t.p_holm:.4g}",
            "p_wilcoxon": f"{t.p_wilcoxon:.4g}",
        }
        for t in report.tests
    ]


def _inline_svg(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else ""


TurnValues = Mapping[tuple[str, int], Mapping[str, float | None]]
SHOWN_METRICS = (
    "recall@1",
    "open_recall@1",
    "gs",
    "cd",
    "pc",
    "cgs",
    "evidence_support",
    "hallucinated_attribute_rate",
)


def select_turns(preds: list[Prediction], values: TurnValues | None, limit: int) -> list[Prediction]:
    """The ``limit`` turns that say most about a run, in file order: unscorable turns first, then turns
    whose top-1 misses the gold, then by ascending CGS, ties in file order (the first ``limit`` turns when
    no per-turn values are known)."""
    if values is None:
        return preds[:limit]

    def key(i: int) -> tuple[float, float, float, int]:
        p = preds[i]
        v = values.get((p.dialogue_id, p.turn_index), {})
        hit = v.get("recall@1", v.get("open_recall@1"))
        cgs = v.get("cgs")
        return (0.0 if p.error else 1.0, 1.0 if hit is None else hit, 1.0 if cgs is None else cgs, i)

    chosen = sorted(range(len(preds)), key=key)[:limit]
    return [preds[i] for i in sorted(chosen)]


def _values_line(v: Mapping[str, float | None]) -> str:
    shown = [f"{m} {fmt(v[m], 2)}" for m in SHOWN_METRICS if m in v and v[m] is not None]
    return " · ".join(shown)


def _turn_view(
    p: Prediction,
    r_index: int,
    setting: str,
    dialogues: Mapping[str, Dialogue],
    kb: KnowledgeBase | None,
    values: TurnValues | None,
    open_refs: dict[tuple[str, tuple[str, ...]], dict[str, ReviewRef]],
    pages: Mapping[str, str],
) -> dict[str, Any]:
    """What the page shows of one turn: ids, top-3, gold, scores, the user's turn, the evidence view."""
    dialogue = dialogues.get(p.dialogue_id)
    user = ""
    turn = None
    if dialogue is not None and 0 < p.turn_index <= len(dialogue.turns):
        user = dialogue.turns[p.turn_index - 1].text
        turn = next((t for t in dialogue.turns if t.index == p.turn_index), None)
    view: dict[str, Any] = {
        "dialogue_id": p.dialogue_id,
        "page": f"{pages[p.dialogue_id]}#turn-{p.turn_index}" if p.dialogue_id in pages else "",
        "turn_index": p.turn_index,
        "top3": ", ".join(p.ranking[:3]),
        "gold": turn.gold.gold_poi if turn is not None and turn.gold is not None else "",
        "scored": _values_line(values.get((p.dialogue_id, p.turn_index), {})) if values is not None else "",
        "user": user,
        "error": p.error,
        "response": p.response,
        "evidence": None,
    }
    if p.error is None and kb is not None:
        refs: Mapping[str, ReviewRef] = {}
        if dialogue is not None:
            refs = dialogue.review_refs
            if setting == "open" and turn is not None and turn.gold is not None:
                key = (dialogue.dialogue_id, tuple(turn.gold.open_pool))
                if key not in open_refs:
                    open_refs[key] = open_review_refs(kb, dialogue.review_refs, list(key[1]))
                refs = open_refs[key]
        view["evidence"] = Markup(
            evidence_view(p.response, refs, kb, f"r{r_index}-{p.dialogue_id}-{p.turn_index}")
        )
    return view


def render_html(
    report: Report,
    runs: list[tuple[str, str, list[Prediction]]],
    dialogues: Mapping[str, Dialogue],
    kb: KnowledgeBase | None,
    plots: list[Path],
    *,
    turns_per_run: int = 40,
    turn_values: list[TurnValues] | None = None,
    pages: Mapping[str, str] | None = None,
) -> str:
    """The report page; ``runs`` = (label, setting, predictions), ``turn_values[i]`` the per-turn metric
    values of run i (picks the turns shown, :func:`select_turns`). Evidence links need ``dialogues`` and
    ``kb``; ``pages`` maps a dialogue id to its page (:mod:`.dialogue_page`), linked from each turn."""
    pages = pages or {}
    open_refs: dict[tuple[str, tuple[str, ...]], dict[str, ReviewRef]] = {}
    run_views = []
    for r_index, (label, setting, preds) in enumerate(runs):
        values = turn_values[r_index] if turn_values is not None else None
        shown = select_turns(preds, values, turns_per_run)
        run_views.append(
            {
                "label": label,
                "setting": setting,
                "shown": len(shown),
                "total": len(preds),
                "selection_note": values is not None and len(shown) < len(preds),
                "turns": [
                    _turn_view(p, r_index, setting, dialogues, kb, values, open_refs, pages) for p in shown
                ],
            }
        )
    page = (
        _environment()
        .get_template("report.html.j2")
        .render(
            settings=_settings(report),
            tests=_tests(report),
            notes=report.notes,
            svgs=[Markup(_inline_svg(p)) for p in plots if p.suffix == ".svg"],
            evidence_available=kb is not None and bool(dialogues),
            dialogue_pages=[{"dialogue_id": d, "href": h} for d, h in pages.items()],
            runs=run_views,
        )
    )
    return page.rstrip("\n") + "\n"
