"""Untrusted text, made plain before anything reads it: NFKC, no invisible characters, no mixed-script tricks.

:func:`clean_untrusted` is applied to every evidence Document's text when it is created, so the extractor,
the injection detector, the quote verifier and the LLM prompts all see the same plain text:

1. Unicode NFKC (full-width ``ｉｇｎｏｒｅ`` → ``ignore``, ligatures, compatibility forms);
2. invisible format characters removed: zero-width space/joiners (U+200B–U+200D, U+2060–U+2064, U+FEFF),
   the soft hyphen (U+00AD), the Mongolian vowel separator (U+180E) and bidirectional controls
   (U+200E/F, U+202A–U+202E, U+2066–U+2069) — "Ig\u200bnore" is "Ignore";
3. confusable skeleton: inside a word that mixes Latin letters with Cyrillic or Greek look-alikes
   (``Іgnоrе``: Cyrillic І, о, е), the look-alikes become their Latin letters (:data:`CONFUSABLES`). A
   word written wholly in Cyrillic or Greek is left alone (real Russian or Greek text stays readable).

Work is linear in the text length (one regex pass per step). The result never contains more characters
than NFKC gives.
"""

from __future__ import annotations

import re
import unicodedata

INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")

#: Cyrillic and Greek letters that look like Latin letters → the Latin letter.
CONFUSABLES: dict[str, str] = {
    # Cyrillic lower / upper
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "ӏ": "l", "һ": "h", "ɡ": "g",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ї": "I", "Ј": "J", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
    # Greek lower / upper
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "γ": "y",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
}  # fmt: skip
_CONFUSABLE_CLASS = "".join(CONFUSABLES)
_WORD = re.compile(r"\w+")
_LATIN = re.compile(r"[A-Za-z]")
_LOOKALIKE = re.compile(f"[{_CONFUSABLE_CLASS}]")
_TABLE = str.maketrans(CONFUSABLES)


def _skeleton(match: re.Match[str]) -> str:
    word = match.group(0)
    if _LATIN.search(word) and _LOOKALIKE.search(word):
        return word.translate(_TABLE)
    return word


def clean_untrusted(text: str) -> str:
    """``text`` after NFKC, invisible-character removal and the mixed-script skeleton (module docstring)."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    text = INVISIBLE.sub("", text)
    return _WORD.sub(_skeleton, text)
