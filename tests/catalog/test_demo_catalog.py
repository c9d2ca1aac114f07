"""Demo catalog: deterministic files, valid identifiers, gold on template attributes, offline demo run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from groundtrace.catalog.demo_catalog import GOLD, PAGES, SKUS, run_catalog_demo, write_demo_catalog
from groundtrace.catalog.identity import valid_gtin
from groundtrace.catalog.sources import LocalCorpusSearch, classify_url
from groundtrace.catalog.templates import load_templates


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_files_are_deterministic(tmp_path: Path) -> None:
    a = write_demo_catalog(tmp_path / "a")
    b = write_demo_catalog(tmp_path / "b")
    assert _tree(a.root) == _tree(b.root) and len(_tree(a.root)) == 3 + len(PAGES)


def test_catalog_shape_and_gold() -> None:
    templates = load_templates()
    assert len(SKUS) == 20 and len({s.sku_id for s in SKUS}) == 20
    assert Counter(s.category for s in SKUS) == {"grocery": 7, "alcohol": 4, "electronics": 5, "home": 4}
    assert all(s.gtin and valid_gtin(s.gtin) for s in SKUS)
    by_id = {s.sku_id: s for s in SKUS}
    for label in GOLD:
        template = templates.for_category(by_id[label.sku_id].category)
        assert template is not None
        spec = template.attribute(label.attribute)  # raises if the gold names an unknown attribute
        if spec.multi_valued and label.value is not None:
            assert isinstance(label.value, list)
    assert sum(label.not_applicable for label in GOLD) >= 10
    assert len({(g.sku_id, g.attribute) for g in GOLD}) == len(GOLD)


def test_corpus_has_the_required_page_kinds(tmp_path: Path) -> None:
    paths = write_demo_catalog(tmp_path)
    search = LocalCorpusSearch(paths.corpus)
    urls = [u for u, _, _ in search.pages]
    types = {u: classify_url(u, "Acme") for u in urls}
    assert types["https://www.acme.com/products/crunch-granola-vanilla-16-oz"] == "official_web"
    assert types["https://granolafan.blogspot.com/2024/acme-vanilla-review"] is None  # blog: never evidence
    texts = {d.source_ref: d.text for d in search._docs}
    assert any("12 oz" in t for t in texts.values()) and any("Pack of 6" in t for t in texts.values())
    assert sum("Ignore previous instructions" in t for t in texts.values()) == 1


@pytest.mark.slow
def test_run_catalog_demo(tmp_path: Path) -> None:
    result = run_catalog_demo(tmp_path / "demo", workers=2)
    results = Path(result["paths"]["results"])
    rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert result["summary"]["skus_processed"] == 20 and result["summary"]["results_total"] == len(rows)
    assert Path(result["paths"]["evaluation"]).exists()
    store_rows = [json.loads(line) for line in Path(result["paths"]["store_export"]).read_text().splitlines()]
    assert Path(result["paths"]["store"]).exists() and {r["run"] for r in store_rows} == {"demo"}
    by_pair = {(r["sku_id"], r["attribute"]): r["decision"]["action"] for r in rows}
    assert {(r["sku_id"], r["attribute"]): r["action"] for r in store_rows} == by_pair  # same decisions
    metrics = result["metrics"]
    assert 0.0 <= metrics["coverage"] <= 1.0 and metrics["accuracy"] is not None
    used = {ev["source_ref"] for r in rows for ev in r["candidate"]["evidence"]}
    assert not any(
        "blogspot" in u or "walmart" in u or "target.com" in u for u in used
    )  # blog, 12 oz, 6-pack
    dietary = {r["sku_id"]: r for r in rows if r["attribute"] == "dietary_labels"}
    assert dietary["G01"]["decision"]["action"] != "WRITE" and dietary["G07"]["decision"]["action"] != "WRITE"
    # every gold pair names a template attribute, so the evaluated pairs are exactly the result rows
    extracted = sum(r["candidate"]["status"] == "extracted" for r in rows)
    assert metrics["coverage"] == extracted / len(rows)
