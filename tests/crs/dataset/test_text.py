"""Tags and quoted citations of a turn text (``crs/dataset/text.py``), shared by QC, validate and release."""

from __future__ import annotations

from groundtrace.crs.dataset.text import quoted_snippets, text_tags


def test_tag_parsing_forms() -> None:
    assert text_tags("a [R1] b [R3, R2] c [R1][R4] [R5; R6]") == ["R1", "R3", "R2", "R4", "R5", "R6"]
    assert text_tags("a [R2] b [R1, R3] c [R2][R4]") == ["R2", "R1", "R3", "R4"]


def test_quoted_snippets_carry_their_tags_and_offsets() -> None:
    # offsets: 'x "' is 3 chars, so the first quote starts at 3; 'Quiet room." [R2] y "' adds 21 → 24
    text = 'x "Quiet room." [R2] y "Nice" [R1, R3] and "untagged"'
    assert quoted_snippets(text) == [
        ("Quiet room.", ["R2"], 3, 14),
        ("Nice", ["R1", "R3"], 24, 28),
    ]
    assert all(text[a:b] == q for q, _, a, b in quoted_snippets(text))
