"""``crs run --config`` / ``crs leaderboard --config``: the experiment file, its errors, runs and reports."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.core.files.yaml_loader import YamlError
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.report.config import load_run_config
from groundtrace.crs.report.experiment import plan_runs
from groundtrace.crs.systems.reference import RandomSystem
from tests.crs.report.demo_data import make_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("experiment"), n_dialogues=12)


@pytest.fixture
def paths(tmp_path):
    """Where a dataset and a KB would be: the config checks below stop before anything is read."""
    return SimpleNamespace(dataset=tmp_path / "ds", kb_path=tmp_path / "kb.sqlite")


def _write(folder: Path, text: str, name: str = "run.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def _config(demo, folder: Path, body: str) -> Path:
    head = f"dataset: {demo.dataset}\nkb: {demo.kb_path}\nsplits: [all]\n"
    return _write(folder, head + textwrap.dedent(body).lstrip())


def _error(path: Path) -> str:
    with pytest.raises(YamlError) as info:
        plan_runs(load_run_config(path))
    return str(info.value)


def test_config_errors_name_the_file_line_and_a_suggestion(paths, tmp_path) -> None:
    bad_key = _config(paths, tmp_path, "setings: [closed]\nsystems: [random]\n")
    assert f"{bad_key}:4: setings: unknown key (did you mean 'settings'?)" in _error(bad_key)
    typo = _config(paths, tmp_path, "systems:\n  - random\n  - system: tfidff\n")
    message = _error(typo)
    assert f"{typo}:6:" in message and "systems.1.system" in message and "tfidf" in message
    url = _config(paths, tmp_path, "systems:\n  - system: http://127.0.0.1:9/respond\n")
    assert "needs a label" in _error(url) and f"{url}:5:" in _error(url)
    args = _config(
        paths, tmp_path, "systems:\n  - random\n  - system: random\n    label: r2\n    args: {alpha: 1}\n"
    )
    message = _error(args)
    assert f"{args}:6: systems.1: system 'random' takes no option 'alpha' (accepts: seed)" == message
    twice = _config(paths, tmp_path, "systems: [random, tfidf, random]\n")
    assert f"{twice}:4: systems.2: label 'random' used twice (first: systems.0)" == _error(twice)
    metric = _config(paths, tmp_path, "metrics: [recall@1, cgss]\nsystems: [random]\n")
    assert f"{metric}:4: metrics:" in _error(metric) and "cgs" in _error(metric)
    dup = _config(paths, tmp_path, "seeds: [1, 1]\nsystems: [random]\n")
    assert "listed twice: 1" in _error(dup)
    base = _config(paths, tmp_path, "systems: [random, tfidf]\nreport:\n  baseline: tfidff\n")
    assert f"{base}:6: report.baseline: 'tfidff' is not the label of a run (random, tfidf)" == _error(base)
    sort = _config(paths, tmp_path, "systems: [random]\nreport: {sort_by: recal@1}\n")
    assert f"{sort}:5: report.sort_by:" in _error(sort)


def test_plan_seeds_only_seeded_systems_and_names_folders(paths, tmp_path) -> None:
    path = _config(
        paths,
        tmp_path,
        """
        settings: [closed, open]
        seeds: [0, 1]
        systems:
          - random
          - system: tfidf
            label: TF-IDF (k1)
          - system: random
            label: fixed
            args: {seed: 9}
        """,
    )
    planned = plan_runs(load_run_config(path))
    assert [(p.label, p.setting, p.seed, p.folder) for p in planned] == [
        ("random · seed 0", "closed", 0, "random-closed-seed0"),
        ("random · seed 1", "closed", 1, "random-closed-seed1"),
        ("TF-IDF (k1)", "closed", None, "TF-IDF-k1-closed"),
        ("fixed", "closed", None, "fixed-closed"),
        ("random · seed 0", "open", 0, "random-open-seed0"),
        ("random · seed 1", "open", 1, "random-open-seed1"),
        ("TF-IDF (k1)", "open", None, "TF-IDF-k1-open"),
        ("fixed", "open", None, "fixed-open"),
    ]


def test_cli_refuses_options_the_config_sets_and_bad_files(paths, tmp_path) -> None:
    path = _config(paths, tmp_path, "systems: [random]\n")
    runner = CliRunner()
    both = runner.invoke(app, ["crs", "run", "--config", str(path), "--system", "tfidf"])
    assert both.exit_code == 2 and "--system is set in the config file" in both.output
    missing = runner.invoke(app, ["crs", "run", "--system", "random", "--out", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "missing --dataset (or give --config FILE)" in missing.output
    no_out = runner.invoke(app, ["crs", "run", "--config", str(path)])
    assert no_out.exit_code == 2 and f"{path}:1: no output folder" in no_out.output
    broken = _write(tmp_path, "systems: [random\n", "broken.yaml")
    result = runner.invoke(app, ["crs", "leaderboard", "--config", str(broken)])
    assert result.exit_code == 2 and f"{broken}:" in result.output and "invalid YAML" in result.output
    unknown_log = runner.invoke(app, ["crs", "run", "--config", str(path), "--log", "wandb"])
    assert unknown_log.exit_code == 2 and "choose 'mlflow'" in unknown_log.output


@pytest.mark.slow
def test_config_run_reproduces_direct_runs_and_the_leaderboard(demo, tmp_path) -> None:
    path = _config(
        demo,
        tmp_path,
        """
        name: tiny-board
        out: results
        settings: [closed]
        seeds: [0, 3]
        metrics: [recall@1, mrr, cgs, rejection_recovery]
        systems: [random, tfidf]
        report: {resamples: 20, sort_by: mrr, baseline: random, test_bounds: true, dialogue_pages: 2}
        """,
    )
    result = CliRunner().invoke(app, ["crs", "run", "--config", str(path)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "results"  # relative to the config file
    assert sorted(p.name for p in (out / "runs").iterdir()) == [
        "random-closed-seed0",
        "random-closed-seed3",
        "tfidf-closed",
    ]
    direct = run_system(
        RandomSystem(seed=3),
        demo.dialogues,
        demo.kb,
        tmp_path / "direct",
        metrics=["recall@1", "mrr", "cgs", "rejection_recovery"],
    )
    from_config = json.loads((out / "runs" / "random-closed-seed3" / "scores.json").read_text())
    assert from_config == direct.table.to_dict()
    info = json.loads((out / "runs" / "random-closed-seed3" / "run.json").read_text())
    assert info["label"] == "random · seed 3" and info["config"] == {"seed": 3}
    assert info["run_config"]["name"] == "tiny-board" and len(info["run_config"]["sha256"]) == 64
    assert info["run_config"]["run"] == {"label": "random · seed 3", "entry": 0, "seed": 3}
    assert info["run_config"]["content"]["seeds"] == [0, 3] and info["provenance"]["groundtrace"]
    board = json.loads((out / "leaderboard.json").read_text())
    assert {r["label"] for r in board["leaderboard"]} == {"random · seed 0", "random · seed 3", "tfidf"}
    assert board["sort_by"] == {"closed": "mrr"} and board["test_bounds"] is True
    assert board["baseline"]["closed"].startswith("random · seed")  # named by system: its first row
    assert len(list((out / "dialogues").iterdir())) == 2
    again = CliRunner().invoke(
        app, ["crs", "leaderboard", "--config", str(path), "--out", str(tmp_path / "lb")]
    )
    assert again.exit_code == 0, again.output
    rerun = json.loads((tmp_path / "lb" / "leaderboard.json").read_text())["leaderboard"]
    assert {r["label"]: r["cells"] for r in rerun} == {r["label"]: r["cells"] for r in board["leaderboard"]}


@pytest.mark.slow
def test_log_mlflow_writes_params_metrics_and_artifacts_to_a_local_store(demo, tmp_path, monkeypatch) -> None:
    mlflow = pytest.importorskip("mlflow", reason="the [tracking] extra (mlflow-skinny) is not installed")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)  # the default store is ./mlruns
    path = _config(
        demo,
        tmp_path,
        """
        name: tracked
        out: results
        settings: [closed]
        seeds: [0]
        metrics: [recall@1, cgs]
        systems: [random, oracle]
        report: {resamples: 10, html_turns: 2}
        """,
    )
    result = CliRunner().invoke(app, ["crs", "run", "--config", str(path), "--log", "mlflow"])
    assert result.exit_code == 0, result.output
    store = tmp_path / "mlruns"
    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("tracked")
    runs = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    assert set(runs) == {"tracked", "random · closed", "oracle · closed"}
    parent = runs["tracked"]
    report = {a.path for a in client.list_artifacts(parent.info.run_id, "report")}
    assert {"report/leaderboard.md", "report/report.html", "report/leaderboard.json"} <= report
    assert "report/dialogues" in report  # the pages report.html links to
    pages = {a.path for a in client.list_artifacts(parent.info.run_id, "report/dialogues")}
    written = {f"report/dialogues/{p.name}" for p in (tmp_path / "results" / "dialogues").iterdir()}
    assert pages == written and pages
    assert [a.path for a in client.list_artifacts(parent.info.run_id, "config")] == ["config/run.yaml"]
    for name, folder in (("random · closed", "random-closed"), ("oracle · closed", "oracle-closed")):
        run = runs[name]
        scores = json.loads((tmp_path / "results" / "runs" / folder / "scores.json").read_text())
        assert run.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert run.data.metrics["recall_at_1"] == pytest.approx(scores["aggregate"]["recall@1"])
        assert run.data.metrics["cgs"] == pytest.approx(scores["aggregate"]["cgs"])
        assert run.data.metrics["n_turns"] == scores["n_turns"]
        assert run.data.params["setting"] == "closed" and run.data.params["split"] == "all"
        assert {a.path for a in client.list_artifacts(run.info.run_id, "run")} == {
            "run/run.json",
            "run/scores.json",
            "run/dialogues.json",
        }
        local = Path(client.download_artifacts(run.info.run_id, "run/scores.json", str(tmp_path / name)))
        assert json.loads(local.read_text()) == scores
    assert runs["random · closed"].data.params["config.seed"] == "0"
    assert (store / "artifacts").is_dir()
    single = CliRunner().invoke(
        app,
        [
            "crs", "score", "--dataset", str(demo.dataset), "--kb", str(demo.kb_path), "--split", "all",
            "--predictions", str(tmp_path / "results" / "runs" / "random-closed" / "predictions.jsonl"),
            "--out", str(tmp_path / "offline"), "--log", "mlflow", "--mlflow-uri", str(store),
            "--mlflow-experiment", "offline", "--metrics", "recall@1",
        ],
    )  # fmt: skip
    assert single.exit_code == 0, single.output
    (only,) = client.search_runs([client.get_experiment_by_name("offline").experiment_id])
    assert only.data.params["mode"] == "offline" and "recall_at_1" in only.data.metrics


def test_log_mlflow_without_the_extra_is_a_usage_error_with_the_install_hint(
    paths, tmp_path, monkeypatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow raises ImportError
    path = _config(paths, tmp_path, "out: r\nsystems: [random]\n")
    result = CliRunner().invoke(app, ["crs", "run", "--config", str(path), "--log", "mlflow"])
    assert result.exit_code == 2 and "pip install 'groundtrace[tracking]'" in result.output
    assert not (tmp_path / "r").exists()  # refused before any work


# the variables under which MLflow switches its telemetry off by itself (mlflow.telemetry.utils)
_TELEMETRY_OFF_VARS = (
    "PYTEST_CURRENT_TEST", "GITHUB_ACTIONS", "CI", "CIRCLECI", "GITLAB_CI", "JENKINS_URL", "TRAVIS",
    "TF_BUILD", "BITBUCKET_BUILD_NUMBER", "CODEBUILD_BUILD_ARN", "BUILDKITE", "TEAMCITY_VERSION",
    "CLOUD_RUN_EXECUTION", "RUNBOT_HOST_URL", "RUNBOT_BUILD_NAME", "RUNBOT_WORKER_ID", "DO_NOT_TRACK",
    "MLFLOW_DISABLE_TELEMETRY",
)  # fmt: skip


@pytest.mark.slow  # a subprocess importing mlflow
def test_mlflow_telemetry_is_off_outside_tests_and_ci(tmp_path) -> None:
    """MLflow >= 3.2 starts usage telemetry at import (a thread fetching a config from mlflow-telemetry.io
    and posting events) unless it sees a test or CI variable — so the tests alone would not notice it.
    In a user's shell (none of those variables), importing MLflow through groundtrace leaves it off."""
    import os
    import subprocess
    import sys

    pytest.importorskip("mlflow.telemetry", reason="no telemetry module in this MLflow")
    env = {k: v for k, v in os.environ.items() if k not in _TELEMETRY_OFF_VARS}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"))
    code = (
        "from groundtrace.crs.report.tracking import import_mlflow\n"
        "import_mlflow()\n"
        "from mlflow.telemetry.client import get_telemetry_client\n"
        "from mlflow.telemetry.utils import is_telemetry_disabled\n"
        "print('TELEMETRY', is_telemetry_disabled(), get_telemetry_client() is None)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "TELEMETRY True True" in done.stdout, done.stdout
    assert not (tmp_path / ".config" / "mlflow").exists()  # no installation id written either


def test_metric_keys_and_tracking_uri() -> None:
    from groundtrace.crs.report.tracking import metric_key, tracking_uri

    assert metric_key("recall@1") == "recall_at_1" and metric_key("ndcg@3") == "ndcg_at_3"
    assert metric_key("a b/c:d-e.f_g") == "a b/c:d-e.f_g" and metric_key("x|y") == "x_y"
    assert tracking_uri("http://mlflow:5000", {}) == ("http://mlflow:5000", None)
    assert tracking_uri(None, {"MLFLOW_TRACKING_URI": "sqlite:///x.db"}) == ("sqlite:///x.db", None)
