"""The learned engine: tokens/BIO round trip, threshold picking, a tiny model trained on fixture SKUs,
model file versioning, and `catalog train` → `catalog enrich --engine learned --model` end to end."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.catalog.model import SKU, GoldLabel
from groundtrace.catalog.pipeline import EnrichConfig, build_components
from groundtrace.catalog.scout.learned.engine import LearnedEngine
from groundtrace.catalog.scout.learned.model import ModelFileError, load_model
from groundtrace.catalog.scout.learned.tokens import bio_labels, decode, find_value, tokenize
from groundtrace.catalog.scout.learned.train import NEVER, pick_threshold, train_model
from groundtrace.cli import app

BRANDS = [
    "Lavazza",
    "Peet's",
    "Dunkin",
    "Folgers",
    "Mt. Hagen",
    "Kicking Horse",
    "Starbucks",
    "Maxwell House",
]
ROASTS = ["Dark Roast", "Medium Roast", "Light Roast"]
FORMS = ["Ground", "Whole Bean", "K-Cup Pods"]


def _dataset(n: int, seed: int) -> tuple[list[SKU], list[GoldLabel]]:
    """Coffee titles "<brand> <roast> <form> Coffee, <n> oz" with brand/roast gold (a seeded RNG)."""
    rng = random.Random(seed)
    skus, gold = [], []
    for i in range(n):
        brand, roast, form = rng.choice(BRANDS), rng.choice(ROASTS), rng.choice(FORMS)
        title = f"{brand} {roast} {form} Coffee, {rng.choice([10, 12, 16, 32])} oz"
        sid = f"c{seed}-{i}"
        skus.append(SKU(sku_id=sid, title=title, category="Coffee"))
        gold += [
            GoldLabel(sku_id=sid, attribute="brand", value=brand),
            GoldLabel(sku_id=sid, attribute="roast_type", value=roast),
        ]
    return skus, gold


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    skus, gold = _dataset(60, seed=1)
    model = train_model(skus, gold, holdout=0.25, target=0.9, seed=3)
    path = tmp_path_factory.mktemp("learned") / "coffee.model.json"
    model.save(path)
    return path


@given(st.lists(st.from_regex(r"[A-Za-z0-9]{1,6}", fullmatch=True), min_size=3, max_size=12), st.data())
def test_bio_labels_decode_back_to_their_spans(words: list[str], data: st.DataObject) -> None:
    tokens = tokenize(" ".join(words))
    first = data.draw(st.integers(0, len(tokens) - 1))
    end = data.draw(st.integers(first + 1, len(tokens)))
    assert decode(bio_labels(tokens, {"brand": (first, end)})) == [("brand", first, end)]


def test_find_value_is_whole_token_and_separator_flexible() -> None:
    tokens = tokenize("Kicking Horse Coffee, 6-oz Whole-Bean")
    assert find_value(tokens, "kicking horse") == (0, 2)
    assert find_value(tokens, "Whole Bean") == (7, 10)
    assert find_value(tokens, "Hors") is None


def test_pick_threshold_is_the_lowest_confidence_reaching_the_target() -> None:
    scored = [(0.99, True), (0.9, True), (0.8, True), (0.7, False), (0.6, True), (0.5, False)]
    assert pick_threshold(scored, 0.75) == 0.6  # 4 right of 5 at >= 0.6
    assert pick_threshold(scored, 1.0) == 0.8
    assert pick_threshold([(0.9, False)], 0.95) == NEVER
    assert pick_threshold([(0.9, True), (0.9, False)], 0.95) == NEVER  # ties stay together


def test_trained_model_is_calibrated_and_round_trips(model_file: Path) -> None:
    model = load_model(model_file)
    assert {"brand", "roast_type"} <= set(model.attributes)
    assert model.trained_on["heldout"] == 15 and model.target_precision == 0.9
    assert all(0.0 <= row["precision"] <= 1.0 for row in model.calibration.values())
    assert model.lexicons["coffee"]["brand"]["lavazza"].gold > 0


def test_model_file_errors_are_one_line_with_the_file(model_file: Path, tmp_path: Path) -> None:
    data = json.loads(model_file.read_text())
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({**data, "version": 99}))
    with pytest.raises(ModelFileError, match=r"m\.json:1: model version 99"):
        load_model(bad)
    bad.write_text("{not json")
    with pytest.raises(ModelFileError, match=r"m\.json:1: not a learned-engine model"):
        load_model(bad)


def test_learned_findings_carry_verbatim_quotes_and_respect_theta(model_file: Path, tmp_path: Path) -> None:
    from groundtrace.catalog.model import AttributeSpec
    from groundtrace.catalog.sources.catalog_record import catalog_documents

    loose = load_model(model_file).model_copy(update={"thresholds": {"brand": 0.5, "roast_type": 0.5}})
    loose.save(tmp_path / "loose.json")
    comp = build_components(
        EnrichConfig(engine="learned", options={"learned": {"model": str(tmp_path / "loose.json")}})
    )
    engine = comp.scout.engine
    assert engine.name == "learned"
    sku = SKU(sku_id="new", title="Mt. Hagen Dark Roast Ground Coffee, 12 oz", category="Coffee")
    specs = [AttributeSpec(slug="brand", name="Brand"), AttributeSpec(slug="roast_type", name="Roast type")]
    out = engine.extract(sku, specs, catalog_documents(sku))
    values = {(f.attribute, f.value) for f in out.findings}
    assert ("brand", "Mt. Hagen") in values and ("roast_type", "Dark Roast") in values
    for f in out.findings:
        s, e = f.evidence.span
        assert sku.title[s:e] == f.evidence.quote and f.value in f.evidence.quote
        assert f.confidence is not None and f.confidence >= 0.5
    strict = loose.model_copy(update={"thresholds": {"brand": 1.01, "roast_type": 1.01}})
    assert LearnedEngine(strict).extract(sku, specs, catalog_documents(sku)).findings == []


def test_cli_train_then_enrich_with_the_learned_engine(tmp_path: Path) -> None:
    runner = CliRunner()
    skus, gold = _dataset(40, seed=5)
    (tmp_path / "skus.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in skus))
    (tmp_path / "gold.jsonl").write_text("".join(g.model_dump_json() + "\n" for g in gold))
    tpl = tmp_path / "tpl"
    r = runner.invoke(
        app,
        ["catalog", "templates", "from-gold", "--skus", str(tmp_path / "skus.jsonl"), "--gold",
         str(tmp_path / "gold.jsonl"), "--out", str(tpl)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    model = tmp_path / "m.json"
    r = runner.invoke(
        app,
        ["catalog", "train", "--skus", str(tmp_path / "skus.jsonl"), "--gold", str(tmp_path / "gold.jsonl"),
         "--out", str(model), "--target-precision", "0.9"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "attributes tagged" in r.output and model.is_file()
    new, _ = _dataset(5, seed=9)
    (tmp_path / "new.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in new))
    out = tmp_path / "res.jsonl"
    r = runner.invoke(
        app,
        ["catalog", "enrich", str(tmp_path / "new.jsonl"), "--out", str(out), "--templates", str(tpl),
         "--engine", "learned", "--model", str(model)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    brands = {row["sku_id"]: row["candidate"]["value"] for row in rows if row["attribute"] == "brand"}
    truth = {s.sku_id: next(b for b in BRANDS if s.title.startswith(b)) for s in new}
    assert sum(brands.get(k) == v for k, v in truth.items()) >= 4
    r = runner.invoke(
        app, ["catalog", "enrich", str(tmp_path / "new.jsonl"), "--out", str(out), "--engine", "learned"]
    )
    assert r.exit_code == 2 and "--model" in r.output
