"""Held-out phrasing at build level: test-split constraint phrases never occur in train/validation,
labels are spans of the text (typos included), the build is deterministic, the report and card say so,
and the LLM realiser asks for fresh words on the test split."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundtrace.crs.build import speak
from groundtrace.crs.build.builder import BuildConfig, build_dataset, build_dialogues
from groundtrace.crs.build.phrasing import SPLITS, bundled_bank
from groundtrace.crs.build.planner import PlanContext, PlanningError, plan_dialogue
from groundtrace.crs.dataset.language import constraint_labels, normalise
from groundtrace.crs.dataset.validate import validate_path
from groundtrace.crs.kb.demo import generate_demo_kb


@pytest.fixture(scope="module")
def kb():
    return generate_demo_kb(4, n_per_type=50, reviews_per_poi=5)


@pytest.fixture(scope="module")
def ctx(kb):
    return PlanContext(kb)


@pytest.mark.parametrize("seed", [0, 7, 123])
def test_test_split_phrases_never_occur_in_train_or_validation(kb, seed: int) -> None:
    """Fails on the fixed-label builder: persona labels were shared by every split."""
    dialogues, report = build_dialogues(kb, 90, seed)
    labels = constraint_labels(dialogues)
    assert labels["test"] and labels["train"]
    assert labels["test"].isdisjoint(labels["train"] | labels["validation"])
    assert labels["validation"].isdisjoint(labels["train"])
    assert report.phrasing["held_out"]["seen_in_train_or_validation"] == 0
    assert report.phrasing["held_out"]["test_phrases"] == len(labels["test"])
    for d in dialogues:
        for t in d.turns:
            for c in t.constraints_added:
                assert c.label in t.text, (c.label, t.text)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1))
def test_held_out_and_determinism_for_any_seed(kb, seed: int) -> None:
    a, _ = build_dialogues(kb, 40, seed)
    labels = constraint_labels(a)
    assert labels["test"].isdisjoint(labels["train"] | labels["validation"])
    assert labels["validation"].isdisjoint(labels["train"])
    b, _ = build_dialogues(kb, 40, seed)
    assert [d.model_dump_json() for d in a] == [d.model_dump_json() for d in b]


def test_gold_constraints_carry_the_spoken_labels(kb) -> None:
    dialogues, _ = build_dialogues(kb, 30, 5)
    for d in dialogues:
        said: set[tuple[str, str, str]] = set()
        for t in d.turns:  # every active constraint of a gold label was said, in those words, before
            said |= {(c.kind, str(c.value), c.label) for c in t.constraints_added}
            if t.gold is not None:
                for c in t.gold.active_constraints:
                    assert (c.kind, str(c.value), c.label) in said


def test_build_is_deterministic_for_a_seed(kb) -> None:
    a, _ = build_dialogues(kb, 25, 11)
    b, _ = build_dialogues(kb, 25, 11)
    assert [d.model_dump_json() for d in a] == [d.model_dump_json() for d in b]
    c, _ = build_dialogues(kb, 25, 12)
    assert [d.model_dump_json() for d in a] != [d.model_dump_json() for d in c]


def test_typos_are_carried_by_the_label(kb, monkeypatch) -> None:
    monkeypatch.setattr(speak, "TYPO_RATE", 1.0)
    dialogues, _ = build_dialogues(kb, 20, 3, config=BuildConfig(mine_phrasings=False))
    bank = bundled_bank()
    clean = {
        normalise(p.text)
        for k, v in bank.known_constraints()
        for s in SPLITS
        for p in bank.phrasings(k, v)[s]
    }
    labels = [(c.label, t.text) for d in dialogues for t in d.turns for c in t.constraints_added]
    assert all(label in text for label, text in labels)
    noisy = [label for label, _ in labels if normalise(label) not in clean and "{" not in label]
    assert len(noisy) >= len(labels) // 3  # most phrasings have a 4+ letter word to misspell
    held = constraint_labels(dialogues)
    assert held["test"].isdisjoint(held["train"] | held["validation"])


def test_dataset_report_card_and_validate(kb, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    report = build_dataset(kb, 40, 2, out)
    data = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
    ph = data["phrasing"]
    assert ph["held_out"]["seen_share"] == 0.0
    assert ph["bank"]["by_kind"]["amenity"]["min_per_constraint"] >= 12
    assert set(ph["user_language"]) <= set(SPLITS) and "train" in ph["user_language"]
    assert 0 < ph["user_language"]["train"]["distinct_1"] <= 1
    assert ph["mined"]["count"] == len(ph["mined"]["phrasings"])
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["phrasing"]["held_out"] is True
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "## User language and held-out phrasing" in card
    assert "test constraint phrases seen in train/validation: 0 of" in card
    assert report.phrasing == ph
    assert [p for p in validate_path(out) if p.severity == "error"] == []


# -- the LLM realiser on the test split ----------------------------------------------------------------


def _test_split_plan(ctx):
    for k in range(200):
        did = f"heldout-{k}"
        if speak.split_of(did) != "test":
            continue
        for attempt in range(25):
            rng = random.Random(f"{did}:{attempt}")
            try:
                return plan_dialogue(ctx, did, rng, with_rejection=True), rng
            except PlanningError:
                continue
    raise AssertionError("no test-split plan")


def _data(request: dict) -> dict:
    user = next(m for m in request["messages"] if m["role"] == "user")
    return json.loads(user["content"])


def _realise(ctx, responder):
    pytest.importorskip("groundtrace.core.llm.openai_client")
    from groundtrace.core.llm.openai_client import OpenAIClient
    from groundtrace.core.llm.wire_server import WireServer
    from groundtrace.crs.build.llm_realiser import LLMRealiser

    plan, rng = _test_split_plan(ctx)
    with WireServer(responder) as server:
        client = OpenAIClient(
            "test-model", base_url=server.base_url, api_key="x", cache=None, max_reasks=0, max_retries=0
        )
        realiser = LLMRealiser(client)
        dialogue = realiser.realise(plan, rng)
        requests = [_data(r) for r in server.requests]
    return dialogue, realiser, requests


def test_llm_is_asked_for_fresh_words_on_the_test_split_and_they_become_labels(ctx) -> None:
    def fresh(request: dict) -> str:
        data = _data(request)
        if data["speaker"] == "user" and "fresh_phrasing" in data:
            phrases = [f"a totally new way number {i}" for i in range(len(data["constraints_added"]))]
            text = data["draft"] + " In other words: " + "; ".join(phrases) + "."
            return json.dumps({"text": text, "phrases": phrases})
        return json.dumps({"text": "(llm) " + data["draft"]})

    dialogue, _, requests = _realise(ctx, fresh)
    asked = [r for r in requests if "fresh_phrasing" in r]
    assert asked and all(r["speaker"] == "user" and r["constraints_added"] for r in asked)
    bank = bundled_bank()
    for r in asked:
        avoid = {normalise(x) for x in r["fresh_phrasing"]["avoid"]}
        for c in r["fresh_phrasing"]["constraints"]:
            train = bank.phrasings(c["kind"], c["value"])["train"]
            assert {normalise(p.text) for p in train} & avoid  # the train phrasings are listed to avoid
    from groundtrace.crs.build.llm_realiser import SYSTEM_PROMPT

    assert "paraphrase" in SYSTEM_PROMPT and "fresh_phrasing.avoid" in SYSTEM_PROMPT
    user = [t for t in dialogue.turns if t.role == "user" and t.constraints_added]
    new = [c.label for t in user for c in t.constraints_added if c.label.startswith("a totally new way")]
    assert new and all(c.label in t.text for t in user for c in t.constraints_added)
    # the later turns' active constraints carry the fresh labels too
    gold = {c.label for t in dialogue.turns if t.gold for c in t.gold.active_constraints}
    assert set(new) <= gold | {c.label for t in user for c in t.constraints_added}


def test_llm_answers_that_drop_or_reuse_phrasings_fall_back(ctx) -> None:
    bank = bundled_bank()

    def reuse(request: dict) -> str:
        data = _data(request)
        if data["speaker"] == "user" and "fresh_phrasing" in data:
            c = data["fresh_phrasing"]["constraints"][0]
            old = bank.phrasings(c["kind"], c["value"])["train"][0].text.replace("{anchor}", "X")
            n = len(data["constraints_added"])
            return json.dumps({"text": f"{old} please, thanks a lot", "phrases": [old] * n})
        return json.dumps({"text": "(llm) " + data["draft"]})

    dialogue, realiser, _ = _realise(ctx, reuse)
    reasons = " | ".join(realiser.rejections)
    assert "another split" in reasons
    for t in dialogue.turns:
        for c in t.constraints_added:
            assert c.label in t.text
    assert dialogue.features["realiser_fallback_turns"] >= 1


def test_an_llm_user_turn_that_states_no_constraint_is_rejected(ctx) -> None:
    from groundtrace.crs.build.llm_realiser import LLMTurnRejected, check_llm_turn

    plan, _ = _test_split_plan(ctx)
    speak.phrase_plan(plan)
    tp = plan.turns[0]
    with pytest.raises(LLMTurnRejected, match="does not state the constraint"):
        check_llm_turn(plan, tp, 0, "Something nice please, thank you.", [])
    turn = check_llm_turn(plan, tp, 0, "Well: " + ", ".join(c.label for c in tp.constraints_added), [])
    assert turn.constraints_added == tp.constraints_added
    with pytest.raises(LLMTurnRejected, match="phrases for"):
        check_llm_turn(plan, tp, 0, "Something nice please, thank you.", [], phrases=[])


def test_cli_build_refuses_a_bad_phrasing_bank_with_file_and_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from groundtrace.cli import app

    bank = tmp_path / "bank.yaml"
    bank.write_text(
        "hedges: ['{p}, please', 'ideally {p}', 'maybe {p}']\nframes: {}\nfamilies: {}\n"
        "constraints:\n  - kind: amenity\n    value: wifi\n    phrases: [with wifi]\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app,
        [
            "crs",
            "build",
            "--kb",
            "demo",
            "--dialogues",
            "2",
            "--out",
            str(tmp_path / "o"),
            "--phrasings",
            str(bank),
        ],
    )
    assert result.exit_code == 2, result.output
    assert f"{bank}:5:" in result.output and "at least 3 are needed" in result.output
    assert not (tmp_path / "o").exists()
