"""Span proposals of a trained model for one SKU: CRF spans (raw score = the lowest token marginal of
the span) and lexicon matches (raw score = the entry's training precision); :func:`select` turns raw
scores into calibrated confidences (:meth:`LearnedModel.confidence`) and keeps, per attribute, the best
value and the other proposals stating that same value (support from another field), so the engine never
names two values of one attribute itself."""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any, NamedTuple

from groundtrace.catalog.scout.learned.model import LearnedModel
from groundtrace.catalog.scout.learned.rerank import KIND, Ranker, Scorer
from groundtrace.catalog.scout.learned.tokens import (
    Gazetteer,
    ItemBuilder,
    decode,
    token_offsets,
    token_texts,
)
from groundtrace.catalog.scout.sentences import norm_key

FIELDS = ("title", "description")


class Proposal(NamedTuple):
    """One span proposal (a named tuple: made many times per SKU; same fields and repr as the frozen
    dataclass it was)."""

    attribute: str
    value: str
    field: str  # "title" | "description"
    start: int
    end: int
    confidence: float  # raw score of its kind (uncalibrated)
    how: str  # "tagger" | "lexicon"
    extend: float = 0.0  # tagger: probability that the span goes on past either end (boundary doubt)


def crfsuite() -> Any:
    """The ``pycrfsuite`` module; a ValueError with the install hint when the extra is not installed."""
    try:
        import pycrfsuite  # deferred: the optional [learned] extra; a missing one gets the install hint
    except ImportError as exc:
        raise ValueError(
            "the learned engine needs python-crfsuite: pip install 'groundtrace[learned]'"
        ) from exc
    return pycrfsuite


def gazetteer_of(lexicons: dict[str, dict[str, dict[str, Any]]], category: str) -> Gazetteer:
    """The gazetteer of one category: every lexicon value that was some training SKU's gold (``gold > 0``)."""
    entries = lexicons.get(category.lower(), {})
    return Gazetteer({slug: [e.value for e in es.values() if e.gold > 0] for slug, es in entries.items()})


def model_attributes(tagger: Any) -> frozenset[bytes] | None:
    """The attribute names of an open crfsuite tagger's model (its dictionary: what ``Tagger.set`` looks a
    name up in), read from the model's text dump (``ATTRIBUTES`` section, one ``  <id>: <name>`` line
    each); None when the dump cannot be written or read back whole (as many names as the header's
    ``num_attrs``: a name holding a line break would split its line)."""
    fd, name = tempfile.mkstemp(prefix="gt-crf-", suffix=".dump")
    os.close(fd)
    try:
        tagger.dump(name)
        with open(name, "rb") as f:
            lines = f.read().split(b"\n")
    except OSError:
        return None
    finally:
        os.unlink(name)
    try:
        first = lines.index(b"ATTRIBUTES = {") + 1
        count = next(int(x.split(b":")[1]) for x in lines if x.strip().startswith(b"num_attrs:"))
    except (ValueError, StopIteration, IndexError):
        return None
    names = []
    for line in lines[first:]:
        if line == b"}":
            break
        num, sep, attr = line.lstrip(b" ").partition(b": ")
        if not sep or not num.isdigit():
            return None
        names.append(attr)
    return frozenset(names) if len(names) == count == len(set(names)) else None


class Tagger:
    """A crfsuite tagger opened on the model's weights (in memory), with the model's gazetteers; items are
    built by an :class:`ItemBuilder` that leaves out the names the model does not know."""

    def __init__(self, model: LearnedModel) -> None:
        self.model = model
        self._tagger = crfsuite().Tagger()
        self._weights = model.crf_bytes()  # crfsuite reads this buffer in place: keep it alive
        self._tagger.open_inmemory(self._weights)
        self._gazetteers: dict[str, Gazetteer] = {}
        self._lexicon_index: dict[str, LexiconIndex] = {}
        self._lexicon_gold: dict[str, dict[tuple[str, str], int]] = {}
        self._labels: set[str] | None = None
        self._continuations: dict[str, tuple[str | None, tuple[str, ...]]] = {}
        self._items = ItemBuilder(model_attributes(self._tagger))

    def gazetteer(self, category: str) -> Gazetteer:
        key = category.lower()
        if key not in self._gazetteers:
            self._gazetteers[key] = gazetteer_of(self.model.lexicons, key)
        return self._gazetteers[key]

    def lexicon_index(self, category: str) -> LexiconIndex:
        """The category's :class:`LexiconIndex` (built once per category)."""
        key = category.lower()
        if key not in self._lexicon_index:
            self._lexicon_index[key] = LexiconIndex(self.model.lexicons.get(key, {}))
        return self._lexicon_index[key]

    def lexicon_gold(self, category: str) -> dict[tuple[str, str], int]:
        """:meth:`LearnedModel.lexicon_gold` of the category, built once per category."""
        key = category.lower()
        if key not in self._lexicon_gold:
            self._lexicon_gold[key] = self.model.lexicon_gold(key)
        return self._lexicon_gold[key]

    def spans(self, text: str, category: str, field: str) -> list[Proposal]:
        """The tagger's spans of ``text`` (raw score: the span's lowest token marginal, boundary doubt:
        :meth:`_extend`). Only the token texts go to the tagger; offsets are found for the tokens up to the
        last span's (:func:`~.tokens.token_offsets`)."""
        texts = token_texts(text)
        if not texts:
            return []
        tagger = self._tagger
        tagger.set(self._items.items_of(texts, category, field, self.gazetteer(category)))
        labels = tagger.tag()
        found = decode(labels)
        if not found:
            return []
        out = []
        marginal, n = tagger.marginal, len(texts)
        offsets = token_offsets(text, texts, max(end for _slug, _first, end in found))
        for slug, first, end in found:
            if end - first == 1:
                conf = marginal(labels[first], first)
            else:
                conf = min([marginal(labels[i], i) for i in range(first, end)])
            s, e = offsets[first][0], offsets[end - 1][1]
            extend = self._extend(slug, first, end, n)
            out.append(Proposal(slug, text[s:e], field, s, e, float(conf), "tagger", extend))
        return out

    def _extend(self, slug: str, first: int, end: int, n: int) -> float:
        """The tagger's probability that the span ``[first, end)`` goes on: the token after it is
        ``I-slug``, or the token before it is inside a span of ``slug`` (the larger of the two)."""
        names = self._continuations.get(slug)
        if names is None:
            if self._labels is None:
                self._labels = set(self._tagger.labels())
            inside, begin = f"I-{slug}", f"B-{slug}"
            before_labels = tuple(lab for lab in (begin, inside) if lab in self._labels)
            names = self._continuations[slug] = (inside if inside in self._labels else None, before_labels)
        inside_label, before_labels = names
        marginal = self._tagger.marginal
        after = marginal(inside_label, end) if end < n and inside_label is not None else 0.0
        before = 0.0
        if first > 0:
            before = sum(marginal(lab, first - 1) for lab in before_labels)
        return float(max(after, before))


def _word_re(value: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.findall(r"\w+", value)]
    return re.compile(r"(?<!\w)" + r"[\s\-_/.,]*".join(words) + r"(?!\w)", re.IGNORECASE)


_RUN = re.compile(r"\w+")
# non-ASCII characters that re.IGNORECASE equates with an ASCII word character, or whose lower case holds
# one (İ ı ſ K: computed over every code point, tests/catalog/scout/learned/test_speed.py checks it); a text
# holding one is matched against every lexicon value, as before the index
_ASCII_FOLDING = frozenset("\u0130\u0131\u017f\u212a")


class LexiconIndex:
    """One category's lexicon values indexed by their first word, so a text is matched only against the
    values that can occur in it.

    A value matches (:func:`_word_re`) where its words occur case-insensitively as whole words, any of
    ``\\s - _ / . ,`` between them. Where a value whose first word ``w`` is ASCII matches, the match starts
    a run of word characters of the text whose lower case begins with ``w.lower()`` (the ASCII characters
    of the text that re.IGNORECASE equates with ``w``'s are its ASCII upper/lower case, unless the text
    holds one of :data:`_ASCII_FOLDING`). So only those values — and every value with a non-ASCII first
    word — are searched; the others cannot match. The result is exactly that of searching every value
    (same proposals, same order: values in lexicon order); compiled patterns are kept per value."""

    def __init__(self, lexicon: dict[str, dict[str, Any]]) -> None:
        self._entries: list[tuple[str, str, float]] = []  # (slug, value, raw score) in lexicon order
        self._patterns: dict[int, re.Pattern[str]] = {}
        self._by_first: dict[str, list[int]] = {}
        self._always: list[int] = []
        for slug, entries in lexicon.items():
            for entry in entries.values():
                words = _RUN.findall(entry.value)
                if not words:
                    continue
                i = len(self._entries)
                self._entries.append((slug, entry.value, entry.precision))
                if words[0].isascii():
                    self._by_first.setdefault(words[0].lower(), []).append(i)
                else:
                    self._always.append(i)
        self._lengths = sorted({len(k) for k in self._by_first})
        self._runs: dict[str, tuple[int, ...]] = {}

    def _starts(self, text: str) -> dict[int, list[int]] | None:
        """Per value that can match ``text``: the starts of the word runs where its match can begin (value
        index → ascending offsets; ``[]``: anywhere, for a value with a non-ASCII first word); None when the
        text holds one of :data:`_ASCII_FOLDING` (every value, anywhere)."""
        if not text.isascii() and not _ASCII_FOLDING.isdisjoint(text):
            return None
        found: dict[int, list[int]] = {i: [] for i in self._always}
        runs = self._runs
        for m in _RUN.finditer(text):
            run = m.group()
            hit = runs.get(run)
            if hit is None:
                hit = self._run_candidates(run)
            if hit:
                start = m.start()
                for i in hit:
                    if i in found:
                        if found[i]:
                            found[i].append(start)
                    else:
                        found[i] = [start]
        return found

    def _run_candidates(self, run: str) -> tuple[int, ...]:
        """The values whose first word begins the word run ``run`` (lower case), cached per distinct run."""
        low, by_first, hit = run.lower(), self._by_first, []
        for n in self._lengths:
            if n > len(low):
                break
            hit += by_first.get(low[:n], ())
        out = tuple(hit)
        if len(self._runs) < 200_000:
            self._runs[run] = out
        return out

    def spans(self, text: str, field: str) -> list[Proposal]:
        """Every lexicon value found in ``text`` as whole words (first match), raw score = its precision.

        A value is tried only at the run starts where its match can begin (:meth:`_starts`), in order, with
        ``pattern.match(text, start)`` (the look-behind still sees the character before ``start``): the
        first success is ``pattern.search(text)``'s match, since a search tries the same positions left to
        right and no match starts elsewhere."""
        out = []
        starts = self._starts(text)
        order = range(len(self._entries)) if starts is None else sorted(starts)
        for i in order:
            pattern = self._patterns.get(i)
            slug, value, precision = self._entries[i]
            if pattern is None:
                pattern = self._patterns[i] = _word_re(value)
            where = starts[i] if starts is not None else None
            if where:
                m = None
                for at in where:
                    m = pattern.match(text, at)
                    if m:
                        break
            else:
                m = pattern.search(text)
            if m:
                out.append(Proposal(slug, m.group(0), field, m.start(), m.end(), precision, "lexicon"))
        return out


def lexicon_spans(model: LearnedModel, text: str, category: str, field: str) -> list[Proposal]:
    """Every lexicon value of ``category`` found in ``text`` as whole words, raw score = its precision
    (:class:`LexiconIndex`; the :class:`Tagger` keeps one per category)."""
    return LexiconIndex(model.lexicons.get(category.lower(), {})).spans(text, field)


def propose(tagger: Tagger, sku_category: str, texts: dict[str, str]) -> list[Proposal]:
    """Every tagger and lexicon proposal over ``texts`` (field → text), raw scores."""
    found: list[Proposal] = []
    index = tagger.lexicon_index(sku_category)
    for field, text in texts.items():
        if not text or not text.strip():
            continue
        found += tagger.spans(text, sku_category, field)
        found += index.spans(text, field)
    return found


def select(
    model: LearnedModel,
    proposals: list[Proposal],
    title: str = "",
    category: str = "",
    lexicon_gold: dict[tuple[str, str], int] | None = None,
) -> dict[str, list[tuple[Proposal, float]]]:
    """Per attribute: ``(proposal, calibrated confidence)`` of the best value (highest confidence; ties:
    the first proposed) and of the other proposals stating the same value (``norm_key``), best first.

    With a reranker (model version 3) the confidence is that of the *value*: the reranker's score of the
    value's proposals against their rivals (:mod:`.rerank`; ``title``: the SKU title, ``category``: for
    the lexicon counts; ``lexicon_gold``: :meth:`Tagger.lexicon_gold` of it, when cached), calibrated as
    kind ``ranker``; every proposal of the value carries it."""
    if model.ranker is not None:
        gold = model.lexicon_gold(category) if lexicon_gold is None else lexicon_gold
        return _select_ranked(model, proposals, title, gold)
    scored: dict[str, list[tuple[Proposal, float]]] = {}
    for p in proposals:
        scored.setdefault(p.attribute, []).append((p, model.confidence(p.attribute, p.how, p.confidence)))
    out = {}
    for slug, items in scored.items():
        best = max(items, key=lambda x: x[1])
        key = norm_key(best[0].value)
        same = [x for x in items if norm_key(x[0].value) == key]
        out[slug] = sorted(same, key=lambda x: -x[1])
    return out


_SCORERS: dict[int, Scorer] = {}


def _scorer(ranker: Ranker) -> Scorer:
    """The :class:`~.rerank.Scorer` of ``ranker``, built once (keyed by identity; it holds the ranker)."""
    found = _SCORERS.get(id(ranker))
    if found is None or found.ranker is not ranker:
        if len(_SCORERS) > 64:
            _SCORERS.clear()
        found = _SCORERS[id(ranker)] = Scorer(ranker)
    return found


def _select_ranked(
    model: LearnedModel, proposals: list[Proposal], title: str, lexicon_gold: dict[tuple[str, str], int]
) -> dict[str, list[tuple[Proposal, float]]]:
    assert model.ranker is not None
    best: dict[str, tuple[float, list[Proposal]]] = {}
    for slug, _key, mine, raw in _scorer(model.ranker).scores(proposals, title, lexicon_gold):
        conf = model.confidence(slug, KIND, raw)
        if slug not in best or conf > best[slug][0]:
            best[slug] = (conf, mine)
    return {
        slug: [(mine[0], conf)] if len(mine) == 1 else [(p, conf) for p in sorted(mine, key=_by_confidence)]
        for slug, (conf, mine) in best.items()
    }


def _by_confidence(p: Proposal) -> float:
    """Sort key: highest raw score first (a stable sort keeps the proposal order among equals)."""
    return -p.confidence
