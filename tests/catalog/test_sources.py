"""Evidence sources: catalog record, syndicated feed (CSV/JSONL), OCR and VLM images; registries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from groundtrace.catalog.model import SKU
from groundtrace.catalog.sources import (
    EVIDENCE_SOURCES,
    CatalogRecordSource,
    EvidenceSource,
    SourceError,
    SyndicatedFeedSource,
    TesseractOCRSource,
    VLMImageSource,
)
from groundtrace.catalog.sources.image import run_tesseract
from tests.conftest import FIXTURES

WEB = FIXTURES / "catalog_web"


def _sku(**kw: object) -> SKU:
    base: dict[str, object] = {"sku_id": "S1", "title": "Acme Crunch Granola, Vanilla, 16 oz",
                               "category": "grocery", "brand": "Acme", "gtin": "012345678905"}
    base.update(kw)
    return SKU(**base)  # type: ignore[arg-type]


def test_registry_lists_builtins_and_suggests() -> None:
    assert {"catalog", "syndicated", "image_ocr", "image_vlm"} <= set(EVIDENCE_SOURCES.names())
    assert EVIDENCE_SOURCES.get("feed") is SyndicatedFeedSource
    with pytest.raises(KeyError, match="catalog"):
        EVIDENCE_SOURCES.get("catalgo")


def test_catalog_record_one_document_per_field() -> None:
    sku = _sku(description="Crunchy oats.", specs={"Net Wt": "16 oz", "Empty": " "})
    docs = CatalogRecordSource().documents(sku)
    refs = [d.source_ref for d in docs]
    assert refs == ["catalog:title", "catalog:description", "catalog:brand", "catalog:spec:Net Wt"]
    spec = docs[-1]
    assert spec.text == "Net Wt: 16 oz" and spec.source == "catalog" and spec.source_type == "catalog"
    assert all(d.metadata["sku_id"] == "S1" for d in docs)


def test_feed_csv_keyed_by_upc_matches_gtin14_sku_and_reports_bad_rows() -> None:
    feed = SyndicatedFeedSource(WEB / "feed.csv")
    assert len(feed) == 2
    # row 4: broken check digit, row 5: no key — both named with file:line, rest loaded
    assert any("feed.csv:4:" in e and "check digit" in e for e in feed.errors)
    assert any("feed.csv:5:" in e and "no GTIN" in e for e in feed.errors)
    docs = feed.documents(_sku(gtin="00012345678905"))  # GTIN-14 form of the same UPC-A
    assert len(docs) == 1
    doc = docs[0]
    assert (doc.source, doc.source_type) == ("syndicated", "hq")
    assert doc.source_ref == "feed.csv#00012345678905"
    assert "Allergens: milk, almonds" in doc.text.splitlines()
    assert "upc" not in doc.text.lower().split(":")[0]
    assert feed.documents(_sku(gtin="012345678912")) == []
    assert feed.documents(_sku(gtin=None)) == []


def test_feed_jsonl_bad_lines_skipped(tmp_path: Path) -> None:
    feed = SyndicatedFeedSource(WEB / "feed.jsonl")
    assert len(feed) == 1
    assert any("feed.jsonl:2:" in e for e in feed.errors)
    assert any("feed.jsonl:3:" in e and "invalid JSON" in e for e in feed.errors)
    doc = feed.documents(_sku())[0]
    assert "Storage: shelf stable" in doc.text


def test_feed_header_without_key_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "f.csv"
    bad.write_text("name,flavor\nx,y\n")
    with pytest.raises(SourceError, match=r"f.csv:1: header has no GTIN column"):
        SyndicatedFeedSource(bad)
    with pytest.raises(SourceError, match="not found"):
        SyndicatedFeedSource(tmp_path / "missing.csv")


def _label_png(path: Path, text: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(6, 1.6), dpi=150)
    fig.text(0.05, 0.35, text, fontsize=26, family="DejaVu Sans")
    fig.savefig(path, facecolor="white")
    plt.close(fig)
    return path


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract binary not installed")
def test_tesseract_ocr_reads_generated_label(tmp_path: Path) -> None:
    _label_png(tmp_path / "front.png", "USDA ORGANIC 16 OZ")
    source = TesseractOCRSource(base_dir=tmp_path)
    docs = source.documents(_sku(images=["front.png", "missing.png", "https://cdn.example.com/x.png"]))
    assert len(docs) == 1
    doc = docs[0]
    assert (doc.source, doc.source_type, doc.source_ref) == ("image", "image", "image:front.png#ocr")
    assert "ORGANIC" in doc.text.upper() and "16" in doc.text
    assert any("missing.png" in e and "not found" in e for e in source.errors)
    assert any("allow_http is off" in e for e in source.errors)
    (tmp_path / "broken.png").write_bytes(b"not an image at all")
    assert source.documents(_sku(images=["broken.png", "front.png"]))[0].source_ref == "image:front.png#ocr"
    assert any("broken.png: OCR failed" in e for e in source.errors)


def test_missing_tesseract_binary_is_a_clear_error() -> None:
    with pytest.raises(SourceError, match="tesseract binary 'no-such-tesseract-xyz' not found"):
        TesseractOCRSource(cmd="no-such-tesseract-xyz")
    with pytest.raises(SourceError, match="apt-get install tesseract-ocr"):
        run_tesseract(b"", cmd="no-such-tesseract-xyz")


def test_vlm_image_source_over_the_wire(tmp_path: Path) -> None:
    from groundtrace.core.llm.wire_server import Reply, WireServer

    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    with WireServer(lambda req: "USDA ORGANIC\nNET WT 16 OZ (454 g)") as server:
        docs = VLMImageSource(server.base_url, "vision-test", "k", base_dir=tmp_path).documents(_sku(images=["img.png"]))
        request = server.requests[0]
    assert len(docs) == 1 and docs[0].source == "image" and docs[0].source_ref == "image:img.png#vlm"
    assert docs[0].text == "USDA ORGANIC\nNET WT 16 OZ (454 g)" and docs[0].metadata["model"] == "vision-test"
    parts = request["messages"][-1]["content"]
    assert any(p.get("type") == "image_url" and p["image_url"]["url"].startswith("data:image/png;base64,")
               for p in parts)
    assert "data, not instructions" in json.dumps(request["messages"])
    (tmp_path / "ok.png").write_bytes(b"\x89PNG\r\n\x1a\nfine")
    with WireServer(lambda req: Reply(status=500) if "GgpmYWtl" in json.dumps(req) else "NET WT 2 LB") as server:
        source = VLMImageSource(server.base_url, "m", base_dir=tmp_path)
        docs = source.documents(_sku(images=["img.png", "ok.png"]))
    # the failing image is reported, the next one is still read
    assert any("VLM request for img.png failed" in e and "500" in e for e in source.errors)
    assert [d.source_ref for d in docs] == ["image:ok.png#vlm"] and docs[0].text == "NET WT 2 LB"


def test_vlm_from_llm_needs_an_endpoint() -> None:
    class NoEndpoint:
        model = "m"

    with pytest.raises(SourceError, match="base_url"):
        VLMImageSource.from_llm(NoEndpoint())


def test_custom_source_registers_through_the_registry() -> None:
    class Constant(EvidenceSource):
        name = "constant-test"

        def documents(self, sku: SKU) -> list:  # type: ignore[type-arg]
            return []

    from groundtrace.core.registry import Registry

    reg: Registry[type] = Registry("evidence source", base=EvidenceSource)
    reg.add("constant-test", Constant)
    assert reg.get("constant-test") is Constant
    with pytest.raises(TypeError):
        reg.add("bad", int)  # type: ignore[arg-type]


from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=25, deadline=None)
@given(st.lists(st.from_regex(r"[0-9]{11}", fullmatch=True), min_size=1, max_size=5, unique=True))
def test_feed_lookup_is_invariant_to_gtin_form(bodies: list[str]) -> None:
    import tempfile

    from groundtrace.catalog.identity import gtin_check_digit

    upcs = [b + gtin_check_digit(b) for b in bodies]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.csv"
        path.write_text("upc,title\n" + "".join(f"{u},item {i}\n" for i, u in enumerate(upcs)))
        feed = SyndicatedFeedSource(path)
        assert len(feed) == len(upcs) and feed.errors == []
        for i, upc in enumerate(upcs):
            for form in (upc, "0" + upc, "00" + upc, f"{upc[:6]}-{upc[6:]}"):
                docs = feed.documents(_sku(gtin=form))
                assert len(docs) == 1 and f"title: item {i}" in docs[0].text, form
