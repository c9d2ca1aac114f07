"""The public ``groundtrace.crs`` API: load_kb, load_dataset, evaluate (in memory), ScoreTable.save,
compare — and that they give the numbers ``crs run`` / ``crs report`` give."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundtrace import crs
from groundtrace.core.registry import UnknownNameError
from groundtrace.crs.evaluation.run_files import RUN_FILE, RunKeyMismatchError
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.report import build_report
from groundtrace.crs.report.load import load_run
from groundtrace.crs.systems.factory import parse_system_args, system_factory
from groundtrace.crs.systems.reference import RandomSystem
from tests.crs.report.demo_data import make_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("api"), n_dialogues=12)


@pytest.mark.slow
def test_import_is_cheap_and_all_is_complete() -> None:
    code = (
        "import sys, groundtrace.crs as c; "
        "assert 'groundtrace.crs.evaluation.runner' not in sys.modules, 'eager import'; "
        "assert set(c.__all__) == set(c._EXPORTS); "
        "[getattr(c, n) for n in c.__all__]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        crs.nope  # noqa: B018


@pytest.mark.slow
def test_load_kb_and_dataset(demo) -> None:
    kb = crs.load_kb("demo:0")
    assert kb.name.endswith("seed0") and kb.content_hash == crs.load_kb("demo").content_hash
    assert crs.load_kb(demo.kb_path).content_hash == demo.kb.content_hash
    with pytest.raises(ValueError, match="seed must be an integer"):
        crs.load_kb("demo:x")
    dialogues = crs.load_dataset(demo.dataset, split="all")
    assert isinstance(dialogues, list) and [d.dialogue_id for d in dialogues] == [
        d.dialogue_id for d in demo.dialogues
    ]
    assert dialogues.manifest["kb_hash"] == demo.kb.content_hash and dialogues.errors == []
    with pytest.raises(ValueError, match="no split 'dev'"):
        crs.load_dataset(demo.dataset, split="dev")


def test_evaluate_in_memory_equals_crs_run(demo, tmp_path) -> None:
    table = crs.evaluate("random", demo.dataset, kb=demo.kb, split="all", system_args={"seed": 4})
    ran = run_system(RandomSystem(seed=4), demo.dialogues, demo.kb, tmp_path / "run", split="all")
    assert table.to_dict() == ran.table.to_dict()
    assert table.info["config"] == {"seed": 4} and table.system == "random"
    assert table.info["dataset_hash"] == ran.info["dataset_hash"]
    assert table.info["counts"]["turns"] == ran.info["counts"]["turns"] == table.n_turns
    assert len(table.outputs) == table.n_turns and set(table.meta) == {d.dialogue_id for d in demo.dialogues}


def test_evaluate_reports_progress_per_dialogue(demo) -> None:
    calls: list[tuple[int, int]] = []
    crs.evaluate(
        "random", demo.dialogues, kb=demo.kb, metrics="mrr", limit=5, progress=lambda *a: calls.append(a)
    )
    assert calls == [(i, 5) for i in range(1, 6)]


def test_system_as_name_class_instance_or_factory(demo) -> None:
    by_name = crs.evaluate("random", demo.dialogues, kb=demo.kb, metrics="recall@1,mrr", seed=2)
    by_class = crs.evaluate(RandomSystem, demo.dialogues, kb=demo.kb, metrics=["R@1", "mrr"], seed=2)
    by_instance = crs.evaluate(RandomSystem(seed=2), demo.dialogues, kb=demo.kb, metrics="recall@1,mrr")
    assert by_name.aggregate == by_class.aggregate == by_instance.aggregate
    assert list(by_name.aggregate) == ["recall@1", "mrr"]
    oracle = crs.evaluate("oracle", demo.dialogues, kb=str(demo.kb_path), metrics="recall@1")
    assert oracle.value("R@1") == 1.0
    with pytest.raises(UnknownNameError, match="Did you mean 'random'"):
        crs.evaluate("randon", demo.dialogues, kb=demo.kb)
    with pytest.raises(ValueError, match=r"takes no option 'alpha' \(accepts: seed\)"):
        crs.evaluate("random", demo.dialogues, kb=demo.kb, system_args={"alpha": 1})
    with pytest.raises(ValueError, match="content hash"):
        crs.evaluate("random", demo.dialogues, kb=crs.load_kb("demo:5"))


def test_save_writes_a_run_folder_crs_report_reads(demo, tmp_path) -> None:
    table = crs.evaluate("random", demo.dialogues, kb=demo.kb, setting="open")
    out = table.save(tmp_path / "saved")
    run = load_run(out)
    assert run.scores == json.loads(json.dumps(table.to_dict()))
    assert run.info["run_key"] == table.info["run_key"] and run.info["setting"] == "open"
    assert len(run.predictions()) == table.n_turns
    table.save(out)  # same run: fine
    other = crs.evaluate("oracle", demo.dialogues, kb=demo.kb, setting="open")
    with pytest.raises(RunKeyMismatchError, match="holds another run"):
        other.save(out)
    assert json.loads((out / RUN_FILE).read_text())["system"] == "random"


@pytest.mark.slow
def test_compare_gives_the_numbers_of_crs_report(demo, tmp_path) -> None:
    tables = [
        crs.evaluate("random", demo.dialogues, kb=demo.kb, seed=1),
        crs.evaluate("oracle", demo.dialogues, kb=demo.kb),
    ]
    report = crs.compare(tables, resamples=200, seed=3)
    folders = [t.save(tmp_path / t.system) for t in tables]
    build_report(folders, tmp_path / "report", resamples=200, seed=3, knowledge_base=demo.kb, dialogues=[])
    on_disk = json.loads((tmp_path / "report" / "leaderboard.json").read_text())
    mine = json.loads(json.dumps(report.to_dict()))
    for row in mine["leaderboard"] + on_disk["leaderboard"]:
        row.pop("path")
    assert mine["leaderboard"] == on_disk["leaderboard"] and mine["tests"] == on_disk["tests"]
    assert "| oracle |" in report.to_markdown() and "\\begin{tabular}" in report.to_latex()
    disk_csv = (tmp_path / "report" / "leaderboard.csv").read_text().splitlines()
    assert [line.rsplit(",", 1)[0] for line in report.to_csv().splitlines()] == [
        line.rsplit(",", 1)[0] for line in disk_csv
    ]  # the same rows but for the last column (the run folder)
    relabelled = crs.compare(tables, labels=["a", "b"], resamples=50)
    assert [(r.label, r.bound) for r in relabelled.rows] == [("b", "upper"), ("a", "lower")]  # oracle first
    with pytest.raises(ValueError, match="at least one"):
        crs.compare([])


@given(
    st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
        st.one_of(
            st.integers(-(10**6), 10**6),
            st.booleans(),
            st.none(),
            st.text(alphabet="abcxyz -/:", min_size=1, max_size=10).filter(
                lambda t: t.strip() not in {"true", "false", "null"} and not t.strip().lstrip("-").isdigit()
            ),
        ),
        max_size=4,
    )
)
def test_system_args_round_trip(args: dict) -> None:
    """key=value with JSON scalars read back as their type; other text kept verbatim."""
    items = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in args.items()]
    assert parse_system_args(items) == args


def test_system_args_errors() -> None:
    assert parse_system_args(["a=0.5", 'b="3"', "c=[1]", "d=x=y", "e="]) == {
        "a": 0.5,
        "b": "3",
        "c": "[1]",
        "d": "x=y",
        "e": "",
    }
    for bad in (["novalue"], ["=3"], ["a=1", "a=2"]):
        with pytest.raises(ValueError):
            parse_system_args(bad)
    with pytest.raises(ValueError, match="with an instance"):
        system_factory(RandomSystem(), {"seed": 1})
    with pytest.raises(TypeError, match="not a CRS system"):
        system_factory(42)  # type: ignore[arg-type]


def test_constructor_errors_are_one_line_usage_errors(
    demo, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from groundtrace.cli import app
    from groundtrace.crs.systems.factory import SystemConstructionError, built_first

    class Picky(crs.CRSSystem):
        def __init__(self, *, k: int = 1) -> None:
            if not isinstance(k, int) or k < 1:
                raise ValueError(f"k must be a positive integer, got {k!r}")
            self.k = k

    with pytest.raises(SystemConstructionError, match="ValueError: k must be a positive integer, got 0"):
        built_first(system_factory(Picky, {"k": 0}))
    factory = built_first(system_factory(Picky, {"k": 2}))
    first, second = factory(), factory()
    assert first is not second and first.k == second.k == 2  # the checked instance is used, then new ones
    result = CliRunner().invoke(
        app,
        ["crs", "run", "--dataset", str(demo.dataset), "--kb", str(demo.kb_path), "--system", "random"]
        + ["--out", str(tmp_path / "r"), "--system-arg", "seed=[1]", "--split", "all"],
    )
    assert result.exit_code == 0, result.output  # "[1]" is not a JSON scalar: the text "[1]", a valid seed
    assert json.loads((tmp_path / "r" / RUN_FILE).read_text())["config"] == {"seed": "[1]"}
    monkeypatch.setattr(crs.SYSTEMS, "_entries", dict(crs.SYSTEMS._entries))
    monkeypatch.setattr(crs.SYSTEMS, "_alias_to_name", dict(crs.SYSTEMS._alias_to_name))
    crs.SYSTEMS.add("picky", Picky)
    bad = CliRunner().invoke(
        app,
        ["crs", "run", "--dataset", str(demo.dataset), "--kb", str(demo.kb_path), "--system", "picky"]
        + ["--out", str(tmp_path / "bad"), "--system-arg", "k=0"],
    )
    assert bad.exit_code == 2 and "cannot build the system: ValueError: k must be a positive" in bad.output
    assert not (tmp_path / "bad").exists()  # refused before the run folder is created


def test_an_empty_split_runs_without_crashing(demo, tmp_path) -> None:
    """No dialogue to answer: no predictions file is written, and scoring sees no turn (was a crash)."""
    result = run_system(RandomSystem(), [], demo.kb, tmp_path / "empty", split="test")
    assert result.table.n_turns == 0 and result.info["counts"]["dialogues"] == 0
