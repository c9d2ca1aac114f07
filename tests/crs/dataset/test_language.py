"""User-language statistics and the held-out-phrasing rule GT-F007 of ``crs validate``."""

from __future__ import annotations

import json
from pathlib import Path

from groundtrace.crs.dataset.language import distinct_n, held_out, normalise, user_language
from groundtrace.crs.dataset.validate import validate_path
from tests.conftest import FIXTURES

DATASET = FIXTURES / "crs_io" / "dataset"


def test_distinct_n_by_hand() -> None:
    texts = ["A b a.", "b C"]
    # unigrams a b a b c: 3 distinct of 5; bigrams (a b) (b a) (b c): 3 of 3
    assert distinct_n(texts, 1) == 3 / 5
    assert distinct_n(texts, 2) == 1.0
    assert distinct_n([], 1) == 0.0
    assert distinct_n(["one"], 2) == 0.0


def test_held_out_counts_distinct_normalised_test_phrases() -> None:
    labels = {
        "train": {normalise("With parking"), "quiet"},
        "validation": {"cheap"},
        "test": {normalise("with parking!"), "cheap", "somewhere I can leave the car"},
    }
    result = held_out(labels)
    assert (result.total, result.seen) == (3, 2)
    assert result.seen_share == 2 / 3
    assert result.examples == ["cheap", "with parking"]


def _folder(tmp_path: Path, manifest: dict | None) -> Path:
    """The fixture's train file, and its dialogues again as a test file (same labels, new ids)."""
    out = tmp_path / "ds"
    out.mkdir(parents=True)
    train = (DATASET / "train.jsonl").read_text(encoding="utf-8")
    (out / "train.jsonl").write_text(train, encoding="utf-8")
    test_lines = []
    for line in train.splitlines():
        d = json.loads(line)
        d["dialogue_id"] = d["dialogue_id"].replace("train", "test")
        d["split"] = "test"
        test_lines.append(json.dumps(d))
    (out / "test.jsonl").write_text("\n".join(test_lines) + "\n", encoding="utf-8")
    if manifest is not None:
        (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return out


def test_validate_reports_test_phrases_seen_in_train(tmp_path: Path) -> None:
    plain = [p for p in validate_path(_folder(tmp_path / "a", {"name": "x"})) if p.code == "GT-F007"]
    assert len(plain) == 1 and plain[0].severity == "warning"
    # the fixture's two labels, both said in train too
    assert plain[0].message.startswith("2 of 2 distinct test constraint phrase(s)")
    assert "'high-end'" in plain[0].message and "'something mediterranean'" in plain[0].message
    declared = validate_path(_folder(tmp_path / "b", {"name": "x", "phrasing": {"held_out": True}}))
    (f007,) = [p for p in declared if p.code == "GT-F007"]
    assert f007.severity == "error" and f007.name == "held-out-phrasing"


def test_validate_is_silent_when_the_splits_share_no_phrase(tmp_path: Path) -> None:
    assert [p for p in validate_path(DATASET) if p.code == "GT-F007"] == []


def test_user_language_compares_splits_at_one_size() -> None:
    from groundtrace.crs.schema import Dialogue

    line = (DATASET / "train.jsonl").read_text(encoding="utf-8").splitlines()[0]
    d = Dialogue.model_validate_json(line)
    t = d.model_copy(deep=True)
    t.split = "test"
    stats = user_language([d, d, t])
    users = [x.text for x in d.turns if x.role == "user"]
    assert stats["train"]["user_turns"] == 2 * len(users) and stats["test"]["user_turns"] == len(users)
    assert stats["train"]["n"] == stats["test"]["n"] == len(users)
    assert (
        stats["train"]["distinct_1_at_n"]
        == stats["test"]["distinct_1_at_n"]
        == round(distinct_n(users, 1), 4)
    )
    assert stats["train"]["distinct_1"] < stats["test"]["distinct_1"]  # the doubled split repeats itself
