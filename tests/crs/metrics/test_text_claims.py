"""The text read by recovery (v2): a rejected POI recommended by name is a repeat, whatever the ranking.

Fixture dialogue d3 (tests/fixtures/crs_metrics): P1 (Olive Grove) recommended at turn 1, rejected by the
user at turn 2 (reject_and_refine), turn 3's gold is P4 (Trattoria Roma).
"""

from __future__ import annotations

import pytest

from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.metrics.text_claims import name_positions, recommends_by_name
from groundtrace.crs.systems.predictions import Prediction


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'd recommend Olive Grove.", True),
        ("You might like Olive Grove.", True),
        ("Olive Grove looks like a great fit.", True),
        ("Try olive grove tonight.", True),
        ("Another good option is Olive Grove, and I'd lean towards it.", True),
        ("Try Olive\u200b Grove.", True),  # zero-width space inside the name
        ("Try \u041elive Grove.", True),  # Cyrillic capital O
        ("Compared with Olive Grove, Sakura is worth a look.", False),
        ("I wouldn't recommend Olive Grove.", False),
        ("Instead of Olive Grove, try Sakura.", False),
        ("Since Olive Grove did not work out, try Sakura.", False),
        ("Olive Grove is out. Try Sakura.", False),
        ("Try Olive Groveland.", False),  # another name
    ],
)
def test_recommends_by_name(text: str, expected: bool) -> None:
    assert recommends_by_name(text, "Olive Grove") is expected


def test_a_name_inside_a_longer_ranked_name_is_that_place() -> None:
    text = "You could also consider Tidewater Harbor Bistro; both fit what you asked for."
    assert recommends_by_name(text, "Harbor Bistro") is True  # without knowing the longer name
    assert recommends_by_name(text, "Harbor Bistro", ("Tidewater Harbor Bistro",)) is False


def test_name_positions_in_text_order() -> None:
    text = "For Sakura: x. For Olive Grove: y. Sakura again."
    assert name_positions(text, {"P1": "Olive Grove", "P2": "Sakura"}) == [(4, "P2"), (19, "P1"), (35, "P2")]


def _d3(dialogues, response: str, ranking: list[str]) -> list[Prediction]:
    return [
        Prediction(dialogue_id="d3", turn_index=1, ranking=["P1", "P4"], response="Olive Grove."),
        Prediction(dialogue_id="d3", turn_index=3, ranking=ranking, response=response),
    ]


@pytest.mark.parametrize(
    ("response", "ranking", "repeat", "recovered"),
    [
        # gold ranked first, text recommends the rejected Olive Grove: a repeat, not recovered (v1: 0 and 1)
        ("I'd recommend Olive Grove again, it is lovely.", ["P4", "P1"], 1.0, 0.0),
        # gold first and named: no repeat, recovered
        ("I'd recommend Trattoria Roma.", ["P4", "P1"], 0.0, 1.0),
        # the rejected POI named only in contrast: no repeat
        ("Instead of Olive Grove, try Trattoria Roma.", ["P4", "P1"], 0.0, 1.0),
        # ranking repeats the rejected POI (as in v1): a repeat
        ("I'd recommend Trattoria Roma.", ["P1", "P4"], 1.0, 0.0),
    ],
)
def test_recovery_reads_the_text(dialogues, kb, response, ranking, repeat, recovered) -> None:
    d3 = [d for d in dialogues if d.dialogue_id == "d3"]
    table = score_predictions(
        d3, _d3(dialogues, response, ranking), kb, metrics=["rejected_repeat", "rejection_recovery"]
    )
    assert table.aggregate["rejected_repeat"] == repeat
    assert table.aggregate["rejection_recovery"] == recovered
    assert table.to_dict()["metric_versions"] == {"rejected_repeat": 2, "rejection_recovery": 2}


def test_name_positions_skip_a_name_inside_a_longer_one() -> None:
    text = "For Tidewater Harbor Bistro: x. For Harbor Bistro: y"
    names = {"A": "Harbor Bistro", "B": "Tidewater Harbor Bistro"}
    assert name_positions(text, names) == [(4, "B"), (36, "A")]
