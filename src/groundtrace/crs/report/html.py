"""One self-contained HTML report (inline CSS and SVG, no external assets).

Every piece of text from a run, a dataset or a KB (responses, review texts, POI names, labels) is
untrusted and goes through :func:`html.escape`. In each shown response, every ``[Rn]`` tag links to the
cited review below it; the spans of the review that the response quotes are highlighted (located with
``groundtrace.core.evidence.quotes.locate_quote``; a span scoring >= 0.80 is *grounded*, lower is marked weak).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from pathlib import Path

from groundtrace.core.evidence.citations import find_tags, parse_citations
from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, locate_quote
from groundtrace.crs.kb.knowledge_base import KnowledgeBase, open_review_refs
from groundtrace.crs.report.leaderboard import HEADLINE, Report, all_metrics
from groundtrace.crs.report.render import fmt
from groundtrace.crs.schema import Dialogue, ReviewRef
from groundtrace.crs.systems.predictions import Prediction

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:90rem;padding:0 1rem;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:1rem 0;font-size:.85rem}.scroll{overflow-x:auto}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}
th:first-child,td:first-child,td.l{text-align:left}th{background:#f3f3f3;text-align:center}td{white-space:nowrap}
.ci{display:block;color:#777;font-size:.75em}details{margin:.5rem 0}summary{cursor:pointer;color:#335}
.turn{border:1px solid #ddd;border-radius:6px;padding:.75rem 1rem;margin:1rem 0}.meta{color:#666;font-size:.85rem}
.response{background:#f8f8ff;padding:.5rem;border-left:3px solid #88a}.review{font-size:.9rem;margin:.4rem 0 .4rem 1rem}
mark.ok{background:#c8f0c0}mark.weak{background:#ffd8a8}a.tag{font-weight:600;text-decoration:none}
span.bad{color:#b00;font-weight:600}.error{color:#b00}.plots svg{max-width:100%;height:auto}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _anchor(prefix: str, label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", f"{prefix}-{label}")


def highlighted(text: str, spans: list[tuple[int, int, bool]]) -> str:
    """``text`` escaped, with ``spans`` (start, end, grounded) wrapped in ``<mark>`` (overlaps merged)."""
    merged: list[list] = []
    for a, b, ok in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
            merged[-1][2] = merged[-1][2] and ok
        else:
            merged.append([a, b, ok])
    out, cursor = [], 0
    for a, b, ok in merged:
        out.append(_e(text[cursor:a]))
        out.append(f'<mark class="{"ok" if ok else "weak"}">{_e(text[a:b])}</mark>')
        cursor = b
    out.append(_e(text[cursor:]))
    return "".join(out)


def evidence_view(response: str, refs: Mapping[str, ReviewRef], kb: KnowledgeBase, prefix: str) -> str:
    """The response with linked tags, then each cited review with its quoted spans highlighted."""
    tags = find_tags(response)
    parts, cursor = [], 0
    for tag in tags:
        parts.append(_e(response[cursor : tag.start]))
        if tag.label in refs and refs[tag.label].review_id in kb.reviews:
            parts.append(f'<a class="tag" href="#{_anchor(prefix, tag.label)}">{_e(tag.label)}</a>')
        else:
            parts.append(f'<span class="bad" title="does not resolve">{_e(tag.label)}</span>')
        cursor = tag.end
    parts.append(_e(response[cursor:]))
    body = [f'<div class="response">{"".join(parts)}</div>']

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
    for label in dict.fromkeys(t.label for t in tags):
        ref = refs.get(label)
        if ref is None or ref.review_id not in kb.reviews:
            body.append(
                f'<div class="review"><span class="bad">{_e(label)}</span>: does not resolve to a review</div>'
            )
            continue
        review = kb.reviews[ref.review_id]
        poi = kb.pois.get(ref.poi_id)
        best = max(scores.get(label, [0.0]), default=0.0)
        quoted = f" · best quote score {best:.2f}" if label in scores else " · no quote"
        body.append(
            f'<div class="review" id="{_anchor(prefix, label)}"><b>{_e(label)}</b> '
            f'<span class="meta">{_e(poi.name if poi else ref.poi_id)} · review {_e(review.review_id)}{quoted}</span>'
            f"<br>{highlighted(review.text, spans.get(label, []))}</div>"
        )
    return "\n".join(body)


def _leaderboard_html(report: Report) -> str:
    out = []
    for setting in report.settings():
        rows = [r for r in report.rows if r.setting == setting]
        metrics = [m for m in HEADLINE[setting] if any(m in r.cells for r in rows)]
        out.append(
            f'<h2>{_e(setting.capitalize())} set</h2><div class="scroll"><table><tr><th>system</th>'
            + "".join(f"<th>{_e(m)}</th>" for m in metrics)
            + "<th>unscorable</th><th>latency (s)</th><th>LLM cost (USD)</th></tr>"
        )
        for r in rows:
            cells = [_cell_html(r, m) for m in metrics]
            out.append(
                f"<tr><td>{_e(r.label)}</td>{''.join(cells)}<td>{r.unscorable_turns}/{r.n_turns}</td>"
                f"{_usage_cells(r.usage)}</tr>"
            )
        out.append("</table></div>")
        out.append(_all_metrics_html(report, setting, rows))
    if report.tests:
        out.append(
            '<h2>Paired significance tests</h2><div class="scroll"><table><tr><th>setting</th><th>metric</th>'
            "<th>A</th><th>B</th>"
            "<th>units</th><th>dialogues</th><th>Δ</th><th>p perm.</th><th>p Holm</th><th>p Wilcoxon</th></tr>"
        )
        for t in report.tests:
            out.append(
                f'<tr><td>{_e(t.setting)}</td><td class="l">{_e(t.metric)}</td><td class="l">{_e(t.a)}</td>'
                f'<td class="l">{_e(t.b)}</td>'
                f"<td>{t.n}</td><td>{t.n_dialogues}</td><td>{fmt(t.mean_diff)}</td><td>{t.p_permutation:.4g}</td>"
                f"<td>{t.p_holm:.4g}</td><td>{t.p_wilcoxon:.4g}</td></tr>"
            )
        out.append("</table></div>")
    if report.notes:
        out.append("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in report.notes) + "</ul>")
    return "\n".join(out)


def _usage_cells(usage: Mapping[str, float]) -> str:
    """Latency (mean, p95 below) and LLM cost (USD, tokens below) cells of a leaderboard row."""
    if not usage:
        return "<td>—</td><td>—</td>"
    tokens = int(usage["prompt_tokens"] + usage["completion_tokens"])
    return (
        f'<td>{usage["latency_mean_s"]:.4f}<span class="ci">p95 {usage["latency_p95_s"]:.4f}</span></td>'
        f'<td>{usage["cost_usd"]:.4f}<span class="ci">{tokens} tokens</span></td>'
    )


def _cell_html(row, metric: str) -> str:
    c = row.cells.get(metric)
    if c is None:
        why = row.unavailable.get(metric)
        return f'<td title="{_e(why)}">unavailable</td>' if why is not None else "<td>—</td>"
    ci = f' <span class="ci">[{fmt(c.ci_low)}, {fmt(c.ci_high)}]</span>' if c.ci_low is not None else ""
    return f"<td>{fmt(c.value)}{ci}</td>"


def _all_metrics_html(report: Report, setting: str, rows) -> str:
    """Every metric of the setting (rows) by run (columns), in a collapsible block."""
    from groundtrace.crs.metrics import parse_metric

    out = [
        f'<details><summary>All metrics, {_e(setting)} set</summary><div class="scroll"><table><tr>'
        "<th>metric</th><th>axis</th>"
        "<th>better</th>" + "".join(f"<th>{_e(r.label)}</th>" for r in rows) + "</tr>"
    ]
    for m in all_metrics(report, setting):
        spec = parse_metric(m)
        arrow = "↑" if spec.higher_is_better else "↓"
        out.append(
            f'<tr><td>{_e(m)}</td><td class="l">{_e(spec.axis)}</td><td>{arrow}</td>'
            + "".join(_cell_html(r, m) for r in rows)
            + "</tr>"
        )
    out.append("</table></div></details>")
    return "".join(out)


def _inline_svg(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else ""


TurnValues = Mapping[tuple[str, int], Mapping[str, float | None]]
SHOWN_METRICS = ("recall@1", "open_recall@1", "gs", "cd", "pc", "cgs", "hallucinated_attribute_rate")


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


def render_html(
    report: Report,
    runs: list[tuple[str, str, list[Prediction]]],
    dialogues: Mapping[str, Dialogue],
    kb: KnowledgeBase | None,
    plots: list[Path],
    *,
    turns_per_run: int = 40,
    turn_values: list[TurnValues] | None = None,
) -> str:
    """The report page; ``runs`` = (label, setting, predictions), ``turn_values[i]`` the per-turn metric
    values of run i (picks the turns shown, :func:`select_turns`). Evidence links need ``dialogues`` and
    ``kb``."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>TRACE-CRS report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>TRACE-CRS report</h1>",
        _leaderboard_html(report),
    ]
    svgs = [p for p in plots if p.suffix == ".svg"]
    if svgs:
        parts.append('<h2>Axes</h2><div class="plots">' + "".join(_inline_svg(p) for p in svgs) + "</div>")
    if kb is None or not dialogues:
        parts.append(
            '<p class="meta">Dataset or KB not available: responses are shown without evidence links.</p>'
        )
    open_refs: dict[tuple[str, tuple[str, ...]], dict[str, ReviewRef]] = {}
    for r_index, (label, setting, preds) in enumerate(runs):
        values = turn_values[r_index] if turn_values is not None else None
        shown = select_turns(preds, values, turns_per_run)
        parts.append(f"<h2>Responses: {_e(label)} · {_e(setting)}</h2>")
        if values is not None and len(shown) < len(preds):
            parts.append(
                f'<p class="meta">{len(shown)} of {len(preds)} turns: unscorable turns first, then turns whose '
                "top-1 misses the gold, then the least grounded (lowest CGS); in dataset order.</p>"
            )
        for p in shown:
            prefix = f"r{r_index}-{p.dialogue_id}-{p.turn_index}"
            dialogue = dialogues.get(p.dialogue_id)
            user = ""
            turn = None
            if dialogue is not None and 0 < p.turn_index <= len(dialogue.turns):
                user = dialogue.turns[p.turn_index - 1].text
                turn = next((t for t in dialogue.turns if t.index == p.turn_index), None)
            gold = f" · gold: {_e(turn.gold.gold_poi)}" if turn is not None and turn.gold is not None else ""
            scored = _values_line(values.get((p.dialogue_id, p.turn_index), {})) if values is not None else ""
            parts.append(
                f'<div class="turn"><div class="meta">{_e(p.dialogue_id)} · turn {p.turn_index} · '
                f"top-3: {_e(', '.join(p.ranking[:3]))}{gold}</div>"
                + (f'<div class="meta">{_e(scored)}</div>' if scored else "")
            )
            if user:
                parts.append(f"<p><b>User:</b> {_e(user)}</p>")
            if p.error is not None:
                parts.append(f'<p class="error">unscorable: {_e(p.error)}</p></div>')
                continue
            refs: Mapping[str, ReviewRef] = {}
            if dialogue is not None and kb is not None:
                refs = dialogue.review_refs
                if setting == "open" and turn is not None and turn.gold is not None:
                    key = (dialogue.dialogue_id, tuple(turn.gold.open_pool))
                    if key not in open_refs:
                        open_refs[key] = open_review_refs(kb, dialogue.review_refs, list(key[1]))
                    refs = open_refs[key]
            if kb is not None:
                parts.append(evidence_view(p.response, refs, kb, prefix))
            else:
                parts.append(f'<div class="response">{_e(p.response)}</div>')
            parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
