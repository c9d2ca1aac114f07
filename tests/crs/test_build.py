"""The builder end to end: deterministic files, manifest, splits, rejection share, CLI, saved KBs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundtrace.crs.build import BuildConfig, build_dataset, build_dialogues, rejection_indices, split_of
from groundtrace.crs.dataset_io import read_dataset
from groundtrace.crs.demo_kb import generate_demo_kb

FILES = ("train.jsonl", "validation.jsonl", "test.jsonl", "schema.json", "manifest.json", "build_report.json")


@pytest.fixture(scope="module")
def kb():
    return generate_demo_kb(9, n_per_type=25, reviews_per_poi=4)


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
    assert manifest["seed"] == 3 and manifest["schema_version"] == "1.0"
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
    from groundtrace.crs.kb_store import save_kb

    path = save_kb(kb, tmp_path / "kb.sqlite")
    result = CliRunner().invoke(app, ["crs", "build", "--kb", str(path), "--dialogues", "15", "--seed", "2",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "TRACE-CRS build" in result.output and "with rejection" in result.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["kb_hash"] == kb.content_hash and manifest["counts"]["total"] == 15


def test_cli_rejects_unknown_realiser_and_missing_kb(tmp_path) -> None:
    from groundtrace.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["crs", "build", "--kb", "demo", "--out", str(tmp_path), "--realiser", "gpt"])
    assert result.exit_code != 0 and "unknown realiser" in result.output
    result = runner.invoke(app, ["crs", "build", "--kb", str(tmp_path / "nope.sqlite"), "--out", str(tmp_path)])
    assert result.exit_code != 0 and "no such KB file" in result.output


def test_builds_on_real_sparse_yelp_sample() -> None:
    """Real Yelp records: most POIs have no review, attributes are patchy; the builder must cope."""
    from groundtrace.crs.kb import KnowledgeBase
    from groundtrace.crs.qc import check_dialogue
    from groundtrace.crs.yelp import business_to_poi, review_from_obj
    from tests.conftest import shared_path

    pois = []
    for line in shared_path("yelp", "yelp_academic_dataset_business.json").read_text(encoding="utf-8").splitlines():
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
                assert kb.review(span.review_id).text[span.review_start:span.review_end] == t.text[span.start:span.end]


def test_threaded_build_is_identical(kb) -> None:
    one, _ = build_dialogues(kb, 30, seed=4)
    many, report = build_dialogues(kb, 30, seed=4, config=BuildConfig(workers=3))
    assert [d.model_dump_json() for d in one] == [d.model_dump_json() for d in many]
    assert report.built == 30


def test_cli_reports_a_kb_too_small_to_plan(tmp_path) -> None:
    from groundtrace.cli import app
    from groundtrace.crs.kb_store import save_kb

    path = save_kb(generate_demo_kb(0, n_per_type=5, reviews_per_poi=1), tmp_path / "tiny.sqlite")
    result = CliRunner().invoke(app, ["crs", "build", "--kb", str(path), "--dialogues", "3", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert "no city with 8+ POIs" in result.output


def test_output_does_not_depend_on_python_hash_seed(tmp_path) -> None:
    """Set iteration order changes with PYTHONHASHSEED; the builder must never depend on it."""
    import os
    import subprocess
    import sys

    code = ("import sys; from groundtrace.crs.demo_kb import generate_demo_kb; "
            "from groundtrace.crs.build import build_dataset; "
            "build_dataset(generate_demo_kb(3, n_per_type=20, reviews_per_poi=3), 25, 8, sys.argv[1])")
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", code, str(tmp_path / hash_seed)], check=True, env=env, timeout=60)
    for name in FILES:
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes(), name


class _Corrupting:
    """Template realiser that replaces every quote of chosen attempts by text absent from the review.

    Dialogue ``i`` with ``i % 4 == 0`` is corrupted on its first attempt only (regenerated, then kept);
    ``i % 5 == 0`` on every attempt (dropped after ``max_attempts``)."""

    name = "corrupting"

    def __init__(self) -> None:
        from groundtrace.crs.realise import TemplateRealiser

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

    from groundtrace.crs.qc import check_dialogue

    n, attempts = 20, 3
    report = build_dataset(kb, n, 2, tmp_path, realiser=_Corrupting(), config=BuildConfig(max_attempts=attempts))
    always = [i for i in range(n) if i % 5 == 0]  # 0, 5, 10, 15 → dropped
    once = [i for i in range(n) if i % 4 == 0 and i % 5 != 0]  # 4, 8, 12, 16 → kept on attempt 2
    assert report.dropped == len(always) and report.built == n - len(always)
    assert report.attempts == n + len(once) + (attempts - 1) * len(always)
    failed_attempts = len(once) + attempts * len(always)  # each corrupted attempt fails both checks once
    assert report.qc_failures == {"quote_mismatch": failed_attempts, "span_mismatch": failed_attempts}
    assert report.dropped_by_reason == {"quote_mismatch": len(always)}
    data = read_dataset(tmp_path)
    kept = {d.dialogue_id for d in data.all_dialogues()}
    assert kept == {f"trace-s2-{i:06d}" for i in range(n) if i not in always}
    assert all(check_dialogue(d, kb) == [] for d in data.all_dialogues())
    assert json.loads((tmp_path / "build_report.json").read_text())["qc_failures"] == report.qc_failures
    console = Console(record=True, width=200)
    report.print_summary(console)
    text = console.export_text()
    assert f"quote_mismatch {failed_attempts}, span_mismatch {failed_attempts}" in text
    assert f"{n - len(always)} built / {n} requested ({len(always)} dropped)" in text
