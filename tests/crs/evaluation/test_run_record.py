"""Every run path writes the same ``run.json`` (:class:`RunRecord`): ``crs.evaluate`` in memory and saved,
``crs.evaluate`` into a folder, ``crs run``, ``crs score``, ``score_file``, ``crs leaderboard``'s suite and
an experiment file — the same keys, nested keys and value types, and the same scores for the same answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace import crs
from groundtrace.cli import app
from groundtrace.crs.evaluation.offline import score_file
from groundtrace.crs.evaluation.run_record import RunRecord
from groundtrace.crs.report.config import load_run_config
from groundtrace.crs.report.experiment import run_experiment
from groundtrace.crs.report.suite import run_suite
from tests.crs.report.demo_data import make_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("record"), n_dialogues=8)


def _shape(value: object) -> object:
    """Keys (recursively) and JSON types of a ``run.json`` value; lists by their first item."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return (
        "number" if isinstance(value, int | float) and not isinstance(value, bool) else type(value).__name__
    )


def _keys(value: object, prefix: str = "") -> set[str]:
    """Every key path of ``value`` (``counts.turns``, ``usage.latency_s.p95`` ...), dicts only."""
    if not isinstance(value, dict):
        return set()
    out = set()
    for k, v in value.items():
        out.add(prefix + k)
        if k not in ("config", "provenance", "run_config"):  # free-form by design
            out |= _keys(v, f"{prefix}{k}.")
    return out


def _run_json(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text(encoding="utf-8"))


def test_every_run_path_writes_the_same_run_record(demo, tmp_path: Path) -> None:
    dataset, kb = str(demo.dataset), str(demo.kb_path)
    records: dict[str, dict] = {}

    table = crs.evaluate("random", dataset, kb=kb, split="all", system_args={"seed": 3})
    records["evaluate"] = table.info
    records["evaluate+save"] = _run_json(table.save(tmp_path / "saved"))
    into = crs.evaluate("random", dataset, kb=kb, split="all", system_args={"seed": 3}, out=tmp_path / "into")
    records["evaluate(out)"] = _run_json(tmp_path / "into")

    cli = CliRunner()
    ran = cli.invoke(
        app,
        ["crs", "run", "--dataset", dataset, "--kb", kb, "--split", "all", "--system", "random",
         "--seed", "3", "--out", str(tmp_path / "cli-run")],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    records["crs run"] = _run_json(tmp_path / "cli-run")
    predictions = tmp_path / "cli-run" / "predictions.jsonl"
    scored = cli.invoke(
        app,
        ["crs", "score", "--dataset", dataset, "--kb", kb, "--split", "all", "--predictions",
         str(predictions), "--out", str(tmp_path / "cli-score")],
    )  # fmt: skip
    assert scored.exit_code == 0, scored.output
    records["crs score"] = _run_json(tmp_path / "cli-score")
    data = crs.load_records(demo.dataset, "all")
    records["score_file"] = score_file(predictions, data, demo.kb, tmp_path / "file", split="all").info

    suite = run_suite(["random"], data, demo.kb, tmp_path / "suite", settings=["closed"], split="all",
                      dataset=dataset, resamples=10)  # fmt: skip
    records["suite"] = _run_json(suite.runs[("random", "closed")].out)
    config = tmp_path / "run.yaml"
    config.write_text(
        f"dataset: {demo.dataset}\nkb: {demo.kb_path}\nsplits: [all]\nsettings: [closed]\n"
        "systems: [random]\nreport:\n  resamples: 10\n",
        encoding="utf-8",
    )
    experiment = run_experiment(load_run_config(config), tmp_path / "experiment")
    records["experiment"] = _run_json(experiment.runs[0][1])

    reference = _keys(records["evaluate"])
    for name, record in records.items():
        RunRecord.model_validate(record)  # every one is a RunRecord, no extra key
        assert _keys(record) == reference, (name, _keys(record) ^ reference)
    shapes = {name: _shape({k: v for k, v in r.items() if k not in ("config", "provenance")})
              for name, r in records.items()}  # fmt: skip
    # a value a path cannot know is null there (workers/needs_gold of a file, run_s of offline scoring)
    loose = {"workers", "needs_gold", "label", "run_config", "timings", "history", "entailment", "limit"}
    for name, shape in shapes.items():
        for key in set(shape) - loose:
            assert shape[key] == shapes["evaluate"][key], (name, key)
    modes = {name: r["mode"] for name, r in records.items()}
    assert modes == {
        "evaluate": "memory", "evaluate+save": "memory", "evaluate(out)": "run", "crs run": "run",
        "crs score": "offline", "score_file": "offline", "suite": "run", "experiment": "run",
    }  # fmt: skip
    for name, record in records.items():
        assert record["status"] == "complete" and record["counts"]["turns"] > 0, name
        assert record["provenance"]["groundtrace"], name
    # the same answers score the same on every path (random, seed 3: the same rankings everywhere)
    same = {"crs run", "crs score", "score_file", "evaluate(out)"}
    runs = {n: json.loads((p / "scores.json").read_text()) for n, p in [
        ("crs run", tmp_path / "cli-run"), ("crs score", tmp_path / "cli-score"),
        ("evaluate(out)", tmp_path / "into"), ("score_file", tmp_path / "file")]}  # fmt: skip
    assert set(runs) == same
    assert len({json.dumps(s["aggregate"], sort_keys=True) for s in runs.values()}) == 1
    assert into.aggregate == table.aggregate


def test_offline_records_know_no_workers_and_no_answering_time(demo, tmp_path: Path) -> None:
    table = crs.evaluate("random", str(demo.dataset), kb=str(demo.kb_path), split="all")
    folder = table.save(tmp_path / "run")
    data = crs.load_records(demo.dataset, "all")
    info = score_file(folder / "predictions.jsonl", data, demo.kb, tmp_path / "file", split="all").info
    assert info["workers"] is None and info["needs_gold"] is None and info["timings"]["run_s"] is None
    assert info["counts"]["dialogues_run"] == 0 and info["counts"]["dialogues_resumed"] == 0
    assert table.info["workers"] == 1 and table.info["needs_gold"] is False
    again = score_file(folder / "predictions.jsonl", data, demo.kb, tmp_path / "file", split="all").info
    assert again["runs"] == 2 and len(again["history"]) == 2  # re-scoring the folder is recorded


def test_the_train_split_is_read_once_and_only_for_a_system_that_learns(demo, monkeypatch) -> None:
    from groundtrace.crs.evaluation import runner
    from groundtrace.crs.systems.reference import RandomSystem

    reads: list[str] = []
    monkeypatch.setattr(runner, "train_split_of", lambda dataset: reads.append(dataset) or ["d"])
    learned: list[object] = []

    class Learner(RandomSystem):
        def learn(self, train, kb) -> None:
            learned.append(train)

    shared = runner.LazyTrainSplit(str(demo.dataset))
    runner.trainer(shared, "", demo.kb)(RandomSystem(seed=1))  # learns nothing: no read
    assert reads == []
    for _ in range(3):
        runner.trainer(shared, "", demo.kb)(Learner(seed=1))
    assert reads == [str(demo.dataset)] and learned == [["d"]] * 3 and learned[0] is learned[2]
    runner.trainer(None, "ds", demo.kb)(Learner(seed=1))  # no train given: the dataset's, per run
    assert reads == [str(demo.dataset), "ds"]
