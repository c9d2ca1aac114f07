"""Progress in pipes: heartbeat lines for crs build/run/score and catalog enrich; full-width help in pipes."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import pytest

from groundtrace.cli.console import PIPE_WIDTH
from groundtrace.cli.progress import Heartbeat, clock_text, heartbeat_interval, heartbeat_line, track

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
BYTES_BEAT = re.compile(
    r"\[heartbeat\] (?P<label>.+?): (?P<done>\d+\.\d)/(?P<total>\d+\.\d) MB \((?P<share>\d+)%\) · "
    r"(?:[\d.]+|\?) MB/s · elapsed \d+:\d\d:\d\d · ETA (?:\d+:\d\d:\d\d|\?)"
)
BEAT = re.compile(
    r"\[heartbeat\] (?P<label>.+?): (?P<done>\d+)(?:/(?P<total>\d+))? (?P<unit>\S+)(?: \(\d+%\))? · "
    r"(?:[\d.]+|\?)/s · elapsed \d+:\d\d:\d\d · ETA (?:\d+:\d\d:\d\d|\?)"
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_heartbeat_line_gives_counts_rate_and_eta() -> None:
    line = heartbeat_line("crs run random · closed", "dialogues", 12, 40, 6.0)
    assert line == (
        "[heartbeat] crs run random · closed: 12/40 dialogues (30%) · 2.00/s · elapsed 0:00:06 · ETA 0:00:14"
    )
    assert heartbeat_line("x", "SKUs", 0, None, 0.0).endswith("0 SKUs · ?/s · elapsed 0:00:00 · ETA ?")
    assert heartbeat_line("x", "SKUs", 5, 5, 2.0).endswith("ETA 0:00:00")
    assert clock_text(3725.9) == "1:02:05" and clock_text(-3) == "0:00:00"


def test_heartbeat_prints_at_most_once_per_interval_and_a_final_line() -> None:
    clock, stream = FakeClock(), io.StringIO()
    beat = Heartbeat("job", "items", 10, stream, interval=10.0, clock=clock)
    for t, done in ((0, 1), (5, 2), (9.9, 3), (10, 4), (15, 5), (21, 9)):
        clock.now = 100.0 + t
        beat.update(done=done)
    beat.__exit__(None, None, None)  # no thread was started: the final line only
    lines = stream.getvalue().splitlines()
    assert [int(BEAT.match(x)["done"]) for x in lines] == [1, 4, 9]  # t=0, t=10, t=21 (>= 10 after 10)
    clock.now += 1
    beat.update(advance=1)  # 10/10 after the interval? no: 1 s later, so only the exit line prints it
    beat.__exit__(None, None, None)
    assert stream.getvalue().splitlines()[-1].startswith("[heartbeat] job: 10/10 items (100%)")


def test_heartbeat_line_in_megabytes_for_bytes() -> None:
    line = heartbeat_line("kb reviews", "bytes", 1_234_500_000, 5_341_900_000, 10.0)
    assert line == (  # 123.45 MB/s; (5341.9 - 1234.5) MB / 123.45 MB/s = 33.3 s
        "[heartbeat] kb reviews: 1234.5/5341.9 MB (23%) · 123.45 MB/s · elapsed 0:00:10 · ETA 0:00:33"
    )
    assert BYTES_BEAT.match(line)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("unit", "shown"), [("dialogues", ("2/4", "dialogues", "/s")), ("bytes", ("MB/s",))])
def test_the_terminal_bar_shows_counts_rate_and_eta(unit: str, shown: tuple[str, ...]) -> None:
    term = _Terminal()
    with track("job", total=4 if unit != "bytes" else 4_000_000, unit=unit, stream=term) as bar:
        for _ in range(2):
            time.sleep(0.05)  # a rate needs two samples apart in time (rich's speed estimate)
            bar.update(advance=1 if unit != "bytes" else 1_000_000)
        bar.progress.refresh()  # type: ignore[union-attr]
        drawn = term.getvalue()
    assert "[heartbeat]" not in drawn and "ETA" in drawn
    for text in shown:
        assert text in drawn, (text, drawn[-400:])


def test_after_the_count_is_complete_the_rate_holds_and_repeats_say_finishing() -> None:
    """``crs run --config`` writes its report, ``crs import-release`` builds its KB after the last item:
    the background thread's repeated lines keep the rate at completion (it decayed towards 0 as the
    elapsed time grew: 130/130 dialogues at 8.17/s, then 6.87, 5.91, 5.13, 4.59/s) and say so."""
    clock, stream = FakeClock(), io.StringIO()
    with Heartbeat("job", "items", 10, stream, interval=0.01, clock=clock) as beat:
        clock.now = 105.0
        beat.update(done=10)  # complete after 5 s: 2 items/s
        clock.now = 120.0  # 15 s of other work; the thread repeats the line
        for _ in range(1000):
            if len(stream.getvalue().splitlines()) >= 2:
                break
            threading.Event().wait(0.01)
    first, repeated = stream.getvalue().splitlines()[:2]
    assert first == "[heartbeat] job: 10/10 items (100%) · 2.00/s · elapsed 0:00:05 · ETA 0:00:00"
    assert repeated == (
        "[heartbeat] job: 10/10 items (100%) · 2.00/s · elapsed 0:00:20 · ETA 0:00:00 · finishing"
    )


def test_interval_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for raw, expected in (("5", 5.0), ("0", 0.0), ("-1", 30.0), ("nan", 30.0), ("soon", 30.0)):
        monkeypatch.setenv("GROUNDTRACE_HEARTBEAT_S", raw)
        assert heartbeat_interval() == expected
    monkeypatch.delenv("GROUNDTRACE_HEARTBEAT_S")
    assert heartbeat_interval() == 30.0


def test_track_uses_a_bar_on_a_terminal_and_lines_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_HEARTBEAT_S", "0")
    pipe = io.StringIO()
    with track("job [b]", total=3, unit="items", stream=pipe) as bar:
        for _ in range(3):
            bar.update(advance=1)
    assert [BEAT.match(x)["done"] for x in pipe.getvalue().splitlines()] == ["1", "2", "3"]
    assert "job [b]" in pipe.getvalue()  # text, not markup
    term = io.StringIO()
    with track("job", total=3, unit="items", stream=term, terminal=True) as bar:
        bar.update(done=3)
    assert "[heartbeat]" not in term.getvalue()
    silent = io.StringIO()
    with track("job", total=3, stream=silent, disable=True) as bar:
        bar.update(done=3)
    assert silent.getvalue() == ""


def _cli(*args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """The console script with stdout and stderr piped (not a terminal) and a heartbeat on every update."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(GROUNDTRACE_HEARTBEAT_S="0", PYTHONPATH=str(ROOT / "src") + os.pathsep + str(ROOT), **extra)
    code = "import sys; from groundtrace.cli import main; sys.argv = ['groundtrace', *sys.argv[1:]]; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _cli_here(monkeypatch: pytest.MonkeyPatch, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``_cli``'s command line run in this process by typer's CliRunner, as a CompletedProcess: stdout and
    stderr captured apart (neither a terminal), ``COLUMNS`` as ``main`` sets it in a pipe, a heartbeat on
    every update. For tests whose subject is what the commands print: a child process per command imports
    groundtrace, scikit-learn, scipy and pandas again (1-2 s CPU each on a 2-core machine).
    :func:`test_piped_long_commands_print_heartbeat_lines` keeps real pipes to child processes."""
    from typer.testing import CliRunner

    from groundtrace.cli import app

    with monkeypatch.context() as patch:
        patch.setenv("COLUMNS", str(PIPE_WIDTH))
        patch.setenv("GROUNDTRACE_HEARTBEAT_S", "0")
        patch.chdir(cwd)
        result = CliRunner().invoke(app, list(args), prog_name="groundtrace")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, stderr)


def _beats(stderr: str, label: str) -> list[tuple[int, int | None]]:
    found = [BEAT.match(line) for line in stderr.splitlines()]
    return [
        (int(m["done"]), int(m["total"]) if m["total"] else None)
        for m in found
        if m and m["label"].startswith(label)
    ]


@pytest.mark.slow  # five CLI subprocesses end to end (~15-40 s); the unit tests above cover the logic
def test_piped_long_commands_print_heartbeat_lines(tmp_path: Path) -> None:
    from groundtrace.catalog.demo_catalog import write_demo_catalog

    build = _cli("crs", "build", "--kb", "demo", "--dialogues", "6", "--out", "ds", cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    beats = _beats(build.stderr, "crs build")
    assert beats[-1] == (6, 6) and len(beats) >= 2 and all(t == 6 for _, t in beats)
    run = _cli(
        "crs", "run", "--dataset", "ds", "--split", "all", "--system", "random", "--out", "run", cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    beats = _beats(run.stderr, "crs run random · closed")
    assert beats[-1] == (6, 6) and [d for d, _ in beats] == sorted(d for d, _ in beats)
    score = _cli(
        "crs",
        "score",
        "--dataset",
        "ds",
        "--predictions",
        "run/predictions.jsonl",
        "--out",
        "sc",
        cwd=tmp_path,
    )
    assert score.returncode == 0, score.stderr
    beats = _beats(score.stderr, "crs score predictions.jsonl")  # recommendation turns, not the file
    turns = json.loads((tmp_path / "sc" / "scores.json").read_text(encoding="utf-8"))["n_turns"]
    assert turns > 6 and beats[0] == (0, turns) and beats[-1] == (turns, turns)
    assert len(beats) == turns + 1 and all(t == turns for _, t in beats)
    assert "turns" in next(x for x in score.stderr.splitlines() if x.startswith("[heartbeat] crs score"))
    paths = write_demo_catalog(tmp_path / "cat")
    enrich = _cli("catalog", "enrich", str(paths.skus), "--out", "out.jsonl", cwd=tmp_path)
    assert enrich.returncode == 0, enrich.stderr
    beats = _beats(enrich.stderr, "catalog enrich")
    total = beats[-1][1]
    assert total and beats[-1] == (total, total) and len(beats) == total + 1  # 0, 1, ..., total
    to_db = _cli("catalog", "enrich", str(paths.skus), "--db", "sqlite:///cat.db", cwd=tmp_path)
    assert to_db.returncode == 0, to_db.stderr
    beats = _beats(to_db.stderr, "catalog enrich --db")
    assert beats and beats[-1] == (total, total)  # the same SKUs, counted as they are written
    assert [d for d, _ in beats] == sorted(d for d, _ in beats)
    for result in (build, run, score, enrich, to_db):
        assert "\x1b[" not in result.stderr  # no terminal control codes in a log


@pytest.mark.slow  # eight commands (in this process: _cli_here)
def test_piped_kb_build_import_leaderboard_simulate_and_hydrate_print_heartbeat_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other long commands: a Yelp KB build (per file read, in MB), a public-release import and a
    hydration (MB of the user's review file), a leaderboard and an experiment file (dialogues over all
    their runs), a simulation."""
    from groundtrace.crs.kb.demo import generate_demo_kb
    from groundtrace.crs.kb.knowledge_base import KnowledgeBase
    from groundtrace.crs.kb.store import save_kb
    from groundtrace.crs.schema import POI, Review
    from tests.crs.dataset.conftest import yelp_file

    def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return _cli_here(monkeypatch, *args, cwd=cwd)

    yelp = FIXTURES / "yelp"
    kb = cli(
        "crs", "kb", "build", "--yelp-dir", str(yelp), "--out", "kb.sqlite", "--per-type", "2",
        "--min-reviews", "1", "--min-review-chars", "0", cwd=tmp_path,
    )  # fmt: skip
    assert kb.returncode == 0, kb.stderr
    found = [m for m in map(BYTES_BEAT.match, kb.stderr.splitlines()) if m]
    stages = [m["label"] for m in found if m["share"] == "100"]
    assert stages == [
        "crs kb build businesses (count cities)",
        "crs kb build businesses",
        "crs kb build reviews",
    ]
    demo = generate_demo_kb(0, n_per_type=12, reviews_per_poi=4)
    save_kb(demo, tmp_path / "demo.sqlite")
    build = cli("crs", "build", "--kb", "demo.sqlite", "--dialogues", "6", "--out", "ds", cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    release = cli(
        "crs", "export", "ds", "--kb", "demo.sqlite", "--format", "trace-release", "--out", "rel-pub",
        cwd=tmp_path,
    )  # fmt: skip
    assert release.returncode == 0, release.stderr
    imported = cli(
        "crs", "import-release", "rel-pub", "--yelp-reviews", str(yelp_file(demo, tmp_path / "reviews.json")),
        "--out", "imported", cwd=tmp_path,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    found = [m for m in map(BYTES_BEAT.match, imported.stderr.splitlines()) if m]
    assert found and found[-1]["label"] == "crs import-release reviews" and found[-1]["share"] == "100"
    board = cli(
        "crs", "leaderboard", "--dataset", "ds", "--out", "lb", "--systems", "random,oracle",
        "--settings", "closed", "--split", "all", "--resamples", "10", cwd=tmp_path,
    )  # fmt: skip
    assert board.returncode == 0, board.stderr
    beats = _beats(board.stderr, "crs leaderboard ds")
    assert (
        beats[0] == (0, 12) and beats[-1] == (12, 12) and [d for d, _ in beats] == sorted(d for d, _ in beats)
    )
    (tmp_path / "run.yaml").write_text(
        "dataset: ds\nsplits: [all]\nsettings: [closed, open]\nsystems: [random, oracle]\n"
        "report: {resamples: 10, dialogue_pages: 0}\nout: exp\n",
        encoding="utf-8",
    )
    experiment = cli("crs", "run", "--config", "run.yaml", cwd=tmp_path)
    assert experiment.returncode == 0, experiment.stderr
    beats = _beats(experiment.stderr, "crs run --config run.yaml")
    assert beats[-1] == (24, 24) and [d for d, _ in beats] == sorted(d for d, _ in beats)  # 2 x 2 x 6
    sim = cli("crs", "simulate", "--system", "random", "--dataset", "ds", "--split", "all", "--out", "sim",
               cwd=tmp_path)  # fmt: skip
    assert sim.returncode == 0, sim.stderr
    beats = _beats(sim.stderr, "crs simulate random · closed")
    assert beats[0] == (0, 6) and beats[-1] == (6, 6) and len(beats) == 7
    io_fixture = FIXTURES / "crs_io"
    pois = [POI.model_validate_json(x) for x in (io_fixture / "kb_pois.jsonl").read_text().splitlines()]
    reviews = [
        Review.model_validate_json(x) for x in (io_fixture / "kb_reviews.jsonl").read_text().splitlines()
    ]
    kb_path = save_kb(KnowledgeBase(pois, reviews, name="crs_io"), tmp_path / "io.sqlite")
    export = cli(
        "crs", "export", str(io_fixture / "dataset"), "--redact", "--kb", str(kb_path), "--out", "rel",
        cwd=tmp_path,
    )  # fmt: skip
    assert export.returncode == 0, export.stderr
    hydrate = cli("crs", "hydrate", "rel", "--yelp-reviews", str(io_fixture / "yelp_reviews_full.json"),
                   "--out", "hyd", cwd=tmp_path)  # fmt: skip
    assert hydrate.returncode == 0, hydrate.stderr
    found = [m for m in map(BYTES_BEAT.match, hydrate.stderr.splitlines()) if m]
    assert found and found[-1]["label"] == "crs hydrate reviews" and found[-1]["share"] == "100"
    for result in (kb, imported, board, experiment, sim, hydrate):
        assert "\x1b[" not in result.stderr


@pytest.mark.slow  # CLI subprocesses (~5-9 s)
def test_help_and_tables_are_not_cut_in_a_pipe(tmp_path: Path) -> None:
    result = _cli("crs", "run", "--help", cwd=tmp_path)
    assert result.returncode == 0 and "…" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) > 80
    assert max(len(line) for line in result.stdout.splitlines()) <= PIPE_WIDTH
    narrow = _cli("crs", "run", "--help", cwd=tmp_path, COLUMNS="70")  # an explicit width wins
    assert narrow.returncode == 0 and max(len(line) for line in narrow.stdout.splitlines()) <= 70


def test_throttled_forwards_the_ends_and_about_every_step() -> None:
    from groundtrace.cli.progress import throttled

    seen: list[tuple[int, int]] = []
    progress = throttled(lambda done, total: seen.append((done, total)), steps=10)
    for done in range(101):
        progress(done, 100)
    assert seen == [(d, 100) for d in range(0, 101, 10)]
    seen.clear()
    few = throttled(lambda done, total: seen.append((done, total)), steps=10)
    for done in range(4):
        few(done, 3)
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]  # fewer items than steps: every one


@pytest.mark.slow  # a CLI subprocess on the shared NLI sample
def test_piped_nli_eval_prints_heartbeat_lines_per_dataset(tmp_path: Path) -> None:
    from tests.conftest import shared_path

    data = shared_path("nli")
    result = _cli(
        "nli-eval", "--model", "lexical", "--data-dir", str(data), "--limit", "40", "--wice-limit", "10",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    snli = _beats(result.stderr, "nli-eval lexical · e-SNLI")
    wice = _beats(result.stderr, "nli-eval lexical · WiCE")
    assert snli[0] == (0, 40) and snli[-1] == (40, 40)
    assert wice and wice[-1][0] == wice[-1][1] and wice[-1][1] >= 10  # pairs: a claim has several premises
    assert "\x1b[" not in result.stderr


@pytest.mark.slow  # a CLI subprocess training the CRF tagger
def test_piped_catalog_train_prints_heartbeat_lines_per_model(tmp_path: Path) -> None:
    pytest.importorskip("pycrfsuite", reason="the [learned] extra (python-crfsuite) is not installed")
    from groundtrace.catalog.demo_catalog import write_demo_catalog

    paths = write_demo_catalog(tmp_path / "cat")
    result = _cli(
        "catalog", "train", "--skus", str(paths.skus), "--gold", str(paths.gold), "--out", "m.json",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    beats = _beats(result.stderr, "catalog train")
    assert beats == [(n, 6) for n in range(7)]  # 5 cross-fitting folds, then the final model
    assert "\x1b[" not in result.stderr
