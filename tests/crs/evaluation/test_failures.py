"""Failures are failures (issue 9): ``crs run`` exits 1 beyond ``--max-failed-share`` or when it produced
nothing, ``crs score`` exits 1 when nothing was scored, and no NaN/inf reaches run.json or scores.json."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.evaluation.failures import DEFAULT_MAX_FAILED_SHARE, run_problem
from groundtrace.crs.evaluation.inputs import check_output
from groundtrace.crs.evaluation.run_files import PREDICTIONS_FILE, read_predictions, write_json
from groundtrace.crs.systems.base import SystemReply, TurnUsage
from groundtrace.crs.systems.predictions import SystemOutput
from tests.crs.report.demo_data import make_demo


def _strict_json(text: str):
    """json.loads that refuses NaN/Infinity (Python's json accepts them by default)."""

    def refuse(name: str):
        raise ValueError(f"non-finite number {name} in JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("failures"), n_dialogues=24)


def _args(demo) -> list[str]:
    return ["--dataset", str(demo.dataset), "--split", "all", "--kb", str(demo.kb_path)]


@contextmanager
def endpoint(fail_dialogues: set[str]) -> Iterator[str]:
    """A valid HTTP system (ranks its first candidate) that answers 500 for the given dialogues."""

    class H(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if body["dialogue_id"] in fail_dialogues:
                status, payload = 500, b"{}"
            else:
                ranking = [c["poi_id"] for c in body["candidates"][:1]]
                status, payload = 200, json.dumps({"ranking": ranking, "response": "ok"}).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/respond"
    finally:
        server.shutdown()
        server.server_close()


# -- the policy ---------------------------------------------------------------------------------------------
def _info(turns: int, failed: int) -> dict:
    errors = [{"dialogue_id": "d1", "turn_index": 1, "error": "HTTPSystemError: HTTP 500"}] if failed else []
    return {"counts": {"turns": turns, "unscorable_turns": failed}, "errors": errors}


def test_run_problem_thresholds() -> None:
    assert DEFAULT_MAX_FAILED_SHARE == 0.05
    assert run_problem(_info(100, 0)) is None
    assert run_problem(_info(100, 5)) is None  # 5% is not more than 5%
    assert run_problem(_info(100, 6)) == (
        "6 of 100 turns failed (6.0% > --max-failed-share 0.05); first error: d1/1: HTTPSystemError: HTTP 500"
    )
    assert run_problem(_info(100, 6), 0.1) is None
    # nothing produced: fails whatever the threshold
    assert run_problem(_info(10, 10), 1.0).startswith("the run produced nothing: all 10 turns failed")
    assert run_problem(_info(0, 0), 1.0).startswith("the run produced nothing: the selected dialogues")


@pytest.mark.parametrize("share", [-0.1, 1.5, float("nan"), "0.1"])
def test_run_problem_refuses_a_bad_share(share) -> None:
    with pytest.raises(ValueError, match="share must be a number in"):
        run_problem(_info(10, 1), share)


# -- crs run ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_crs_run_exits_1_when_every_turn_failed(demo, tmp_path) -> None:
    # before issue 9 this exited 0 with 100% of the turns failed
    result = CliRunner().invoke(
        app,
        ["crs", "run", *_args(demo), "--system", "http://127.0.0.1:9/nothing-listens", "--retries", "0",
         "--out", str(tmp_path / "dead")],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "error: the run produced nothing: all" in result.stderr
    assert "Traceback" not in result.output
    info = _strict_json((tmp_path / "dead" / "run.json").read_text())
    assert info["counts"]["unscorable_turns"] == info["counts"]["turns"] > 0


@pytest.mark.slow
def test_crs_run_threshold(demo, tmp_path) -> None:
    first = min(demo.dialogues, key=lambda d: len(d.recommendation_turns()))  # not a 3-leg itinerary
    n_failed = len(first.recommendation_turns())
    n_turns = sum(len(d.recommendation_turns()) for d in demo.dialogues)
    share = n_failed / n_turns
    assert 0 < share <= 0.05  # the demo split: one dialogue's turns are a few percent
    runner = CliRunner()
    with endpoint({first.dialogue_id}) as url:
        base = ["crs", "run", *_args(demo), "--system", url, "--retries", "0"]
        ok = runner.invoke(app, [*base, "--out", str(tmp_path / "a")])
        assert ok.exit_code == 0, ok.output  # within the default 5%
        strict = runner.invoke(app, [*base, "--out", str(tmp_path / "b"), "--max-failed-share", "0"])
    assert strict.exit_code == 1, strict.output
    assert f"error: {n_failed} of {n_turns} turns failed" in strict.stderr
    assert f"first error: {first.dialogue_id}/" in strict.stderr
    bad = runner.invoke(app, [*base, "--out", str(tmp_path / "c"), "--max-failed-share", "2"])
    assert bad.exit_code == 2  # a usage error: the share is in [0, 1]


# -- NaN ----------------------------------------------------------------------------------------------------
def test_nan_latency_line_is_reported_and_never_written(demo, tmp_path) -> None:
    runner = CliRunner()
    ran = runner.invoke(app, ["crs", "run", *_args(demo), "--system", "oracle", "--out", str(tmp_path / "r")])
    assert ran.exit_code == 0, ran.output
    lines = (tmp_path / "r" / PREDICTIONS_FILE).read_text().splitlines()
    row = json.loads(lines[1])
    row["latency_s"] = float("nan")
    lines[1] = json.dumps(row)  # Python writes the non-JSON token NaN
    path = tmp_path / "nan.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert read_predictions(path).errors == [f"{path}:2: latency_s: Input should be a finite number"]
    scored = runner.invoke(
        app, ["crs", "score", *_args(demo), "--predictions", str(path), "--out", str(tmp_path / "s")]
    )
    assert f"skipped {path}:2: latency_s: Input should be a finite number" in scored.stderr
    for name in ("run.json", "scores.json"):
        _strict_json((tmp_path / "s" / name).read_text())  # no NaN anywhere


def test_write_json_refuses_non_finite_numbers(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"run.json: refusing to write a non-finite number"):
        write_json(tmp_path / "run.json", {"usage": {"latency_s": {"mean": float("nan")}}})
    assert not (tmp_path / "run.json").exists()


@pytest.mark.parametrize("usage", [TurnUsage(cost_usd=float("nan")), TurnUsage(prompt_tokens=-1)])
def test_a_python_system_reporting_nan_usage_fails_its_turn(usage) -> None:
    reply = SystemReply(SystemOutput(ranking=[], response="x"), usage)
    with pytest.raises(ValueError, match="invalid output: usage"):
        check_output(reply, [])


# -- bounded work in crs score ----------------------------------------------------------------------------
@pytest.mark.slow  # stress: a 1 MB answer
def test_crs_score_bounds_a_one_megabyte_answer_with_40k_quotes(demo, tmp_path) -> None:
    # 40,000 tagged quotes holding attribute words (920 kB): before issue 9 every quote was matched and every
    # mention was compared with every tag group (> 200 s, killed); now the answer is over the 50,000-character
    # limit, analysed on its first 50,000 characters, scores 0 on GS/CD/PC/CGS and is counted.
    runner = CliRunner()
    ran = runner.invoke(app, ["crs", "run", *_args(demo), "--system", "oracle", "--out", str(tmp_path / "r")])
    assert ran.exit_code == 0, ran.output
    rows = [json.loads(line) for line in (tmp_path / "r" / PREDICTIONS_FILE).read_text().splitlines()]
    rows[0]["response"] = "".join(f'"quiet cozy {i:05d}" [R1] ' for i in range(40_000))
    path = tmp_path / "huge.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scored = runner.invoke(
        app, ["crs", "score", *_args(demo), "--predictions", str(path), "--out", str(tmp_path / "s")]
    )
    assert scored.exit_code == 0, scored.output
    assert "warning: 1 answer(s) exceed a size limit of the grounding metrics" in scored.stderr
    scores = _strict_json((tmp_path / "s" / "scores.json").read_text())
    assert scores["predictions"]["over_limit"] == 1
    key = (rows[0]["dialogue_id"], rows[0]["turn_index"])
    first = next(t for t in scores["turns"] if (t["dialogue_id"], t["turn_index"]) == key)
    assert [first["values"][m] for m in ("gs", "cd", "pc", "cgs")] == [0.0, 0.0, 0.0, 0.0]
