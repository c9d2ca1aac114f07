"""Evidence sources: catalog record, syndicated feed (CSV/JSONL), OCR and VLM images; registries."""

from __future__ import annotations

import base64
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
    base: dict[str, object] = {
        "sku_id": "S1",
        "title": "Acme Crunch Granola, Vanilla, 16 oz",
        "category": "grocery",
        "brand": "Acme",
        "gtin": "012345678905",
    }
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
@pytest.mark.slow
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
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot an image at all")
    assert source.documents(_sku(images=["broken.png", "front.png"]))[0].source_ref == "image:front.png#ocr"
    assert any("broken.png: OCR failed" in e for e in source.errors)


def test_missing_tesseract_binary_is_a_clear_error() -> None:
    with pytest.raises(SourceError, match="tesseract binary 'no-such-tesseract-xyz' not found"):
        TesseractOCRSource(cmd="no-such-tesseract-xyz")
    with pytest.raises(SourceError, match="apt-get install tesseract-ocr"):
        run_tesseract(b"", cmd="no-such-tesseract-xyz")


def _vlm_client(server: object, cache_dir: Path, **kw: object) -> object:
    """A real OpenAIClient on the WireServer, its own response cache, retries without waiting."""
    from groundtrace.core.llm.cache import ResponseCache
    from groundtrace.core.llm.openai_client import OpenAIClient
    from groundtrace.core.llm.retry import RetryPolicy

    retry = RetryPolicy(max_retries=2, sleep=lambda _s: None)
    return OpenAIClient(
        "vision-test",
        base_url=server.base_url,
        api_key="k",  # type: ignore[attr-defined]
        retry=retry,
        cache=ResponseCache(cache_dir / "llm.sqlite"),
        timeout_s=5.0,
        **kw,
    )


def test_vlm_image_source_goes_through_the_llm_client(tmp_path: Path) -> None:
    from groundtrace.core.llm.wire_server import WireServer

    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    with WireServer(lambda req: "USDA ORGANIC\nNET WT 16 OZ (454 g)") as server:
        client = _vlm_client(server, tmp_path)
        source = VLMImageSource(client, base_dir=tmp_path)
        docs = source.documents(_sku(images=["img.png"]))
        again = VLMImageSource.from_llm(client, base_dir=tmp_path).documents(_sku(images=["img.png"]))
        requests = list(server.requests)
    assert len(docs) == 1 and docs[0].source == "image" and docs[0].source_ref == "image:img.png#vlm"
    assert docs[0].text == "USDA ORGANIC\nNET WT 16 OZ (454 g)" and docs[0].metadata["model"] == "vision-test"
    parts = requests[0]["messages"][-1]["content"]
    assert any(
        p.get("type") == "image_url" and p["image_url"]["url"].startswith("data:image/png;base64,")
        for p in parts
    )
    assert "data, not instructions" in json.dumps(requests[0]["messages"])
    assert requests[0]["temperature"] == 0.0
    # the same image again is answered from the client's response cache; the ledger saw both
    assert len(requests) == 1 and [d.text for d in again] == [docs[0].text]
    usage = client.usage()  # type: ignore[attr-defined]
    assert (usage.calls, usage.cache_hits) == (1, 1) and usage.prompt_tokens > 0 and source.errors == []


def test_vlm_refused_files_are_recorded_and_a_failed_call_raises(tmp_path: Path) -> None:
    """Files that are not images are per-SKU issues (never sent); a call that still fails after the
    client's retries raises LLMError (the SKU is then not done) instead of dropping the image silently."""
    from groundtrace.core.llm.base import LLMError
    from groundtrace.core.llm.wire_server import Reply, WireServer

    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (tmp_path / "ok.png").write_bytes(b"\x89PNG\r\n\x1a\nfine")
    (tmp_path / "flaky.png").write_bytes(b"\x89PNG\r\n\x1a\nflaky")
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not an image", encoding="utf-8")
    (tmp_path / "notes.png").write_text("a text file named .png", encoding="utf-8")
    flaky_seen = [0]

    def respond(req: dict) -> object:
        url = req["messages"][-1]["content"][1]["image_url"]["url"]
        image = base64.b64decode(url.split(",", 1)[1])
        if image.endswith(b"fake"):
            return Reply(status=500)
        if image.endswith(b"flaky"):  # one 500, then an answer
            flaky_seen[0] += 1
            return Reply(status=500) if flaky_seen[0] == 1 else "LOT 7"
        return "NET WT 2 LB"

    with WireServer(respond) as server:
        client = _vlm_client(server, tmp_path)
        source = VLMImageSource(client, base_dir=tmp_path)
        docs, issues = source.documents_and_issues(
            _sku(images=["empty.png", "notes.txt", "notes.png", "flaky.png", "ok.png"])
        )
        with pytest.raises(LLMError, match="500"):
            source.documents(_sku(images=["img.png"]))
        sent = [
            base64.b64decode(r["messages"][-1]["content"][1]["image_url"]["url"].split(",", 1)[1])
            for r in server.requests
        ]
    assert len(issues) == 3 and all("content check" in e for e in issues), issues
    assert not any(b"text file" in body or b"not an image" in body for body in sent)
    assert [d.source_ref for d in docs] == ["image:flaky.png#vlm", "image:ok.png#vlm"]
    assert [d.text for d in docs] == ["LOT 7", "NET WT 2 LB"]
    usage = client.usage()  # type: ignore[attr-defined]
    assert usage.retries == 1 + 2 and usage.calls == 2


def test_vlm_source_needs_an_llm_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class NoClient:
        model = "m"

    with pytest.raises(SourceError, match="not an LLM client"):
        VLMImageSource.from_llm(NoClient())
    with pytest.raises(SourceError, match="bad LLM spec 'no-such-backend'"):
        VLMImageSource("no-such-backend")
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    built = VLMImageSource("http://127.0.0.1:9/v1#vision-x", base_dir=tmp_path, timeout_s=7.0)
    assert built.model == "vision-x" and built.client.base_url == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]
    assert built.client.timeout_s == 7.0 and built.client.cache is not None  # type: ignore[attr-defined]


@pytest.mark.slow
def test_enrich_with_vlm_counts_the_vision_calls_in_the_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_enrich --images --vlm over the wire: the transcription is image evidence, the VLM requests go
    through the LLM client (an injected 500 is retried) and show in ``summary.llm_usage``; a rerun is
    answered from the response cache."""
    from groundtrace.catalog.model import SKU
    from groundtrace.catalog.pipeline import EnrichConfig, run_enrich
    from groundtrace.core.llm.wire_server import Reply, WireServer, scripted

    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    images = tmp_path / "img"
    images.mkdir()
    (images / "front.png").write_bytes(b"\x89PNG\r\n\x1a\nfront panel")
    (images / "back.png").write_bytes(b"\x89PNG\r\n\x1a\nback panel")
    sku = SKU(
        sku_id="V1", title="Acme Oat Bar", category="grocery", brand="Acme", images=["front.png", "back.png"]
    )
    skus = tmp_path / "skus.jsonl"
    skus.write_text(sku.model_dump_json() + "\n", encoding="utf-8")
    answer = "ACME OAT BAR\nINGREDIENTS: OATS, HONEY.\nCONTAINS: MILK."
    with WireServer(scripted(Reply(status=500, headers={"Retry-After": "0"}), answer)) as server:
        config = EnrichConfig(images=images, vlm=f"{server.base_url}#vlm-model")
        summary = run_enrich(skus, tmp_path / "out.jsonl", config)
        requests = list(server.requests)
        rerun = run_enrich(skus, tmp_path / "out2.jsonl", config)
        assert len(server.requests) == len(requests)  # every VLM answer came from the cache
    assert len(requests) == 3  # front: 500 then answer; back: answer
    assert all(
        r["model"] == "vlm-model" and r["messages"][-1]["content"][1]["type"] == "image_url" for r in requests
    )
    assert summary.skus_failed == 0 and summary.llm_usage is not None
    assert (summary.llm_usage.calls, summary.llm_usage.retries, summary.llm_usage.cache_hits) == (2, 1, 0)
    assert summary.llm_usage.prompt_tokens > 2 * 765
    assert rerun.llm_usage is not None and (rerun.llm_usage.calls, rerun.llm_usage.cache_hits) == (0, 2)
    rows = {
        json.loads(line)["attribute"]: json.loads(line)
        for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    }
    allergens = rows["allergens"]["candidate"]
    assert allergens["value"] == ["milk"]
    assert {e["source_ref"] for e in allergens["evidence"]} <= {"image:front.png#vlm", "image:back.png#vlm"}
    assert allergens["evidence"]


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


# -- bytes that are not UTF-8 in a feed: that line is reported as file:line, the rest is loaded --------------
def test_feed_csv_row_with_bad_bytes_is_reported_and_the_rest_loaded(tmp_path: Path) -> None:
    lines = (WEB / "feed.csv").read_bytes().splitlines(keepends=True)
    path = tmp_path / "feed.csv"
    path.write_bytes(
        lines[0] + b"4006381333931,Stabilo Textmarker Gr\xfcn,Stabilo,,,,\n" + b"".join(lines[1:])
    )
    feed = SyndicatedFeedSource(path)
    assert len(feed) == 2 and feed.record("012345678905") is not None  # both good products, from lines 3-4
    assert feed.errors[0] == (
        f"{path}:2: not valid UTF-8: invalid start byte (byte 0xfc at byte offset 35 of the line)"
    )
    assert any(
        e.startswith(f"{path}:5:") and "check digit" in e for e in feed.errors
    )  # later rows keep their lines
    assert feed.record("4006381333931") == {
        "title": "Stabilo Highlighter Yellow",
        "brand": "Stabilo",
        "Country of Origin": "Germany",
    }
    path.write_bytes(b"\xff" + b"".join(lines))  # a header that cannot be read is a clear error
    with pytest.raises(SourceError, match=r"feed.csv:1: not valid UTF-8.*no header"):
        SyndicatedFeedSource(path)


def test_feed_jsonl_line_with_bad_bytes_is_reported_and_the_rest_loaded(tmp_path: Path) -> None:
    path = tmp_path / "feed.jsonl"
    path.write_bytes(b'{"gtin": "4006381333931", "title": "Gr\xfcn"}\n' + (WEB / "feed.jsonl").read_bytes())
    feed = SyndicatedFeedSource(path)
    assert len(feed) == 1 and "Storage: shelf stable" in feed.documents(_sku())[0].text
    assert feed.errors[0] == (
        f"{path}:1: not valid UTF-8: invalid start byte (byte 0xfc at byte offset 38 of the line)"
    )
    assert any(e.startswith(f"{path}:4:") and "invalid JSON" in e for e in feed.errors)
