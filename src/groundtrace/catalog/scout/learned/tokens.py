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
from itertools import islice
from typing import NamedTuple

_TOKEN = re.compile(r"\w+|[^\w\s]")
MAX_TOKENS = 160  # tokens per Document kept (long descriptions: the head states the product)


class Token(NamedTuple):
    text: str
    start: int
    end: int


def tokenize(text: str, limit: int = MAX_TOKENS) -> list[Token]:
    """The first ``limit`` tokens of ``text`` with their spans (built by ``tuple.__new__``: the same
    :class:`Token` as its constructor makes, without its argument handling)."""
    new = tuple.__new__
    return [new(Token, (m.group(), m.start(), m.end())) for m in islice(_TOKEN.finditer(text), max(1, limit))]


def token_texts(text: str, limit: int = MAX_TOKENS) -> list[str]:
    """The texts of :func:`tokenize`'s tokens, without match objects (``findall``).

    A long text is read up to a bound first: every token found before the last one ends before the bound,
    so when more than ``limit`` are found the first ``limit`` are exact; otherwise the whole text is read."""
    limit = max(1, limit)
    if len(text) > 8 * limit:
        head = _TOKEN.findall(text, 0, 8 * limit)
        if len(head) > limit:
            return head[:limit]
    found = _TOKEN.findall(text)
    return found[:limit] if len(found) > limit else found


def token_offsets(text: str, texts: list[str], n: int) -> list[tuple[int, int]]:
    """``(start, end)`` of the first ``n`` tokens ``texts`` of ``text`` (as :func:`tokenize` gives them).

    Only whitespace lies between two tokens (every other character is in a token) and a token starts with
    a character that is not whitespace, so the first occurrence of a token's text at or after the end of
    the token before it is where it starts."""
    out, pos, find = [], 0, text.find
    for t in texts[:n]:
        start = find(t, pos)
        pos = start + len(t)
        out.append((start, pos))
    return out


def _shape(word: str) -> str:
    shape = re.sub(r"[A-Z]", "X", word)
    shape = re.sub(r"[a-z]", "x", shape)
    shape = re.sub(r"\d", "d", shape)
    return re.sub(r"(.)\1+", r"\1\1", shape)  # "Xxxxx" -> "Xxx": length-independent


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
        marks = self.marks(tokens)
        return [marks.get(i, []) for i in range(len(tokens))]

    def marks(self, tokens: list[Token]) -> dict[int, list[str]]:
        """:meth:`tags` of the tokens that have any, by token index."""
        return self.marks_of([t.text for t in tokens])

    def marks_of(self, texts: list[str]) -> dict[int, list[str]]:
        """:meth:`marks` of the tokens whose texts are ``texts``."""
        out: dict[int, list[str]] = {}
        by_first = self._by_first
        words = [(i, t.lower()) for i, t in enumerate(texts) if t not in "-/_"]
        lows = [w for _i, w in words]
        starts = [k for k, word in enumerate(lows) if word in by_first]
        for k in starts:
            i, word = words[k]
            for value, slug in by_first[word]:
                n = len(value)
                if tuple(lows[k : k + n]) == value:
                    out.setdefault(i, []).append(f"B:{slug}")
                    for j, _w in words[k + 1 : k + n]:
                        out.setdefault(j, []).append(f"I:{slug}")
        return out


_WORD_INFO: dict[str, tuple[str, str, str, str, float, float, float]] = {}
_WORD_INFO_LIMIT = 200_000  # distinct words cached (bounded: a long run stops adding, never evicts)
_POS = tuple(str(i) for i in range(7))


def _word_info(word: str) -> tuple[str, str, str, str, float, float, float]:
    """``(lower, shape, suffix-3, prefix-3, upper, title, digit)`` of a word, cached: the per-word work of
    :func:`features` is done once per distinct word, not once per occurrence and neighbour."""
    info = _WORD_INFO.get(word)
    if info is None:
        low = word.lower()
        info = (
            low,
            _shape(word),
            low[-3:],
            low[:3],
            float(word.isupper()),
            float(word.istitle()),
            float(word.isdigit()),
        )
        if len(_WORD_INFO) < _WORD_INFO_LIMIT:
            _WORD_INFO[word] = info
    return info


def features(
    tokens: list[Token], category: str, field: str, gazetteer: Gazetteer | None = None
) -> list[dict[str, str | float]]:
    """One feature dict per token: the word (lower case), its shape, prefix/suffix, case and digit flags,
    position, the Document field (title/description), the category, the words ±1 and ±2 around it, and
    the ``gazetteer`` marks (known values of the category) on it.

    The keys of every dict come in one fixed order (crfsuite sums the weights in item order, so the same
    order gives the same marginals to the last bit)."""
    cat = category.lower()
    out: list[dict[str, str | float]] = []
    n = len(tokens)
    marks = gazetteer.tags(tokens) if gazetteer else None
    infos = [_word_info(tok.text) for tok in tokens]
    for i, (low, shape, suf3, pre3, upper, title, digit) in enumerate(infos):
        f: dict[str, str | float] = {
            "bias": 1.0,
            "pre3": pre3,
            "upper": upper,
            "title": title,
            "digit": digit,
            "pos": _POS[min(i, 6)],
            "field": field,
            "cat": cat,
            "cat_w": f"{cat}|{low}",
            "w": low,
            "shape": shape,
            "suf3": suf3,
        }
        if i >= 2:
            f["-2:w"] = infos[i - 2][0]
        else:
            f["-2:edge"] = 1.0
        if i >= 1:
            f["-1:w"], f["-1:shape"] = infos[i - 1][0], infos[i - 1][1]
        else:
            f["-1:edge"] = 1.0
        if i + 1 < n:
            f["1:w"], f["1:shape"] = infos[i + 1][0], infos[i + 1][1]
        else:
            f["1:edge"] = 1.0
        if i + 2 < n:
            f["2:w"] = infos[i + 2][0]
        else:
            f["2:edge"] = 1.0
        if marks is not None:
            for mark in marks[i]:
                f[f"gaz={mark}"] = 1.0
        out.append(f)
    return out


_POS_ITEMS = tuple(f"pos:{i}".encode() for i in range(7))
_EDGES = (b"-2:edge", b"-1:edge", b"1:edge", b"2:edge")


class ItemBuilder:
    """:func:`features` as crfsuite attribute names for one model, built from per-word cached pieces.

    A string feature is ``key:value``, a numeric one of value 1.0 is ``key``; numeric features of value
    0.0 are left out, and so is every name outside ``known`` (the model's attribute dictionary, None: keep
    all). crfsuite looks each name up and skips an unknown one, then adds ``weight × value`` per known
    attribute in item order, so leaving out an unknown name or an exact-zero feature changes no score and the
    marginals stay bit-identical (tests/catalog/scout/learned/test_speed.py). Names the model cannot hold
    the same way (a NUL, CR or LF: crfsuite stores the C string, the text dump splits lines) are always
    kept. Training keeps :func:`features`: there a feature of value 0.0 still enters the attribute set.

    The per-word pieces, in :func:`features`' order: ``bias``, ``pre3:…`` and the set flags among
    ``upper`` / ``title`` / ``digit`` (before ``pos``); ``w:…``, ``shape:…``, ``suf3:…`` (after ``cat_w``);
    ``-2:w:…``, ``-1:w:…`` + ``-1:shape:…``, ``1:w:…`` + ``1:shape:…``, ``2:w:…`` as a neighbour; and
    ``cat_w:<cat>|<lower>`` per category."""

    def __init__(self, known: frozenset[bytes] | None = None) -> None:
        self.known = known
        self._words: dict[str, tuple[tuple[bytes, ...], ...]] = {}
        self._cat_w: dict[str, dict[str, tuple[bytes, ...]]] = {}
        self._heads: dict[tuple[str, str], tuple[bytes, ...]] = {}
        self._marks: dict[str, tuple[bytes, ...]] = {}
        # a token's own names per (field, category): one dict per position 0-5, one for every later position
        self._owns: dict[tuple[str, str], tuple[dict[str, tuple[bytes, ...]], ...]] = {}
        self._pos = tuple(self._keep(x) for x in _POS_ITEMS)
        self._edges = tuple(self._keep(x) for x in _EDGES)

    def _keep(self, *names: bytes) -> tuple[bytes, ...]:
        """``names`` without the empty ones and, given ``known``, those crfsuite would skip as unknown."""
        known = self.known
        return tuple(
            x for x in names if x and (known is None or x in known or b"\0" in x or b"\n" in x or b"\r" in x)
        )

    def _word(self, word: str) -> tuple[tuple[bytes, ...], ...]:
        pieces = self._words.get(word)
        if pieces is None:
            low, shape, suf3, pre3, upper, title, digit = _word_info(word)
            lw, sh = low.encode(), shape.encode()
            flags = [name for name, on in ((b"upper", upper), (b"title", title), (b"digit", digit)) if on]
            pieces = (
                self._keep(b"bias", b"pre3:" + pre3.encode(), *flags),
                self._keep(b"w:" + lw, b"shape:" + sh, b"suf3:" + suf3.encode()),
                self._keep(b"-2:w:" + lw),
                self._keep(b"-1:w:" + lw, b"-1:shape:" + sh),
                self._keep(b"1:w:" + lw, b"1:shape:" + sh),
                self._keep(b"2:w:" + lw),
            )
            if len(self._words) < _WORD_INFO_LIMIT:
                self._words[word] = pieces
        return pieces

    def _cat_word(self, cat: str, word: str) -> tuple[bytes, ...]:
        per_cat = self._cat_w.setdefault(cat, {})
        found = per_cat.get(word)
        if found is None:
            found = self._keep(f"cat_w:{cat}|".encode() + _word_info(word)[0].encode())
            if len(per_cat) < _WORD_INFO_LIMIT:
                per_cat[word] = found
        return found

    def _own(
        self,
        owns: dict[str, tuple[bytes, ...]],
        i: int,
        text: str,
        word: tuple[tuple[bytes, ...], ...],
        cat: str,
        head: tuple[bytes, ...],
    ) -> tuple[bytes, ...]:
        """The names of token ``i`` (``text``) from ``bias`` to ``suf3``: its flags, ``pos``, field and
        category, ``cat_w``, ``w`` / ``shape`` / ``suf3``; kept in ``owns`` (the dict of its position)."""
        found = word[0] + self._pos[min(i, 6)] + head + self._cat_word(cat, text) + word[1]
        if len(owns) < _WORD_INFO_LIMIT:
            owns[text] = found
        return found

    def _head(self, field: str, cat: str) -> tuple[bytes, ...]:
        found = self._heads.get((field, cat))
        if found is None:
            found = self._heads[(field, cat)] = self._keep(b"field:" + field.encode(), b"cat:" + cat.encode())
        return found

    def _mark(self, mark: str) -> tuple[bytes, ...]:
        found = self._marks.get(mark)
        if found is None:
            found = self._marks[mark] = self._keep(f"gaz={mark}".encode())
        return found

    def items(
        self, tokens: list[Token], category: str, field: str, gazetteer: Gazetteer | None = None
    ) -> list[list[bytes]]:
        """One list of attribute names per token (class docstring)."""
        return self.items_of([tok[0] for tok in tokens], category, field, gazetteer)

    def items_of(
        self, texts: list[str], category: str, field: str, gazetteer: Gazetteer | None = None
    ) -> list[list[bytes]]:
        """:meth:`items` of the tokens whose texts are ``texts``."""
        cat = category.lower()
        n = len(texts)
        if not n:
            return []
        head = self._head(field, cat)
        marks = gazetteer.marks_of(texts) if gazetteer else None
        cached = self._words
        words = [w if (w := cached.get(t)) is not None else self._word(t) for t in texts]
        # a token's own names from "bias" to "suf3", per field, category, position (pos:0-5, pos:6 from the
        # 7th token on) and word
        owns = self._owns.get((field, cat))
        if owns is None:
            owns = self._owns[(field, cat)] = tuple({} for _ in range(7))
        at = owns[:6] + (owns[6],) * (n - 6) if n > 6 else owns[:n]
        m2_edge, m1_edge, p1_edge, p2_edge = self._edges
        own = [
            o if (o := d.get(t)) is not None else self._own(d, i, t, words[i], cat, head)
            for i, (d, t) in enumerate(zip(at, texts, strict=True))
        ]
        before2 = [m2_edge, m2_edge][:n] + [w[2] for w in words[:-2]]
        before1 = [m1_edge] + [w[3] for w in words[:-1]]
        after1 = [w[4] for w in words[1:]] + [p1_edge]
        after2 = [w[5] for w in words[2:]] + [p2_edge, p2_edge][: min(n, 2)]
        out = [
            [*o, *a, *b, *c, *d] for o, a, b, c, d in zip(own, before2, before1, after1, after2, strict=True)
        ]
        for i, found in (marks or {}).items():
            for mark in dict.fromkeys(found):
                out[i] += self._mark(mark)
        return out


def crf_items(
    tokens: list[Token], category: str, field: str, gazetteer: Gazetteer | None = None
) -> list[list[bytes]]:
    """:func:`features` as crfsuite attribute names, every name kept (:class:`ItemBuilder` without a
    model's attribute dictionary)."""
    return ItemBuilder().items(tokens, category, field, gazetteer)


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
    """``(slug, first, end)`` token spans of a BIO sequence (an ``I-`` without its ``B-`` starts a span).

    Only the labels other than ``O`` are looked at: an ``O`` ends the span before it and starts none, so a
    gap between two such labels ends the span at the gap's first position."""
    out: list[tuple[str, int, int]] = []
    current: list = []
    last = -1
    for i, label in enumerate(labels):
        if label == "O":
            continue
        if current and i != last + 1:
            out.append((current[0], current[1], last + 1))
            current = []
        tag, _, slug = label.partition("-")
        if current and (tag != "I" or slug != current[0]):
            out.append((current[0], current[1], i))
            current = []
        if tag == "B" or (tag == "I" and not current):
            current = [slug, i]
        last = i
    if current:
        out.append((current[0], current[1], last + 1))
    return out
