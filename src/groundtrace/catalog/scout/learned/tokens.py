"""Tokens, CRF features and BIO labels for the learned engine.

Tokens are maximal runs of word characters or single other non-blank characters (``"6-oz"`` →
``6``, ``-``, ``oz``), each with its ``(start, end)`` character span, so any span of tokens maps back to an
exact substring of the Document. A gold value is labelled where it occurs in the text as whole tokens
(case-insensitive, separators flexible): ``B-<slug>`` on its first token, ``I-<slug>`` on the rest, ``O``
elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

_TOKEN = re.compile(r"\w+|[^\w\s]")
MAX_TOKENS = 160  # tokens per Document kept (long descriptions: the head states the product)


class Token(NamedTuple):
    text: str
    start: int
    end: int


def tokenize(text: str, limit: int = MAX_TOKENS) -> list[Token]:
    """The first ``limit`` tokens of ``text`` with their spans."""
    out: list[Token] = []
    for m in _TOKEN.finditer(text):
        out.append(Token(m.group(0), m.start(), m.end()))
        if len(out) >= limit:
            break
    return out


def _shape(word: str) -> str:
    shape = re.sub(r"[A-Z]", "X", word)
    shape = re.sub(r"[a-z]", "x", shape)
    shape = re.sub(r"\d", "d", shape)
    return re.sub(r"(.)\1+", r"\1\1", shape)  # "Xxxxx" -> "Xxx": length-independent


def _word_features(word: str, prefix: str) -> dict[str, str | float]:
    low = word.lower()
    return {f"{prefix}w": low, f"{prefix}shape": _shape(word), f"{prefix}suf3": low[-3:]}


class Gazetteer:
    """Known values per attribute (one category's lexicon) as token sequences — lower case, ``-``/``/``/``_``
    dropped, as :func:`find_value` matches them; :meth:`tags` marks where they occur in a token list."""

    def __init__(self, values: Mapping[str, Iterable[str]]) -> None:
        by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for slug, vals in sorted(values.items()):
            for value in vals:
                words = tuple(t for t in _value_tokens(value) if t not in "-/_")
                if words:
                    by_first.setdefault(words[0], []).append((words, slug))
        self._by_first = {k: sorted(set(v), key=lambda x: (-len(x[0]), x)) for k, v in by_first.items()}

    def __bool__(self) -> bool:
        return bool(self._by_first)

    def tags(self, tokens: list[Token]) -> list[list[str]]:
        """Per token, ``B:<slug>`` / ``I:<slug>`` for each known value of ``<slug>`` it starts / continues."""
        out: list[list[str]] = [[] for _ in tokens]
        words = [(i, t.text.lower()) for i, t in enumerate(tokens) if t.text not in "-/_"]
        for k, (i, word) in enumerate(words):
            for value, slug in self._by_first.get(word, ()):
                n = len(value)
                if tuple(w for _j, w in words[k : k + n]) == value:
                    out[i].append(f"B:{slug}")
                    for j, _w in words[k + 1 : k + n]:
                        out[j].append(f"I:{slug}")
        return out


def features(
    tokens: list[Token], category: str, field: str, gazetteer: Gazetteer | None = None
) -> list[dict[str, str | float]]:
    """One feature dict per token: the word (lower case), its shape, prefix/suffix, case and digit flags,
    position, the Document field (title/description), the category, the words ±1 and ±2 around it, and
    the ``gazetteer`` marks (known values of the category) on it."""
    cat = category.lower()
    out: list[dict[str, str | float]] = []
    n = len(tokens)
    marks = gazetteer.tags(tokens) if gazetteer else [[] for _ in tokens]
    for i, tok in enumerate(tokens):
        word = tok.text
        f: dict[str, str | float] = {
            "bias": 1.0,
            "pre3": word.lower()[:3],
            "upper": float(word.isupper()),
            "title": float(word.istitle()),
            "digit": float(word.isdigit()),
            "pos": str(min(i, 6)),
            "field": field,
            "cat": cat,
            "cat_w": f"{cat}|{word.lower()}",
        }
        f.update(_word_features(word, ""))
        for d in (-2, -1, 1, 2):
            j = i + d
            if 0 <= j < n:
                f.update(
                    {k: v for k, v in _word_features(tokens[j].text, f"{d}:").items() if k.endswith("w")}
                )
                if abs(d) == 1:
                    f[f"{d}:shape"] = _shape(tokens[j].text)
            else:
                f[f"{d}:edge"] = 1.0
        for mark in marks[i]:
            f[f"gaz={mark}"] = 1.0
        out.append(f)
    return out


def _value_tokens(value: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(value) if t.strip()]


def find_value(tokens: list[Token], value: str) -> tuple[int, int] | None:
    """``(first, last + 1)`` token indices of the first whole-token occurrence of ``value`` (case-insensitive;
    hyphens, slashes and spaces between words are interchangeable), else None."""
    wanted = [t for t in _value_tokens(value) if t not in "-/_"]
    if not wanted:
        return None
    words = [(i, t.text.lower()) for i, t in enumerate(tokens) if t.text not in "-/_"]
    for k in range(len(words) - len(wanted) + 1):
        if [w for _i, w in words[k : k + len(wanted)]] == wanted:
            return words[k][0], words[k + len(wanted) - 1][0] + 1
    return None


def bio_labels(tokens: list[Token], spans: dict[str, tuple[int, int]]) -> list[str]:
    """BIO labels for ``tokens`` given ``{slug: (first, end)}`` token spans; a span overlapping an earlier
    one (in slug order) is dropped."""
    labels = ["O"] * len(tokens)
    for slug in sorted(spans):
        first, end = spans[slug]
        if any(labels[i] != "O" for i in range(first, end)):
            continue
        labels[first] = f"B-{slug}"
        for i in range(first + 1, end):
            labels[i] = f"I-{slug}"
    return labels


def decode(labels: list[str]) -> list[tuple[str, int, int]]:
    """``(slug, first, end)`` token spans of a BIO sequence (an ``I-`` without its ``B-`` starts a span)."""
    out: list[tuple[str, int, int]] = []
    current: list = []
    for i, label in enumerate([*labels, "O"]):
        tag, _, slug = label.partition("-")
        if current and (tag != "I" or slug != current[0]):
            out.append((current[0], current[1], i))
            current = []
        if tag == "B" or (tag == "I" and not current):
            current = [slug, i]
    return out
