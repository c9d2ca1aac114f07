"""``crs train-parser`` and ``crs run --system-arg parser=MODEL`` / the automatic fit on the train split."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("ds")
    runner = CliRunner()
    kb = root / "kb.sqlite"
    assert runner.invoke(app, ["crs", "kb", "demo", "--out", str(kb)]).exit_code == 0
    result = runner.invoke(
        app, ["crs", "build", "--kb", str(kb), "--dialogues", "60", "--seed", "1", "--out", str(root / "ds")]
    )
    assert result.exit_code == 0, result.output
    return root / "ds"


def test_train_parser_writes_a_model_and_scores_validation(dataset, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "parser.joblib"
    result = CliRunner().invoke(app, ["crs", "train-parser", "--dataset", str(dataset), "--out", str(model)])
    assert result.exit_code == 0, result.output
    assert model.is_file() and "constraint classes from" in result.output
    header = json.loads((tmp_path / "parser.joblib.json").read_text())
    assert header["format_version"] == 3 and header["counts"]["constraints"] > 0
    assert "parser on validation" in result.output and "all" in result.output and "amenity" in result.output

    # the model file drives a run; its key is in the run's config
    out = tmp_path / "run"
    args = ["crs", "run", "--dataset", str(dataset), "--split", "validation", "--system", "knowledge"]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--system-arg", f"parser={model}"])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["understanding"] == header["train_hash"][:16]
    assert not (tmp_path / "cache" / "understanding").exists()  # a given model: nothing trained

    # without parser=: trained on the train split on first use and cached under GROUNDTRACE_CACHE
    out2 = tmp_path / "run2"
    result = CliRunner().invoke(app, [*args, "--out", str(out2)])
    assert result.exit_code == 0, result.output
    cached = sorted(p.name for p in (tmp_path / "cache" / "understanding").glob("*.joblib"))
    assert len(cached) == 1
    assert json.loads((out2 / "run.json").read_text())["config"]["understanding"]

    bad = CliRunner().invoke(
        app, [*args, "--out", str(tmp_path / "r3"), "--system-arg", "parser=nope.joblib"]
    )
    assert bad.exit_code != 0 and "nope.joblib: no such model file" in bad.output


def test_a_single_file_without_train_split_says_so(dataset, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    single = tmp_path / "only.jsonl"
    single.write_text((dataset / "test.jsonl").read_text())
    args = ["crs", "run", "--dataset", str(single), "--system", "knowledge", "--out", str(tmp_path / "r")]
    args += ["--kb", str(dataset.parent / "kb.sqlite")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "has no train split" in result.output and "parser=MODEL" in result.output
    assert "understanding" not in json.loads((tmp_path / "r" / "run.json").read_text())["config"]


def test_train_parser_features_option(dataset, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "tfidf.joblib"
    args = ["crs", "train-parser", "--dataset", str(dataset), "--out", str(model), "--score-split", "test"]
    result = CliRunner().invoke(app, [*args, "--features", "tfidf"])
    assert result.exit_code == 0, result.output
    header = json.loads((tmp_path / "tfidf.joblib.json").read_text())
    assert header["parser_options"] == {"features": "tfidf", "augment": True}
    assert "parser on test" in result.output
    result = CliRunner().invoke(app, [*args, "--features", "bert"])
    assert result.exit_code != 0 and "'bert': expected embed or tfidf" in result.output
