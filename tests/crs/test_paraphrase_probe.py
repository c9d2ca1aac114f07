"""benchmarks/paraphrase_probe.py (issue 22): ``apply`` replaces constraint labels in user turns only,
deterministically, with value-carrying templates filled, gold untouched; ``check`` flags a probe phrasing
that meets the phrasing bank and a constraint with too few phrasings; bad files name file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.paraphrase_probe import (
    ProbeFileError,
    Reference,
    apply_probe,
    build_reference,
    check_probe,
    choose,
    held_out_pool,
    load_probe,
    main,
)

PROBE = """\
templates:
  max_distance_km:
    phrases: ["no further than a {walk}-minute stroll from {anchor}"]
constraints:
  - kind: noise_max
    value: quiet
    phrases: [where you can hear a pin drop, with no racket whatsoever]
    sentences: [my ears need a break from the din]
  - kind: min_stars
    value: 4.0
    phrases: [with a solid reputation]
    sentences: [I don't want to gamble on a dud]
"""


def _c(kind: str, value: str, value_type: str, label: str) -> dict[str, str]:
    return {"kind": kind, "value": value, "value_type": value_type, "label": label}


def _dialogue(did: str, split: str) -> dict[str, object]:
    gold = {"gold_poi": "p1", "active_constraints": [_c("noise_max", "quiet", "str", "somewhere quiet")]}
    return {
        "dialogue_id": did,
        "split": split,
        "poi_type": "restaurant",
        "anchor": {"name": "Harbour Hotel", "lat": 0.0, "lon": 0.0},
        "legs": [],
        "turns": [
            {
                "index": 0,
                "role": "user",
                "text": (
                    "Hi, a restaurant in Reno: somewhere quiet, within 2 km of Harbour Hotel. "
                    "Quietness matters."
                ),
                "constraints_added": [
                    _c("noise_max", "quiet", "str", "somewhere quiet"),
                    _c("max_distance_km", "2.0", "float", "within 2 km of Harbour Hotel"),
                ],
                "gold": None,
            },
            {
                "index": 1,
                "role": "system",
                "text": "Try Pier 9; reviewers call it somewhere quiet.",
                "constraints_added": [],
                "gold": gold,
            },
            {
                "index": 2,
                "role": "user",
                "text": "Thanks. It has to be well rated.",
                "constraints_added": [
                    _c("min_stars", "4.0", "float", "It has to be well rated"),
                    _c("amenity", "wifi", "str", "with wifi"),
                ],
                "gold": None,
            },
        ],
    }


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "manifest.json").write_text("{}")
    for split in ("train", "test"):
        (ds / f"{split}.jsonl").write_text(json.dumps(_dialogue(f"d-{split}", split)) + "\n")
    return ds


@pytest.fixture()
def probe_file(tmp_path: Path) -> Path:
    p = tmp_path / "probe.yaml"
    p.write_text(PROBE)
    return p


def _read(path: Path) -> dict[str, object]:
    return json.loads(path.read_text().splitlines()[0])


def test_apply_replaces_labels_in_user_turns_and_keeps_gold(
    dataset: Path, probe_file: Path, tmp_path: Path
) -> None:
    probe = load_probe(probe_file)
    report = apply_probe(dataset, tmp_path / "out", probe, ["test"])
    d = _read(tmp_path / "out" / "test.jsonl")
    before = _dialogue("d-test", "test")
    turns = d["turns"]
    user0 = turns[0]
    assert "somewhere quiet" not in user0["text"]
    assert "no further than a 25-minute stroll from Harbour Hotel" in user0["text"]  # 2 km * 12 min/km
    assert user0["text"].endswith("Quietness matters.")  # 'quiet' inside 'Quietness' is no word-bounded match
    for c in user0["constraints_added"]:
        assert c["label"] in user0["text"]  # labels follow the text (the parser reads them as spans)
    quiet = next(c for c in user0["constraints_added"] if c["kind"] == "noise_max")
    assert quiet["label"] in {"where you can hear a pin drop", "with no racket whatsoever"}  # phrase shape
    # a label that starts a sentence gets a sentence, capitalised
    assert turns[2]["text"] in {"Thanks. I don't want to gamble on a dud."}
    assert turns[1] == before["turns"][1]  # system turn and its gold untouched
    assert _read(tmp_path / "out" / "train.jsonl") == _dialogue("d-train", "train")  # split not chosen
    stats = report.by_kind
    assert (stats["noise_max"].found, stats["noise_max"].replaced) == (1, 1)
    assert (stats["max_distance_km"].replaced, stats["min_stars"].replaced) == (1, 1)
    assert stats["amenity"].not_found == 1  # 'with wifi' is not in the text
    written = json.loads((tmp_path / "out" / "probe_report.json").read_text())
    assert written["by_kind"]["amenity"]["not_found"] == 1


def test_apply_is_deterministic_and_keep_labels(dataset: Path, probe_file: Path, tmp_path: Path) -> None:
    probe = load_probe(probe_file)
    apply_probe(dataset, tmp_path / "a", probe, ["train", "test"])
    apply_probe(dataset, tmp_path / "b", probe, ["train", "test"])
    for split in ("train", "test"):
        assert (tmp_path / "a" / f"{split}.jsonl").read_bytes() == (
            tmp_path / "b" / f"{split}.jsonl"
        ).read_bytes()
    apply_probe(dataset, tmp_path / "k", probe, ["test"], keep_labels=True)
    user0 = _read(tmp_path / "k" / "test.jsonl")["turns"][0]
    assert user0["constraints_added"][0]["label"] == "somewhere quiet"
    pool = probe.pool("noise_max", "quiet")
    assert choose(pool, "d-test", 0, "noise_max") is choose(pool, "d-test", 0, "noise_max")


def test_apply_refuses_an_existing_out(dataset: Path, probe_file: Path) -> None:
    with pytest.raises(SystemExit, match="already exists"):
        apply_probe(dataset, dataset, load_probe(probe_file), ["test"])


def test_check_flags_a_phrasing_that_meets_the_bank(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "constraints:\n"
        "  - kind: noise_max\n"
        "    value: quiet\n"
        "    phrases: [really quiet please, where you can hear a pin drop, silent as a library, no racket]\n"
    )
    ref = build_reference()
    res = check_probe(load_probe(bad), ref)
    meets = [v for v in res.violations if v.startswith("noise_max=quiet: ")]
    assert meets and all("'really quiet please' contains bank" in v for v in meets)
    assert any(v.endswith("'really quiet'") for v in meets)
    assert any(v.startswith("amenity=wifi has 0 phrasings") for v in res.violations)
    hidden = check_probe(load_probe(bad), ref, show=False)
    assert not any("really quiet please" in v for v in hidden.violations)  # private sets print no text
    assert main(["check", str(bad), "--counts-only"]) == 1


def test_check_passes_disjoint_phrasings_and_counts_bigrams(tmp_path: Path) -> None:
    ok = tmp_path / "ok.yaml"
    ok.write_text(
        "constraints:\n  - kind: noise_max\n    value: quiet\n    phrases: [where you can hear a pin drop]\n"
    )
    ref = Reference()
    ref.add("where you can hold a conversation", "bank")
    ref.produced[("noise_max", "quiet")] = "quiet"
    res = check_probe(load_probe(ok), ref)
    assert res.violations == ["noise_max=quiet has 1 phrasings (needs 4)"]
    # bigrams of 'where you can hear a pin drop': 6, of which 'where you', 'you can' are in the reference
    assert res.bigram_overlap == pytest.approx(2 / 6)


def test_bad_probe_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("templates:\n  max_distance_km:\n    phrases: ['within {feet} feet of {anchor}']\n")
    with pytest.raises(ProbeFileError, match=r"bad\.yaml:2: .*\['feet'\]"):
        load_probe(bad)
    bad.write_text("constraints:\n  - kind: noise_max\n    valu: quiet\n")
    with pytest.raises(ProbeFileError, match=r"bad\.yaml:3"):
        load_probe(bad)


def test_held_out_pools_keep_test_phrasings_out_of_train(
    dataset: Path, probe_file: Path, tmp_path: Path
) -> None:
    probe = load_probe(probe_file)
    pool = probe.pool("noise_max", "quiet")  # 3 phrasings: test 1, validation 1, train 1
    parts = {s: {p.text for p in held_out_pool(pool, s)} for s in ("train", "validation", "test")}
    assert [len(v) for v in parts.values()] == [1, 1, 1]
    assert not parts["test"] & (parts["train"] | parts["validation"])
    apply_probe(dataset, tmp_path / "h", probe, ["train", "test"], held_out=True)
    said = {}
    for split in ("train", "test"):
        user0 = _read(tmp_path / "h" / f"{split}.jsonl")["turns"][0]
        said[split] = next(c["label"] for c in user0["constraints_added"] if c["kind"] == "noise_max")
    assert said["test"] in parts["test"] and said["train"] in parts["train"]
