"""Plugging in without registering: `--system module:Class` or `file.py:Class`, `crs inputs`, `--label`."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.report.load import label_runs, load_run
from groundtrace.crs.systems.factory import is_class_spec, load_system_class, system_factory
from groundtrace.crs.systems.reference import RandomSystem
from tests.crs.report.demo_data import make_demo

USER_SYSTEM = '''
from groundtrace.crs.systems import CRSSystem
from groundtrace.crs.systems.predictions import SystemOutput


class Cheapest(CRSSystem):
    """Ranks by price level then id; quotes nothing."""

    def __init__(self, *, bias: int = 0) -> None:
        self.bias = bias

    def config(self):
        return {"bias": self.bias}

    def respond(self, inp):
        ranked = sorted(inp.candidates, key=lambda c: ((c.price_level or 5) + self.bias, c.poi_id))
        return SystemOutput(ranking=[c.poi_id for c in ranked], response=f"Try {ranked[0].name}.")


NOT_A_SYSTEM = 3
'''


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("plugin"), n_dialogues=8)


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "my_system.py"
    path.write_text(textwrap.dedent(USER_SYSTEM), encoding="utf-8")
    return path


def test_class_spec_recognition():
    assert is_class_spec("groundtrace.crs.systems.reference:RandomSystem")
    assert is_class_spec("sub/dir/file.py:Mine")
    assert not is_class_spec("random")
    assert not is_class_spec("http://localhost:8000/respond")
    assert not is_class_spec("module:")
    assert not is_class_spec("module:not-an-identifier")


def test_module_class_and_file_class_are_loaded(user_file):
    assert load_system_class("groundtrace.crs.systems.reference:RandomSystem") is RandomSystem
    cls = load_system_class(f"{user_file}:Cheapest")
    assert cls.__name__ == "Cheapest"
    built = system_factory(f"{user_file}:Cheapest", {"bias": 1})()
    assert built.config() == {"bias": 1} and built.name == "Cheapest"
    seeded = system_factory("groundtrace.crs.systems.reference:RandomSystem", seed=9)()
    assert seeded.config()["seed"] == 9


def test_bad_class_specs_name_the_problem(user_file, tmp_path):
    with pytest.raises(ImportError, match="no such file"):
        load_system_class(f"{tmp_path / 'absent.py'}:X")
    with pytest.raises(ImportError, match="cannot import module 'no_such_module_xyz'"):
        load_system_class("no_such_module_xyz:X")
    with pytest.raises(ImportError, match="has no attribute 'Missing'"):
        load_system_class(f"{user_file}:Missing")
    with pytest.raises(TypeError, match="not a CRSSystem subclass"):
        load_system_class(f"{user_file}:NOT_A_SYSTEM")
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    with pytest.raises(ImportError, match="RuntimeError: boom"):
        load_system_class(f"{broken}:X")
    with pytest.raises(ValueError, match="takes no option 'alpha'"):
        system_factory(f"{user_file}:Cheapest", {"alpha": 1})


def test_crs_run_with_a_file_class_and_label(demo, user_file, tmp_path):
    runner = CliRunner()
    args = ["--dataset", str(demo.dataset), "--kb", str(demo.kb_path), "--split", "all", "--limit", "3"]
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        ["crs", "run", *args, "--system", f"{user_file}:Cheapest", "--system-arg", "bias=2"]
        + ["--label", "release", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    info = json.loads((out / "run.json").read_text())
    assert info["system"] == "Cheapest" and info["config"] == {"bias": 2} and info["label"] == "release"
    assert info["counts"]["errored_turns"] == 0
    bad = runner.invoke(
        app, ["crs", "run", *args, "--system", "nope_mod_xyz:X", "--out", str(tmp_path / "b")]
    )
    assert bad.exit_code == 2 and "cannot import module 'nope_mod_xyz'" in bad.output
    # the label names the run in reports; an unlabelled run keeps the system name
    plain = tmp_path / "plain"
    ok = runner.invoke(app, ["crs", "run", *args, "--system", "random", "--out", str(plain)])
    assert ok.exit_code == 0, ok.output
    runs = [load_run(out), load_run(plain)]
    label_runs(runs)
    assert [r.label for r in runs] == ["release", "random"]


def test_crs_inputs_is_what_a_system_sees_and_answers_score(demo, tmp_path):
    runner = CliRunner()
    for setting in ("closed", "open"):
        path = tmp_path / f"inputs-{setting}.jsonl"
        result = runner.invoke(
            app,
            ["crs", "inputs", "--dataset", str(demo.dataset), "--kb", str(demo.kb_path), "--split", "all"]
            + ["--setting", setting, "--limit", "4", "--out", str(path)],
        )
        assert result.exit_code == 0, result.output
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        expected = [
            inp.model_dump(mode="json")
            for d in demo.dialogues[:4]
            for _, inp in system_inputs(d, demo.kb, setting)
        ]
        assert lines == expected and len(lines) > 4
        assert f"{len(lines)} turns of 4 dialogues" in result.output
    # answering each input line gives a predictions file that scores with no orphan and no error
    preds = tmp_path / "preds.jsonl"
    with preds.open("w") as handle:
        for inp in (json.loads(x) for x in (tmp_path / "inputs-closed.jsonl").read_text().splitlines()):
            ranking = [c["poi_id"] for c in inp["candidates"]]
            handle.write(
                json.dumps(
                    {"dialogue_id": inp["dialogue_id"], "turn_index": inp["turn_index"], "ranking": ranking}
                )
                + "\n"
            )
    out = tmp_path / "scored"
    scored = runner.invoke(
        app,
        ["crs", "score", "--dataset", str(demo.dataset), "--kb", str(demo.kb_path), "--split", "all"]
        + ["--limit", "4", "--predictions", str(preds), "--label", "mine", "--out", str(out)],
    )
    assert scored.exit_code == 0, scored.output
    info = json.loads((out / "run.json").read_text())
    assert info["label"] == "mine" and info["counts"]["unscorable_turns"] == 0


def test_a_module_in_the_working_directory_is_found(tmp_path, monkeypatch):
    """`groundtrace crs run --system my_crs:Cheapest` next to my_crs.py: the console script does not put
    the working directory on sys.path (python -m does); it was 'cannot import module'."""
    import sys

    (tmp_path / "gt_cwd_user_crs.py").write_text(textwrap.dedent(USER_SYSTEM), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "gt_cwd_user_crs", raising=False)
    try:
        assert load_system_class("gt_cwd_user_crs:Cheapest").__name__ == "Cheapest"
        assert sys.path[-1] == str(tmp_path)  # appended: installed packages keep precedence
    finally:
        sys.modules.pop("gt_cwd_user_crs", None)
    with pytest.raises(ImportError, match="cannot import module 'gt_absent_xyz'"):
        load_system_class("gt_absent_xyz:X")  # neither on sys.path nor in the folder
