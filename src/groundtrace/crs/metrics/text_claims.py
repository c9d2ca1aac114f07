"""What an answer's text says besides its ranking: which POI it recommends by name, and which POI an
attribute word is claimed of. Read by the recovery metrics (a rejected POI recommended in the text is a
repeat) and by the hallucinated-attribute rate (an attribute is judged against the POI it is claimed of).

Names are matched case-insensitively, on word boundaries, on the answer as
``core.evidence.normalize.fold_unicode`` reads it (zero-width characters and look-alike letters cannot
hide a name).

*Recommended by name*: an occurrence of the POI's name with a recommending cue (:data:`RECOMMEND_BEFORE`:
"recommend", "try", "go with", "consider", "option is" ...) among the :data:`WINDOW` words before it, or
a recommending predicate (:data:`RECOMMEND_AFTER`: "is worth", "looks like a great fit", "is perfect",
"is the best" ...) among the :data:`WINDOW` words after it, within its clause, and no negation or
contrast cue (:data:`CONTRA`: "not", "n't", "instead of", "unlike", "than", "avoid", "skip" ...) in that
window. "Compared with Olive Grove, Sakura is worth a look." recommends Sakura, not Olive Grove; "I
wouldn't recommend Olive Grove" recommends nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache

from groundtrace.core.evidence.normalize import fold_unicode

WINDOW = 4
RECOMMEND_BEFORE = re.compile(
    r"\b(?:recommend\w*|suggest\w*|try|go (?:with|to|for)|consider|pick|choose|visit|head (?:to|over to)|"
    r"book|like|love|enjoy|option is|choice is|pick is|bet is|fit is)\b"
)
RECOMMEND_AFTER = re.compile(
    r"^\W*(?:is|looks|sounds|seems|would be|will be|fits|remains|stays)\b.{0,40}?"
    r"\b(?:worth|fit|great|good|perfect|best|ideal|pick|choice|option|recommend\w*|winner|match)\b"
)
CONTRA = re.compile(
    r"\b(?:not|no|never|instead|unlike|than|rather|avoid|skip|except|besides|apart|without|rejected|"
    r"pass|since|although|though|compared|versus|vs)\b|n't\b"
)
_CLAUSE = re.compile(r"[.;:!?()\[\]\n]|,")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


@lru_cache(maxsize=1 << 12)
def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(fold_unicode(name).lower())}(?!\w)")


def _clause_before(text: str, at: int) -> str:
    cut = max((m.end() for m in _CLAUSE.finditer(text, 0, at)), default=0)
    words = list(_WORD.finditer(text, cut, at))[-WINDOW:]
    return text[words[0].start() : at] if words else ""


def _clause_after(text: str, at: int) -> str:
    stop = _CLAUSE.search(text, at)
    end = stop.start() if stop is not None else len(text)
    words = list(_WORD.finditer(text, at, end))[: WINDOW + 4]
    return text[at : words[-1].end()] if words else ""


def recommends_by_name(text: str, name: str, others: tuple[str, ...] = ()) -> bool:
    """Whether ``text`` recommends the place called ``name`` (module docstring). An occurrence inside an
    occurrence of a longer name of ``others`` is that other place ("Harbor Bistro" in "Tidewater Harbor
    Bistro") and is skipped."""
    if not name.strip():
        return False
    folded = fold_unicode(text).lower()
    longer = [
        (m.start(), m.end())
        for other in others
        if len(other) > len(name)
        for m in _name_pattern(other).finditer(folded)
    ]
    for m in _name_pattern(name).finditer(folded):
        if any(s <= m.start() and m.end() <= e for s, e in longer):
            continue
        before, after = _clause_before(folded, m.start()), _clause_after(folded, m.end())
        if CONTRA.search(before) or CONTRA.search(after):
            continue
        if RECOMMEND_BEFORE.search(before) or RECOMMEND_AFTER.search(after):
            return True
    return False


@lru_cache(maxsize=1 << 12)
def _name_pattern_i(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(fold_unicode(name))}(?!\w)", re.IGNORECASE)


def name_spans(text: str, names: dict[str, str]) -> list[tuple[int, int, str]]:
    """``(start, end, poi_id)`` of every case-insensitive, word-bounded occurrence of each
    ``{poi_id: name}`` in ``text`` that does not lie inside a longer one ("Harbor Bistro" in "Tidewater
    Harbor Bistro" is the longer name's place), in text order. Offsets index ``text``: it is searched
    folded (``fold_unicode``) when folding keeps its length, else as it is."""
    folded = fold_unicode(text)
    if len(folded) != len(text):
        folded = text
    spans = [(m.start(), m.end(), pid) for pid, name in names.items() if name.strip()
             for m in _name_pattern_i(name).finditer(folded)]  # fmt: skip
    kept = [
        (s, e, pid)
        for s, e, pid in spans
        if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, _p in spans)
    ]
    return sorted(kept)


def name_positions(text: str, names: dict[str, str]) -> list[tuple[int, str]]:
    """``(start, poi_id)`` of :func:`name_spans`."""
    return [(s, pid) for s, _e, pid in name_spans(text, names)]
