"""Evaluation from the store: exposure-weighted coverage, cost per SKU / write, the binary-judge ablation
and runs side by side, on two hand-made SKUs whose numbers are worked out below."""

from __future__ import annotations

from pathlib import Path

from groundtrace.catalog.model import (
    SKU,
    Action,
    AttributeResult,
    Candidate,
    CandidateStatus,
    Decision,
    GoldLabel,
    Verdict,
    VerdictLabel,
)
from groundtrace.catalog.store import CatalogStore, SkuOutcome
from groundtrace.catalog.store.evaluate import evaluate_store
from groundtrace.core.llm.base import Usage


def _r(sku: str, attr: str, value: str | None, verdict: VerdictLabel, action: Action) -> AttributeResult:
    status = CandidateStatus.EXTRACTED if value else CandidateStatus.NOT_FOUND
    return AttributeResult(
        sku_id=sku,
        category="misc",
        attribute=attr,
        candidate=Candidate(sku_id=sku, attribute=attr, value=value, status=status, confidence=0.9),
        verdict=Verdict(sku_id=sku, attribute=attr, verdict=verdict),
        decision=Decision(sku_id=sku, attribute=attr, action=action, reason="test"),
    )


def test_deployment_metrics_by_hand(tmp_path: Path) -> None:
    store = CatalogStore(f"sqlite:///{tmp_path / 'e.db'}")
    a = SKU(sku_id="A", title="a", category="misc", specs={"Traffic": "3"})
    b = SKU(sku_id="B", title="b", category="misc", specs={"traffic": "1"})
    run = store.start_run({"scout": "x"}, name="x")
    store.record_batch(
        run,
        [
            # A: color PASS + WRITE (correct), size UNVERIFIED + WRITE (wrong)
            SkuOutcome(
                sku=a,
                results=[
                    _r("A", "color", "red", VerdictLabel.PASS, Action.WRITE),
                    _r("A", "size", "L", VerdictLabel.UNVERIFIED, Action.WRITE),
                ],
                llm_calls=2,
            ),
            # B: color not found (BLOCK), size UNCERTAIN + REVIEW
            SkuOutcome(
                sku=b,
                results=[
                    _r("B", "color", None, VerdictLabel.PASS, Action.BLOCK),
                    _r("B", "size", "S", VerdictLabel.UNCERTAIN, Action.REVIEW),
                ],
                llm_calls=2,
            ),
        ],
        usage=Usage(calls=4, cost_usd=0.02),
    )
    cheap = store.start_run({"scout": "y"}, name="y")
    store.record_batch(
        cheap,
        [SkuOutcome(sku=a, results=[_r("A", "color", "red", VerdictLabel.PASS, Action.WRITE)], llm_calls=1)],
        usage=Usage(calls=1, cost_usd=0.005),
    )
    gold = [
        GoldLabel(sku_id="A", attribute="color", value="red"),
        GoldLabel(sku_id="A", attribute="size", value="M"),
        GoldLabel(sku_id="B", attribute="size", value="S"),
    ]
    report = evaluate_store(store, gold)
    x, y = report.runs
    # 4 pairs; extracted: A.color, A.size, B.size (3/4); WRITE: A.color, A.size (2/4)
    # weights: A=3 (two pairs), B=1 (two pairs) → Σw = 8; extracted 3+3+1 = 7; WRITE 3+3 = 6
    assert x.exposure_weighted == {
        "coverage": 7 / 8,
        "publish_coverage": 6 / 8,
        "weight_total": 8.0,
        "skus_weighted": 2,
    }
    assert x.cost["calls_per_sku"] == 4 / 2 and x.cost["calls_per_write"] == 4 / 2
    assert x.cost["cost_per_write"] == 0.02 / 2
    # four-way: supported = PASS + UNVERIFIED = 2 of 3 extracted; WRITE precision = 1 correct of 2
    # binary: supported = PASS only = 1/3; only PASS published: 1 write (A.color, correct)
    assert x.ablation["four_way"] == {
        "judge_supported_rate": 2 / 3,
        "publish_coverage": 2 / 4,
        "write_precision": 0.5,
        "writes": 2,
    }
    assert x.ablation["binary"] == {
        "judge_supported_rate": 1 / 3,
        "publish_coverage": 1 / 4,
        "write_precision": 1.0,
        "writes": 1,
    }
    # side by side, cost relative to the first run: 0.005 / 0.02 = 0.25; run y holds SKU A only
    assert [row["relative_cost"] for row in report.comparison] == [1.0, 0.25]
    # run y holds SKU A only: gold A.color and A.size, and only A.color has a result → coverage 1/2
    assert y.skus == 1 and report.comparison[1]["coverage"] == 1 / 2
    html = report.to_html()
    assert "<td>x</td>" in html and "<td>0.2500</td>" in html
