"""Dataset validator: every planted problem is found with its location; valid data passes; CLI exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.dataset_io import read_dialogues
from groundtrace.crs.kb import KnowledgeBase
from groundtrace.crs.kb_store import save_kb
from groundtrace.crs.schema import POI, Review, ReviewRef
from groundtrace.crs.validate import Problem, check_dialogue, text_tags, validate_path
from tests.conftest import FIXTURES

IO = FIXTURES / "crs_io"
DATA = IO / "dataset"
INVALID = IO / "invalid.jsonl"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    pois = [
        POI.model_validate_json(x) for x in (IO / "kb_pois.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    reviews = [
        Review.model_validate_json(x)
        for x in (IO / "kb_reviews.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    return KnowledgeBase(pois, reviews, name="crs_io")


def _codes(
    problems: list[Problem], severity: str = "error"
) -> list[tuple[int | None, str | None, int | None, str]]:
    return [(p.line, p.dialogue_id, p.turn, p.code) for p in problems if p.severity == severity]


def test_valid_dataset_has_no_errors(kb: KnowledgeBase) -> None:
    problems = validate_path(DATA, kb)
    assert _codes(problems) == []
    # the KB city has only 8 restaurants, so the short open pool is a warning, once per gold turn
    assert {p.code for p in problems} == {"open-pool"} and len(problems) == 9
    assert "only 8 restaurant POIs in Tucson" in problems[0].message


def test_every_planted_problem_is_reported_with_its_location(kb: KnowledgeBase) -> None:
    problems = validate_path(INVALID, kb)
    assert _codes(problems) == [
        (1, None, None, "json"),
        (2, "d-schema", None, "schema"),  # 'candidates' missing
        (2, "d-schema", 0, "schema"),  # role 'bot'
        (3, "d-bad", 6, "alternation"),  # two system turns in a row
        (3, "d-bad", 1, "tag-unknown"),  # [R9]
        (3, "d-bad", 1, "tag-not-listed"),  # [R9] not in cited_tags
        (3, "d-bad", 1, "quote"),  # "the best ramen in Arizona by far" is not in rv21
        (3, "d-bad", 3, "gold"),  # gold p99 outside candidates
        (3, "d-bad", 3, "open-pool"),  # gold p99 outside the open pool
        (3, "d-bad", 3, "kb-poi"),  # p99 not in the KB
        (3, "d-bad", None, "recommendations"),  # only p1, p2
        (3, "d-bad", None, "comparison"),  # the compare turn became a recommend turn
        (3, "d-bad", 2, "refine"),  # reject_and_refine without constraint
        (3, "d-bad", None, "ref-poi"),  # R2 -> rv21, a review of p2, declared as p1
    ]
    quote = next(p for p in problems if p.code == "quote")
    assert "0.5" in quote.message and "R2" in quote.message
    uncovered = [p for p in problems if p.code == "quote-uncovered"]
    assert [p.turn for p in uncovered] == [1, 1]  # turn 1 lost its quote_spans
    assert str(problems[3]).startswith(f"{INVALID}:3 [d-bad] turn 6: error alternation")


def test_without_kb_the_kb_checks_are_skipped() -> None:
    codes = {p.code for p in validate_path(INVALID) if p.severity == "error"}
    assert {"quote", "kb-poi", "ref-poi"}.isdisjoint(codes)
    assert {"alternation", "tag-unknown", "gold", "refine"} <= codes


def test_more_rules_on_edited_dialogues(kb: KnowledgeBase) -> None:
    base = next(iter(read_dialogues(DATA / "validation.jsonl")))
    # no rejection turn but the flag says so; a user act on a system turn; a tag listed but unused
    turns = list(base.turns)
    turns[2] = turns[2].model_copy(update={"act": "provide_preference"})
    turns[1] = turns[1].model_copy(update={"act": "ask_detail", "cited_tags": ["R1", "R2"]})
    turns[3] = turns[3].model_copy(update={"index": 9})
    refs = dict(base.review_refs)
    refs["R4"] = ReviewRef(review_id="rv-missing", poi_id="p2")
    d = base.model_copy(update={"turns": turns, "review_refs": refs, "kb_hash": "0" * 64})
    problems = check_dialogue(d, kb, file="x.jsonl", line=7)
    assert set(_codes(problems)) == {
        (7, "d-val-1", 1, "act"),
        (7, "d-val-1", 9, "turn-index"),
        (7, "d-val-1", None, "has-rejection"),
        (7, "d-val-1", None, "kb-review"),
    }
    assert {(p.turn, p.code) for p in problems if p.severity == "warning"} >= {
        (1, "tag-unused"),
        (None, "kb-hash"),
    }


def test_quote_span_checks(kb: KnowledgeBase) -> None:
    base = next(iter(read_dialogues(DATA / "validation.jsonl")))
    turns = list(base.turns)
    span = turns[1].quote_spans[0]
    turns[1] = turns[1].model_copy(
        update={
            "quote_spans": [
                span.model_copy(
                    update={"review_start": span.review_start + 10, "review_end": span.review_end + 10}
                )
            ]
        }
    )
    turns[3] = turns[3].model_copy(
        update={"quote_spans": [turns[3].quote_spans[0].model_copy(update={"end": 10_000})]}
    )
    problems = check_dialogue(base.model_copy(update={"turns": turns}), kb)
    assert [(p.turn, p.code) for p in problems if p.severity == "error"] == [
        (1, "quote-span"),
        (3, "quote-span"),
    ]


def test_open_pool_too_small_for_a_big_city_is_an_error() -> None:
    pois = [
        POI(
            poi_id=f"q{i}",
            name=f"Q{i}",
            city="Tucson",
            poi_type="restaurant",
            lat=32.0,
            lon=-110.0,
            stars=4.0,
            review_count=1,
        )
        for i in range(60)
    ]
    big = KnowledgeBase(pois, [])
    d = next(iter(read_dialogues(DATA / "validation.jsonl")))
    pool_problems = [p for p in check_dialogue(d, big) if p.code == "open-pool"]
    assert pool_problems and all(p.severity == "error" for p in pool_problems)
    assert "although the KB has 60" in pool_problems[0].message


def test_text_tags_order_and_groups() -> None:
    assert text_tags("a [R2] b [R1, R3] c [R2][R4]") == ["R2", "R1", "R3", "R4"]


def test_cli_validate_exit_codes(kb: KnowledgeBase, tmp_path: Path) -> None:
    runner = CliRunner()
    kb_path = save_kb(kb, tmp_path / "kb.sqlite")
    ok = runner.invoke(app, ["crs", "validate", str(DATA), "--kb", str(kb_path)])
    assert ok.exit_code == 0, ok.output
    assert "0 error(s), 9 warning(s)" in ok.output
    bad = runner.invoke(app, ["crs", "validate", str(INVALID), "--kb", str(kb_path)])
    assert bad.exit_code == 1
    assert "invalid.jsonl:3 [d-bad] turn 2: error refine" in bad.output.replace("\n", "")
    as_json = runner.invoke(app, ["crs", "validate", str(INVALID), "--json"])
    assert as_json.exit_code == 1 and as_json.output.count('"severity"') >= 10
    missing = runner.invoke(app, ["crs", "validate", str(tmp_path / "nope")])
    assert missing.exit_code == 2


# -- the strict fast path never accepts what the JSON Schema rejects ----------------------------------

_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(
        ["", "user", "system", "recommend", "train", "Easy", "cuisine", "R1", "p1", "0", "3", "4.5"]
    )
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def _paths(node: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _base_objects() -> list[dict]:
    import json

    lines = (DATA / "train.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()][:2]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_strict_acceptance_implies_schema_acceptance(data: st.DataObject) -> None:
    import copy
    import json

    from groundtrace.crs.validate import _schema_validator, strict_parse

    obj = copy.deepcopy(data.draw(st.sampled_from(_base_objects())))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(obj)[1:]))
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        action = data.draw(st.sampled_from(["replace", "convert", "delete", "add"]))
        if action == "convert":  # the same value as another JSON type: what a lax parser would coerce
            value = parent[path[-1]]
            if isinstance(value, (bool, int, float, str)) or value is None:
                kinds = [str, lambda v: [v], lambda v: {"v": v}]
                if isinstance(value, (bool, int, float)):
                    kinds += [float, int, bool]
                parent[path[-1]] = data.draw(st.sampled_from(kinds))(value)
        elif action == "replace":
            parent[path[-1]] = data.draw(_JSON_VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.text(max_size=8))] = data.draw(_JSON_VALUES)
        else:
            parent.append(data.draw(_JSON_VALUES))
    raw = json.dumps(obj).encode()
    if strict_parse(raw) is not None:
        errors = [e.message for e in _schema_validator().iter_errors(json.loads(raw))]
        assert errors == [], raw


def test_strict_fast_path_accepts_the_valid_fixture() -> None:
    from groundtrace.crs.validate import strict_parse

    lines = (DATA / "train.jsonl").read_bytes().splitlines()
    assert lines and all(strict_parse(x) is not None for x in lines if x.strip())
