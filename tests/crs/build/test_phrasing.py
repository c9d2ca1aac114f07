"""User language: the phrasing bank, its held-out split pools, per-split phrasing of plans, mining."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.crs.build import speak
from groundtrace.crs.build.itinerary import LEG_RADII_KM
from groundtrace.crs.build.mining import classify, mine_phrasings
from groundtrace.crs.build.personas import GENERIC_CONSTRAINTS, bundled_personas
from groundtrace.crs.build.phrasing import (
    SPLITS,
    PhrasingFileError,
    bundled_bank,
    load_bank,
    partition,
    phrase_u,
    split_of_u,
)
from groundtrace.crs.build.speak import Spoken, split_of, typo
from groundtrace.crs.dataset.language import normalise
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import POI, Constraint, Review


def _builder_constraints() -> set[tuple[str, object]]:
    """Every (kind, value) the builder can say: persona and generic constraints, itinerary distances."""
    pairs: set[tuple[str, object]] = set()
    for p in bundled_personas():
        pairs |= {(c.kind, c.value) for c in p.constraints}
    for cs in GENERIC_CONSTRAINTS.values():
        pairs |= {(c.kind, c.value) for c in cs}
    pairs |= {("max_distance_km", r) for r in LEG_RADII_KM}
    return pairs


def test_every_builder_constraint_has_12_phrasings_and_every_split_a_pool() -> None:
    bank = bundled_bank()
    for kind, value in sorted(_builder_constraints(), key=str):
        by = bank.phrasings(kind, value)
        texts = {p.text for s in SPLITS for p in by[s]}
        assert len(texts) >= 12, (kind, value, len(texts))
        assert all(by[s] for s in SPLITS), (kind, value)
        # its own entry or family speaks it, never the value-in-words fallback
        assert all(p.source != "fallback" for s in SPLITS for p in by[s]), (kind, value)


def test_split_rule_is_the_documented_hash() -> None:
    text = "  Somewhere I can leave the CAR easily. "
    u = int(hashlib.sha256(b"somewhere i can leave the car easily").hexdigest()[:8], 16) / 16**8
    assert phrase_u(text) == u
    assert normalise("\u201cNothing LOUD\u201d!") == "nothing loud"


def test_a_phrasing_sits_in_exactly_the_pool_its_hash_names() -> None:
    bank = bundled_bank()
    for (_kind, _value), phrasings in list(bank.fixed.items())[:10]:
        by_hash = {p.text: p.split for p in phrasings}
        moved = [t for t, s in by_hash.items() if s != split_of_u(phrase_u(t))]
        assert len(moved) <= 2  # only a repair (an empty pool) moves a phrasing


def test_partition_repairs_empty_pools_nearest_to_their_interval() -> None:
    low = [f"p{i}" for i in range(200) if phrase_u(f"p{i}") < 0.6][:3]
    a, b, c = sorted(low, key=phrase_u)
    pools = partition(low, lambda t: t)
    assert pools == {"train": [a], "validation": [b], "test": [c]}
    mixed = [f"q{i}" for i in range(40)]
    pools = partition(mixed, lambda t: t)
    for s, items in pools.items():  # without repair needed every item is where its hash says
        assert all(split_of_u(phrase_u(t)) == s for t in items)


def _write(tmp_path: Path, body: str) -> Path:
    text = (Path(__file__).parents[3] / "src/groundtrace/crs/data/phrasings.yaml").read_text(encoding="utf-8")
    path = tmp_path / "bank.yaml"
    path.write_text(text + body, encoding="utf-8")
    return path


def test_loader_names_file_and_line_of_an_ambiguous_phrasing(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "  - kind: amenity\n    value: by_appointment_only\n"
        "    phrases: [by appointment, appointment only, with parking]\n",
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    line = len(lines)  # the last line holds the duplicate "with parking"
    with pytest.raises(PhrasingFileError) as err:
        load_bank(path)
    assert f"{path}:{line}:" in str(err.value)
    assert "'with parking'" in str(err.value) and "amenity=parking" in str(err.value)


def test_loader_rejects_unknown_kinds_and_thin_entries(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "  - kind: vibes\n    value: x\n    phrases: [a, b, c]\n"
        "  - kind: amenity\n    value: wifi\n    phrasez: [a, b, c]\n",
    )
    n = len(path.read_text(encoding="utf-8").splitlines())
    with pytest.raises(PhrasingFileError) as err:
        load_bank(path)
    message = str(err.value)  # both bad entries, each at its own line
    assert f"{path}:{n - 5}: constraints." in message and "kind" in message
    assert f"{path}:{n}: constraints." in message and "phrasez" in message
    with pytest.raises(PhrasingFileError, match="at least 3 are needed"):
        load_bank(_write(tmp_path, "  - kind: amenity\n    value: delivery_robot\n    phrases: [a, b]\n"))


def test_typo_edits_one_letter_of_a_long_word() -> None:
    out = typo("near {anchor}", random.Random(0))
    assert out != "near {anchor}" and out.endswith("{anchor}")
    assert typo("a b {anchor}", random.Random(0)) == "a b {anchor}"  # no word of 4+ letters


@settings(max_examples=300, deadline=None)
@given(
    pair=st.sampled_from(sorted(_builder_constraints(), key=str)),
    split=st.sampled_from(SPLITS),
    seed=st.integers(0, 10**6),
    poi_type=st.sampled_from(("restaurant", "hotel", "attraction")),
)
def test_a_said_constraint_is_never_a_phrasing_of_another_split(pair, split, seed, poi_type) -> None:
    bank = bundled_bank()
    kind, value = pair
    chooser = speak._Chooser(bank, split, random.Random(seed))
    said = chooser.say(Constraint(kind=kind, value=value, label="x"), poi_type, "Hotel Monaco")
    template = said.label.replace("Hotel Monaco", "{anchor}")
    assert not bank.seen_elsewhere(template, split)
    assert not bank.seen_elsewhere(said.label, split)
    # typos and casing slips never land on another split's phrasing of the constraint either
    others = {normalise(p.text) for s in SPLITS if s != split for p in bank.phrasings(kind, value)[s]}
    assert normalise(template) not in others


def test_split_of_matches_the_builder() -> None:
    from groundtrace.crs.build.builder import split_of as builder_split_of

    ids = [f"trace-s0-{i:06d}" for i in range(300)]
    assert [split_of(i) for i in ids] == [builder_split_of(i) for i in ids]
    assert {split_of(i) for i in ids} == set(SPLITS)


def test_spoken_text_wraps_the_label_in_its_hedge() -> None:
    c = Constraint(kind="amenity", value="parking", label="with parking")
    assert Spoken(c, hedge="ideally {p}").text() == "ideally with parking"
    assert Spoken(c).text() == "with parking"


# -- mining ----------------------------------------------------------------------------------------------


def _kb(texts: list[str]) -> KnowledgeBase:
    poi = POI(
        poi_id="b1",
        name="Cafe Uno",
        poi_type="restaurant",
        city="Tucson",
        lat=32.2,
        lon=-110.9,
        stars=4.0,
        review_count=7,
    )
    reviews = [Review(review_id=f"r{i}", poi_id="b1", stars=4.0, text=t) for i, t in enumerate(texts)]
    return KnowledgeBase([poi], reviews, name="tiny")


def test_miner_keeps_need_statements_with_provenance() -> None:
    kb = _kb(
        [
            "We wanted somewhere we could sit outside, and this was perfect.",
            "I was looking for a quiet spot to read. Found it!",
            "I wanted to sit outside but it rained.",  # "wanted to" tells what happened: not mined
            "We wanted a burger he liked.",  # a story, not a need
            "We came for a quiet romantic dinner.",  # three kinds at once: ambiguous
            "We were looking for a place that was not noisy.",  # cut at "that was": "a place" says nothing
            "we wanted with parking",  # not an indefinite description
        ]
    )
    mined = mine_phrasings(kb, bundled_bank())
    got = [(m.kind, str(m.value), m.phrasing.text, dict(m.phrasing.provenance)) for m in mined]
    assert got == [
        ("amenity", "outdoor_seating", "somewhere we could sit outside", {"review_id": "r0", "poi_id": "b1"}),
        ("noise_max", "quiet", "a quiet spot to read", {"review_id": "r1", "poi_id": "b1"}),
    ]
    assert all(m.phrasing.types == ("restaurant",) for m in mined)
    assert [m.phrasing.split for m in mined] == [split_of_u(phrase_u(m.phrasing.text)) for m in mined]


def test_mined_phrasings_join_the_bank_of_their_split() -> None:
    kb = _kb(["We wanted somewhere we could sit outside, and this was perfect."])
    bank = bundled_bank()
    (m,) = mine_phrasings(kb, bank)
    bigger, kept = bank.with_mined([(m.kind, m.value, m.phrasing)])
    assert kept == [m.phrasing]
    pool = bigger.pool("amenity", "outdoor_seating", m.phrasing.split, "restaurant")
    assert m.phrasing in pool
    assert m.phrasing not in bank.pool("amenity", "outdoor_seating", m.phrasing.split, "restaurant")
    assert bigger.seen_elsewhere(m.phrasing.text, next(s for s in SPLITS if s != m.phrasing.split))
    _, kept = bigger.with_mined([(m.kind, m.value, m.phrasing)])
    assert kept == []  # already in the bank


def test_classify_needs_one_kind_and_no_negation() -> None:
    bank = bundled_bank()
    from groundtrace.crs.build.mining import _targets

    targets = _targets(bank)
    assert classify("somewhere with a patio", targets) == ("amenity", "outdoor_seating")
    assert classify("somewhere without a patio", targets) is None
    assert classify("a place with no patio", targets) is None
    assert classify("a quiet romantic corner", targets) is None
    assert classify("a sandwich", targets) is None  # the Beaches lexicon no longer matches "sandwich"


def test_loader_checks_frame_slots(tmp_path: Path) -> None:
    text = (Path(__file__).parents[3] / "src/groundtrace/crs/data/phrasings.yaml").read_text(encoding="utf-8")
    bad = text.replace('    - "Sure, {labels}."\n', '    - "Sure, {labels} in {city}."\n', 1)
    assert bad != text
    path = tmp_path / "bank.yaml"
    path.write_text(bad, encoding="utf-8")
    line = bad[: bad.index("Sure, {labels} in {city}")].count("\n") + 1
    with pytest.raises(PhrasingFileError) as err:
        load_bank(path)
    assert f"{path}:{line}:" in str(err.value) and "provide frames take labels" in str(err.value)
