"""The 41-term attribute lexicon (``crs/data/attribute_lexicon.yaml``): mention finding and KB support.

A *mention* is a non-overlapping, leftmost-longest, case-insensitive, word-bounded match of one of a
term's surface patterns (``-`` and a space in a pattern also match each other and nothing, so "wi-fi"
matches "wifi", "Wi Fi", "Wi-Fi"). A POI *supports* a term when one of the term's support rules holds on
its KB record, or when any KB review of the POI mentions the term. A match inside the name of a place the
dialogue measures distances from (its anchor, an itinerary leg's anchor: "1.2 km from Golden Bed &
Breakfast") is a reference to that place, not an attribute claim, and is no mention
(:func:`outside_place_names`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from groundtrace.core.files.yaml_loader import parse_yaml
from groundtrace.crs.schema import ATTRIBUTE_KEYS, POI

LEXICON_SIZE = 41
_RULE_OPS = ("equals", "in", "contains")


class LexiconError(ValueError):
    """The lexicon file is malformed (message names the entry)."""


@dataclass(frozen=True)
class SupportRule:
    """One KB test: a category label match, or an attribute ``equals`` / ``in`` / ``contains`` test."""

    category_any: tuple[str, ...] = ()
    attribute: str = ""
    op: str = ""
    value: Any = None

    def holds(self, poi: POI) -> bool:
        if self.category_any:
            cats = {c.strip().lower() for c in poi.categories}
            return any(label.lower() in cats for label in self.category_any)
        got = poi.attributes.get(self.attribute)
        if got is None:
            return False
        if self.op == "equals":
            return bool(got == self.value)
        if self.op == "in":
            return got in self.value
        return isinstance(got, (list, tuple, set)) and self.value in got


@dataclass(frozen=True)
class Term:
    """One lexicon entry."""

    id: str
    group: str
    patterns: tuple[str, ...]
    support: tuple[SupportRule, ...]

    def supported_by_kb(self, poi: POI) -> bool:
        return any(rule.holds(poi) for rule in self.support)


@dataclass(frozen=True)
class Mention:
    """A term found in a text at ``[start, end)``."""

    term: str
    start: int
    end: int


def pattern_regex(pattern: str) -> str:
    """Regex source for one surface pattern ('-' and ' ' are interchangeable or absent)."""
    parts = re.split(r"[-\s]+", pattern.strip().lower())
    return r"[-\s]?".join(re.escape(p) for p in parts if p)


_WORD_START = re.compile(r"(?<!\w)\w\w?")


def _mention_starts(buckets: dict[str, list[tuple[re.Pattern[str], str]]]) -> re.Pattern[str] | None:
    """A regex whose (empty) matches are the word starts where one of the patterns matches: the patterns
    as one alternation, nested by first character and key, inside a lookahead (same flags, so it finds
    every word start where a bucket's regex matches). ``mentions`` scans with it instead of visiting
    every word start (nearly every English word starts with a key: 'th', 'wi', 'co' ...) and picks the
    longest match there from the bucket as before; a position it finds where the text's key has no
    bucket (case folding beyond ``str.lower``: 'ſ' matches 's') is skipped as before. ``None`` (every
    word start is visited) when a key is one character or a pattern's source does not start with it."""
    nested: dict[str, dict[str, list[str]]] = {}
    for key, entries in buckets.items():
        for regex, _term in entries:
            source = regex.pattern.removesuffix(r"(?!\w)")
            if len(key) != 2 or not source.startswith(key):
                return None
            nested.setdefault(key[0], {}).setdefault(key[1], []).append(source[2:])
    branches = "|".join(
        re.escape(first)
        + "(?:"
        + "|".join(re.escape(second) + "(?:" + "|".join(rests) + ")" for second, rests in seconds.items())
        + ")"
        for first, seconds in nested.items()
    )
    return re.compile(rf"(?<!\w)(?=(?:{branches})(?!\w))", re.IGNORECASE) if branches else None


class Lexicon:
    """The loaded lexicon, indexed for fast scanning.

    Matching is leftmost-longest: at each word start (left to right) the longest pattern match that ends
    on a word boundary wins, and scanning resumes after it. Patterns are bucketed by their first two
    characters (lower-cased), so each word start tries only the few patterns that can match there.
    """

    def __init__(self, terms: list[Term]) -> None:
        self.terms: dict[str, Term] = {t.id: t for t in terms}
        self._buckets: dict[str, list[tuple[re.Pattern[str], str]]] = {}
        for term in terms:
            for pattern in term.patterns:
                key = pattern.strip().lower()[:2]
                if not re.fullmatch(r"\w\w?", key):
                    raise LexiconError(
                        f"pattern {pattern!r} of {term.id!r} must start with two word characters"
                    )
                regex = re.compile(pattern_regex(pattern) + r"(?!\w)", re.IGNORECASE)
                self._buckets.setdefault(key, []).append((regex, term.id))
        self._starts = _mention_starts(self._buckets)

    def __len__(self) -> int:
        return len(self.terms)

    def mentions(self, text: str) -> list[Mention]:
        """Every mention in ``text``, in order (leftmost-longest, non-overlapping)."""
        out: list[Mention] = []
        buckets = self._buckets
        resume = 0
        for w in (self._starts or _WORD_START).finditer(text):  # the word starts where a pattern matches
            start = w.start()
            if start < resume:
                continue
            # an empty match is a pattern start (_mention_starts): its key is the two characters there
            key = w.group() if w.end() > start else text[start : start + 2]
            candidates = buckets.get(key.lower())
            if not candidates:
                continue
            best_end, best_term = -1, ""
            for regex, term in candidates:
                m = regex.match(text, start)
                if m is not None and m.end() > best_end:
                    best_end, best_term = m.end(), term
            if best_end > 0:
                out.append(Mention(best_term, start, best_end))
                resume = best_end
        return out

    def term_ids_in(self, text: str) -> frozenset[str]:
        """The set of terms mentioned in ``text``."""
        return frozenset(m.term for m in self.mentions(text))


def place_name_spans(text: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """Character spans of every case-insensitive occurrence of each of ``names`` in ``text``."""
    folded = text.lower()
    spans: list[tuple[int, int]] = []
    for name in names:
        needle = name.lower()
        if not needle:
            continue
        at = folded.find(needle)
        while at >= 0:
            spans.append((at, at + len(needle)))
            at = folded.find(needle, at + 1)
    return spans


def outside_place_names(mentions: list[Mention], text: str, names: tuple[str, ...]) -> list[Mention]:
    """The mentions that do not overlap an occurrence of a place name in ``text`` (see the module doc)."""
    if not mentions or not names:
        return mentions
    spans = place_name_spans(text, names)
    if not spans:
        return mentions
    return [m for m in mentions if not any(s < m.end and m.start < e for s, e in spans)]


def _parse_rule(raw: Any, where: str) -> SupportRule:
    if not isinstance(raw, dict):
        raise LexiconError(f"{where}: a support rule must be a mapping, got {raw!r}")
    if "category_any" in raw:
        labels = raw["category_any"]
        if not isinstance(labels, list) or not labels:
            raise LexiconError(f"{where}: category_any needs a non-empty list")
        return SupportRule(category_any=tuple(str(x) for x in labels))
    key = raw.get("attribute")
    if key not in ATTRIBUTE_KEYS:
        raise LexiconError(f"{where}: unknown attribute key {key!r} (see schema.ATTRIBUTE_KEYS)")
    ops = [op for op in _RULE_OPS if op in raw]
    if len(ops) != 1:
        raise LexiconError(f"{where}: exactly one of {_RULE_OPS} is required")
    value = raw[ops[0]]
    if ops[0] == "in":
        if not isinstance(value, list):
            raise LexiconError(f"{where}: 'in' needs a list")
        value = tuple(value)
    return SupportRule(attribute=key, op=ops[0], value=value)


def parse_lexicon(data: Any, source: str = "attribute_lexicon.yaml") -> Lexicon:
    """Validate raw YAML data into a :class:`Lexicon` (errors name the entry)."""
    if not isinstance(data, dict) or not isinstance(data.get("terms"), list):
        raise LexiconError(f"{source}: top level must be a mapping with a 'terms' list")
    terms: list[Term] = []
    seen: set[str] = set()
    for i, raw in enumerate(data["terms"]):
        where = f"{source}: terms[{i}]"
        if not isinstance(raw, dict) or not raw.get("id"):
            raise LexiconError(f"{where}: each term needs an 'id'")
        tid = str(raw["id"])
        where = f"{where} ({tid})"
        if tid in seen:
            raise LexiconError(f"{where}: duplicate id")
        seen.add(tid)
        patterns = raw.get("patterns")
        if (
            not isinstance(patterns, list)
            or not patterns
            or not all(isinstance(p, str) and p.strip() for p in patterns)
        ):
            raise LexiconError(f"{where}: 'patterns' must be a non-empty list of strings")
        rules = raw.get("support")
        if not isinstance(rules, list) or not rules:
            raise LexiconError(f"{where}: 'support' must be a non-empty list")
        terms.append(
            Term(
                id=tid,
                group=str(raw.get("group", "")),
                patterns=tuple(patterns),
                support=tuple(_parse_rule(r, where) for r in rules),
            )
        )
    return Lexicon(terms)


@lru_cache(maxsize=1)
def load_lexicon() -> Lexicon:
    """The packaged lexicon (cached). Raises :class:`LexiconError` unless it has exactly 41 terms."""
    text = resources.files("groundtrace.crs").joinpath("data/attribute_lexicon.yaml").read_text("utf-8")
    lexicon = parse_lexicon(parse_yaml(text, "groundtrace/crs/data/attribute_lexicon.yaml").data)
    if len(lexicon) != LEXICON_SIZE:
        raise LexiconError(f"attribute_lexicon.yaml: expected {LEXICON_SIZE} terms, found {len(lexicon)}")
    return lexicon
