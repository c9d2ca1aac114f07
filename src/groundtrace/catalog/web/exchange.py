"""The review queue in Label Studio and Argilla formats, and their decisions back into the store.

Export (:func:`export_label_studio`, :func:`export_argilla`) writes the open items (or all) as JSON tasks /
records, with a project configuration next to them so a team can load both into its tool:

* **Label Studio** — a JSON list of tasks ``{"id", "data", "predictions"}`` (its import format).
  ``data``: ``review_id``, ``sku_id``, ``attribute``, ``category``, ``title``, ``value`` (display text),
  ``verdict``, ``reason``, ``run`` and ``evidence`` — every evidence item as ``[source_type source_ref]``
  and its source text (or the quote alone when the store lacks the text, as on the page); one prediction
  marks each quote as a ``quote`` span (``labels`` result, character offsets into ``evidence``). The
  labelling config (``label_studio_config``) has ``Choices decision`` (approve / reject / edit),
  ``TextArea value`` (the corrected value; comma-separated for lists) and ``TextArea comment``.
* **Argilla** (2.x) — a JSON list of records as ``Record.to_dict()`` writes them: ``id``
  (``review-<id>``), ``fields`` (``product``, ``candidate``, ``evidence``: plain text, no markdown),
  ``metadata`` (review_id, sku_id, attribute, category, verdict), ``suggestions`` (``value``: the
  proposed value), ``responses`` ``{}``; the settings (``argilla_settings``) declare a ``LabelQuestion
  decision`` and ``TextQuestion`` s ``value`` and ``comment``.

Import (:func:`import_decisions`) reads the tool's export: per task (Label Studio: the last annotation
that was not cancelled) or record (Argilla: the first ``submitted`` response set), the decision, value and
comment go through ``CatalogStore.decide_review`` exactly like a page decision (published value, audit
row). The reviewer is ``label-studio:<email|username|id>`` / ``argilla:<user_id>`` unless ``reviewer``
is given. A task without a decision is skipped; a bad task (unknown or decided item, unknown decision,
an edit without a value) is reported as ``FILE: task N (review R): problem`` and the rest is processed.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundtrace.catalog.model import SKU
from groundtrace.catalog.store import CatalogStore, StoreError
from groundtrace.catalog.store import schema as t
from groundtrace.catalog.templates import TemplateSet, load_templates
from groundtrace.catalog.web.queue import Highlight, highlight
from groundtrace.catalog.web.validate import check_edit

FORMATS = ("label-studio", "argilla")
DECISIONS = ("approve", "reject", "edit")


class ExchangeError(ValueError):
    """An export file that cannot be read at all (not JSON, not a list, unknown format)."""


@dataclass
class ImportReport:
    """What :func:`import_decisions` did."""

    decided: int = 0
    skipped: int = 0  # tasks without a decision
    problems: list[str] = field(default_factory=list)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else ", ".join(str(v) for v in value)


def _items(store: CatalogStore, status: str | None) -> list[tuple[dict[str, Any], SKU | None, str]]:
    skus = {r["sku_id"]: r for r in store.table(t.skus.name)}
    runs = {r["id"]: r["name"] for r in store.runs()}
    out = []
    for item in store.review_items(status):
        row = skus.get(item["sku_id"])
        try:
            sku = SKU.model_validate(row["record"]) if row else None
        except ValueError:
            sku = None
        out.append((item, sku, runs.get(item["run_id"], "")))
    return out


def _evidence_text(highlights: list[Highlight]) -> tuple[str, list[tuple[int, int, str]]]:
    """The evidence block and the (start, end, text) of every quote in it."""
    parts: list[str] = []
    spans: list[tuple[int, int, str]] = []
    pos = 0
    for h in highlights:
        head = f"[{h.source_type} {h.source_ref}]\n"
        body = h.before + h.match + h.after
        start = pos + len(head) + len(h.before)
        spans.append((start, start + len(h.match), h.match))
        block = head + body + "\n\n"
        parts.append(block)
        pos += len(block)
    return "".join(parts).rstrip("\n"), spans


def export_label_studio(store: CatalogStore, status: str | None = "open") -> list[dict[str, Any]]:
    """Label Studio tasks for the review items of ``status`` (all when None)."""
    tasks = []
    for item, sku, run in _items(store, status):
        text, spans = _evidence_text([highlight(e, sku, item["source_texts"]) for e in item["evidence"]])
        result = [
            {
                "id": f"q{n}",
                "from_name": "quote",
                "to_name": "evidence",
                "type": "labels",
                "value": {"start": s, "end": e, "text": quote, "labels": ["quote"]},
            }
            for n, (s, e, quote) in enumerate(spans)
        ]
        tasks.append(
            {
                "id": item["id"],
                "data": {
                    "review_id": item["id"],
                    "sku_id": item["sku_id"],
                    "attribute": item["attribute"],
                    "category": item["category"],
                    "title": sku.title if sku else "",
                    "value": _text(item["value"]),
                    "verdict": item["verdict"],
                    "reason": item["reason"],
                    "run": run,
                    "evidence": text,
                },
                "predictions": [{"model_version": run or "groundtrace", "result": result}],
            }
        )
    return tasks


def label_studio_config() -> str:
    """The Label Studio labelling config for :func:`export_label_studio` tasks."""
    return """<View>
  <Header value="$sku_id · $attribute ($category)"/>
  <Text name="title" value="$title"/>
  <Header value="Proposed value: $value — Judge: $verdict"/>
  <Text name="reason" value="$reason"/>
  <Labels name="quote" toName="evidence"><Label value="quote" background="#ffe46b"/></Labels>
  <Text name="evidence" value="$evidence"/>
  <Choices name="decision" toName="evidence" choice="single" required="true">
    <Choice value="approve"/><Choice value="reject"/><Choice value="edit"/>
  </Choices>
  <TextArea name="value" toName="evidence" maxSubmissions="1" placeholder="corrected value (edit)"/>
  <TextArea name="comment" toName="evidence" maxSubmissions="1" placeholder="comment"/>
</View>
"""


def export_argilla(store: CatalogStore, status: str | None = "open") -> list[dict[str, Any]]:
    """Argilla 2.x records (``Record.to_dict()`` shape) for the review items of ``status``."""
    records = []
    for item, sku, run in _items(store, status):
        text, _ = _evidence_text([highlight(e, sku, item["source_texts"]) for e in item["evidence"]])
        title = sku.title if sku else ""
        records.append(
            {
                "id": f"review-{item['id']}",
                "fields": {
                    "product": f"{item['sku_id']} · {title} ({item['category']})",
                    "candidate": f"{item['attribute']}: {_text(item['value'])} — Judge {item['verdict']}: "
                    f"{item['reason']}",
                    "evidence": text,
                },
                "metadata": {
                    "review_id": item["id"],
                    "sku_id": item["sku_id"],
                    "attribute": item["attribute"],
                    "category": item["category"],
                    "verdict": item["verdict"],
                    "run": run,
                },
                "suggestions": {"value": {"value": _text(item["value"]), "score": None, "agent": run}},
                "responses": {},
                "vectors": {},
                "status": "pending",
            }
        )
    return records


def argilla_settings() -> dict[str, Any]:
    """Argilla dataset settings (fields, questions, metadata) for :func:`export_argilla` records."""
    return {
        "guidelines": "Approve the proposed value if the evidence states it, reject it if not, or edit it.",
        "fields": [
            {"name": "product", "type": "text", "use_markdown": False},
            {"name": "candidate", "type": "text", "use_markdown": False},
            {"name": "evidence", "type": "text", "use_markdown": False},
        ],
        "questions": [
            {"name": "decision", "type": "label_selection", "labels": list(DECISIONS), "required": True},
            {"name": "value", "type": "text", "required": False},
            {"name": "comment", "type": "text", "required": False},
        ],
        "metadata": [
            {"name": "category", "type": "terms"},
            {"name": "attribute", "type": "terms"},
            {"name": "verdict", "type": "terms"},
        ],
    }


def _who(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("email") or value.get("username") or value.get("id")
    return str(value) if value not in (None, "") else "unknown"


def _label_studio_decision(task: dict[str, Any]) -> tuple[int | None, dict[str, str] | None]:
    review_id = (task.get("data") or {}).get("review_id", task.get("id"))
    done = [a for a in task.get("annotations") or [] if isinstance(a, dict) and not a.get("was_cancelled")]
    if not done:
        return review_id, None
    annotation = done[-1]
    out = {"reviewer": f"label-studio:{_who(annotation.get('completed_by'))}"}
    for result in annotation.get("result") or []:
        name, value = result.get("from_name"), result.get("value") or {}
        if name == "decision" and value.get("choices"):
            out["decision"] = str(value["choices"][0])
        elif name in ("value", "comment") and value.get("text") is not None:
            text = value["text"]
            out[name] = "\n".join(text) if isinstance(text, list) else str(text)
    return review_id, out if "decision" in out else None


def _argilla_decision(record: dict[str, Any]) -> tuple[int | None, dict[str, str] | None]:
    meta = record.get("metadata") or {}
    review_id = meta.get("review_id")
    if review_id is None and str(record.get("id", "")).startswith("review-"):
        review_id = str(record["id"])[len("review-") :]
    responses = record.get("responses") or {}
    picked = [
        r
        for r in responses.get("decision") or []
        if isinstance(r, dict) and r.get("status", "submitted") == "submitted" and r.get("value")
    ]
    if not picked:
        return review_id, None
    user = picked[0].get("user_id")
    out = {"reviewer": f"argilla:{_who(user)}", "decision": str(picked[0]["value"])}
    for name in ("value", "comment"):
        for r in responses.get(name) or []:
            if isinstance(r, dict) and r.get("user_id") == user and r.get("value") is not None:
                out[name] = str(r["value"])
    return review_id, out


def import_decisions(
    store: CatalogStore, path: Path, fmt: str, *, reviewer: str | None = None
) -> ImportReport:
    """Apply the decisions of a Label Studio / Argilla export at ``path`` (module docstring)."""
    if fmt not in FORMATS:
        raise ExchangeError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ExchangeError(f"{path}: cannot read a JSON export ({exc})") from None
    if isinstance(data, dict) and isinstance(data.get("records"), list):
        data = data["records"]
    if not isinstance(data, list):
        what = "tasks" if fmt == "label-studio" else "records"
        raise ExchangeError(f"{path}: expected a JSON list of {what}")
    read = _label_studio_decision if fmt == "label-studio" else _argilla_decision
    report = ImportReport()
    for n, entry in enumerate(data, start=1):
        if not isinstance(entry, dict):
            report.problems.append(f"{path}: task {n}: not a JSON object")
            continue
        review_id, decision = read(entry)
        if decision is None:
            report.skipped += 1
            continue
        problem = _apply(store, review_id, decision, reviewer)
        if problem:
            report.problems.append(f"{path}: task {n} (review {review_id}): {problem}")
        else:
            report.decided += 1
    return report


@functools.cache
def _templates() -> TemplateSet:
    """The built-in templates (an imported edit is checked like one made on the page)."""
    return load_templates()


def _apply(store: CatalogStore, review_id: Any, decision: dict[str, str], reviewer: str | None) -> str:
    """Decide one item; '' on success, else the problem."""
    try:
        item_id = int(review_id)
    except (TypeError, ValueError):
        return "no review_id"
    kind = decision["decision"].strip().lower()
    if kind not in DECISIONS:
        return f"unknown decision {kind!r} (expected {', '.join(DECISIONS)})"
    value = None
    if kind == "edit":
        items = {i["id"]: i for i in store.review_items(None)}
        item = items.get(item_id, {})
        spec = None
        if item:
            template = _templates().for_category(item["category"])
            if template is not None:
                spec = next((a for a in template.attributes if a.slug == item["attribute"]), None)
        checked = check_edit(decision.get("value", ""), spec, isinstance(item.get("value"), list))
        if checked.error is not None:
            return checked.error.removesuffix(".").replace("An edit needs", "an edit needs")
        value = checked.value
    try:
        store.decide_review(
            item_id,
            reviewer=reviewer or decision["reviewer"],
            decision=kind,
            value=value,
            comment=decision.get("comment", ""),
        )
    except StoreError as exc:
        return str(exc)
    return ""
