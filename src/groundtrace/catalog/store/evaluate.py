"""``catalog evaluate --db URL --gold GOLD``: the deployment metrics of the seed, computed from a store.

For each run (default: every run in the store) its stored results are scored against gold with
:func:`groundtrace.catalog.evaluation.metrics.evaluate` (overall, per category, per attribute), on the
SKUs stored in the database (gold of other SKUs is ignored), plus:

* **exposure-weighted coverage** — when SKUs carry a traffic weight ``w`` (a spec named exposure /
  traffic / views / impressions / sessions): ``Σ w·[extracted] / Σ w`` and ``Σ w·[WRITE] / Σ w`` over the
  (SKU, attribute) pairs of SKUs that have a weight (``skus_weighted`` says how many);
* **cost** — LLM calls and USD (the run's ledger) per processed SKU and per accepted write (WRITE);
* **Judge ablation, binary vs four-way** — the stored four-way verdicts against a binary PASS/FAIL
  reading of the same verdicts (UNVERIFIED and UNCERTAIN count as FAIL, so only PASS is published):
  judge-supported rate, publish coverage and write precision (correct / WRITE with gold) under each;
* **runs side by side** (the seed's Table 1) — judge-supported rate, coverage, publish coverage and cost
  relative to the first run (USD when the first run has a cost, else LLM calls; ``None`` when both 0).
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console

from groundtrace.catalog.evaluation.matching import equal_for
from groundtrace.catalog.evaluation.metrics import PairOutcome
from groundtrace.catalog.evaluation.scoring import build_outcomes, evaluate
from groundtrace.catalog.importers.base import read_jsonl_models
from groundtrace.catalog.model import GoldLabel
from groundtrace.catalog.store.store import CatalogStore
from groundtrace.catalog.templates import TemplateSet

SUPPORTED_FOUR_WAY = ("PASS", "UNVERIFIED")


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


class RunEvaluation(BaseModel):
    run: str
    run_id: int
    engine: str
    model: str | None
    judge: str
    skus: int
    report: dict[str, Any]
    exposure_weighted: dict[str, Any] | None = None
    cost: dict[str, Any] = Field(default_factory=dict)
    ablation: dict[str, dict[str, Any]] = Field(default_factory=dict)


class StoreEvaluation(BaseModel):
    runs: list[RunEvaluation]
    comparison: list[dict[str, Any]]
    issues: list[str] = Field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def lines(self) -> list[str]:
        def pct(v: float | None) -> str:
            return "-" if v is None else f"{v:.1%}"

        out = ["run | model | judge-supported | coverage | publish coverage | accuracy | relative cost"]
        for row in self.comparison:
            rel = row["relative_cost"]
            out.append(
                f"{row['run']} | {row['model'] or 'offline'} | {pct(row['judge_supported_rate'])} | "
                f"{pct(row['coverage'])} | {pct(row['publish_coverage'])} | {pct(row['accuracy'])} | "
                f"{'-' if rel is None else f'{rel:.2f}x'}"
            )
        for r in self.runs:
            c = r.cost
            out.append(
                f"{r.run}: {r.skus} SKUs, {c['llm_calls']} LLM calls (${c['cost_usd']:.6f}); "
                f"calls/SKU {_num(c['calls_per_sku'])}, calls/accepted write {_num(c['calls_per_write'])}, "
                f"$/SKU {_num(c['cost_per_sku'], 6)}, $/accepted write {_num(c['cost_per_write'], 6)}"
            )
            if r.exposure_weighted:
                e = r.exposure_weighted
                out.append(
                    f"{r.run}: exposure-weighted coverage {pct(e['coverage'])}, publish coverage "
                    f"{pct(e['publish_coverage'])} ({e['skus_weighted']} SKUs with a weight)"
                )
            for mode, m in r.ablation.items():
                out.append(
                    f"{r.run}: judge {mode}: supported {pct(m['judge_supported_rate'])}, publish coverage "
                    f"{pct(m['publish_coverage'])}, write precision {pct(m['write_precision'])}"
                )
        return out

    def print(self, console: Any = None) -> None:
        console = console or Console(soft_wrap=True)
        for line in self.lines():
            console.print(line, markup=False, highlight=False, soft_wrap=True)

    def to_html(self) -> str:
        """A self-contained HTML page: the side-by-side table, then per-run cost, exposure and ablation.
        Every cell is escaped (run names and models are user text)."""

        def cell(v: Any) -> str:
            if isinstance(v, float):
                return f"{v:.4f}"
            return html.escape("-" if v is None else str(v))

        cols = ["run", "model", "judge", "judge_supported_rate", "coverage", "publish_coverage", "accuracy"]
        cols.append("relative_cost")
        parts = [
            "<!doctype html><meta charset='utf-8'><title>TRACE-Catalog store evaluation</title>",
            (
                "<style>body{font-family:sans-serif}td,th{border:1px solid #ccc;padding:2px 6px}"
                "table{border-collapse:collapse;margin-bottom:1em}</style>"
            ),
            "<h1>Runs side by side</h1><table><tr>" + "".join(f"<th>{c}</th>" for c in cols) + "</tr>",
        ]
        for row in self.comparison:
            parts.append("<tr>" + "".join(f"<td>{cell(row.get(c))}</td>" for c in cols) + "</tr>")
        parts.append("</table>")
        for r in self.runs:
            parts.append(f"<h2>{cell(r.run)}</h2><table>")
            for key, value in r.cost.items():
                parts.append(f"<tr><th>{cell(key)}</th><td>{cell(value)}</td></tr>")
            for key, value in (r.exposure_weighted or {}).items():
                parts.append(f"<tr><th>exposure-weighted {cell(key)}</th><td>{cell(value)}</td></tr>")
            for mode, m in r.ablation.items():
                for key, value in m.items():
                    parts.append(f"<tr><th>judge {cell(mode)}: {cell(key)}</th><td>{cell(value)}</td></tr>")
            parts.append("</table><h3>per category</h3><table><tr><th>category</th><th>pairs</th>")
            names = list(r.report["overall"]["metrics"])
            parts.append("".join(f"<th>{cell(n)}</th>" for n in names) + "</tr>")
            for category, group in r.report["per_category"].items():
                values = "".join(f"<td>{cell(group['metrics'][n]['value'])}</td>" for n in names)
                parts.append(f"<tr><td>{cell(category)}</td><td>{group['pairs']}</td>{values}</tr>")
            parts.append("</table>")
        return "\n".join(parts) + "\n"


def _num(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _exposure(outcomes: list[PairOutcome], weights: dict[str, float | None]) -> dict[str, Any] | None:
    weighted = [(o, weights.get(o.sku_id)) for o in outcomes]
    weighted = [(o, w) for o, w in weighted if w is not None]
    if not weighted:
        return None
    total = sum(w for _, w in weighted)
    return {
        "coverage": _ratio(sum(w for o, w in weighted if o.extracted), total),
        "publish_coverage": _ratio(sum(w for o, w in weighted if o.extracted and o.action == "WRITE"), total),
        "weight_total": total,
        "skus_weighted": len({o.sku_id for o, _ in weighted}),
    }


def _ablation(outcomes: list[PairOutcome]) -> dict[str, dict[str, Any]]:
    extracted = [o for o in outcomes if o.extracted and o.has_result]
    n_all = len(outcomes)

    def mode(supported: Iterable[str], published: Any) -> dict[str, Any]:
        supported = set(supported)
        writes = [o for o in extracted if published(o)]
        judged = [o for o in writes if o.judged]
        return {
            "judge_supported_rate": _ratio(sum(o.verdict in supported for o in extracted), len(extracted)),
            "publish_coverage": _ratio(len(writes), n_all),
            "write_precision": _ratio(sum(bool(o.correct) for o in judged), len(judged)),
            "writes": len(writes),
        }

    return {
        "four_way": mode(SUPPORTED_FOUR_WAY, lambda o: o.action == "WRITE"),
        "binary": mode(("PASS",), lambda o: o.action == "WRITE" and o.verdict == "PASS"),
    }


def evaluate_store(
    store: CatalogStore,
    gold: Path | list[GoldLabel],
    *,
    templates: TemplateSet | None = None,
    runs: list[str] | None = None,
) -> StoreEvaluation:
    """Score the runs of ``store`` against ``gold`` (module docstring); ``runs`` are names or ids."""
    issues: list[str] = []
    if isinstance(gold, list):
        gold_rows = gold
    else:
        gold_rows, gold_issues = read_jsonl_models(Path(gold), GoldLabel)
        issues += [str(i) for i in gold_issues]
    info = store.sku_info()
    categories = {sku_id: category for sku_id, (category, _) in info.items()}
    weights = {sku_id: exposure for sku_id, (_, exposure) in info.items()}
    gold_rows = [g for g in gold_rows if g.sku_id in categories]
    chosen = [store.find_run(r) for r in runs] if runs else store.runs()
    evaluations: list[RunEvaluation] = []
    for run in chosen:
        done = store.done_ids(run["id"])
        results = store.run_results(run["id"])
        run_gold = [g for g in gold_rows if g.sku_id in done]
        report = evaluate(results, run_gold, templates=templates, categories=categories)
        outcomes, _, _ = build_outcomes(
            results, run_gold, equal=_resolver(templates), categories=categories, scope="union"
        )
        writes = sum(1 for r in results if r.decision.action.value == "WRITE")
        evaluations.append(
            RunEvaluation(
                run=run["name"],
                run_id=run["id"],
                engine=run["engine"],
                model=run["model"],
                judge=run["judge"],
                skus=len(done),
                report=report.to_dict(),
                exposure_weighted=_exposure(outcomes, weights),
                cost={
                    "llm_calls": run["llm_calls"],
                    "prompt_tokens": run["prompt_tokens"],
                    "completion_tokens": run["completion_tokens"],
                    "cost_usd": run["cost_usd"],
                    "accepted_writes": writes,
                    "calls_per_sku": _ratio(run["llm_calls"], len(done)),
                    "calls_per_write": _ratio(run["llm_calls"], writes),
                    "cost_per_sku": _ratio(run["cost_usd"], len(done)),
                    "cost_per_write": _ratio(run["cost_usd"], writes),
                },
                ablation=_ablation(outcomes),
            )
        )
        issues += report.issues
    return StoreEvaluation(runs=evaluations, comparison=_comparison(evaluations), issues=issues)


def _resolver(templates: TemplateSet | None) -> Any:
    cache: dict[tuple[str, str], Any] = {}

    def resolve(category: str, attribute: str) -> Any:
        if (category, attribute) not in cache:
            template = templates.for_category(category) if templates is not None else None
            spec = next((a for a in template.attributes if a.slug == attribute), None) if template else None
            cache[(category, attribute)] = equal_for(spec)
        return cache[(category, attribute)]

    return resolve


def _comparison(evaluations: list[RunEvaluation]) -> list[dict[str, Any]]:
    rows = []
    ref = evaluations[0].cost if evaluations else {}
    for e in evaluations:
        metrics = e.report["overall"]["metrics"]
        if ref.get("cost_usd"):
            relative = e.cost["cost_usd"] / ref["cost_usd"]
        elif ref.get("llm_calls"):
            relative = e.cost["llm_calls"] / ref["llm_calls"]
        else:
            relative = None
        rows.append(
            {
                "run": e.run,
                "model": e.model,
                "judge": e.judge,
                "judge_supported_rate": metrics["judge_supported_rate"]["value"],
                "coverage": metrics["coverage"]["value"],
                "publish_coverage": metrics["publish_coverage"]["value"],
                "accuracy": metrics["accuracy"]["value"],
                "relative_cost": relative,
            }
        )
    return rows
