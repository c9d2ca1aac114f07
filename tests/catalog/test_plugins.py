"""A third-party evidence source, installed from a tiny package (a ``*.dist-info`` with ``entry_points.txt``)
and used by ``catalog enrich --source NAME`` and by ``EnrichConfig(sources=[...])`` — built through the
registry, never named in groundtrace's code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.catalog.model import SKU, AttributeResult
from groundtrace.catalog.sources.base import EVIDENCE_SOURCES
from groundtrace.cli import app
from tests.plugin_package import plugin_package

runner = CliRunner()

SOURCE_PLUGIN = """
    from groundtrace.catalog.model import Document
    from groundtrace.catalog.sources.base import EVIDENCE_SOURCES, EvidenceSource


    class ApiCatalog(EvidenceSource):
        \"\"\"A partner product API (here: a fixed table) keyed by SKU id.\"\"\"

        name = "api-catalog"

        def __init__(self, *, unit: str = "oz") -> None:
            self.unit = unit

        def documents(self, sku):
            if sku.sku_id != "S1":
                return []
            text = f"Net Wt: 12 {self.unit}"
            return [Document(source="syndicated", source_type="hq", source_ref="api-catalog:S1", text=text)]


    def register():
        EVIDENCE_SOURCES.add("api-catalog", ApiCatalog, description="Partner product API.")
"""


def _skus(tmp_path: Path) -> Path:
    path = tmp_path / "skus.jsonl"
    records = [
        SKU(sku_id="S1", title="Morning Roast Ground Coffee", category="grocery"),
        SKU(sku_id="S2", title="Evening Herbal Tea", category="grocery"),
    ]
    path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return path


def _net_content(out: Path) -> dict[str, AttributeResult]:
    rows = [AttributeResult.model_validate_json(line) for line in out.read_text().splitlines()]
    return {r.sku_id: r for r in rows if r.attribute == "net_content"}


def test_plugin_source_is_used_by_catalog_enrich(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skus = _skus(tmp_path)
    with plugin_package(
        tmp_path / "site", monkeypatch, "gt_plugin_source", SOURCE_PLUGIN, [EVIDENCE_SOURCES]
    ):
        out = tmp_path / "with.jsonl"
        result = runner.invoke(
            app, ["catalog", "enrich", str(skus), "--out", str(out), "--source", "api-catalog"]
        )
        assert result.exit_code == 0, result.output
        typo = runner.invoke(
            app,
            ["catalog", "enrich", str(skus), "--out", str(tmp_path / "t.jsonl")]
            + ["--source", "api-catalgo"],
        )
    assert typo.exit_code == 2 and "Did you mean 'api-catalog'" in typo.output
    with_source = _net_content(out)
    candidate = with_source["S1"].candidate
    assert candidate.value == "12 oz" and candidate.evidence[0].source_ref == "api-catalog:S1"
    assert candidate.evidence[0].quote == "Net Wt: 12 oz"
    assert with_source["S2"].candidate.value is None  # the source has nothing for S2
    without = tmp_path / "without.jsonl"
    assert runner.invoke(app, ["catalog", "enrich", str(skus), "--out", str(without)]).exit_code == 0
    assert _net_content(without)["S1"].candidate.value is None


def test_plugin_source_options_through_the_python_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groundtrace import catalog

    skus = [SKU(sku_id="S1", title="Morning Roast Ground Coffee", category="grocery")]
    with plugin_package(
        tmp_path / "site", monkeypatch, "gt_plugin_source", SOURCE_PLUGIN, [EVIDENCE_SOURCES]
    ):
        assert "api-catalog" in catalog.EVIDENCE_SOURCES
        config = catalog.EnrichConfig(
            sources=["catalog", "api-catalog"], options={"api-catalog": {"unit": "g"}}
        )
        results = catalog.enrich_list(skus, config)
    net = next(r for r in results if r.attribute == "net_content")
    assert net.candidate.value == "12 g" and json.loads(net.model_dump_json())["sku_id"] == "S1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge", "rulez"], "unknown judge 'rulez'. Did you mean 'rule'?"),
        (["--source", "syndicated"], "evidence source 'syndicated' needs a feed file (--feed FILE)"),
        (["--judge", "llm"], "--judge llm needs --llm SPEC"),
        (["--extractor", "llm"], "extraction engine 'llm' needs --llm SPEC"),
        (["--search", "nope:x"], "unknown search provider 'nope'."),
    ],
)
def test_component_names_are_checked_by_the_registries(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["catalog", "enrich", str(_skus(tmp_path)), "--out", str(out), *args])
    assert result.exit_code == 2 and message in result.output and not out.exists()


def test_sources_are_built_once_per_registered_name(tmp_path: Path) -> None:
    from groundtrace.catalog.demo_catalog import write_demo_catalog
    from groundtrace.catalog.pipeline import EnrichConfig, build_components

    paths = write_demo_catalog(tmp_path / "demo")
    config = EnrichConfig(
        sources=["catalog", "feed"], feed=paths.feed, options={"syndicated": {"key": "gtin"}}
    )
    assert config.source_names() == ["catalog", "feed", "syndicated"]  # an alias and the implied name
    sources = build_components(config).scout.sources
    assert [type(s).__name__ for s in sources] == ["CatalogRecordSource", "SyndicatedFeedSource"]
    assert sources[1].key == "gtin"  # options found under the canonical name
