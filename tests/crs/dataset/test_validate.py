"""Dataset validator: every planted problem is found with its location; valid data passes; CLI exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.dataset.files import read_dialogues
from groundtrace.crs.dataset.problems import Problem
from groundtrace.crs.dataset.validate import check_dialogue, validate_path
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.store import save_kb
from groundtrace.crs.schema import POI, Review, ReviewRef
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
    return [(p.line, p.dialogue_id, p.turn, p.name) for p in problems if p.severity == severity]


def test_the_hand_made_fixture_fails_the_builder_qc_rules(kb: KnowledgeBase) -> None:
    """The fixture's gold labels were written by hand: the builder's QC rules (run by validate with a KB)
    find that p1 is not high-end, p3 is not Mediterranean, the multi-reference pool misses satisfying
    candidates and the tier does not follow from the features."""
    problems = validate_path(DATA / "validation.jsonl", kb)
    assert _codes(problems) == [
        (1, "d-val-1", 1, "gold-violates"),
        (1, "d-val-1", 1, "multi-ref-missing"),
        (1, "d-val-1", 3, "multi-ref-violates"),
        (1, "d-val-1", 5, "multi-ref-violates"),
        (1, "d-val-1", None, "tier"),
    ]
    messages = [p.message for p in problems if p.severity == "error"]
    assert "gold POI p1 violates an active constraint: price_min=3 ('high-end')" in messages
    assert "difficulty is Medium but the measured features give Hard" in messages[4]
    # the literal ⟦…⟧ text of the fixture is not mistaken for redaction placeholders
    assert "redacted" not in {p.code for p in problems}
    # the KB city has only 8 restaurants, so the short open pool is a warning, once per gold turn
    pools = [p for p in problems if p.name == "open-pool-size"]
    assert len(pools) == 3 and all(p.severity == "warning" for p in pools)
    assert "(8 restaurant POIs in Tucson)" in pools[0].message


def test_every_planted_problem_is_reported_with_its_location(kb: KnowledgeBase) -> None:
    problems = validate_path(INVALID, kb)
    assert _codes(problems) == [
        (1, None, None, "json"),
        (2, "d-schema", None, "schema"),  # 'candidates' missing
        (2, "d-schema", 0, "schema"),  # role 'bot'
        (3, "d-bad", 6, "alternation"),  # two system turns in a row
        (3, "d-bad", 1, "tag-unknown"),  # [R9]
        (3, "d-bad", 1, "cited-tags"),  # [R9] not in cited_tags
        (3, "d-bad", 1, "quote-not-in-review"),  # "the best ramen in Arizona by far" is not in rv21
        (3, "d-bad", 5, "tag-wrong-poi"),  # [R5] is a review of p3, turn 5 recommends p2
        (3, "d-bad", 1, "gold-violates"),  # p1 is not high-end
        (3, "d-bad", 1, "multi-ref-missing"),  # p2, p3, p6 also satisfy turn 1 (fixture labels)
        (3, "d-bad", 3, "gold-not-main"),  # p99 is not the main recommendation p2
        (3, "d-bad", 3, "gold-not-candidate"),  # gold p99 outside candidates
        (3, "d-bad", 3, "multi-ref-violates"),  # multi-reference p3 is not Mediterranean
        (3, "d-bad", 3, "multi-ref-missing"),
        (3, "d-bad", 3, "open-pool-gold"),  # gold p99 outside the open pool
        (3, "d-bad", 5, "multi-ref-violates"),  # multi-reference p3 is not Mediterranean
        (3, "d-bad", None, "recommendations"),  # only p1, p2
        (3, "d-bad", None, "comparison"),  # the compare turn became a recommend turn
        (3, "d-bad", 2, "refine"),  # reject_and_refine without constraint
        (3, "d-bad", None, "tier"),
        (3, "d-bad", 3, "kb-poi"),  # p99 not in the KB
        (3, "d-bad", None, "ref-poi"),  # R2 -> rv21, a review of p2, declared as p1
    ]
    quote = next(p for p in problems if p.code == "GT-Q003")
    # the unrelated quote scored ~0.5 on characters alone; core quotes' word check (most of its words
    # unaligned with the window) caps it at 0.80 x the covered share of words: 0.27
    assert "0.27" in quote.message and "R2" in quote.message
    uncovered = [p for p in problems if p.name == "quote-uncovered"]
    assert [p.turn for p in uncovered] == [1, 1]  # turn 1 lost its quote_spans
    assert str(problems[3]).startswith(f"{INVALID}:3 [d-bad] turn 6: error GT-S002 alternation")
    # an empty refinement is not also reported as "the rejected POI satisfies it"
    assert not [p for p in problems if p.name.startswith("reject")]


def test_without_kb_the_kb_checks_are_skipped() -> None:
    names = {p.name for p in validate_path(INVALID) if p.severity == "error"}
    assert {"quote-not-in-review", "gold-violates", "multi-ref-missing", "kb-poi", "ref-poi"}.isdisjoint(
        names
    )
    assert {"alternation", "tag-unknown", "gold-not-candidate", "refine"} <= names


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
    fixture_labels = set(_codes(check_dialogue(base, kb, file="x.jsonl", line=7)))
    assert set(_codes(problems)) - fixture_labels == {
        (7, "d-val-1", 1, "act"),
        (7, "d-val-1", 9, "turn-index"),
        (7, "d-val-1", None, "has-rejection"),
        (7, "d-val-1", None, "kb-review"),
        (7, "d-val-1", 1, "cited-tags"),  # QC: cited_tags must equal the text's tags (R2 is unused)
        (7, "d-val-1", 9, "multi-ref-violates"),  # the multi_ref label of the fixture, now at turn index 9
        (7, "d-val-1", None, "recommendations"),  # QC counts recommend/compare turns only
    }
    assert (None, "kb-hash") in {(p.turn, p.name) for p in problems if p.severity == "warning"}


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
    before = {(p.turn, p.name) for p in check_dialogue(base, kb) if p.severity == "error"}
    assert [
        (p.turn, p.name) for p in problems if p.severity == "error" and (p.turn, p.name) not in before
    ] == [
        (1, "quote-span-mismatch"),  # review offsets shifted by 10: the span no longer matches
        (3, "quote-span-range"),  # the span ends past the turn text
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
    pool_problems = [p for p in check_dialogue(d, big) if p.name == "open-pool-size"]
    assert pool_problems and all(p.severity == "error" for p in pool_problems)
    assert "although the KB has 60" in pool_problems[0].message


def test_cli_validate_exit_codes(kb: KnowledgeBase, tmp_path: Path) -> None:
    runner = CliRunner()
    kb_path = save_kb(kb, tmp_path / "kb.sqlite")
    fixture = runner.invoke(app, ["crs", "validate", str(DATA), "--kb", str(kb_path)])
    assert fixture.exit_code == 1  # the fixture's hand-written gold labels fail the QC rules
    assert "15 error(s), 12 warning(s)" in fixture.output
    bad = runner.invoke(app, ["crs", "validate", str(INVALID), "--kb", str(kb_path)])
    assert bad.exit_code == 1
    assert "invalid.jsonl:3 [d-bad] turn 2: error GT-R001 refine" in bad.output.replace("\n", "")
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
@pytest.mark.slow
def test_strict_acceptance_implies_schema_acceptance(data: st.DataObject) -> None:
    import copy
    import json

    from groundtrace.crs.dataset.lines import _schema_validator, strict_parse

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
    from groundtrace.crs.dataset.lines import strict_parse

    lines = (DATA / "train.jsonl").read_bytes().splitlines()
    assert lines and all(strict_parse(x) is not None for x in lines if x.strip())


# -- a freshly built demo dataset: valid as built; each corruption is caught by the QC-derived rules ------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[KnowledgeBase, Path]:
    from groundtrace.crs.build.builder import build_dataset
    from groundtrace.crs.kb.demo import generate_demo_kb

    demo = generate_demo_kb(0)
    out = tmp_path_factory.mktemp("built") / "ds"
    build_dataset(demo, 300, 1, out)
    return demo, out


def _built_dialogues(ds: Path) -> list:
    return [d for split in ("train", "validation", "test") for d in read_dialogues(ds / f"{split}.jsonl")]


@pytest.mark.slow
def test_a_freshly_built_dataset_validates_clean(built: tuple[KnowledgeBase, Path]) -> None:
    demo, ds = built
    assert validate_path(ds, demo) == []
    assert validate_path(ds) == []


def _first(dialogues: list, pred) -> object:
    return next(d for d in dialogues if pred(d))


def _with_turn(d, pos: int, **update):
    turns = list(d.turns)
    turns[pos] = turns[pos].model_copy(update=update)
    return d.model_copy(update={"turns": turns})


def _with_gold(d, pos: int, **update):
    return _with_turn(d, pos, gold=d.turns[pos].gold.model_copy(update=update))


def _rec_pos(d) -> int:
    return next(i for i, t in enumerate(d.turns) if t.act == "recommend")


def _reject_pos(d) -> int:
    return next(i for i, t in enumerate(d.turns) if t.act == "reject_and_refine")


def _constraint(kind: str, value: object) -> object:
    from groundtrace.crs.schema import Constraint

    return Constraint(kind=kind, value=value, label=str(value))


def _other_poi_tag(d, pos: int) -> str:
    turn = d.turns[pos]
    return next(tag for tag, ref in d.review_refs.items() if ref.poi_id not in turn.recommended)


CORRUPTIONS = {
    # name: (corrupt(dialogue) -> dialogue, expected (code, turn-position or None, message part))
    "pool-of-3": (
        lambda d: d.model_copy(
            update={"candidates": list(dict.fromkeys(p for t in d.turns for p in t.recommended))}
        ),
        ("pool-size", None, "3 candidates"),
    ),
    "gold-price-max-0": (
        lambda d: _with_gold(
            d,
            _rec_pos(d),
            active_constraints=[*d.turns[_rec_pos(d)].gold.active_constraints, _constraint("price_max", 0)],
        ),
        ("gold-violates", "rec", "price_max=0"),
    ),
    "gold-martian": (
        lambda d: _with_gold(
            d,
            _rec_pos(d),
            active_constraints=[
                *d.turns[_rec_pos(d)].gold.active_constraints,
                _constraint("cuisine", "Martian"),
            ],
        ),
        ("gold-violates", "rec", "cuisine='Martian'"),
    ),
    "gold-not-the-recommended-poi": (
        lambda d: _with_turn(
            d, _rec_pos(d), recommended=[d.candidates[-1], *d.turns[_rec_pos(d)].recommended]
        ),
        ("gold-not-main", "rec", "is not the main recommendation"),
    ),
    "tag-of-another-poi": (
        lambda d: _with_turn(
            d,
            _rec_pos(d),
            text=d.turns[_rec_pos(d)].text + f" See also [{_other_poi_tag(d, _rec_pos(d))}].",
            cited_tags=[*d.turns[_rec_pos(d)].cited_tags, _other_poi_tag(d, _rec_pos(d))],
        ),
        ("tag-wrong-poi", "rec", "a tag must cite a review of a POI the turn recommends"),
    ),
    "reject-nothing": (
        lambda d: _with_turn(d, _reject_pos(d), rejected=[]),
        ("reject-nothing", "reject", "rejects no POI"),
    ),
    "rejected-already-satisfies": (
        lambda d: _with_turn(d, _reject_pos(d), constraints_added=[_constraint("min_stars", 0.0)]),
        ("rejected-satisfies", "reject", "already satisfies the refinement"),
    ),
    "tier-relabelled": (
        lambda d: d.model_copy(update={"difficulty": "Easy" if d.difficulty != "Easy" else "Expert"}),
        ("tier", None, "the measured features give"),
    ),
    "features-edited": (
        lambda d: d.model_copy(update={"features": {**d.features, "n_satisfying": 9.0}}),
        ("features", None, "features.n_satisfying is 9"),
    ),
    "multi-ref-incomplete": (
        lambda d: _with_gold(d, _rec_pos(d), multi_ref=[]),
        ("multi-ref-missing", "rec", "are not in multi_ref"),
    ),
    "missing-citation": (
        lambda d: _with_turn(d, _rec_pos(d), text="I'd recommend this place.", cited_tags=[], quote_spans=[]),
        ("missing-citation", "rec", "cites no review"),
    ),
}


def _subject(dialogues: list, name: str):
    if name in ("reject-nothing", "rejected-already-satisfies"):
        return _first(dialogues, lambda d: d.has_rejection)
    if name == "multi-ref-incomplete":
        return _first(dialogues, lambda d: d.turns[_rec_pos(d)].gold.multi_ref)
    return dialogues[0]


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
@pytest.mark.slow
def test_each_qc_rule_fails_on_corrupted_data(built: tuple[KnowledgeBase, Path], name: str) -> None:
    demo, ds = built
    d = _subject(_built_dialogues(ds), name)
    assert check_dialogue(d, demo) == []  # passes on good data
    corrupt, (code, where, part) = CORRUPTIONS[name]
    bad = corrupt(d)
    positions = {None: None, "rec": _rec_pos(d), "reject": _reject_pos(d) if d.has_rejection else None}
    found = [(p.name, p.turn, p.message) for p in check_dialogue(bad, demo) if p.severity == "error"]
    assert any(c == code and t == positions[where] and part in m for c, t, m in found), found
    # each rule is checked once: no finding is reported twice
    assert len(found) == len(set(found))


@pytest.mark.slow
def test_cli_reports_qc_problems_with_file_line_id_and_turn(
    built: tuple[KnowledgeBase, Path], tmp_path: Path
) -> None:
    import json

    from groundtrace.crs.dataset.files import dialogue_line

    demo, ds = built
    kb_path = save_kb(demo, tmp_path / "kb.sqlite")
    dialogues = _built_dialogues(ds)[:20]
    d = dialogues[3]
    pos = _rec_pos(d)
    bad = _with_gold(d, pos, active_constraints=[_constraint("price_max", 0)]).model_copy(
        update={"dialogue_id": "d-[b]bad[/b]"}
    )
    lines = (
        [dialogue_line(x) for x in dialogues[:3]]
        + [dialogue_line(bad)]
        + [dialogue_line(x) for x in dialogues[4:]]
    )
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    runner = CliRunner()
    good = runner.invoke(app, ["crs", "validate", str(ds), "--kb", str(kb_path)])
    assert good.exit_code == 0 and "0 error(s), 0 warning(s)" in good.output, good.output
    text = runner.invoke(app, ["crs", "validate", str(path), "--kb", str(kb_path)])
    assert text.exit_code == 1
    flat = text.output.replace("\n", "")
    assert (
        f"mixed.jsonl:4 [d-[b]bad[/b]] turn {d.turns[pos].index}: error GT-G006 gold-violates: gold POI"
        in flat
    )
    as_json = runner.invoke(app, ["crs", "validate", str(path), "--kb", str(kb_path), "--json"])
    assert as_json.exit_code == 1
    rows = [json.loads(x) for x in as_json.output.splitlines()]
    assert (4, "GT-G006", "gold-violates") in {(r["line"], r["code"], r["name"]) for r in rows}
    assert {r["line"] for r in rows} == {4}


@pytest.mark.slow
def test_schema_invalid_line_still_gets_duplicate_and_kb_reference_checks(
    built: tuple[KnowledgeBase, Path], tmp_path: Path
) -> None:
    import json

    demo, ds = built
    d = _built_dialogues(ds)[0]
    obj = json.loads(d.model_dump_json())
    obj["difficulty"] = "Impossible"  # a schema error
    obj["candidates"][0] = "ghost-poi"
    obj["review_refs"][0]["review_id"] = "rv-nope"  # format v2: a list of {tag, review_id, poi_id}
    obj["turns"][1]["recommended"] = ["ghost-2"]
    path = tmp_path / "raw.jsonl"
    path.write_text(d.model_dump_json() + "\n" + json.dumps(obj) + "\n", encoding="utf-8")
    problems = validate_path(path, demo)
    assert [(p.line, p.turn, p.name) for p in problems] == [
        (2, None, "schema"),
        (2, None, "duplicate-id"),
        (2, None, "kb-poi"),
        (2, 1, "kb-poi"),
        (2, None, "kb-review"),
    ]
    assert "ghost-poi" in problems[2].message and "rv-nope" in problems[4].message
    # without a KB only the id-level check runs on the raw line
    assert [p.name for p in validate_path(path)] == ["schema", "duplicate-id"]


@pytest.mark.slow
def test_a_redacted_release_is_checked_without_a_flood_of_quote_errors(
    built: tuple[KnowledgeBase, Path], tmp_path: Path
) -> None:
    import json
    import shutil

    from groundtrace.crs.dataset.release import redact_dataset

    demo, ds = built
    rel = tmp_path / "rel"
    redact_dataset(ds, rel, {rid: r.text for rid, r in demo.reviews.items()})
    problems = validate_path(rel, demo)
    assert [(p.name, p.severity, p.line) for p in problems] == [("redacted", "warning", None)] * 3
    assert "run `groundtrace crs hydrate` first" in problems[0].message
    assert "release folder with redaction.json" in problems[0].message
    # a split file on its own (no redaction.json next to it) is recognised by its placeholders
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copyfile(rel / "test.jsonl", alone / "test.jsonl")
    solo = validate_path(alone / "test.jsonl", demo)
    assert [p.name for p in solo] == ["redacted"] and "release folder" not in solo[0].message
    # ids and offsets still count: a placeholder of an unknown review, one beyond its review, a span without
    # one
    lines = (rel / "test.jsonl").read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[0])
    turn = next(t for t in obj["turns"] if t["quote_spans"])
    span = turn["quote_spans"][0]
    old = f"⟦Q:{span['review_id']}:{span['review_start']}-{span['review_end']}"
    assert old in turn["text"]
    turn["text"] = turn["text"].replace(old, f"⟦Q:{span['review_id']}:{span['review_start']}-999999", 1)
    lines[0] = json.dumps(obj, ensure_ascii=False)
    (rel / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = [(p.line, p.turn, p.name) for p in validate_path(rel, demo) if p.severity == "error"]
    assert found == [(1, turn["index"], "placeholder"), (1, turn["index"], "placeholder-missing")]


def test_a_dataset_line_without_tier_features_is_reported(
    built: tuple[KnowledgeBase, Path], tmp_path: Path
) -> None:
    demo, ds = built
    d = _built_dialogues(ds)[0]
    assert check_dialogue(d.model_copy(update={"features": {}}), demo) == []  # in memory: not tiered yet
    path = tmp_path / "nofeatures.jsonl"
    path.write_text(d.model_copy(update={"features": {}}).model_dump_json() + "\n", encoding="utf-8")
    assert "features" in {p.name for p in validate_path(path, demo) if p.severity == "error"}
