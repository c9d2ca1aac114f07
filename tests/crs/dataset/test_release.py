"""Redaction and hydration: placeholder grammar, edit scripts, byte-identical round trip, missing reviews."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.core.files.errors import LineError
from groundtrace.crs.dataset.files import read_dialogues
from groundtrace.crs.dataset.placeholders import (
    Placeholder,
    RedactionError,
    split_redacted,
)
from groundtrace.crs.dataset.release import (
    SIDECAR,
    Redactor,
    apply_edits,
    collect_review_slices,
    edit_script,
    hydrate_dataset,
    needed_spans,
    redact_dataset,
)
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.store import save_kb
from groundtrace.crs.schema import POI, QuoteSpan, Review, Turn
from tests.conftest import FIXTURES

IO = FIXTURES / "crs_io"
DATA = IO / "dataset"


def _kb() -> KnowledgeBase:
    pois = [
        POI.model_validate_json(x) for x in (IO / "kb_pois.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    reviews = [
        Review.model_validate_json(x)
        for x in (IO / "kb_reviews.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    return KnowledgeBase(pois, reviews, name="crs_io")


def _texts() -> dict[str, str]:
    return {rid: r.text for rid, r in _kb().reviews.items()}


# -- grammar ------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_edit_script_reproduces_the_target(source: str, target: str) -> None:
    assert apply_edits(source, edit_script(source, target)) == target


def test_edit_script_is_small_for_near_verbatim_quotes() -> None:
    source = "The lamb was tender \u2014 and the mezze platter was huge."
    quote = "The lamb was tender - and the mezze platter was huge"
    # difflib: replace the em dash by '-' and delete the final '.': two ops
    assert edit_script(source, quote) == [(20, 21, "-"), (52, 53, "")]
    assert edit_script(source, source) == []


def test_redact_turn_rejects_bad_spans() -> None:
    redactor = Redactor({"r1": "hello world"})
    turn = Turn(
        index=1,
        role="system",
        act="recommend",
        text='"hello" [R1]',
        quote_spans=[QuoteSpan(tag="R1", review_id="r1", start=1, end=6, review_start=0, review_end=99)],
    )
    with pytest.raises(RedactionError, match="outside review"):
        redactor.redact_turn(turn)
    turn2 = turn.model_copy(
        update={
            "quote_spans": [QuoteSpan(tag="R1", review_id="zz", start=1, end=6, review_start=0, review_end=5)]
        }
    )
    with pytest.raises(RedactionError, match="not in the KB"):
        redactor.redact_turn(turn2)


# -- round trip -----------------------------------------------------------------------------------------


def test_redacted_release_has_no_review_text(tmp_path: Path) -> None:
    report = redact_dataset(DATA, tmp_path / "rel", _texts())
    assert report.problems == [] and report.dialogues == 3
    assert report.quotes == 9 and report.near_verbatim == 3  # 3 quotes per dialogue, one near-verbatim
    released = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "rel").iterdir())
    for text in _texts().values():
        for snippet in ("Classy and upscale", "mezze platter", "portions of moussaka"):
            if snippet in text:
                assert snippet not in released
    line = (tmp_path / "rel" / "train.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert "⟦Q:rv11:0-39⟧" in line and "⟦Q:rv21:0-53~0⟧" in line
    assert "the sign says ⟦⟦OPEN⟧" in line  # a literal bracket outside quotes is escaped
    sidecar = json.loads((tmp_path / "rel" / SIDECAR).read_text(encoding="utf-8"))
    assert sidecar["edits"][0] == [[20, 21, "-"], [52, 53, ""]]
    assert (tmp_path / "rel" / "manifest.json").read_bytes() == (DATA / "manifest.json").read_bytes()


def test_round_trip_is_byte_identical(tmp_path: Path) -> None:
    rel, out = tmp_path / "rel", tmp_path / "hydrated"
    redact_dataset(DATA, rel, _texts())
    needed = needed_spans(rel)
    assert set(needed) == {"rv11", "rv21", "rv31"}
    errors: list[LineError] = []
    slices = collect_review_slices(IO / "yelp_reviews_full.json", needed, errors)
    assert errors == []
    report = hydrate_dataset(rel, slices, out)
    assert report.ok and report.restored == 9
    assert report.identical == {"train.jsonl": True, "validation.jsonl": True}
    for name in ("train.jsonl", "validation.jsonl", "manifest.json"):
        assert (out / name).read_bytes() == (DATA / name).read_bytes()


def test_missing_reviews_are_reported_not_dropped(tmp_path: Path) -> None:
    rel, out = tmp_path / "rel", tmp_path / "hydrated"
    redact_dataset(DATA, rel, _texts())
    errors: list[LineError] = []
    # yelp_reviews.json lacks rv31 and has one malformed line (line 3)
    slices = collect_review_slices(IO / "yelp_reviews.json", needed_spans(rel), errors)
    assert [(Path(e.file).name, e.line) for e in errors] == [("yelp_reviews.json", 3)]
    report = hydrate_dataset(rel, slices, out)
    assert not report.ok
    assert len(report.missing) == 3 and all("rv31" in m for m in report.missing)
    assert report.missing[0].startswith("train.jsonl:1 d-train-1 turn 5")
    assert report.identical == {"train.jsonl": False, "validation.jsonl": False}
    hydrated = list(read_dialogues(out / "train.jsonl"))
    assert len(hydrated) == 2  # nothing dropped
    assert "⟦Q:rv31:" in hydrated[0].turns[5].text  # the placeholder stays visible
    assert "mezze platter" in hydrated[0].turns[3].text  # everything else restored


def test_changed_review_is_detected_by_fingerprint(tmp_path: Path) -> None:
    rel = tmp_path / "rel"
    redact_dataset(DATA, rel, _texts())
    changed = tmp_path / "changed.json"
    lines = (
        (IO / "yelp_reviews_full.json")
        .read_text(encoding="utf-8")
        .replace("Classy and upscale", "Classy and UPSCALE")
    )
    changed.write_text(lines, encoding="utf-8")
    slices = collect_review_slices(changed, needed_spans(rel), [])
    report = hydrate_dataset(rel, slices, tmp_path / "h")
    assert len(report.mismatched) == 3 and all("rv11" in m for m in report.mismatched)


def test_undecodable_dialogue_is_left_out_and_reported(tmp_path: Path) -> None:
    texts = _texts()
    del texts["rv21"]
    report = redact_dataset(DATA, tmp_path / "rel", texts)
    assert report.dialogues == 0
    assert len(report.problems) == 3 and "left out" in report.problems[0].message


# -- CLI ------------------------------------------------------------------------------------------------


def test_cli_export_and_hydrate(tmp_path: Path) -> None:
    runner = CliRunner()
    kb_path = save_kb(_kb(), tmp_path / "kb.sqlite")
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    rel, out = tmp_path / "rel", tmp_path / "out"
    result = runner.invoke(
        app, ["crs", "export", str(data), "--redact", "--kb", str(kb_path), "--out", str(rel)]
    )
    assert result.exit_code == 0, result.output
    ids = json.loads((rel / "kb_ids.json").read_text(encoding="utf-8"))
    assert ids["reviews"]["rv11"] == "p1" and "text" not in json.dumps(ids)
    assert (rel / "dialogue.schema.json").is_file()
    result = runner.invoke(
        app,
        [
            "crs",
            "hydrate",
            str(rel),
            "--yelp-reviews",
            str(IO / "yelp_reviews_full.json"),
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "byte-identical" in result.output
    assert (out / "train.jsonl").read_bytes() == (DATA / "train.jsonl").read_bytes()
    # the hydrated folder is laid out as an export: schema, KB ids and a card that says text is back
    assert (out / "dialogue.schema.json").read_bytes() == (rel / "dialogue.schema.json").read_bytes()
    assert (out / "kb_ids.json").read_bytes() == (rel / "kb_ids.json").read_bytes()
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "crs hydrate" in card and "must not be redistributed" in card
    assert "THIS_FOLDER --yelp-reviews" not in card  # not the redacted card's instructions
    result = runner.invoke(
        app,
        [
            "crs",
            "hydrate",
            str(rel),
            "--yelp-reviews",
            str(IO / "yelp_reviews.json"),
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert result.exit_code == 1 and "rv31" in result.output


def test_quotes_without_spans_are_located_and_still_round_trip(tmp_path: Path) -> None:
    """An LLM-realised turn may carry no quote_spans: its cited quotes are found in the reviews."""
    from groundtrace.crs.dataset.files import write_dialogues

    dialogues = []
    for d in read_dialogues(DATA / "train.jsonl"):
        turns = [t.model_copy(update={"quote_spans": []}) for t in d.turns]
        made_up = turns[5].model_copy(
            update={"text": turns[5].text + ' Also "a hidden rooftop garden" [R5].'}
        )
        dialogues.append(d.model_copy(update={"turns": [*turns[:5], made_up, *turns[6:]]}))
    src = tmp_path / "src"
    write_dialogues(src / "train.jsonl", dialogues)
    report = redact_dataset(src, tmp_path / "rel", _texts())
    assert report.dialogues == 2 and report.quotes == 6 and report.near_verbatim == 2
    # the invented quote is not review text: kept as written, and said so
    assert [p.message for p in report.problems].count(
        "d-train-1: turn 5: quote 'a hidden rooftop garden' matches no cited review; left as written"
    ) == 1
    released = (tmp_path / "rel" / "train.jsonl").read_text(encoding="utf-8")
    assert "mezze platter" not in released and "Classy and upscale" not in released
    rel = tmp_path / "rel"
    report2 = hydrate_dataset(
        rel, collect_review_slices(IO / "yelp_reviews_full.json", needed_spans(rel), []), tmp_path / "h"
    )
    assert report2.ok and report2.identical == {"train.jsonl": True}
    assert (tmp_path / "h" / "train.jsonl").read_bytes() == (src / "train.jsonl").read_bytes()


def test_output_folder_must_differ_from_input(tmp_path: Path) -> None:
    rel = tmp_path / "rel"
    redact_dataset(DATA, rel, _texts())
    with pytest.raises(RedactionError, match="must differ"):
        hydrate_dataset(rel, {}, rel)
    with pytest.raises(RedactionError, match="must differ"):
        redact_dataset(DATA, DATA, _texts())


def test_cli_errors_and_unredacted_export(tmp_path: Path) -> None:
    runner = CliRunner()
    kb_path = save_kb(_kb(), tmp_path / "kb.sqlite")
    same = runner.invoke(app, ["crs", "export", str(DATA), "--kb", str(kb_path), "--out", str(DATA)])
    assert same.exit_code == 2 and "must differ" in same.output
    plain = runner.invoke(
        app, ["crs", "export", str(DATA), "--no-redact", "--kb", str(kb_path), "--out", str(tmp_path / "p")]
    )
    assert plain.exit_code == 0 and "must not be redistributed" in plain.output
    for name in ("train.jsonl", "validation.jsonl", "manifest.json"):
        assert (tmp_path / "p" / name).read_bytes() == (DATA / name).read_bytes()
    no_release = runner.invoke(
        app,
        [
            "crs",
            "hydrate",
            str(DATA),
            "--yelp-reviews",
            str(IO / "yelp_reviews.json"),
            "--out",
            str(tmp_path / "h"),
        ],
    )
    assert no_release.exit_code == 2 and "redaction.json" in no_release.output


_tricky = st.text(alphabet=st.sampled_from('ab c⟦⟧Q:~-0"é\n'), max_size=30)


@settings(max_examples=200, deadline=None)
@given(
    review=st.text(alphabet=st.sampled_from('abc ⟦⟧Q:é-"'), min_size=1, max_size=40),
    before=_tricky,
    after=_tricky,
    bounds=st.tuples(st.integers(0, 40), st.integers(0, 40)),
    mutation=st.text(max_size=3),
)
def test_redact_then_hydrate_any_turn_text(
    review: str, before: str, after: str, bounds: tuple[int, int], mutation: str
) -> None:
    """Whatever the text around it (placeholder-like characters included) and however the quote differs
    from its review slice, redact → hydrate gives the text back and no placeholder leaks the slice."""
    from groundtrace.crs.dataset.release import hydrate_text

    lo, hi = sorted(b % (len(review) + 1) for b in bounds)
    source = review[lo:hi]
    quote = (source + mutation) or "x"
    text = before + quote + after
    span = QuoteSpan(
        tag="R1",
        review_id="r:1",
        start=len(before),
        end=len(before) + len(quote),
        review_start=lo,
        review_end=hi,
    )
    turn = Turn(index=1, role="system", act="recommend", text=text, quote_spans=[span])
    redactor = Redactor({"r:1": review})
    redacted = redactor.redact_turn(turn)
    placeholders = [p for p in split_redacted(redacted) if isinstance(p, Placeholder)]
    assert placeholders == [
        Placeholder(review_id="r:1", start=lo, end=hi, edit=None if quote == source else 0)
    ]
    missing: list[str] = []
    edits = [[list(op) for op in ops] for ops in redactor.edits]
    restored, n = hydrate_text(
        redacted, {("r:1", lo, hi): source}, edits, redactor.fingerprints, missing, [], "t"
    )
    assert (restored, n, missing) == (text, 1, [])
