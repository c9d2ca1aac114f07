"""Generic language knowledge the systems' understanding uses — written here, not read from the builder.

* :data:`NEGATION_RE` — a negation cue ("not", "no", "never", "n't", "lacks", "cash only" ...): a sentence
  carrying one does not praise what it names;
* :func:`clauses` — a turn's text cut into clauses at punctuation (``, ; : ! ?``, a sentence-final ``.``,
  dashes) and at ``but`` / ``although`` / ``though`` / ``whereas``; each clause keeps its character span;
* numeric amounts (:func:`distance_km`, :func:`price_level`, :func:`star_floor`): "within 2 km",
  "1.5 miles", "a 10-minute walk", "5 minutes by car", "under $20 a head", "$$ at most", "4.5 stars".
  The conversions are generic (1 mile = 1.609 km; walking 5 km/h; driving 30 km/h in town; a price per
  head of <= $15 / $30 / $60 / more is level 1 / 2 / 3 / 4, the Yelp price-level convention).
"""

from __future__ import annotations

import re

NEGATION_RE = re.compile(
    r"\b(?:not|no|never|nothing|none|nowhere|neither|nor|without|lack(?:s|ed|ing)?|cash only)\b|n't\b",
    re.IGNORECASE,
)

_CLAUSE_CUT = re.compile(
    r"[,;:!?\u2014\u2013]|\.(?=\s|$)|\s-\s|\b(?:but|although|though|whereas)\b", re.IGNORECASE
)


def clauses(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` spans of the clauses of ``text`` (module docstring), stripped, non-empty."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in [*_CLAUSE_CUT.finditer(text), None]:
        end = m.start() if m is not None else len(text)
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        s, e = start + lead, start + len(piece.rstrip())
        if e > s and re.search(r"\w", text[s:e]):
            out.append((s, e))
        if m is not None:
            start = m.end()
    return out


#: Numbers as users write them: digits ("1.5") or a spelled-out small number ("four", "ten"), optionally
#: "and a half" ("four and a half stars"); read with :func:`number`.
NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60,
}  # fmt: skip
_NUM = r"(?<![\w.])(\d+(?:\.\d+)?|(?:" + "|".join(NUMBER_WORDS) + r")\b(?:[\s-]+and[\s-]+a[\s-]+half)?)"


def number(text: str) -> float:
    """The value of a :data:`_NUM` match: ``"1.5"`` → 1.5, ``"four"`` → 4, ``"four and a half"`` → 4.5."""
    low = text.strip().lower()
    if low[:1].isdigit():
        return float(low)
    word = re.split(r"[\s-]+", low, maxsplit=1)[0]
    return NUMBER_WORDS[word] + (0.5 if low.endswith("half") else 0.0)


_KM = re.compile(rf"{_NUM}\s*(?:km\b|kilomet(?:er|re)s?\b)", re.IGNORECASE)
_MILES = re.compile(rf"{_NUM}\s*(?:mi\b|miles?\b)", re.IGNORECASE)
_METRES = re.compile(rf"{_NUM}\s*(?:m\b|met(?:er|re)s\b)", re.IGNORECASE)
_MINUTES = re.compile(rf"{_NUM}[\s-]*min(?:ute)?s?\b(?P<rest>.{{0,24}})", re.IGNORECASE)
_DRIVE = re.compile(r"\b(?:drive|driving|by car|cab|taxi|ride)\b", re.IGNORECASE)
WALK_KMH, DRIVE_KMH, KM_PER_MILE = 5.0, 30.0, 1.609


def distance_km(text: str) -> float | None:
    """A distance stated in ``text`` in km (module docstring), or None."""
    if m := _KM.search(text):
        return number(m.group(1))
    if m := _MILES.search(text):
        return round(number(m.group(1)) * KM_PER_MILE, 2)
    if m := _METRES.search(text):
        return round(number(m.group(1)) / 1000, 2)
    if m := _MINUTES.search(text):
        speed = DRIVE_KMH if _DRIVE.search(m.group("rest")) else WALK_KMH
        return round(number(m.group(1)) / 60 * speed, 2)
    return None


_SIGNS = re.compile(r"(?<![\w$])(\${1,4})(?![\w$\d])")
_DOLLARS = re.compile(r"\$\s?(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s?(?:dollars|bucks|usd|euros?)\b", re.IGNORECASE)
_ABOVE = re.compile(r"\b(?:above|over|more than|at least|from|or more|\+)", re.IGNORECASE)
_NOT_ABOVE = re.compile(
    r"\b(?:nothing|not|no|never|nowhere)\W+(?:\w+\W+)?(?:above|over|more than)", re.IGNORECASE
)


def _is_floor(before: str) -> bool:
    """Whether the words before an amount make it a minimum ("above $$", but not "nothing above $$")."""
    window = before[-24:]
    return bool(_ABOVE.search(window)) and not _NOT_ABOVE.search(window)


def price_level(text: str) -> tuple[str, int] | None:
    """``("price_max" | "price_min", level)`` stated by ``$``-signs or an amount per head, or None: a
    ``$$$+`` / "above" / "at least" reads as a minimum, anything else as a maximum."""
    if m := _SIGNS.search(text):
        level = len(m.group(1))
        after = text[m.end() : m.end() + 2]
        kind = "price_min" if after.startswith("+") or _is_floor(text[: m.start()]) else "price_max"
        return kind, level
    if m := _DOLLARS.search(text):
        amount = float(m.group(1) or m.group(2))
        level = 1 if amount <= 15 else 2 if amount <= 30 else 3 if amount <= 60 else 4
        kind = "price_min" if _is_floor(text[: m.start()]) else "price_max"
        return kind, level
    return None


_STARS = re.compile(rf"{_NUM}\s*(?:\+\s*)?(?:stars?|\u2605|(?:/|out of)\s*(?:5|five)\b)", re.IGNORECASE)


def star_floor(text: str) -> float | None:
    """A minimum star rating stated as a number ("4.5 stars", "4+ stars", "4★", "four stars or more",
    "4 out of 5"), or None."""
    m = _STARS.search(text)
    if m is None:
        return None
    value = number(m.group(1))
    return value if 0 < value <= 5 else None
