"""Third-party CRS plug-ins, installed from a tiny package (a ``*.dist-info`` with ``entry_points.txt``):
a metric computed by ``crs score --metrics`` and a system run by ``crs run --system ... --system-arg``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.evaluation.run_files import PREDICTIONS_FILE, read_predictions
from groundtrace.crs.metrics import METRICS
from groundtrace.crs.systems import SYSTEMS
from tests.crs.report.demo_data import make_demo
from tests.plugin_package import plugin_package

runner = CliRunner()

METRIC_PLUGIN = """
    from groundtrace.crs.metrics.base import MetricFamily
    from groundtrace.crs.metrics.base import register as add_metric


    def _words(metric, ctx):
        return float(len(ctx.response.split()))


    def register():
        add_metric(
            MetricFamily(
                name="response_words",
                axis="practicality",
                level="turn",
                aggregation="turn-mean",
                higher_is_better=False,
                default=0.0,
                formula="Words in the response (whitespace-separated).",
                kernel=_words,
                value_range=(0.0, None),
            ),
            aliases=("rw",),
        )
"""

SYSTEM_PLUGIN = """
    from groundtrace.crs.systems import SYSTEMS, CRSSystem
    from groundtrace.crs.systems.predictions import SystemOutput


    class InOrder(CRSSystem):
        \"\"\"Ranks the candidates as given and says a fixed sentence.\"\"\"

        def __init__(self, *, sentence: str = "Try it.", reverse: bool = False) -> None:
            self.sentence = sentence
            self.reverse = reverse

        def config(self):
            return {"sentence": self.sentence, "reverse": self.reverse}

        def respond(self, inp):
            ids = [c.poi_id for c in inp.candidates]
            return SystemOutput(ranking=ids[::-1] if self.reverse else ids, response=self.sentence)


    def register():
        SYSTEMS.add("thirdparty-inorder", InOrder, description="A third-party system from a plug-in.")
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("plugins"), n_dialogues=8)


@pytest.mark.slow
def test_plugin_metric_is_computed_by_crs_score(demo, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = runner.invoke(
        app,
        [
            "crs",
            "run",
            "--dataset",
            str(demo.dataset),
            "--kb",
            str(demo.kb_path),
            "--system",
            "random",
            "--split",
            "all",
        ]
        + ["--out", str(tmp_path / "run"), "--metrics", "recall@1,mrr"],
    )
    assert ran.exit_code == 0, ran.output
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["metrics"] == ["recall@1", "mrr"] and list(scores["aggregate"]) == ["recall@1", "mrr"]
    with plugin_package(tmp_path / "site", monkeypatch, "gt_plugin_metric", METRIC_PLUGIN, [METRICS]):
        out = tmp_path / "scored"
        result = runner.invoke(
            app,
            [
                "crs",
                "score",
                "--dataset",
                str(demo.dataset),
                "--kb",
                str(demo.kb_path),
                "--split",
                "all",
                "--out",
                str(out),
            ]
            + ["--predictions", str(tmp_path / "run" / PREDICTIONS_FILE), "--metrics", "RW,recall@1"],
        )
        assert result.exit_code == 0, result.output
        assert "response_words" in result.output
        listed = runner.invoke(app, ["crs", "metrics"]).output
        assert "not in the default set" in listed and "response_words" in listed.split("default set")[1]
    scores = json.loads((out / "scores.json").read_text())
    preds = read_predictions(tmp_path / "run" / PREDICTIONS_FILE).predictions
    expected = sum(len(p.response.split()) for p in preds) / len(preds)
    assert scores["metrics"] == ["response_words", "recall@1"]
    assert scores["aggregate"]["response_words"] == pytest.approx(expected) and expected > 0
    assert scores["counts"]["response_words"]["scored"] == len(preds)


def test_plugin_system_runs_with_system_args(demo, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    with plugin_package(tmp_path / "site", monkeypatch, "gt_plugin_system", SYSTEM_PLUGIN, [SYSTEMS]):
        help_text = runner.invoke(app, ["crs", "systems"]).output
        assert "thirdparty-inorder" in help_text and "A third-party system from a plug-in." in help_text
        out = tmp_path / "run"
        result = runner.invoke(
            app,
            [
                "crs",
                "run",
                "--dataset",
                str(demo.dataset),
                "--kb",
                str(demo.kb_path),
                "--system",
                "thirdparty-inorder",
            ]
            + ["--split", "all", "--out", str(out), "--metrics", "recall@1"]
            + ["--system-arg", "sentence=Go there.", "--system-arg", "reverse=true"],
        )
        assert result.exit_code == 0, result.output
        bad = runner.invoke(
            app,
            [
                "crs",
                "run",
                "--dataset",
                str(demo.dataset),
                "--kb",
                str(demo.kb_path),
                "--system",
                "thirdparty-inorder",
            ]
            + ["--out", str(tmp_path / "bad"), "--system-arg", "colour=red"],
        )
        assert bad.exit_code == 2 and "takes no option 'colour' (accepts: reverse, sentence)" in bad.output
    info = json.loads((out / "run.json").read_text())
    assert info["system"] == "thirdparty-inorder" and info["config"] == {
        "sentence": "Go there.",
        "reverse": True,
    }
    preds = read_predictions(out / PREDICTIONS_FILE).predictions
    by_id = {d.dialogue_id: d for d in demo.dialogues}
    assert preds and all(p.response == "Go there." and p.error is None for p in preds)
    # the pool a system sees is its turn's leg pool (itinerary dialogues have one per leg)
    assert all(p.ranking == by_id[p.dialogue_id].candidates_at(p.turn_index)[::-1] for p in preds)


def test_unknown_metric_is_a_usage_error(demo, tmp_path) -> None:
    result = runner.invoke(
        app,
        [
            "crs",
            "run",
            "--dataset",
            str(demo.dataset),
            "--kb",
            str(demo.kb_path),
            "--system",
            "random",
            "--out",
            str(tmp_path),
        ]
        + ["--metrics", "recal@1"],
    )
    assert result.exit_code == 2 and "Did you mean 'recall'" in result.output


@pytest.mark.slow
def test_plugin_realiser_is_accepted_on_first_use(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`crs build --realiser NAME` with NAME from a plug-in: the CLI's `in REALISERS` check loads plug-ins
    first (it used to refuse the name, suggesting the name itself)."""
    from groundtrace.crs.build.builder import REALISERS

    source = """
        from groundtrace.crs.build.builder import REALISERS
        from groundtrace.crs.build.realise import TemplateRealiser


        def register():
            REALISERS.add("plain-words", TemplateRealiser)
    """
    with plugin_package(tmp_path / "site", monkeypatch, "gt_plugin_realiser", source, [REALISERS]):
        result = runner.invoke(
            app,
            ["crs", "build", "--kb", "demo", "--dialogues", "3", "--seed", "1", "--out", str(tmp_path / "ds")]
            + ["--realiser", "plain-words"],
        )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ds" / "manifest.json").is_file()
