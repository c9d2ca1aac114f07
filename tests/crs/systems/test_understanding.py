"""The learned constraint understanding: parser, evidence model, priors, model file, cache, CLI."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

import pytest

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.understanding import model as model_mod
from groundtrace.crs.systems.understanding.evidence import EvidenceModel, QuoteExample
from groundtrace.crs.systems.understanding.language import clauses, distance_km, price_level, star_floor
from groundtrace.crs.systems.understanding.model import (
    ModelFileError,
    load_understanding,
    save_understanding,
    train_understanding,
    training_data,
    understanding_for,
)
from groundtrace.crs.systems.understanding.parser import ConstraintParser, LabelledTurn
from groundtrace.crs.systems.understanding.priors import ConstraintPriors


def C(kind: str, value, label: str) -> Constraint:
    return Constraint(kind=kind, value=value, label=label)


QUIET = ("noise_max", "quiet")
WIFI = ("amenity", "wifi")
PATIO = ("amenity", "outdoor_seating")
KIDS = ("amenity", "good_for_kids")

#: A hand-written training fixture: phrasings of four constraints, and turns that state none.
TRAIN = [
    LabelledTurn("I need a quiet place with wifi.", (C(*QUIET, "a quiet place"), C(*WIFI, "with wifi"))),
    LabelledTurn(
        "Somewhere peaceful, free wifi please.", (C(*QUIET, "Somewhere peaceful"), C(*WIFI, "free wifi"))
    ),
    LabelledTurn("A calm spot, and good internet.", (C(*QUIET, "A calm spot"), C(*WIFI, "good internet"))),
    LabelledTurn("Hotel with a patio, kids welcome.", (C(*PATIO, "with a patio"), C(*KIDS, "kids welcome"))),
    LabelledTurn(
        "We want to sit outdoors, good for children.",
        (C(*PATIO, "sit outdoors"), C(*KIDS, "good for children")),
    ),
    LabelledTurn(
        "Outdoor tables, family friendly.", (C(*PATIO, "Outdoor tables"), C(*KIDS, "family friendly"))
    ),
    LabelledTurn(
        "A terrace would be great; the kids are coming.",
        (C(*PATIO, "A terrace"), C(*KIDS, "the kids are coming")),
    ),
    LabelledTurn("Calm and quiet, please.", (C(*QUIET, "Calm and quiet"),)),
    LabelledTurn("Wifi that works, please.", (C(*WIFI, "Wifi that works"),)),
    LabelledTurn("Hello, I am visiting next week."),
    LabelledTurn("What do people say about the staff?"),
    LabelledTurn("Thanks, that is all."),
    LabelledTurn("Is there an alternative?"),
]


def _pairs(parsed) -> set[tuple[str, str]]:
    return {(p.constraint.kind, str(p.constraint.value)) for p in parsed}


def test_clauses_cut_at_punctuation_and_contrast_words() -> None:
    text = "Hi there, a quiet place; with wifi but not too pricey. Thanks!"
    assert [text[s:e] for s, e in clauses(text)] == [
        "Hi there",
        "a quiet place",
        "with wifi",
        "not too pricey",
        "Thanks",
    ]
    assert clauses("4.5 stars at least") == [(0, 18)]  # a decimal point is no clause end


def test_numeric_amounts() -> None:
    assert distance_km("within 3 km of the hotel") == 3.0
    assert distance_km("2 miles away at most") == pytest.approx(3.22)  # 2 * 1.609 = 3.218
    assert distance_km("a 12-minute walk") == 1.0  # 12 / 60 h * 5 km/h
    assert distance_km("10 minutes by car") == 5.0  # 10 / 60 h * 30 km/h
    assert distance_km("800 metres") == 0.8
    assert price_level("under $20 a head") == ("price_max", 2)
    assert price_level("nothing above $$") == ("price_max", 2)
    assert price_level("a splurge ($$$+)") == ("price_min", 3)
    assert price_level("at least $$$") == ("price_min", 3)
    assert price_level("around 70 dollars") == ("price_max", 4)
    assert star_floor("4.5 stars or better") == 4.5 and star_floor("7 stars") is None


def test_numbers_spelled_out_and_out_of_five() -> None:
    assert star_floor("with four stars or more") == 4.0
    assert star_floor("Four and a half stars, please") == 4.5
    assert star_floor("scoring 4 out of 5 or better online") == 4.0
    assert star_floor("rated 4/5 at least") == 4.0
    assert star_floor("often packed") is None and star_floor("ten stars") is None  # "ten" > 5: no floor
    assert distance_km("a ten-minute walk") == pytest.approx(0.83)  # 10 / 60 h * 5 km/h
    assert distance_km("two miles away") == pytest.approx(3.22)
    assert distance_km("five minutes by cab") == 2.5  # 5 / 60 h * 30 km/h
    assert distance_km("5km away") == 5.0  # digits glued to the unit still read
    assert distance_km("the tenth minute") is None  # "ten" inside a word is no number


def test_parser_learns_the_fixture_and_reads_unseen_paraphrases() -> None:
    parser = ConstraintParser().fit(TRAIN)
    assert sorted(parser.classes) == [
        "amenity|str|good_for_kids",
        "amenity|str|outdoor_seating",
        "amenity|str|wifi",
        "noise_max|str|quiet",
    ]
    # word orders and combinations never seen in training
    assert _pairs(parser.parse("Peaceful and calm spot, with internet.")) == {QUIET, WIFI}
    assert _pairs(parser.parse("Outdoors on a terrace, children welcome.")) == {PATIO, KIDS}
    assert _pairs(parser.parse("Hello, what do people say about the staff?")) == set()
    # a numeric amount is read even though no class of its kind was trained
    got = parser.parse("A quiet place, within 2.5 km, under $20 a head.")
    assert _pairs(got) == {QUIET, ("max_distance_km", "2.5"), ("price_max", "2")}


def test_parser_refuses_training_without_labels() -> None:
    with pytest.raises(ValueError, match="no labelled constraint"):
        ConstraintParser().fit([LabelledTurn("Hello there.")])


def test_evidence_model_learns_which_constraint_a_quote_backs() -> None:
    quotes = [
        QuoteExample("Fast free wifi in every room.", ("amenity|str|wifi",)),
        QuoteExample("The wifi was reliable for work.", ("amenity|str|wifi", "noise_max|str|quiet")),
        QuoteExample("Great wifi speed.", ("amenity|str|wifi",)),
        QuoteExample("So quiet we slept soundly.", ("noise_max|str|quiet",)),
        QuoteExample("A calm, quiet lobby.", ("amenity|str|wifi", "noise_max|str|quiet")),
        QuoteExample("Peaceful and quiet at night.", ("noise_max|str|quiet",)),
    ]
    background = [
        "The breakfast buffet was huge.",
        "Staff were friendly at check-in.",
        "Parking costs extra.",
    ]
    ev = EvidenceModel().fit(quotes, background)
    wifi, quiet = C(*WIFI, "wifi"), C(*QUIET, "quiet")
    assert ev.expresses("The wifi was fast.", wifi) and not ev.expresses("The wifi was fast.", quiet)
    assert ev.expresses("Very quiet rooms.", quiet) and not ev.expresses("Very quiet rooms.", wifi)
    assert not ev.expresses("The breakfast buffet was huge.", wifi)
    assert not ev.knows(C(*PATIO, "patio")) and ev.support("patio", C(*PATIO, "patio")) == 0.0


def test_a_sentence_naming_the_value_expresses_it_even_when_the_model_misses_it() -> None:
    """Understanding.mentions = keyword rule OR evidence model: a model trained on few quotes (here it never
    saw "quiet" without "wifi" nearby in a background sentence) must not veto a sentence that names the
    value in so many words; a negation cue still does."""
    from groundtrace.crs.systems.understanding.model import Understanding

    quotes = [
        QuoteExample("Fast free wifi in every room.", ("amenity|str|wifi",)),
        QuoteExample("Great wifi speed.", ("amenity|str|wifi",)),
        QuoteExample("Peaceful gardens at night.", ("noise_max|str|quiet",)),
    ]
    background = ["The rooms were quiet but the wifi dropped.", "Staff were friendly at check-in."] * 3
    ev = EvidenceModel().fit(quotes, background)
    u = Understanding(evidence=ev)
    quiet = C(*QUIET, "quiet")
    sentence = "A quiet street, we slept well."
    assert ev.knows(quiet) and not ev.expresses(sentence, quiet)  # the model alone says no
    assert u.mentions(sentence, quiet) and u.expresses(sentence, quiet)  # the value is named: yes
    assert not u.expresses("Not a quiet street at all.", quiet)  # a negation cue still vetoes
    assert not u.mentions("Staff were friendly at check-in.", quiet)


def test_priors_are_co_occurrence_shares() -> None:
    priors = ConstraintPriors(min_prior=0.2).fit(
        [("hotel", frozenset({"A", "B"})), ("hotel", frozenset({"A", "B"})), ("hotel", frozenset({"A", "C"})),
         ("restaurant", frozenset({"A", "D"})), ("hotel", frozenset({"E"}))]
    )  # fmt: skip
    # each hotel set holding A: w = |{A}| / 2 = 0.5, total 1.5; B: 1.0 / 1.5, C: 0.5 / 1.5
    got = priors.prior("hotel", {"A"})
    assert [c for c, _ in got] == ["B", "C"]
    assert got[0][1] == pytest.approx(2 / 3) and got[1][1] == pytest.approx(1 / 3)
    assert priors.prior("hotel", {"Z"}) == [] and priors.prior("museum", {"A"}) == []


def _turn(index, role, act, text, added=(), gold=None, quotes=()):
    return SimpleNamespace(index=index, role=role, act=act, text=text, constraints_added=list(added),
                           gold=gold, quote_spans=list(quotes))  # fmt: skip


def _dialogues() -> list[SimpleNamespace]:
    """Dataset-shaped dialogues (duck-typed): the fixture's turns, one quoted system turn each."""
    out = []
    for i, t in enumerate(TRAIN):
        if not t.constraints:
            continue
        quote = "Lovely quiet rooms and fast wifi." if i % 2 else "The patio is great for kids."
        text = f'I recommend X. "{quote}" [R1].'
        start = text.index(quote)
        gold = SimpleNamespace(active_constraints=list(t.constraints))
        span = SimpleNamespace(start=start, end=start + len(quote))
        turns = [
            _turn(0, "user", "request", t.text, t.constraints),
            _turn(1, "system", "recommend", text, gold=gold, quotes=[span]),
            _turn(2, "user", "ask_detail", "What do people say about the staff?"),
        ]
        out.append(SimpleNamespace(poi_type="hotel", legs=[], turns=turns, review_refs={}))
    return out


def test_model_file_round_trip_and_version_check(tmp_path) -> None:
    u = train_understanding(training_data(_dialogues()))
    path = save_understanding(u, tmp_path / "m.joblib")
    header = json.loads((tmp_path / "m.joblib.json").read_text())
    assert header["format"] == "groundtrace-understanding" and header["format_version"] == 3
    assert header["labels"] == sorted(header["labels"]) and "noise_max|str|quiet" in header["labels"]
    back = load_understanding(path)
    text = "Somewhere calm and peaceful, with a terrace."
    assert back.parse(text) == u.parse(text) and {(c.kind, c.value) for c in back.parse(text)} == {
        QUIET,
        PATIO,
    }
    import joblib

    raw = joblib.load(path)
    raw["header"]["format_version"] = 99
    joblib.dump(raw, tmp_path / "old.joblib")
    with pytest.raises(ModelFileError, match=r"old\.joblib: model format version 99"):
        load_understanding(tmp_path / "old.joblib")
    (tmp_path / "junk.joblib").write_bytes(b"not a pickle")
    with pytest.raises(ModelFileError, match="junk.joblib: not a readable model file"):
        load_understanding(tmp_path / "junk.joblib")
    with pytest.raises(ModelFileError, match="no such model file"):
        load_understanding(tmp_path / "missing.joblib")


def test_trained_once_then_read_from_the_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(model_mod, "_MEMORY", {})
    data = training_data(_dialogues())
    options = {"features": "tfidf", "augment": True}
    first = understanding_for(data, options)
    files = sorted(p.name for p in (tmp_path / "understanding").iterdir())
    # the key: train hash + sha256 of the options' canonical JSON, then the format version
    opt_hash = hashlib.sha256(b'{"augment": true, "features": "tfidf"}').hexdigest()[:12]
    stem = f"{data.content_hash()[:32]}-{opt_hash}-v3"
    assert files == [f"{stem}.joblib", f"{stem}.joblib.json"]
    assert first.header["parser_options"] == options
    monkeypatch.setattr(model_mod, "_MEMORY", {})

    def no_training(_data, _options=None):
        raise AssertionError("trained again although the cache holds the model")

    monkeypatch.setattr(model_mod, "train_understanding", no_training)
    second = understanding_for(data, options)
    assert second.header["train_hash"] == first.header["train_hash"] == data.content_hash()
    assert understanding_for(data, options) is second  # from memory now
    with pytest.raises(AssertionError, match="trained again"):  # other options: another model
        understanding_for(data, {"features": "tfidf", "augment": False})


def test_systems_fit_and_parse_paraphrases(tmp_path, monkeypatch) -> None:
    """A structured system trained on the fixture tracks a paraphrase the keyword rules miss."""
    from groundtrace.crs.systems.base import build_system
    from groundtrace.crs.systems.predictions import CandidateCard, HistoryTurn, SystemInput

    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path))
    card = CandidateCard(poi_id="a", name="Inn", city="X", poi_type="hotel", stars=4.0, lat=0, lon=0)
    inp = SystemInput(
        dialogue_id="d", turn_index=1, setting="closed", city="X", poi_type="hotel",
        history=[HistoryTurn(role="user", act="request", text="A peaceful spot, good internet access.")],
        candidates=[card], reviews=[],
    )  # fmt: skip
    from groundtrace.crs.systems.toolkit.state import track_state

    system = build_system("knowledge")
    # the keyword rules know "peaceful", not that "good internet" asks for wifi
    assert {(c.kind, c.value) for c in track_state(inp, system.memo.understanding).constraints} == {QUIET}
    system.learn(_dialogues())
    tracked = track_state(inp, system.memo.understanding).constraints
    assert {(c.kind, c.value) for c in tracked} == {QUIET, WIFI}
    assert system.config()["understanding"] == system.memo.understanding.header["train_hash"][:16]
