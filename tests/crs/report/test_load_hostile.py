"""A malformed run folder is a one-line error naming the file, never a traceback (issue 9, item 7)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.evaluation.run_files import RunKeyMismatchError, previous_run
from groundtrace.crs.report.load import load_run
from tests.crs.report.demo_data import make_demo


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("load")
    demo = make_demo(root, n_dialogues=6)
    out = root / "run"
    args = ["--dataset", str(demo.dataset), "--split", "all", "--kb", str(demo.kb_path)]
    result = CliRunner().invoke(app, ["crs", "run", *args, "--system", "oracle", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _copy(run_folder, tmp_path):
    target = tmp_path / "run"
    shutil.copytree(run_folder, target)
    return target


@pytest.mark.parametrize(
    ("name", "edit", "message"),
    [
        ("run.json", lambda info: "[]", "run.json: not a run file: <root>: Input should be a valid"),
        ("run.json", lambda info: '{"run_key": [1, 2', "run.json:1: invalid JSON: Expecting ',' delimiter"),
        ("run.json", lambda info: json.dumps(info)[:-1] + ', "x": NaN}', "run.json: non-finite number NaN"),
        ("run.json", lambda info: json.dumps({**info, "usage": "fast"}), "run.json: not a run file: usage:"),
        ("run.json", lambda info: json.dumps({**info, "counts": 5}), "run.json: not a run file: counts:"),
        ("scores.json", lambda s: json.dumps({**s, "turns": 3}), "scores.json: not a run file: turns:"),
        ("scores.json", lambda s: json.dumps({**s, "aggregate": {"gs": "x"}}), "scores.json: not a run file"),
        ("scores.json", lambda s: '{"turns": [], "dialogues": [], "aggregate": {"gs": Infinity}}',
         "scores.json: non-finite number Infinity"),
        ("dialogues.json", lambda m: "[1, 2]", "dialogues.json: not a run file"),
        ("run.json", lambda info: b"\xff\xfe{}", "run.json: not valid UTF-8"),
    ],
)  # fmt: skip
@pytest.mark.slow
def test_malformed_run_files_are_one_line_errors(run_folder, tmp_path, name, edit, message) -> None:
    folder = _copy(run_folder, tmp_path)
    path = folder / name
    new = edit(json.loads(path.read_text()))
    if isinstance(new, bytes):
        path.write_bytes(new)
    else:
        path.write_text(new)
    with pytest.raises(ValueError) as info:
        load_run(folder)
    text = str(info.value)
    assert "\n" not in text and message in text and str(path) in text
    report = CliRunner().invoke(app, ["crs", "report", str(folder), "--out", str(tmp_path / "rep")])
    assert report.exit_code == 2, report.output
    assert "Traceback" not in report.output
    assert report.exception is None or isinstance(report.exception, SystemExit)


def test_the_good_folder_loads(run_folder) -> None:
    assert load_run(run_folder).info["system"] == "oracle"


@pytest.mark.parametrize(
    ("field", "value", "what"),
    [("runs", "three", "an integer"), ("history", 5, "an array"), ("config", [], "an object"),
     ("runs", True, "an integer")],
)  # fmt: skip
def test_a_resumed_run_refuses_a_run_json_of_the_wrong_shape(
    run_folder, tmp_path, field, value, what
) -> None:
    folder = _copy(run_folder, tmp_path)
    info = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**info, field: value}))
    with pytest.raises(RunKeyMismatchError, match=f"not a run.json \\('{field}' is not {what}\\)"):
        previous_run(folder, info["run_key"])
