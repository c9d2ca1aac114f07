"""Scoring a predictions file (`crs score`): the runner's pool check, one run per folder, bad bytes and
the warning for predictions of another setting or split."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.evaluation.loading import load_split
from groundtrace.crs.evaluation.offline import score_file
from groundtrace.crs.evaluation.run_files import PREDICTIONS_FILE, RunKeyMismatchError, read_predictions
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.systems import SYSTEMS, CRSSystem
from groundtrace.crs.systems.predictions import Prediction, SystemOutput
from tests.crs.report.demo_data import make_demo

RAW_OUTPUTS: list[dict] = []  # what the misbehaving system answered, turn by turn


class OutOfPool(CRSSystem):
    """Shuffles the pool; on every other dialogue appends one real KB POI that is not in the pool."""

    name = "out-of-pool"

    def respond(self, inp):
        pool = [c.poi_id for c in inp.candidates]
        rng = random.Random(f"{inp.dialogue_id}:{inp.turn_index}")
        rng.shuffle(pool)
        if int(inp.dialogue_id.rsplit("-", 1)[-1]) % 2:
            pool.append(_OUTSIDE[inp.dialogue_id])
        response = f"Try {inp.candidates[0].name}. [{inp.reviews[0].tag}]" if inp.reviews else "Try it."
        RAW_OUTPUTS.append(
            {
                "dialogue_id": inp.dialogue_id,
                "turn_index": inp.turn_index,
                "ranking": pool,
                "response": response,
            }
        )
        return SystemOutput(ranking=pool, response=response)


_OUTSIDE: dict[str, str] = {}  # dialogue id -> a KB POI of its city and type outside its closed pool


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    demo = make_demo(tmp_path_factory.mktemp("score_file"), n_dialogues=16)
    for d in demo.dialogues:
        _OUTSIDE[d.dialogue_id] = next(
            p.poi_id
            for p in sorted(demo.kb.pois.values(), key=lambda p: p.poi_id)
            if p.poi_type == d.poi_type and p.poi_id not in d.candidates
        )
    return demo


@pytest.fixture
def registered(monkeypatch):
    """``out-of-pool`` in the system registry for this test only."""
    monkeypatch.setattr(SYSTEMS, "_entries", dict(SYSTEMS._entries))
    monkeypatch.setattr(SYSTEMS, "_alias_to_name", dict(SYSTEMS._alias_to_name))
    SYSTEMS.add("out-of-pool", OutOfPool, description="test: ranks a POI from outside the pool")
    RAW_OUTPUTS.clear()
    yield
    RAW_OUTPUTS.clear()


def _args(demo) -> list[str]:
    return ["--dataset", str(demo.dataset), "--split", "all", "--kb", str(demo.kb_path)]


@pytest.mark.slow
def test_out_of_pool_ids_score_the_same_through_the_runner_and_a_predictions_file(
    demo, tmp_path, registered
) -> None:
    runner = CliRunner()
    # half the turns fail the pool check: allowed here (--max-failed-share 1), the default would exit 1
    ran = runner.invoke(
        app,
        ["crs", "run", *_args(demo), "--system", "out-of-pool", "--out", str(tmp_path / "run"),
         "--max-failed-share", "1"],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    # the same raw outputs, written as a predictions file (no error set: the file does not know the pool)
    raw = tmp_path / "raw.jsonl"
    raw.write_text(
        "".join(
            Prediction(setting="closed", system="out-of-pool", **o).model_dump_json() + "\n"
            for o in RAW_OUTPUTS
        )
    )
    scored = runner.invoke(
        app, ["crs", "score", *_args(demo), "--predictions", str(raw), "--out", str(tmp_path / "file")]
    )
    assert scored.exit_code == 0, scored.output
    a = json.loads((tmp_path / "run" / "scores.json").read_text())
    b = json.loads((tmp_path / "file" / "scores.json").read_text())
    assert a == b
    bad = [t for t in a["turns"] if t["error"]]
    odd = [d for d in demo.dialogues if int(d.dialogue_id.rsplit("-", 1)[-1]) % 2]
    assert len(bad) == sum(len(d.recommendation_turns()) for d in odd) > 0
    assert all(
        t["error"]
        == f"ValueError: invalid output: unknown POI id(s) {_OUTSIDE[t['dialogue_id']]!r} not in the "
        "candidate pool"
        for t in bad
    )
    assert a["predictions"]["errored"] == len(bad) and 0 < len(bad) < a["n_turns"]
    info = json.loads((tmp_path / "file" / "run.json").read_text())
    assert info["counts"]["out_of_pool_turns"] == info["counts"]["unscorable_turns"] == len(bad)
    # the folder's copy records the errors, and scoring the copy again gives the same scores
    copy = read_predictions(tmp_path / "file" / PREDICTIONS_FILE).predictions
    assert sum(p.error is not None for p in copy) == len(bad)
    again = score_file(
        tmp_path / "file" / PREDICTIONS_FILE, demo.dialogues, demo.kb, tmp_path / "again", split="all"
    )
    assert again.table.to_dict() == a


def test_open_setting_pool_is_the_open_pool(demo, tmp_path) -> None:
    d = demo.dialogues[0]
    turn = d.recommendation_turns()[0]
    inside = turn.gold.open_pool[-1]  # in the open pool, not (necessarily) among the 8 candidates
    outside = next(p for p in sorted(demo.kb.pois) if p not in set(turn.gold.open_pool))
    path = tmp_path / "p.jsonl"
    path.write_text(
        Prediction(
            dialogue_id=d.dialogue_id, turn_index=turn.index, setting="open", ranking=[inside]
        ).model_dump_json()
        + "\n"
        + Prediction(
            dialogue_id=d.dialogue_id,
            turn_index=d.recommendation_turns()[1].index,
            setting="open",
            ranking=[outside],
        ).model_dump_json()
        + "\n"
    )
    result = score_file(path, demo.dialogues, demo.kb, tmp_path / "o", setting="open", split="all")
    errors = {t.turn_index: t.error for t in result.table.turns if t.dialogue_id == d.dialogue_id}
    assert errors[turn.index] is None
    assert "not in the candidate pool" in errors[d.recommendation_turns()[1].index]


def test_score_refuses_a_folder_holding_another_run(demo, tmp_path) -> None:
    system_run = tmp_path / "run"
    run_system(_Ranker(), demo.dialogues[:4], demo.kb, system_run, split="all")
    before = {p.name: p.read_bytes() for p in system_run.iterdir()}
    other = tmp_path / "other.jsonl"
    other.write_text(
        Prediction(dialogue_id=demo.dialogues[0].dialogue_id, turn_index=1, ranking=[]).model_dump_json()
        + "\n"
    )
    with pytest.raises(RunKeyMismatchError, match="another run"):
        score_file(other, demo.dialogues[:4], demo.kb, system_run, split="all")
    assert {p.name: p.read_bytes() for p in system_run.iterdir()} == before  # nothing overwritten
    # the CLI says so on --out, and leaves the folder alone
    bad = CliRunner().invoke(
        app,
        ["crs", "score", *_args(demo), "--predictions", str(other), "--out", str(system_run), "--limit", "4"],
    )
    assert bad.exit_code != 0 and "holds another run" in bad.output and "--out" in bad.output
    assert {p.name: p.read_bytes() for p in system_run.iterdir()} == before
    # a folder scored from one file: the same file and setting may be scored again, another may not
    first = score_file(other, demo.dialogues, demo.kb, tmp_path / "s", split="all")
    again = score_file(other, demo.dialogues, demo.kb, tmp_path / "s", split="all")
    assert again.info["run_key"] == first.info["run_key"]
    with pytest.raises(RunKeyMismatchError, match="predictions"):
        score_file(other, demo.dialogues, demo.kb, tmp_path / "s", split="all", setting="open")
    with pytest.raises(RunKeyMismatchError, match="another run"):
        score_file(system_run / PREDICTIONS_FILE, demo.dialogues, demo.kb, tmp_path / "s", split="all")
    # `crs run` into a scored folder is refused too (the same check)
    with pytest.raises(RunKeyMismatchError):
        run_system(_Ranker(), demo.dialogues, demo.kb, tmp_path / "s", split="all")
    # a folder with someone's predictions.jsonl but no run.json is not overwritten either
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / PREDICTIONS_FILE).write_text("mine\n")
    with pytest.raises(RunKeyMismatchError, match="no run.json"):
        score_file(other, demo.dialogues, demo.kb, loose, split="all")
    assert (loose / PREDICTIONS_FILE).read_text() == "mine\n"


class _Ranker(CRSSystem):
    name = "pool-order"

    def respond(self, inp):
        return SystemOutput(ranking=[c.poi_id for c in inp.candidates], response="ok")


def test_invalid_utf8_lines_are_reported_and_the_rest_scored(demo, tmp_path) -> None:
    clean = run_system(_Ranker(), demo.dialogues, demo.kb, tmp_path / "clean", split="all")
    lines = (tmp_path / "clean" / PREDICTIONS_FILE).read_bytes().splitlines(keepends=True)
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"".join([*lines[:2], b'{"dialogue_id": "\xff\xfe"}\n', *lines[2:]]))
    file = read_predictions(path)
    assert file.errors == [
        f"{path}:3: not valid UTF-8: invalid start byte (byte 0xff at byte offset 17 of the line)"
    ]
    assert len(file.predictions) == len(lines)
    result = CliRunner().invoke(
        app, ["crs", "score", *_args(demo), "--predictions", str(path), "--out", str(tmp_path / "s")]
    )
    assert result.exit_code == 0, result.output
    assert f"skipped {path}:3: not valid UTF-8" in result.stderr
    scores = json.loads((tmp_path / "s" / "scores.json").read_text())
    assert scores == json.loads(json.dumps(clean.table.to_dict()))
    info = json.loads((tmp_path / "s" / "run.json").read_text())
    assert info["counts"]["bad_prediction_lines"] == 1
    # a BOM at the start of the file is not an error
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(lines))
    assert read_predictions(path).errors == [] and len(read_predictions(path).predictions) == len(lines)


def test_cli_warns_about_other_setting_and_orphan_predictions(demo, tmp_path) -> None:
    runner = CliRunner()
    done = runner.invoke(
        app,
        ["crs", "run", *_args(demo), "--system", "random", "--setting", "open", "--out", str(tmp_path / "o")],
    )
    assert done.exit_code == 0, done.output
    assert "warning" not in done.stderr
    preds = tmp_path / "o" / PREDICTIONS_FILE
    n = len(read_predictions(preds).predictions)
    wrong_setting = runner.invoke(
        app, ["crs", "score", *_args(demo), "--predictions", str(preds), "--out", str(tmp_path / "c")]
    )
    # nothing of the file was scored: the warning says why, and the command fails (exit 1, issue 9)
    assert wrong_setting.exit_code == 1, wrong_setting.output
    assert "error: nothing scored: no usable prediction" in wrong_setting.stderr
    assert (
        f"warning: {n} prediction(s) are for another setting than 'closed' and were ignored "
        "(pass --setting open to score them)" in wrong_setting.stderr
    )
    assert "orphan" not in wrong_setting.stderr
    assert f"unscorable turns: {n}" in wrong_setting.stdout
    # --split test on predictions of every split: the other splits' turns are orphans
    test_ids = {d.dialogue_id for d in load_split(demo.dataset, "test").dialogues}
    orphans = sum(p.dialogue_id not in test_ids for p in read_predictions(preds).predictions)
    assert 0 < orphans < n
    wrong_split = runner.invoke(
        app,
        [
            "crs", "score", "--dataset", str(demo.dataset), "--kb", str(demo.kb_path), "--setting", "open",
            "--predictions", str(preds), "--out", str(tmp_path / "t"), "--split", "test",
        ],
    )  # fmt: skip
    assert wrong_split.exit_code == 0, wrong_split.output
    assert (
        f"warning: {orphans} prediction(s) match no recommendation turn of split 'test' "
        "(orphans; pass --split "
        "with the split they answer, e.g. --split all)" in wrong_split.stderr
    )
    assert "another setting" not in wrong_split.stderr
    right = runner.invoke(
        app,
        [
            "crs",
            "score",
            *_args(demo),
            "--setting",
            "open",
            "--predictions",
            str(preds),
            "--out",
            str(tmp_path / "a"),
        ],
    )
    assert right.exit_code == 0 and "warning" not in right.stderr


def test_predictions_beyond_limit_are_not_orphans(demo, tmp_path) -> None:
    run_system(_Ranker(), demo.dialogues, demo.kb, tmp_path / "full", split="all")
    limited = run_system(_Ranker(), demo.dialogues, demo.kb, tmp_path / "lim", split="all", limit=5)
    offline = score_file(
        tmp_path / "full" / PREDICTIONS_FILE, demo.dialogues, demo.kb, tmp_path / "f", split="all", limit=5
    )
    assert offline.table.predictions.orphan == 0
    assert offline.table.to_dict() == limited.table.to_dict()


def test_cli_score_defaults_to_the_split_the_predictions_answer(demo, tmp_path) -> None:
    """Without --split, predictions of every split are scored as 'all': no orphans (issue 10)."""
    runner = CliRunner()
    done = runner.invoke(
        app,
        ["crs", "run", *_args(demo), "--system", "oracle", "--out", str(tmp_path / "o")],
    )
    assert done.exit_code == 0, done.output
    preds = tmp_path / "o" / PREDICTIONS_FILE
    scored = runner.invoke(
        app,
        [
            "crs",
            "score",
            "--dataset",
            str(demo.dataset),
            "--kb",
            str(demo.kb_path),
            "--predictions",
            str(preds),
            "--out",
            str(tmp_path / "s"),
        ],  # no --split
    )
    assert scored.exit_code == 0, scored.output
    assert "scoring split 'all'" in scored.stderr and "orphan" not in scored.stderr
