"""sentences: the case fold behind the phrase prefilter (``ascii_fold``, ``phrase_literal``, ``may_match``).

The prefilter is exact only if ``ascii_fold`` agrees with ``re.IGNORECASE`` on every character: these tests
check the table of ASCII case twins against the running Python's ``re`` over all of Unicode, and the
contract ``phrase_re(p).search(t) => may_match(p, ascii_fold(t))`` on generated phrases and texts.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.catalog.scout.sentences import (
    _NEGATORS,
    ascii_fold,
    may_match,
    negated,
    norm_key,
    phrase_literal,
    phrase_re,
)

ALL_CHARS = "".join(map(chr, range(0x110000)))


def test_ascii_fold_keeps_offsets_and_whitespace() -> None:
    folded = ascii_fold(ALL_CHARS)
    assert len(folded) == len(ALL_CHARS)  # one character per character: spans stay valid
    # whitespace stays whitespace (and nothing else becomes whitespace): str.split of the fold splits
    # where re's \s does
    spaces = [m.start() for m in re.finditer(r"\s", ALL_CHARS)]
    assert [m.start() for m in re.finditer(r"\s", folded)] == spaces
    assert spaces == [i for i, c in enumerate(ALL_CHARS) if c.isspace()]


def test_ascii_fold_maps_every_ascii_case_twin() -> None:
    """Every character ``re.IGNORECASE`` matches with an ASCII character folds to that character lowered."""
    folded = ascii_fold(ALL_CHARS)
    for ch in map(chr, range(128)):
        for m in re.finditer(re.escape(ch), ALL_CHARS, re.IGNORECASE):
            assert folded[m.start()] == ch.lower(), (hex(m.start()), ch)
    assert ascii_fold("İSTANBUL ſtraße K") == "istanbul straße k"


def test_phrase_literal() -> None:
    assert phrase_literal("USB Type-C") == "type"
    assert phrase_literal("non-gmo project verified") == "verified"
    assert phrase_literal("  ") is None
    assert phrase_literal("crème brûlée") is None  # the longest part is not ASCII: no prefilter
    assert phrase_literal("3.5mm jack") == "3.5mm"


def test_may_match_examples() -> None:
    text = "Wireless: Wi-Fi 6, USB Type‑C port, ſoy-free; İnk cartridge"
    folded = ascii_fold(text)
    for phrase in ("wi fi", "type", "soy", "ink", "usb"):
        assert phrase_re(phrase).search(text) and may_match(phrase, folded)
    assert not may_match("bluetooth", folded) and not phrase_re("bluetooth").search(text)


_TWINS = {"i": ("I", "İ", "ı"), "s": ("S", "ſ"), "k": ("K", "K")}


@given(
    parts=st.lists(st.text(alphabet="abiksz09.", min_size=1, max_size=5), min_size=1, max_size=3),
    seps=st.lists(st.sampled_from([" ", "-", "_", "  ", "\u00a0", "\n"]), min_size=2, max_size=2),
    noise=st.text(alphabet="abiksIKSİıſK .-_\n\u00a0", max_size=12),
    data=st.data(),
)
def test_match_implies_may_match(parts: list[str], seps: list[str], noise: str, data: st.DataObject) -> None:
    """A text that holds the phrase — any case, re's non-ASCII case twins (İ ı ſ K), any separators —
    passes the prefilter whenever ``phrase_re`` finds it."""
    phrase = " ".join(parts)
    written = "".join(p + (seps[i] if i < len(parts) - 1 else "") for i, p in enumerate(parts))
    variant = "".join(data.draw(st.sampled_from((c, c.upper(), *_TWINS.get(c, ())))) for c in written)
    found = 0
    for text in (f"{noise} {written} {noise}", f"{noise} {variant} {noise}", noise + written + noise, noise):
        if phrase_re(phrase).search(text):
            found += 1
            assert may_match(phrase, ascii_fold(text)), (phrase, text)
    if any(ch.isalnum() for ch in phrase) and phrase_re(phrase).fullmatch(written):
        assert found >= 1


@given(st.text(alphabet="aZ9 _-.,;:!?()\nnotNOé'", max_size=40), st.integers(0, 45))
@settings(max_examples=300, deadline=None)
def test_precompiled_norm_key_and_negated_equal_the_module_level_re_calls(text: str, start: int) -> None:
    """``norm_key`` / ``negated`` with their patterns compiled once give what ``re.sub`` / ``re.split`` with
    the pattern strings gave."""
    assert norm_key(text) == re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()
    window = re.split(r"[,;:.!?()\n]", text[max(0, start - 20) : start])[-1]
    assert negated(text, start) == bool(_NEGATORS.search(window))
