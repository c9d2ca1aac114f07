"""The dataset card: YAML front matter with configs, features generated from the JSON Schema, licence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from groundtrace.crs.dataset.card import hf_features, write_build_card
from groundtrace.crs.dataset.files import dialogue_json_schema
from groundtrace.crs.kb.knowledge_base import KnowledgeBase


def front_matter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_features_follow_the_schema_and_refuse_columns_without_one_type() -> None:
    features = {f["name"]: f for f in hf_features(dialogue_json_schema())}
    assert features["seed"] == {"name": "seed", "dtype": "int64"}  # int | None -> int64
    assert features["candidates"] == {"name": "candidates", "list": "string"}
    assert [f["name"] for f in features["review_refs"]["list"]] == ["tag", "review_id", "poi_id"]
    turn = {f["name"]: f for f in features["turns"]["list"]}
    value = {f["name"]: f for f in turn["constraints_added"]["list"]}["value"]
    assert value == {"name": "value", "dtype": "string"}
    assert "struct" in turn["gold"]

    class FreeKeys(BaseModel):
        scores: dict[str, float]

    class Mixed(BaseModel):
        value: str | int

    with pytest.raises(ValueError, match="object without fixed properties"):
        hf_features(FreeKeys.model_json_schema())
    with pytest.raises(ValueError, match="union of 2 types"):
        hf_features(Mixed.model_json_schema())


@pytest.mark.slow
def test_the_build_card_names_its_configs_and_licence(demo_release: tuple[Path, Path, Path]) -> None:
    built, release, _ = demo_release
    meta = front_matter(built / "README.md")
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert list(configs) == ["default", "knowledge_base", "reviews"] and configs["default"]["default"] is True
    assert [f["path"] for f in configs["default"]["data_files"]] == [
        "train.jsonl",
        "validation.jsonl",
        "test.jsonl",
    ]
    assert configs["knowledge_base"]["data_files"] == [{"split": "pois", "path": "knowledge_base/pois.jsonl"}]
    assert [i["config_name"] for i in meta["dataset_info"]] == list(configs)
    assert meta["license"] == "cc-by-4.0"  # the demo city is ours
    rel = front_matter(release / "README.md")
    assert [c["config_name"] for c in rel["configs"]] == ["default", "knowledge_base", "review_index"]
    assert rel["configs"][0]["data_files"][0] == {"split": "train", "path": "data/train.jsonl.gz"}
    index = {f["name"] for f in rel["dataset_info"][2]["features"]}
    assert "text" not in index and {"text_chars", "text_sha256"} <= index
    spans = next(f for f in rel["dataset_info"][0]["features"] if f["name"] == "turns")["list"]
    edits = next(f for f in spans if f["name"] == "quote_spans")["list"]
    assert {"name": "added", "dtype": "bool"} in edits
    # each card says how groundtrace reads its folder, and it does: the built one as is, the release
    # only through import-release (crs validate / crs run find no split file there)
    assert "reads the folder as is: `groundtrace crs validate`" in (built / "README.md").read_text()
    body = (release / "README.md").read_text(encoding="utf-8")
    assert "as is" not in body and "reads this layout through `groundtrace crs import-release`" in body
    from typer.testing import CliRunner

    from groundtrace.cli import app

    runner = CliRunner()
    assert runner.invoke(app, ["crs", "validate", str(built)]).exit_code == 0
    assert runner.invoke(app, ["crs", "validate", str(release)]).exit_code == 2


@pytest.mark.slow
def test_a_yelp_card_splits_the_licence(tmp_path: Path, demo_release: tuple[Path, Path, Path]) -> None:
    from groundtrace.crs.kb.store import load_kb

    built, _, _ = demo_release
    kb = load_kb(built.parent / "kb.sqlite")
    yelp = KnowledgeBase(kb.pois.values(), kb.reviews.values(), name="yelp-tucson")
    for name in ("train.jsonl", "test.jsonl"):
        (tmp_path / name).write_bytes((built / name).read_bytes())
    card = write_build_card(tmp_path, yelp, {"schema_version": "2.0", "kb_name": yelp.name, "kb_hash": "abc"})
    meta = front_matter(card)
    assert meta["license"] == "other" and "Yelp" in meta["license_name"]
    assert [f["split"] for f in meta["configs"][0]["data_files"]] == ["train", "test"]
    body = card.read_text(encoding="utf-8")
    assert "contains Yelp review text" in body and "must not be redistributed" in body
    assert "| dialogues, personas, constraints, gold labels, pools, spans (ours) | cc-by-4.0 |" in body


@pytest.mark.slow
def test_the_redacted_export_card_names_its_splits_and_how_to_hydrate(
    demo_release: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """`crs export` (its default, redacted format) writes a card too: splits as the default config, the
    features, the licence and the hydrate command; no KB config (the KB is not part of that layout)."""
    from typer.testing import CliRunner

    from groundtrace.cli import app

    built, _, _ = demo_release
    out = tmp_path / "red"
    result = CliRunner().invoke(
        app,
        ["crs", "export", str(built), "--redact", "--kb", str(built.parent / "kb.sqlite"), "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    meta = front_matter(out / "README.md")
    assert [c["config_name"] for c in meta["configs"]] == ["default"]
    assert [f["path"] for f in meta["configs"][0]["data_files"]] == [
        "train.jsonl",
        "validation.jsonl",
        "test.jsonl",
    ]
    assert meta["license"] == "cc-by-4.0" and meta["dataset_info"][0]["config_name"] == "default"
    assert "groundtrace crs hydrate THIS_FOLDER --yelp-reviews" in (out / "README.md").read_text()
