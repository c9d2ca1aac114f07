"""TREC run / qrels export: our R@k, MRR and nDCG equal ranx's and ir-measures' on the same run."""

from __future__ import annotations

import json
import random
import sys

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.evaluation.offline import score_file
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.evaluation.trec import qrels_lines, query_id, run_lines
from groundtrace.crs.systems.predictions import Prediction
from groundtrace.crs.systems.reference import RandomSystem
from tests.crs.report.demo_data import make_demo

CLOSED = {
    "recall@1": "recall@1",
    "recall@3": "recall@3",
    "recall@5": "recall@5",
    "mrr": "mrr",
    "ndcg@3": "ndcg@3",
}
OPEN = {"open_mrr": "mrr", "open_recall@1": "recall@1", "open_recall@10": "recall@10"}
IR_MEASURES = {
    "recall@1": "R@1",
    "recall@3": "R@3",
    "recall@5": "R@5",
    "recall@10": "R@10",
    "mrr": "RR",
    "ndcg@3": "nDCG@3",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("trec"), n_dialogues=16)


def _export(run_dir, tmp_path, *extra):
    run_file, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    result = CliRunner().invoke(
        app,
        [
            "crs",
            "export-run",
            str(run_dir),
            "--format",
            "trec",
            "--out",
            str(run_file),
            "--qrels",
            str(qrels),
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return run_file, qrels


def _ours(run_dir, names):
    aggregate = json.loads((run_dir / "scores.json").read_text())["aggregate"]
    return {ours: aggregate[ours] for ours in names}


def _import_ranx():
    """ranx, imported here, not at collection: it loads numba, pandas and matplotlib (seconds) — the fast
    tier never runs these tests. Installed by scripts/test.sh ([dev]); optional for users.

    Imported with numba's JIT off (``numba.config.DISABLE_JIT`` before ranx's first import: its ``@njit``
    metric functions stay the plain Python functions they decorate, ``numba.typed.List``/``Dict`` plain
    lists/dicts): the same metric code, interpreted. Compiling it cost ~60 s of the first test on a fresh
    environment (no numba cache yet: CI), ~10 s loading a warm cache, vs ~2 s interpreting it for the
    few hundred turns here. Nothing else in the suite imports numba."""
    if "ranx" not in sys.modules:
        numba = pytest.importorskip("numba")
        numba.config.DISABLE_JIT = True
    return pytest.importorskip("ranx")


def _ranx(run_file, qrels, names, make_comparable=False):
    ranx = _import_ranx()
    q = ranx.Qrels.from_file(str(qrels), kind="trec")
    r = ranx.Run.from_file(str(run_file), kind="trec")
    values = ranx.evaluate(q, r, list(names.values()), make_comparable=make_comparable)
    return {ours: float(values[theirs]) for ours, theirs in names.items()}


def _ir_measures(run_file, qrels, names, all_queries=False):
    ir_measures = pytest.importorskip("ir_measures")
    q = list(ir_measures.read_trec_qrels(str(qrels)))
    r = list(ir_measures.read_trec_run(str(run_file)))
    measures = {ours: ir_measures.parse_measure(IR_MEASURES[theirs]) for ours, theirs in names.items()}
    if not all_queries:
        agg = ir_measures.calc_aggregate(list(measures.values()), q, r)
        return {ours: agg[m] for ours, m in measures.items()}
    # the mean over every judged query, 0 for a query without a ranking (as our metrics count it)
    per_query: dict[tuple[str, object], float] = {}
    for metric in ir_measures.iter_calc(list(measures.values()), q, r):
        per_query[(metric.query_id, metric.measure)] = metric.value
    qids = {x.query_id for x in q}
    return {
        ours: sum(per_query.get((qid, m), 0.0) for qid in qids) / len(qids) for ours, m in measures.items()
    }


@pytest.mark.slow  # ranx / ir-measures: imports of pandas, numba, pytrec_eval
@pytest.mark.parametrize(("setting", "names"), [("closed", CLOSED), ("open", OPEN)])
def test_complete_run_agrees_with_ranx_and_ir_measures(demo, tmp_path, setting, names):
    run_dir = tmp_path / "run"
    run_system(
        RandomSystem(seed=3),
        demo.dialogues,
        demo.kb,
        run_dir,
        setting=setting,
        split="all",
        dataset=str(demo.dataset),
    )
    run_file, qrels = _export(run_dir, tmp_path)
    n_turns = sum(len(d.recommendation_turns()) for d in demo.dialogues)
    assert len(qrels.read_text().splitlines()) == n_turns
    ours = _ours(run_dir, names)
    assert 0 < ours[next(iter(names))] < 1  # a random system's first metric (R@1, MRR): not a trivial value
    assert _ranx(run_file, qrels, names) == pytest.approx(ours, abs=1e-9)
    assert _ir_measures(run_file, qrels, names) == pytest.approx(ours, abs=1e-9)


@pytest.mark.slow  # ranx / ir-measures: imports of pandas, numba, pytrec_eval
def test_missing_errored_and_repeated_predictions_agree_when_every_query_counts(demo, tmp_path):
    rng = random.Random(11)
    preds = []
    for d in demo.dialogues:
        for turn in d.recommendation_turns():
            draw = rng.random()
            if draw < 0.15:
                continue  # missing: unscorable, 0 in our mean
            ranking = rng.sample(list(d.candidates), len(d.candidates))
            if draw < 0.3:
                preds.append(Prediction(dialogue_id=d.dialogue_id, turn_index=turn.index, error="Timeout: x"))
                continue
            if draw < 0.5:
                ranking = [ranking[0], ranking[0], *ranking[1:], "not-a-poi"]  # repeat + an outside id
            preds.append(Prediction(dialogue_id=d.dialogue_id, turn_index=turn.index, ranking=ranking))
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(p.model_dump_json() + "\n" for p in preds))
    run_dir = tmp_path / "scored"
    score_file(path, demo.dialogues, demo.kb, run_dir, split="all", dataset=str(demo.dataset))
    run_file, qrels = _export(run_dir, tmp_path, "--tag", "my run")
    assert all(line.split()[-1] == "my_run" for line in run_file.read_text().splitlines())
    ours = _ours(run_dir, CLOSED)
    assert _ranx(run_file, qrels, CLOSED, make_comparable=True) == pytest.approx(ours, abs=1e-9)
    assert _ir_measures(run_file, qrels, CLOSED, all_queries=True) == pytest.approx(ours, abs=1e-9)


def test_run_lines_contract(demo):
    d = demo.dialogues[0]
    turn = d.recommendation_turns()[0]
    a, b = d.candidates[0], d.candidates[1]
    preds = [
        Prediction(dialogue_id=d.dialogue_id, turn_index=turn.index, ranking=[a, b, a]),
        Prediction(dialogue_id=d.dialogue_id, turn_index=turn.index, ranking=[b]),  # duplicate turn: ignored
        Prediction(dialogue_id=d.dialogue_id, turn_index=turn.index, setting="open", ranking=[b]),
        Prediction(dialogue_id="elsewhere", turn_index=1, ranking=[b]),
    ]
    qid = query_id(d.dialogue_id, turn.index)
    assert run_lines(preds, [d], "closed", "sys") == [f"{qid} Q0 {a} 1 2 sys", f"{qid} Q0 {b} 2 1 sys"]
    assert qrels_lines([d])[0] == f"{qid} 0 {turn.gold.gold_poi} 1"
    assert query_id("a b\tc", 2) == "a_b_c:2"


def test_export_errors_are_usage_errors(tmp_path):
    result = CliRunner().invoke(app, ["crs", "export-run", str(tmp_path), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "run.json: no such file" in result.output
    bad = CliRunner().invoke(app, ["crs", "export-run", str(tmp_path), "--format", "csv", "--out", "x"])
    assert bad.exit_code == 2 and "unknown format 'csv'" in bad.output
