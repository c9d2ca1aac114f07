"""The evaluation runner: inputs, failure handling, resume, parallelism, run keys and the CLI."""

from __future__ import annotations

import json
import math
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.evaluation.inputs import check_output, system_inputs
from groundtrace.crs.evaluation.loading import load_split, resolve_kb
from groundtrace.crs.evaluation.run_files import (
    PREDICTIONS_FILE,
    RunKeyMismatchError,
    read_predictions,
    usage_summary,
)
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.systems import CRSSystem, SystemReply, TurnUsage
from groundtrace.crs.systems.predictions import SystemOutput
from groundtrace.crs.systems.reference import RandomSystem
from tests.crs.report.demo_data import make_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("runner"), n_dialogues=30)


class Counting(RandomSystem):
    """Random system that counts calls (thread-safe counter)."""

    def __init__(self) -> None:
        super().__init__(seed=5)
        self.name = "counting"
        self.calls = 0
        self._lock = threading.Lock()

    def respond(self, inp):
        with self._lock:
            self.calls += 1
        return super().respond(inp)


def _keys(obj: object) -> set[str]:
    """Every mapping key at any depth (to check that no gold label field reaches a system)."""
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


class Crash(BaseException):
    """Simulates the process dying (not an Exception: the runner must not swallow it)."""


@pytest.mark.slow
def test_inputs_show_gold_history_pool_and_tagged_reviews(demo) -> None:
    dialogue = (
        next(d for d in demo.dialogues if d.anchor is not None)
        if any(d.anchor for d in demo.dialogues)
        else demo.dialogues[0]
    )
    pairs = list(system_inputs(dialogue, demo.kb, "closed"))
    assert [t.index for t, _ in pairs] == [t.index for t in dialogue.recommendation_turns()]
    for turn, inp in pairs:
        assert [h.text for h in inp.history] == [t.text for t in dialogue.turns[: turn.index]]
        assert not _keys(inp.model_dump()) & {"gold", "gold_poi", "multi_ref", "open_pool", "recommended"}
        assert [c.poi_id for c in inp.candidates] == dialogue.candidates
        assert {r.tag for r in inp.reviews} == set(dialogue.review_refs)
        for r in inp.reviews:
            assert r.text == demo.kb.reviews[r.review_id].text
            assert dialogue.review_refs[r.tag].review_id == r.review_id
    for turn, inp in system_inputs(dialogue, demo.kb, "open"):
        assert [c.poi_id for c in inp.candidates] == turn.gold.open_pool
        assert 50 <= len(inp.candidates) <= 100
        pool = set(turn.gold.open_pool)
        assert all(r.poi_id in pool for r in inp.reviews)
        assert len({r.tag for r in inp.reviews}) == len(inp.reviews)


class Faulty(CRSSystem):
    """Fails differently on each recommendation turn position: exception, unknown id, bad shape, ok."""

    name = "faulty"

    def respond(self, inp):
        pool = [c.poi_id for c in inp.candidates]
        kind = (inp.turn_index // 2) % 4  # system turns are odd: 1, 3, 5, 7 → 0, 1, 2, 3
        if kind == 0:
            raise RuntimeError("model exploded")
        if kind == 1:
            return SystemOutput(ranking=["no-such-poi", *pool], response="hi")
        if kind == 2:
            return {"ranking": "not a list", "response": "hi"}
        return SystemReply(SystemOutput(ranking=pool, response="ok"), TurnUsage(10, 5, 0.001))


def test_failures_make_turns_unscorable_never_dropped(demo, tmp_path) -> None:
    result = run_system(Faulty(), demo.dialogues, demo.kb, tmp_path, split="all")
    preds = read_predictions(tmp_path / PREDICTIONS_FILE).predictions
    n_turns = sum(len(d.recommendation_turns()) for d in demo.dialogues)
    assert len(preds) == n_turns == result.table.n_turns
    errors = [p.error for p in preds if p.error]
    by_kind: dict[int, set[str | None]] = {}
    for p in preds:
        by_kind.setdefault((p.turn_index // 2) % 4, set()).add(p.error)
    assert set(by_kind) == {0, 1, 2, 3}
    assert by_kind[0] == {"RuntimeError: model exploded"}
    assert all("unknown POI id(s) 'no-such-poi'" in e for e in by_kind[1])
    assert all(e.startswith("ValueError: invalid output: ranking") for e in by_kind[2])
    assert by_kind[3] == {None}
    unscorable = sum(not t.scorable for t in result.table.turns)
    assert unscorable == len(errors) == result.info["counts"]["unscorable_turns"]
    for value in result.table.aggregate.values():
        assert value is None or math.isfinite(value)
    ok = [p for p in preds if p.error is None]
    assert result.info["usage"]["prompt_tokens"] == 10 * len(ok)
    assert result.info["usage"]["cost_usd"] == pytest.approx(0.001 * len(ok))
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores == json.loads(json.dumps(result.table.to_dict()))


def test_resume_after_crash_loses_only_in_flight_dialogues(demo, tmp_path) -> None:
    clean = run_system(RandomSystem(seed=5), demo.dialogues, demo.kb, tmp_path / "clean", split="all")

    class Dies(RandomSystem):
        name = "counting"  # same run key as Counting below: the resume continues this run

        def respond(self, inp):
            if inp.dialogue_id == demo.dialogues[12].dialogue_id:
                raise Crash
            return super().respond(inp)

    out = tmp_path / "crashy"
    with pytest.raises(Crash):
        run_system(Dies(seed=5), demo.dialogues, demo.kb, out, split="all")
    done = {p.dialogue_id for p in read_predictions(out / PREDICTIONS_FILE).predictions}
    assert done == {d.dialogue_id for d in demo.dialogues[:12]}
    with (out / PREDICTIONS_FILE).open("a") as fh:  # a torn line from the crash
        fh.write('{"dialogue_id": "trace-s7-0000')
    counting = Counting()
    resumed = run_system(counting, demo.dialogues, demo.kb, out, split="all")
    assert counting.calls == sum(len(d.recommendation_turns()) for d in demo.dialogues[12:])
    assert resumed.info["counts"]["dialogues_resumed"] == 12
    assert resumed.table.to_dict() == clean.table.to_dict()
    again = Counting()
    run_system(again, demo.dialogues, demo.kb, out, split="all")  # everything finished: nothing to do
    assert again.calls == 0
    history = json.loads((out / "run.json").read_text())["history"]
    assert [h["dialogues_run"] for h in history] == [
        len(demo.dialogues) - 12,
        0,
    ]  # the crashed run never finished


def test_limit_then_extend_and_run_key_mismatch(demo, tmp_path) -> None:
    first = Counting()
    run_system(first, demo.dialogues, demo.kb, tmp_path, split="all", limit=5)
    assert first.calls == sum(len(d.recommendation_turns()) for d in demo.dialogues[:5])
    more = Counting()
    result = run_system(more, demo.dialogues, demo.kb, tmp_path, split="all", limit=10)
    assert more.calls == sum(len(d.recommendation_turns()) for d in demo.dialogues[5:10])
    assert result.table.n_dialogues == 10
    with pytest.raises(RunKeyMismatchError, match="another run"):
        run_system(RandomSystem(seed=99), demo.dialogues, demo.kb, tmp_path, split="all")
    with pytest.raises(RunKeyMismatchError):
        run_system(Counting(), demo.dialogues, demo.kb, tmp_path, split="all", setting="open")


def test_parallel_equals_serial_and_unsafe_systems_get_one_instance_per_worker(demo, tmp_path) -> None:
    serial = run_system(RandomSystem(seed=2), demo.dialogues, demo.kb, tmp_path / "s", split="all")
    made: list[tuple[int, int]] = []

    class Unsafe(RandomSystem):
        thread_safe = False

        def __init__(self) -> None:
            super().__init__(seed=2)
            self.name = "random"
            self.owner: int | None = None

        def respond(self, inp):
            me = threading.get_ident()
            if self.owner is None:
                self.owner = me
                made.append((id(self), me))
            assert self.owner == me, "instance shared between threads"
            return super().respond(inp)

    parallel = run_system(Unsafe, demo.dialogues, demo.kb, tmp_path / "p", split="all", workers=3)
    assert parallel.table.to_dict() == serial.table.to_dict()
    assert 1 <= len(made) <= 3 and len({i for i, _ in made}) == len(made)
    with pytest.raises(ValueError, match="not thread-safe"):
        run_system(Unsafe(), demo.dialogues, demo.kb, tmp_path / "q", split="all", workers=2)


def test_usage_summary_hand_computed() -> None:
    from groundtrace.crs.systems.predictions import Prediction

    preds = [
        Prediction(dialogue_id="d", turn_index=i, latency_s=v, cost_usd=0.5, prompt_tokens=2)
        for i, v in enumerate([1.0, 2.0, 3.0, 4.0])
    ]
    s = usage_summary(preds)
    # mean (1+2+3+4)/4 = 2.5; p50 at position 1.5 → 2.5; p95 at 2.85 → 3 + 0.85 = 3.85
    assert s["latency_s"]["mean"] == 2.5 and s["latency_s"]["p50"] == 2.5
    assert s["latency_s"]["p95"] == pytest.approx(3.85) and s["latency_s"]["max"] == 4.0
    assert s["cost_usd"] == 2.0 and s["prompt_tokens"] == 8


def test_read_predictions_reports_bad_lines(tmp_path) -> None:
    path = tmp_path / "p.jsonl"
    good = '{"dialogue_id": "d1", "turn_index": 1, "ranking": ["a"], "response": "x"}'
    path.write_text(good + '\n{"dialogue_id": "d1", "turn_index": "one"}\nnot json\n\n' + good + "\n")
    file = read_predictions(path)
    assert len(file.predictions) == 2
    assert [e.split(": ")[0] for e in file.errors] == [f"{path}:2", f"{path}:3"]


@pytest.mark.slow  # end to end: crs run and crs score CLIs
def test_cli_run_and_score_agree(demo, tmp_path) -> None:
    runner = CliRunner()
    args = ["--dataset", str(demo.dataset), "--split", "all", "--kb", str(demo.kb_path)]
    result = runner.invoke(
        app,
        [
            "crs",
            "run",
            *args,
            "--system",
            "random",
            "--out",
            str(tmp_path / "a"),
            "--workers",
            "2",
            "--limit",
            "8",
            "--seed",
            "4",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "recall@1" in result.output
    flat = " ".join(result.output.replace("│", " ").split())
    assert "nli_entailment unavailable" in flat  # shown as unavailable, never as 0
    assert "open_recall@1" not in flat  # the other setting's metrics are simply not listed
    info = json.loads((tmp_path / "a" / "run.json").read_text())
    assert info["status"] == "complete" and info["config"] == {"seed": 4} and info["counts"]["dialogues"] == 8
    assert info["kb_hash"] == demo.kb.content_hash
    result = runner.invoke(
        app,
        [
            "crs",
            "score",
            *args,
            "--predictions",
            str(tmp_path / "a" / PREDICTIONS_FILE),
            "--out",
            str(tmp_path / "b"),
            "--limit",
            "8",
        ],
    )
    assert result.exit_code == 0, result.output
    a = json.loads((tmp_path / "a" / "scores.json").read_text())
    b = json.loads((tmp_path / "b" / "scores.json").read_text())
    assert a == b
    assert "nli_entailment" in a["unavailable"]
    result = runner.invoke(
        app,
        [
            "crs",
            "score",
            *args,
            "--predictions",
            str(tmp_path / "a" / PREDICTIONS_FILE),
            "--out",
            str(tmp_path / "nli"),
            "--limit",
            "8",
            "--nli",
            "lexical",
        ],
    )
    assert result.exit_code == 0, result.output
    with_nli = json.loads((tmp_path / "nli" / "scores.json").read_text())
    assert (
        0.0 <= with_nli["aggregate"]["nli_entailment"] <= 1.0
        and "nli_entailment" not in with_nli["unavailable"]
    )
    assert json.loads((tmp_path / "nli" / "run.json").read_text())["entailment"]
    bad = runner.invoke(app, ["crs", "run", *args, "--system", "randon", "--out", str(tmp_path / "c")])
    assert bad.exit_code != 0 and "random" in bad.output


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 1.0))
@pytest.mark.slow
def test_resume_from_a_file_cut_at_any_byte_scores_like_a_clean_run(
    demo, tmp_path_factory, cut: float
) -> None:
    dialogues = demo.dialogues[:8]
    out = tmp_path_factory.mktemp("cut")
    system = RandomSystem(seed=8)
    clean = run_system(system, dialogues, demo.kb, out, split="all")
    path = out / PREDICTIONS_FILE
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * cut)])  # the crash happened while this many bytes were on disk
    resumed = run_system(system, dialogues, demo.kb, out, split="all")
    assert resumed.table.to_dict() == clean.table.to_dict()
    assert len(read_predictions(path).predictions) == clean.table.n_turns


@settings(max_examples=100, deadline=None)
@given(
    pool=st.lists(st.text("abc", min_size=1, max_size=3), min_size=1, max_size=6, unique=True),
    picks=st.lists(st.text("abcd", min_size=1, max_size=3), max_size=6),
)
def test_check_output_accepts_exactly_rankings_inside_the_pool(pool: list[str], picks: list[str]) -> None:
    raw = {"ranking": picks, "response": "r"}
    if set(picks) <= set(pool):
        assert check_output(raw, pool)[0].ranking == picks
    else:
        with pytest.raises(ValueError, match="unknown POI id"):
            check_output(raw, pool)


def test_check_output_rejects_wrong_shapes() -> None:
    for bad in (
        {"ranking": "a", "response": ""},
        {"ranking": [1], "response": ""},
        ["a"],
        None,
        {"ranking": [], "response": "", "extra": 1},
    ):
        with pytest.raises(ValueError, match="invalid output"):
            check_output(bad, ["a"])


@pytest.mark.slow
def test_resolve_kb(demo, tmp_path) -> None:
    from groundtrace.crs.build.builder import build_dataset
    from groundtrace.crs.kb.demo import generate_demo_kb

    # the tests' demo KB is smaller than the default city: regenerating it from the manifest must fail
    data = load_split(demo.dataset, "all")
    with pytest.raises(ValueError, match="pass --kb"):
        resolve_kb(None, data.manifest, data.dialogues)
    with pytest.raises(ValueError, match="was built on"):
        resolve_kb("demo", data.manifest, data.dialogues)
    assert resolve_kb(str(demo.kb_path), data.manifest, data.dialogues).content_hash == demo.kb.content_hash
    # a dataset built on the default demo city (seed 2) is found without --kb
    build_dataset(generate_demo_kb(2), 3, 1, tmp_path / "d2")
    small = load_split(tmp_path / "d2", "all")
    assert resolve_kb(None, small.manifest, small.dialogues).content_hash == generate_demo_kb(2).content_hash
    with pytest.raises(ValueError, match="no split 'dev'"):
        load_split(tmp_path / "d2", "dev")


def test_resume_drops_lines_that_are_not_utf8_and_scores_like_a_clean_run(demo, tmp_path) -> None:
    dialogues = demo.dialogues[:6]
    asked: list[str] = []

    class Recording(RandomSystem):
        def respond(self, inp):
            asked.append(inp.dialogue_id)
            return super().respond(inp)

    clean = run_system(Recording(seed=3), dialogues, demo.kb, tmp_path / "clean", split="all")
    out = tmp_path / "resumed"
    run_system(Recording(seed=3), dialogues, demo.kb, out, split="all")
    path = out / PREDICTIONS_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    # a line of the third dialogue gets bytes that are not UTF-8: that dialogue is re-run, the rest kept
    third = dialogues[2].dialogue_id.encode()
    broken = next(i for i, line in enumerate(lines) if third in line)
    lines[broken] = lines[broken].replace(b'"response":"', b'"response":"\xff\xfe', 1)
    path.write_bytes(b"".join(lines))
    offset = lines[broken].index(b"\xff")
    assert read_predictions(path).errors == [
        (
            f"{path}:{broken + 1}: not valid UTF-8: invalid start byte (byte 0xff at byte offset "
            f"{offset} of the line)"
        )
    ]
    asked.clear()
    resumed = run_system(Recording(seed=3), dialogues, demo.kb, out, split="all")
    assert asked == [dialogues[2].dialogue_id] * len(dialogues[2].recommendation_turns())
    assert resumed.info["counts"]["bad_prediction_lines"] == 1
    assert resumed.table.to_dict() == clean.table.to_dict()
    assert read_predictions(path).errors == []


def test_run_json_records_versions_git_and_machine(demo, tmp_path) -> None:
    import os
    import platform
    import subprocess
    from importlib.metadata import version
    from pathlib import Path

    import groundtrace
    from groundtrace.crs.evaluation.offline import score_file

    result = run_system(RandomSystem(seed=1), demo.dialogues, demo.kb, tmp_path / "r", limit=3)
    prov = result.info["provenance"]
    assert prov["groundtrace"] == groundtrace.__version__
    assert prov["python"]["version"] == platform.python_version()
    assert prov["packages"]["numpy"] == version("numpy")
    assert prov["packages"]["pydantic"] == version("pydantic")
    assert "torch" not in prov["packages"] or prov["packages"]["torch"] == version("torch")
    assert prov["machine"]["cpu_count"] == os.cpu_count() and prov["machine"]["platform"]
    src = Path(groundtrace.__file__).resolve().parent
    head = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    if head.returncode == 0:  # a git checkout (CI, development): the commit the code came from
        assert prov["git"]["commit"] == head.stdout.strip() and isinstance(prov["git"]["dirty"], bool)
    else:
        assert prov["git"] is None
    on_disk = json.loads((tmp_path / "r" / "run.json").read_text())
    assert on_disk["provenance"] == prov and on_disk["history"][-1]["groundtrace"] == groundtrace.__version__
    offline = score_file(tmp_path / "r" / PREDICTIONS_FILE, demo.dialogues, demo.kb, tmp_path / "s", limit=3)
    assert offline.info["provenance"] == prov


def test_git_state_outside_a_checkout_is_none(tmp_path) -> None:
    from groundtrace.crs.evaluation.provenance import git_state, package_versions

    assert git_state(tmp_path) is None
    assert package_versions(("numpy", "no-such-package-xyz")).keys() == {"numpy"}


def test_git_state_ignores_the_checkout_around_an_installed_copy(tmp_path) -> None:
    """groundtrace installed into a git-ignored ``.venv`` of the user's own repository: ``git rev-parse``
    there gives the user's commit, which is not the code's."""
    import shutil
    import subprocess

    from groundtrace.crs.evaluation.provenance import git_state

    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", *args],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout.strip()

    git("init", "-q")
    (tmp_path / ".gitignore").write_text(".venv/\n")
    package = tmp_path / ".venv" / "site-packages" / "groundtrace"
    package.mkdir(parents=True)
    (package / "provenance.py").write_text("# installed copy\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "provenance.py").write_text("# source\n")
    git("add", ".gitignore", "src")
    git("commit", "-q", "-m", "user's project")
    assert git_state(package) is None
    assert git_state(tmp_path / "src") == {"commit": git("rev-parse", "HEAD"), "dirty": False}
