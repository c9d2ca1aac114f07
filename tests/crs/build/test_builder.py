"""The builder end to end: deterministic files, manifest, splits, rejection share, CLI, saved KBs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundtrace.crs.build.builder import (
    AUTO_PROCESSES_MAX,
    AUTO_PROCESSES_MIN_DIALOGUES,
    BuildConfig,
    build_dataset,
    build_dialogues,
    build_processes,
    rejection_indices,
    split_of,
)
from groundtrace.crs.build.realise import TemplateRealiser
from groundtrace.crs.dataset.files import read_dataset
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.schema import SCHEMA_VERSION

FILES = ("train.jsonl", "validation.jsonl", "test.jsonl", "schema.json", "manifest.json", "build_report.json")


@pytest.fixture(scope="module")
def kb():
    return generate_demo_kb(9, n_per_type=25, reviews_per_poi=4)


@pytest.mark.slow
def test_same_seed_gives_identical_files(kb, tmp_path) -> None:
    build_dataset(kb, 40, 5, tmp_path / "a")
    build_dataset(kb, 40, 5, tmp_path / "b")
    build_dataset(kb, 40, 6, tmp_path / "c")
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (tmp_path / "a" / "train.jsonl").read_bytes() != (tmp_path / "c" / "train.jsonl").read_bytes()


def test_manifest_report_and_splits(kb, tmp_path) -> None:
    report = build_dataset(kb, 60, 3, tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["kb_name"] == kb.name and manifest["kb_hash"] == kb.content_hash
    assert manifest["seed"] == 3 and manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["counts"]["total"] == report.built == 60
    data = read_dataset(tmp_path)
    assert not data.errors
    for split, dialogues in data.splits.items():
        assert manifest["counts"][split] == len(dialogues)
        assert all(d.split == split == split_of(d.dialogue_id) for d in dialogues)
        assert all(d.kb_hash == kb.content_hash and d.seed == 3 for d in dialogues)
    ids = [d.dialogue_id for d in data.all_dialogues()]
    assert len(set(ids)) == 60
    saved = json.loads((tmp_path / "build_report.json").read_text())
    assert saved["built"] == 60 and sum(saved["tiers"].values()) == 60
    assert json.loads((tmp_path / "schema.json").read_text())["title"] == "Dialogue"


def test_split_is_roughly_80_10_10() -> None:
    counts = {"train": 0, "validation": 0, "test": 0}
    for i in range(5000):
        counts[split_of(f"trace-s0-{i:06d}")] += 1
    assert abs(counts["train"] / 5000 - 0.8) < 0.03
    assert abs(counts["validation"] / 5000 - 0.1) < 0.02


def test_rejection_indices_exact_count() -> None:
    assert len(rejection_indices(1000, 0.294, 1)) == 294
    assert rejection_indices(1000, 0.294, 1) == rejection_indices(1000, 0.294, 1)
    assert rejection_indices(1000, 0.294, 1) != rejection_indices(1000, 0.294, 2)
    assert rejection_indices(10, 0.0, 1) == set()


@pytest.mark.slow
def test_rejection_share_on_1000_dialogues(kb) -> None:
    dialogues, report = build_dialogues(kb, 1000, seed=11)
    share = sum(d.has_rejection for d in dialogues) / len(dialogues)
    assert abs(share - 0.294) <= 1 / 1000 + report.dropped / 1000
    assert report.rejection_share == pytest.approx(share, abs=1e-6)
    assert report.built + report.dropped == 1000
    assert all(any(t.act == "reject_and_refine" for t in d.turns) == d.has_rejection for d in dialogues)
    assert 9.0 <= report.mean_turns <= 12.0


def test_custom_rejection_share(kb) -> None:
    dialogues, _ = build_dialogues(kb, 50, seed=1, config=BuildConfig(rejection_share=0.5))
    assert sum(d.has_rejection for d in dialogues) == 25


def test_bad_config_is_refused() -> None:
    with pytest.raises(ValueError, match="rejection_share"):
        BuildConfig(rejection_share=1.5)


def test_cli_build_on_a_saved_kb(kb, tmp_path) -> None:
    from groundtrace.cli import app
    from groundtrace.crs.kb.store import save_kb

    path = save_kb(kb, tmp_path / "kb.sqlite")
    result = CliRunner().invoke(
        app,
        [
            "crs",
            "build",
            "--kb",
            str(path),
            "--dialogues",
            "15",
            "--seed",
            "2",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "TRACE-CRS build" in result.output and "with rejection" in result.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["kb_hash"] == kb.content_hash and manifest["counts"]["total"] == 15


def test_cli_rejects_unknown_realiser_and_missing_kb(tmp_path) -> None:
    from groundtrace.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["crs", "build", "--kb", "demo", "--out", str(tmp_path), "--realiser", "gpt"])
    assert result.exit_code != 0 and "unknown realiser" in result.output
    result = runner.invoke(
        app, ["crs", "build", "--kb", str(tmp_path / "nope.sqlite"), "--out", str(tmp_path)]
    )
    assert result.exit_code != 0 and "no such KB file" in result.output


def test_builds_on_real_sparse_yelp_sample() -> None:
    """Real Yelp records: most POIs have no review, attributes are patchy; the builder must cope."""
    from groundtrace.crs.build.qc import check_dialogue
    from groundtrace.crs.kb.knowledge_base import KnowledgeBase
    from groundtrace.crs.kb.yelp import business_to_poi, review_from_obj
    from tests.conftest import shared_path

    pois = []
    for line in (
        shared_path("yelp", "yelp_academic_dataset_business.json").read_text(encoding="utf-8").splitlines()
    ):
        try:
            poi = business_to_poi(json.loads(line))
        except ValueError:
            continue
        if poi is not None:
            pois.append(poi)
    ids = {p.poi_id for p in pois}
    lines = shared_path("yelp", "yelp_academic_dataset_review.json").read_text(encoding="utf-8").splitlines()
    reviews = [r for r in (review_from_obj(json.loads(x)) for x in lines) if r.poi_id in ids]
    kb = KnowledgeBase(pois, reviews, name="yelp-sample")
    dialogues, report = build_dialogues(kb, 10, seed=1)
    assert report.built + report.dropped == 10
    assert report.built >= 1 and sum(report.dropped_by_reason.values()) == report.dropped
    for d in dialogues:
        assert check_dialogue(d, kb) == []
        for t in d.turns:
            for span in t.quote_spans:
                assert (
                    kb.review(span.review_id).text[span.review_start : span.review_end]
                    == t.text[span.start : span.end]
                )


def test_threaded_build_is_identical(kb) -> None:
    one, _ = build_dialogues(kb, 30, seed=4)
    many, report = build_dialogues(kb, 30, seed=4, config=BuildConfig(workers=3))
    assert [d.model_dump_json() for d in one] == [d.model_dump_json() for d in many]
    assert report.built == 30


def test_build_in_processes_is_identical(kb, tmp_path) -> None:
    """Forked processes build each dialogue from its index alone: the files are byte-identical, the
    report too, and the manifest does not record how many processes built them."""
    one = build_dataset(kb, 40, 6, tmp_path / "one", config=BuildConfig(processes=1))
    ticks: list[int] = []
    three = build_dataset(
        kb, 40, 6, tmp_path / "three", config=BuildConfig(processes=3), progress=ticks.append
    )
    assert sum(ticks) == 40 and len(ticks) > 1  # progress moves chunk by chunk
    assert one.model_dump() == three.model_dump()
    for name in ("train.jsonl", "validation.jsonl", "test.jsonl", "manifest.json", "build_report.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "three" / name).read_bytes(), name
    assert "processes" not in json.loads((tmp_path / "one" / "manifest.json").read_text())["config"]


def test_how_many_processes_build() -> None:
    class Remote:  # an LLM realiser: its client is shared by threads, never copied into processes
        name = "llm"

    offline = TemplateRealiser()
    assert build_processes(4, 1000, Remote()) == 1
    assert build_processes(4, 1000, offline) == 4
    assert build_processes(4, 3, offline) == 3  # never more processes than dialogues
    assert build_processes(0, AUTO_PROCESSES_MIN_DIALOGUES - 1, offline) == 1
    auto = build_processes(0, 10_000, offline)
    assert 1 <= auto <= AUTO_PROCESSES_MAX
    with pytest.raises(ValueError, match="processes"):
        BuildConfig(processes=-1)


def test_cli_reports_a_kb_too_small_to_plan(tmp_path) -> None:
    from groundtrace.cli import app
    from groundtrace.crs.kb.store import save_kb

    path = save_kb(generate_demo_kb(0, n_per_type=5, reviews_per_poi=1), tmp_path / "tiny.sqlite")
    result = CliRunner().invoke(
        app, ["crs", "build", "--kb", str(path), "--dialogues", "3", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    assert "no city with 8+ POIs" in result.output


@pytest.mark.slow
def test_output_does_not_depend_on_python_hash_seed(tmp_path) -> None:
    """Set iteration order changes with PYTHONHASHSEED; the builder must never depend on it."""
    import os
    import subprocess
    import sys

    code = (
        "import sys; from groundtrace.crs.kb.demo import generate_demo_kb; "
        "from groundtrace.crs.build.builder import build_dataset; "
        "build_dataset(generate_demo_kb(3, n_per_type=20, reviews_per_poi=3), 25, 8, sys.argv[1])"
    )
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / hash_seed)], check=True, env=env, timeout=60
        )
    for name in FILES:
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes(), name


class _Corrupting:
    """Template realiser that replaces every quote of chosen attempts by text absent from the review.

    Dialogue ``i`` with ``i % 4 == 0`` is corrupted on its first attempt only (regenerated, then kept);
    ``i % 5 == 0`` on every attempt (dropped after ``max_attempts``)."""

    name = "corrupting"

    def __init__(self) -> None:
        from groundtrace.crs.build.realise import TemplateRealiser

        self.inner = TemplateRealiser()
        self.calls: dict[str, int] = {}

    def realise(self, plan, rng):
        import re

        d = self.inner.realise(plan, rng)
        i = int(d.dialogue_id.rsplit("-", 1)[1])
        k = self.calls.get(d.dialogue_id, 0)
        self.calls[d.dialogue_id] = k + 1
        if i % 5 == 0 or (i % 4 == 0 and k == 0):
            for t in d.turns:
                if t.cited_tags:
                    t.text = re.sub(r'"[^"]+"', '"zebra xylophone quartz jukebox"', t.text)
        return d


def test_qc_failures_are_regenerated_or_dropped_and_counted(kb, tmp_path) -> None:
    from rich.console import Console

    from groundtrace.crs.build.qc import check_dialogue

    n, attempts = 20, 3
    report = build_dataset(
        kb, n, 2, tmp_path, realiser=_Corrupting(), config=BuildConfig(max_attempts=attempts)
    )
    always = [i for i in range(n) if i % 5 == 0]  # 0, 5, 10, 15 → dropped
    once = [i for i in range(n) if i % 4 == 0 and i % 5 != 0]  # 4, 8, 12, 16 → kept on attempt 2
    assert report.dropped == len(always) and report.built == n - len(always)
    assert report.attempts == n + len(once) + (attempts - 1) * len(always)
    failed_attempts = len(once) + attempts * len(always)  # each corrupted attempt fails these rules once
    quote, span = "GT-Q003 quote-not-in-review", "GT-Q004 quote-span-mismatch"
    span_range = "GT-Q001 quote-span-range"  # the edit shortens the text: a later span falls outside it
    assert report.qc_failures == {span_range: failed_attempts, quote: failed_attempts, span: failed_attempts}
    assert report.dropped_by_reason == {span_range: len(always)}  # the first failed rule, by code
    data = read_dataset(tmp_path)
    kept = {d.dialogue_id for d in data.all_dialogues()}
    assert kept == {f"trace-s2-{i:06d}" for i in range(n) if i not in always}
    assert all(check_dialogue(d, kb) == [] for d in data.all_dialogues())
    assert json.loads((tmp_path / "build_report.json").read_text())["qc_failures"] == report.qc_failures
    console = Console(record=True, width=200)
    report.print_summary(console)
    text = console.export_text()
    assert f"{quote} {failed_attempts}, {span} {failed_attempts}" in text
    assert f"{n - len(always)} built / {n} requested ({len(always)} dropped)" in text
    assert _row(text, "dropped by reason", f"{span_range} {len(always)}")


# -- clean CLI errors, empty builds and hidden LLM failures -------------------------------------------


def _row(table: str, label: str, value: str) -> bool:
    """Whether the printed summary table has the row ``label │ value``."""
    import re

    return re.search(rf"│ {re.escape(label)} +│ {re.escape(value)} +│", table) is not None


def _cli(*args: str):
    from groundtrace.cli import app

    return CliRunner().invoke(app, ["crs", "build", *args])


def test_cli_bad_kb_files_give_clean_errors(kb, tmp_path) -> None:
    import sqlite3

    from groundtrace.crs.kb.store import save_kb

    tampered = save_kb(kb, tmp_path / "tampered.sqlite")
    rid = min(kb.reviews)
    record = json.loads(kb.reviews[rid].model_dump_json())
    record["text"] = "edited after the fact"
    with sqlite3.connect(tampered) as conn:
        conn.execute("UPDATE reviews SET record = ? WHERE review_id = ?", (json.dumps(record), rid))
    invalid = save_kb(kb, tmp_path / "invalid.sqlite")
    with sqlite3.connect(invalid) as conn:
        conn.execute("UPDATE reviews SET record = ? WHERE review_id = ?", ('{"review_id": "x"}', rid))
    not_kb = tmp_path / "some.json"
    not_kb.write_text('{"pois": []}\n', encoding="utf-8")
    for path, phrase in (
        (tampered, ": content hash mismatch"),
        (not_kb, " is not a groundtrace KB"),
        (invalid, f": reviews record {rid!r} is invalid"),
    ):
        result = _cli("--kb", str(path), "--dialogues", "2", "--out", str(tmp_path / "out"))
        assert result.exit_code == 2, result.output
        assert f"error: {path}{phrase}" in result.stderr
        assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_cli_bad_llm_spec_is_a_bad_parameter(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("GROUNDTRACE_LLM_CONFIG", raising=False)
    result = _cli("--kb", "demo", "--realiser", "llm", "--llm", "bogus:zz", "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert "Invalid value for --llm" in result.output and "bad LLM spec 'bogus:zz'" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_report_health_flags_empty_builds_and_llm_fallback() -> None:
    from groundtrace.crs.build.builder import BuildReport

    base = {"kb_name": "k", "kb_hash": "h", "seed": 0, "realiser": "llm", "requested": 5}
    assert BuildReport(**base, built=5, realiser_turns=50).health() == ([], [])
    assert BuildReport(**{**base, "realiser": "template"}, built=5).health() == ([], [])
    errors, warnings = BuildReport(**base, dropped=5, dropped_by_reason={"planning": 5}).health()
    assert warnings == [] and len(errors) == 1
    assert errors[0].startswith(
        "no dialogue was built: all 5 requested dialogues were dropped "
        "(dropped by reason: planning 5); the planner found no feasible dialogue"
    )
    errors, _ = BuildReport(**base, dropped=5, dropped_by_reason={"quote_mismatch": 5}).health()
    assert "every attempt failed QC" in errors[0]
    dead = BuildReport(**base, built=5, realiser_turns=50, realiser_fallback_turns=50, llm_usage={"calls": 0})
    (error,), _ = dead.health()
    assert error.startswith("the LLM realised no turn: all 50 of 50 turns fell back to the template realiser")
    assert "no LLM request was answered (0 calls): the endpoint is probably unreachable" in error
    rejected = dead.model_copy(update={"llm_usage": {"calls": 60.0}})
    (error,), _ = rejected.health()
    assert "the LLM answered 60 requests but every answer failed the schema or verbatim-quote checks" in error
    partial = BuildReport(**base, built=5, realiser_turns=40, realiser_fallback_turns=10)
    assert partial.fallback_share == 0.25
    errors, (warning,) = partial.health()
    assert errors == [] and warning.startswith(
        "10 of 40 LLM turns (25.0%) fell back to the template realiser"
    )
    assert ("LLM turns replaced by templates", "10 of 40 (25.0%)") in partial.summary_rows()


def test_cli_build_that_builds_nothing_exits_1(tmp_path) -> None:
    """A KB whose city is large enough but has no review to quote: every dialogue is dropped in planning."""
    from groundtrace.crs.kb.store import save_kb

    path = save_kb(generate_demo_kb(0, n_per_type=10, reviews_per_poi=0), tmp_path / "no-reviews.sqlite")
    out = tmp_path / "out"
    result = _cli("--kb", str(path), "--dialogues", "5", "--out", str(out))
    assert result.exit_code == 1, result.output
    assert "0 built / 5 requested (5 dropped)" in result.stdout
    assert _row(result.stdout, "dropped by reason", "planning 5")
    assert "error: no dialogue was built: all 5 requested dialogues were dropped" in result.stderr
    assert f"error: build failed; its files were still written to {out}" in result.stderr
    assert all((out / f"{s}.jsonl").read_text() == "" for s in ("train", "validation", "test"))
    assert json.loads((out / "build_report.json").read_text())["dropped_by_reason"] == {"planning": 5}


@pytest.mark.slow
def test_cli_kb_build_then_build_on_the_real_yelp_sample(tmp_path) -> None:
    """The real sequence on the sparse Yelp sample: `crs kb build --min-reviews 0 --n-cities 40`, then
    `crs build --seed 2 --dialogues 10`.

    Observed outcome (asserted): some dialogues are built (exit 0) and the rest are dropped because the
    planner finds no feasible dialogue in the sparse cities; the report table says so by reason.
    """
    from groundtrace.cli import app
    from tests.conftest import shared_path

    yelp = shared_path("yelp")
    kb_path = tmp_path / "yelp.sqlite"
    made = CliRunner().invoke(
        app,
        [
            "crs",
            "kb",
            "build",
            "--yelp-dir",
            str(yelp),
            "--out",
            str(kb_path),
            "--min-reviews",
            "0",
            "--n-cities",
            "40",
            "--no-progress",
        ],
    )
    assert made.exit_code == 0, made.output
    result = _cli("--kb", str(kb_path), "--seed", "2", "--dialogues", "10", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "build_report.json").read_text())
    assert 0 < report["built"] < 10 and report["built"] + report["dropped"] == 10
    assert set(report["dropped_by_reason"]) == {"planning"}
    assert f"{report['built']} built / 10 requested ({report['dropped']} dropped)" in result.stdout
    assert _row(result.stdout, "dropped by reason", f"planning {report['dropped']}")
    assert "error:" not in result.output


def _llm_env(monkeypatch, tmp_path) -> None:
    """No retries or re-asks (a dead port fails at once), a private cache, a dummy key."""
    pytest.importorskip("groundtrace.core.llm.openai_client")
    config = tmp_path / "llm.yaml"
    config.write_text("max_retries: 0\nmax_reasks: 0\n", encoding="utf-8")
    monkeypatch.setenv("GROUNDTRACE_LLM_CONFIG", str(config))
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GROUNDTRACE_LLM_API_KEY", "x")


def _turn_data(request: dict) -> dict:
    return json.loads(next(m for m in request["messages"] if m["role"] == "user")["content"])


@pytest.mark.slow
def test_cli_llm_partial_fallback_is_a_warning(kb, tmp_path, monkeypatch) -> None:
    """The wire server phrases user turns and answers system turns with non-JSON: those fall back."""
    from groundtrace.core.llm.wire_server import WireServer
    from groundtrace.crs.kb.store import save_kb

    _llm_env(monkeypatch, tmp_path)

    def users_only(request: dict) -> str:
        data = _turn_data(request)
        return json.dumps({"text": "(llm) " + data["draft"]}) if data["speaker"] == "user" else "no json here"

    kb_path = save_kb(kb, tmp_path / "kb.sqlite")
    with WireServer(users_only) as server:
        result = _cli(
            "--kb",
            str(kb_path),
            "--dialogues",
            "3",
            "--out",
            str(tmp_path / "out"),
            "--realiser",
            "llm",
            "--llm",
            f"{server.base_url}#test-model",
        )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "build_report.json").read_text())
    fell, total = report["realiser_fallback_turns"], report["realiser_turns"]
    assert report["built"] == 3 and 0 < fell < total
    assert f"warning: {fell} of {total} LLM turns ({fell / total:.1%}) fell back" in result.stderr
    assert _row(result.stdout, "LLM turns replaced by templates", f"{fell} of {total} ({fell / total:.1%})")
    assert "error:" not in result.output


def test_cli_llm_total_fallback_exits_1(kb, tmp_path, monkeypatch) -> None:
    """Every answer unusable (live server, non-JSON answers) or no answer at all (dead port): exit 1."""
    import socket

    from groundtrace.core.llm.wire_server import WireServer
    from groundtrace.crs.kb.store import save_kb

    _llm_env(monkeypatch, tmp_path)
    kb_path = save_kb(kb, tmp_path / "kb.sqlite")
    with WireServer(lambda request: "no json here") as server:
        result = _cli(
            "--kb",
            str(kb_path),
            "--dialogues",
            "2",
            "--out",
            str(tmp_path / "a"),
            "--realiser",
            "llm",
            "--llm",
            f"{server.base_url}#test-model",
        )
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "a" / "build_report.json").read_text())
    n = report["realiser_fallback_turns"]
    assert report["built"] == 2 and n == report["realiser_turns"] > 0
    assert f"error: the LLM realised no turn: all {n} of {n} turns fell back" in result.stderr
    assert "every answer failed the schema or verbatim-quote checks" in result.stderr
    assert f"its files were still written to {tmp_path / 'a'}" in result.stderr

    with socket.socket() as dead:  # bound, never listening: connections are refused
        dead.bind(("127.0.0.1", 0))
        port = dead.getsockname()[1]
        result = _cli(
            "--kb",
            str(kb_path),
            "--dialogues",
            "2",
            "--out",
            str(tmp_path / "b"),
            "--realiser",
            "llm",
            "--llm",
            f"http://127.0.0.1:{port}/v1#test-model",
        )
    assert result.exit_code == 1, result.output
    assert "error: the LLM realised no turn: all" in result.stderr
    assert "no LLM request was answered (0 calls): the endpoint is probably unreachable" in result.stderr
    assert "first failure: trace-s0-000000 turn 0:" in result.stderr
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["realiser"] == "llm"


@pytest.mark.slow
def test_cli_accepts_demo_colon_seed_like_run_and_score(tmp_path) -> None:
    a = _cli("--kb", "demo:3", "--dialogues", "3", "--out", str(tmp_path / "a"))
    b = _cli("--kb", "demo", "--demo-seed", "3", "--dialogues", "3", "--out", str(tmp_path / "b"))
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    for split in ("train", "validation", "test"):
        assert (tmp_path / "a" / f"{split}.jsonl").read_bytes() == (
            tmp_path / "b" / f"{split}.jsonl"
        ).read_bytes()
    bad = _cli("--kb", "demo:x", "--dialogues", "3", "--out", str(tmp_path / "c"))
    assert bad.exit_code == 2 and "demo:SEED" in bad.output
