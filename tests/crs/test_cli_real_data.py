"""CLI items of issue 10: kb build from any file names, crs score default split, crs run on one JSONL file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.store import save_kb
from tests.conftest import FIXTURES

runner = CliRunner()
YELP = FIXTURES / "yelp"


def test_kb_build_accepts_any_file_names(tmp_path: Path) -> None:
    business = shutil.copy(YELP / "yelp_academic_dataset_business.json", tmp_path / "biz.jsonl")
    reviews = shutil.copy(YELP / "yelp_academic_dataset_review.json", tmp_path / "rev.jsonl")
    out = tmp_path / "kb.sqlite"
    args = ["crs", "kb", "build", "--business", str(business), "--reviews", str(reviews), "--out", str(out)]
    result = runner.invoke(app, [*args, "--min-reviews", "1", "--min-review-chars", "0", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert out.is_file()


@pytest.mark.parametrize(
    "extra",
    [[], ["--business", "x.json"], ["--yelp-dir", "d", "--business", "x.json", "--reviews", "y.json"]],
    ids=["nothing", "business-only", "both-ways"],
)
def test_kb_build_input_usage_errors(tmp_path: Path, extra: list[str]) -> None:
    result = runner.invoke(app, ["crs", "kb", "build", *extra, "--out", str(tmp_path / "kb.sqlite")])
    assert result.exit_code == 2
    assert "--business" in result.output


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("built")
    kb_path = save_kb(generate_demo_kb(3, n_per_type=50, reviews_per_poi=5), root / "kb.sqlite")
    out = root / "ds"
    result = runner.invoke(
        app, ["crs", "build", "--kb", str(kb_path), "--dialogues", "40", "--seed", "1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads((out / "manifest.json").read_text())["kb_path"] == str(kb_path.resolve())
    flat = " ".join(result.output.split())
    assert "README.md (the dataset card: Hugging Face configs) and knowledge_base/" in flat  # what it wrote
    assert (out / "README.md").is_file() and (out / "knowledge_base" / "pois.jsonl").is_file()
    return out


def test_run_on_one_jsonl_file_finds_the_kb_through_the_manifest(built: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "crs",
            "run",
            "--dataset",
            str(built / "train.jsonl"),
            "--system",
            "oracle",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "scores.json").read_text())


def test_score_defaults_to_the_split_the_predictions_cover(built: Path, tmp_path: Path) -> None:
    ran = runner.invoke(
        app,
        [
            "crs",
            "run",
            "--dataset",
            str(built),
            "--split",
            "train",
            "--system",
            "oracle",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert ran.exit_code == 0, ran.output
    predictions = next((tmp_path / "r").glob("predictions*.jsonl"))
    n = sum(1 for _ in predictions.open())
    scored = runner.invoke(
        app,
        [
            "crs",
            "score",
            "--dataset",
            str(built),
            "--predictions",
            str(predictions),
            "--out",
            str(tmp_path / "s"),
        ],
    )
    assert scored.exit_code == 0, scored.output
    assert "scoring split 'train'" in scored.output
    assert "orphan" not in scored.output
    run = json.loads((tmp_path / "s" / "run.json").read_text())
    assert run.get("split") == "train" or '"train"' in json.dumps(run)
    assert n > 0
