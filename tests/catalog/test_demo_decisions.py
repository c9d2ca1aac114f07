"""The demo catalog's decisions, pinned (issue 25: the pipeline split into stage modules changes no
result). ``tests/fixtures/catalog/demo_decisions.tsv`` holds, per (SKU, attribute) of the offline demo run
(built-in templates, offline extractor, rule judge, default policy, feed + page corpus): the value, the
candidate status, the verdict, the failure type and the action — written from the run at d4475f8, before the
split. A deliberate change to the demo's results regenerates it with
``python -m tests.catalog.test_demo_decisions`` (and says why in its commit)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.model import AttributeResult
from groundtrace.catalog.pipeline import EnrichConfig, run_enrich

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog" / "demo_decisions.tsv"
HEADER = "sku_id\tattribute\tvalue\tstatus\tverdict\tfailure_type\taction"


def _row(r: AttributeResult) -> str:
    failure = r.verdict.failure_type.value if r.verdict.failure_type else "-"
    value = json.dumps(r.candidate.value, ensure_ascii=False)
    cells = [r.sku_id, r.attribute, value, r.candidate.status.value, r.verdict.verdict.value, failure]
    return "\t".join([*cells, r.decision.action.value])


def demo_table(root: Path) -> list[str]:
    paths = write_demo_catalog(root)
    out = root / "results.jsonl"
    run_enrich(paths.skus, out, EnrichConfig(feed=paths.feed, corpus=paths.corpus))
    rows = [
        AttributeResult.model_validate_json(line) for line in out.read_text(encoding="utf-8").splitlines()
    ]
    return [HEADER, *(_row(r) for r in rows)]


def test_demo_decisions_are_pinned(tmp_path: Path) -> None:
    expected = FIXTURE.read_text(encoding="utf-8").splitlines()
    got = demo_table(tmp_path / "demo")
    changed = [f"- {a}\n+ {b}" for a, b in zip(expected, got, strict=False) if a != b]
    assert len(got) == len(expected) and not changed, "\n".join(changed[:10])


if __name__ == "__main__":  # regenerate the fixture
    with tempfile.TemporaryDirectory() as folder:
        FIXTURE.write_text("\n".join(demo_table(Path(folder) / "demo")) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}", file=sys.stderr)
