"""Evaluate any :class:`EntailmentScorer` on real NLI data: e-SNLI dev and WiCE dev claims.

Data (``<data_dir>`` = ``shared/data/nli``; see shared/data/SOURCES.md):

* ``esnli/{s1,s2,labels}.dev`` — line-aligned premise / hypothesis / label. Binary task: entailment (1)
  vs neutral + contradiction (0). When the scorer exposes its label distribution
  (:class:`LabelledScorer`) with exactly entailment / neutral / contradiction labels, the 3-way argmax
  accuracy is reported; when it has a contradiction column, the contradiction-vs-rest AUROC of
  P(contradiction) too. ``limit`` keeps the
  first N pairs in file order (deterministic; the file is label-balanced in blocks of three).
* ``wice/claim_dev.jsonl`` — Wikipedia claims with the sentences of their cited page. Binary task:
  ``supported`` (1) vs ``not_supported`` (0); ``partially_supported`` claims are scored and reported
  separately (mean score, share called entailed), never folded into either class.

WiCE premise (``wice_premise``), because a page (median ~1,000 words) does not fit a cross-encoder:

* ``retrieved`` (default, label-free): the ``k`` page sentences sharing most distinct words with the
  claim (ties: earlier sentence), put back in page order and joined by spaces — one pair per claim.
* ``chunks`` (label-free, all sentences): consecutive windows of ``chunk_sentences`` sentences covering
  the whole page; claim score = max over its windows (a claim is entailed if some passage entails it).
* ``oracle``: the union of the annotated supporting sentences. Upper bound only — it LEAKS the label
  (most ``not_supported`` claims have no supporting sentence, so their premise is empty).

Metrics (threshold ``t`` = ``ENTAILMENT_THRESHOLD``): accuracy = mean(1[score >= t] == y);
AUROC = scikit-learn ``roc_auc_score(y, score)`` (None when only one class is present);
throughput = scored pairs / seconds spent inside ``scorer.score``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field, ValidationError

from groundtrace.core.files.jsonl import iter_jsonl
from groundtrace.core.files.validation import validation_message
from groundtrace.core.nli.entailment import (
    ENTAILMENT_THRESHOLD,
    EntailmentScorer,
    LabelledScorer,
    content_words,
)

SNLI_LABELS = ("entailment", "neutral", "contradiction")
WiceLabel = Literal["supported", "partially_supported", "not_supported"]
WicePremise = Literal["retrieved", "chunks", "oracle"]
DEFAULT_DATA_DIR = Path("..") / "shared" / "data" / "nli"
ProgressFn = Callable[[str, int, int], None]  # (task, done, total)


class NliDataError(ValueError):
    """The NLI data directory or a file in it is missing or unusable as a whole."""


class NliExample(NamedTuple):
    premise: str
    hypothesis: str
    label: str


class WiceClaim(BaseModel):
    """One WiCE claim line (only the fields used here)."""

    claim: str
    label: WiceLabel
    evidence: list[str]
    supporting_sentences: list[list[int]] = Field(default_factory=list)


# --------------------------------------------------------------------------------------------- data
def resolve_data_dir(data_dir: str | Path | None = None) -> Path:
    """``data_dir`` or ``../shared/data/nli`` relative to the CWD; ``NliDataError`` when missing."""
    path = Path(data_dir) if data_dir is not None else Path.cwd() / DEFAULT_DATA_DIR
    if not path.is_dir():
        default = (
            " (the default is ../shared/data/nli relative to the current directory)"
            if data_dir is None
            else ""
        )
        raise NliDataError(f"NLI data directory not found: {path.resolve()}{default}; pass --data-dir")
    return path


def load_esnli(data_dir: Path, limit: int | None = None) -> tuple[list[NliExample], list[str]]:
    """e-SNLI dev pairs (first ``limit``) and one ``file:line: problem`` message per skipped line."""
    folder = data_dir / "esnli"
    files = [folder / f"{n}.dev" for n in ("s1", "s2", "labels")]
    for f in files:
        if not f.is_file():
            raise NliDataError(f"e-SNLI file not found: {f}")
    columns = [f.read_text(encoding="utf-8").splitlines() for f in files]
    if len({len(c) for c in columns}) != 1:
        counts = ", ".join(f"{f.name}={len(c)}" for f, c in zip(files, columns, strict=True))
        raise NliDataError(f"e-SNLI files are not line-aligned: {counts}")
    examples: list[NliExample] = []
    problems: list[str] = []
    for lineno, (s1, s2, label) in enumerate(zip(*columns, strict=True), start=1):
        if limit is not None and len(examples) >= limit:
            break
        label = label.strip()
        if label not in SNLI_LABELS:
            problems.append(f"{files[2]}:{lineno}: unknown label {label!r} (expected one of {SNLI_LABELS})")
        elif not s1.strip() or not s2.strip():
            problems.append(f"{files[0 if not s1.strip() else 1]}:{lineno}: empty sentence")
        else:
            examples.append(NliExample(s1.strip(), s2.strip(), label))
    return examples, problems


def load_wice(data_dir: Path, limit: int | None = None) -> tuple[list[WiceClaim], list[str]]:
    """WiCE dev claims (first ``limit`` valid ones) and ``file:line: problem`` messages for bad lines."""
    path = data_dir / "wice" / "claim_dev.jsonl"
    if not path.is_file():
        raise NliDataError(f"WiCE file not found: {path}")
    claims: list[WiceClaim] = []
    problems: list[str] = []
    for lineno, value, error in iter_jsonl(path):
        if limit is not None and len(claims) >= limit:
            break
        if error is not None:
            problems.append(str(error))
            continue
        try:
            claim = WiceClaim.model_validate(value)
        except ValidationError as exc:
            problems.append(f"{path}:{lineno}: {validation_message(exc, model=WiceClaim)}")
            continue
        bad = [i for group in claim.supporting_sentences for i in group if not 0 <= i < len(claim.evidence)]
        if bad:
            problems.append(f"{path}:{lineno}: supporting sentence index {bad[0]} out of range")
            continue
        claims.append(claim)
    return claims, problems


# ------------------------------------------------------------------------------------ wice premises
def retrieve_sentences(claim: str, sentences: Sequence[str], k: int) -> list[int]:
    """Indices (page order) of the ``k`` sentences sharing most distinct words with ``claim``."""
    words = content_words(claim)
    overlap = [len(words & content_words(s)) for s in sentences]
    best = sorted(range(len(sentences)), key=lambda i: (-overlap[i], i))[:k]
    return sorted(best)


def wice_premises(claim: WiceClaim, mode: WicePremise, k: int = 5, chunk_sentences: int = 5) -> list[str]:
    """The premise(s) for one claim under ``mode`` (module docstring); the claim score is their max."""
    ev = claim.evidence
    if mode == "retrieved":
        return [" ".join(ev[i] for i in retrieve_sentences(claim.claim, ev, k))]
    if mode == "chunks":
        windows = [" ".join(ev[i : i + chunk_sentences]) for i in range(0, len(ev), chunk_sentences)]
        return windows or [""]
    if mode == "oracle":
        idx = sorted({i for group in claim.supporting_sentences for i in group})
        return [" ".join(ev[i] for i in idx)]
    raise ValueError(f"unknown WiCE premise mode {mode!r}; use retrieved, chunks or oracle")


# -------------------------------------------------------------------------------------------- metrics
def accuracy_at(
    scores: Sequence[float], labels: Sequence[int], threshold: float = ENTAILMENT_THRESHOLD
) -> float:
    """mean(1[score >= threshold] == label) over the pairs."""
    if len(scores) != len(labels) or not scores:
        raise ValueError(f"need equal, non-empty scores and labels (got {len(scores)} and {len(labels)})")
    return sum((s >= threshold) == bool(y) for s, y in zip(scores, labels, strict=True)) / len(scores)


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve (scikit-learn); None when the labels hold a single class."""
    if len(set(labels)) < 2:
        return None
    from sklearn.metrics import roc_auc_score  # deferred: scikit-learn import (~1-3 s), AUROC only

    return float(roc_auc_score(list(labels), list(scores)))


def label_column(label_names: Sequence[str], stem: str) -> int | None:
    """The unique column whose name contains ``stem`` (case-insensitive) without a not/non negation."""
    hits = [
        col
        for col, name in enumerate(label_names)
        if stem in name.lower() and not re.search(r"\b(?:not|non)[\s_\-]*" + stem, name.lower())
    ]
    return hits[0] if len(hits) == 1 else None


def snli_columns(label_names: Sequence[str]) -> dict[str, int] | None:
    """Map entailment/neutral/contradiction to columns of a 3-label model, or None if not exactly that."""
    if len(label_names) != 3:
        return None
    stems = ("entail", "neutral", "contradict")
    found = {canon: label_column(label_names, stem) for canon, stem in zip(SNLI_LABELS, stems, strict=True)}
    cols = {k: v for k, v in found.items() if v is not None}
    return cols if len(cols) == 3 and len(set(cols.values())) == 3 else None


# -------------------------------------------------------------------------------------------- results
class BinaryResult(BaseModel):
    """Scores of one dataset's binary task (entailed vs not)."""

    dataset: str
    n: int
    n_positive: int
    threshold: float
    accuracy: float
    auroc: float | None
    accuracy_3way: float | None = None
    contradiction_auroc: float | None = None
    pairs_scored: int
    seconds: float
    pairs_per_s: float
    premise: str | None = None
    partial_n: int | None = None
    partial_mean_score: float | None = None
    partial_entailed_rate: float | None = None


class NliEvalReport(BaseModel):
    """Everything ``nli-eval`` prints, for ``--json``."""

    model: str
    data_dir: str
    limit: int | None
    wice_limit: int | None
    results: list[BinaryResult]
    problems: list[str] = Field(default_factory=list)


def _timed_scores(
    scorer: EntailmentScorer,
    pairs: list[tuple[str, str]],
    task: str,
    progress: ProgressFn | None,
    chunk: int,
    entail_col: int | None = None,
) -> tuple[list[float], list[list[float]] | None, float]:
    """Score ``pairs`` in chunks (progress after each); returns scores, probabilities, seconds.

    With ``entail_col`` the scorer's ``probabilities`` are used (one pass gives both the 3-way rows and the
    entailment scores, column ``entail_col``); otherwise ``score`` is used and probabilities is None.
    """
    scores: list[float] = []
    probs: list[list[float]] | None = [] if entail_col is not None else None
    seconds = 0.0
    if progress:
        progress(task, 0, len(pairs))
    for start in range(0, len(pairs), chunk):
        part = pairs[start : start + chunk]
        t0 = time.perf_counter()
        if probs is not None and entail_col is not None and isinstance(scorer, LabelledScorer):
            rows = scorer.probabilities(part)
            probs.extend(rows)
            scores.extend(row[entail_col] for row in rows)
        else:
            scores.extend(scorer.score(part))
        seconds += time.perf_counter() - t0
        if progress:
            progress(task, min(start + chunk, len(pairs)), len(pairs))
    if len(scores) != len(pairs):
        raise RuntimeError(f"scorer {scorer.name!r} returned {len(scores)} scores for {len(pairs)} pairs")
    return scores, probs, seconds


def binary_result(
    dataset: str,
    scores: Sequence[float],
    labels: Sequence[int],
    threshold: float,
    pairs_scored: int,
    seconds: float,
    **extra: Any,
) -> BinaryResult:
    """Accuracy at ``threshold``, AUROC and throughput of binary ``scores`` against 0/1 ``labels``."""
    return BinaryResult(
        dataset=dataset,
        n=len(labels),
        n_positive=sum(labels),
        threshold=threshold,
        accuracy=accuracy_at(scores, labels, threshold),
        auroc=auroc(scores, labels),
        pairs_scored=pairs_scored,
        seconds=seconds,
        pairs_per_s=pairs_scored / seconds if seconds > 0 else float("inf"),
        **extra,
    )


def evaluate_esnli(
    scorer: EntailmentScorer,
    examples: list[NliExample],
    progress: ProgressFn | None = None,
    chunk: int = 256,
    threshold: float = ENTAILMENT_THRESHOLD,
) -> BinaryResult:
    """Binary e-SNLI results for ``examples`` (plus 3-way / contradiction metrics for labelled scorers)."""
    if not examples:
        raise NliDataError("no e-SNLI examples to score")
    pairs = [(e.premise, e.hypothesis) for e in examples]
    entail_col = scorer.entailment_index if isinstance(scorer, LabelledScorer) else None
    scores, probs, seconds = _timed_scores(scorer, pairs, "e-SNLI", progress, chunk, entail_col)
    y = [int(e.label == "entailment") for e in examples]
    acc3 = contra_auroc = None
    if probs is not None and isinstance(scorer, LabelledScorer):
        columns = snli_columns(scorer.label_names)
        if columns is not None:
            by_col = {col: canon for canon, col in columns.items()}
            pred = [by_col[max(range(3), key=row.__getitem__)] for row in probs]
            acc3 = sum(p == e.label for p, e in zip(pred, examples, strict=True)) / len(examples)
        contra = label_column(scorer.label_names, "contradict")
        if contra is not None:
            contra_auroc = auroc(
                [row[contra] for row in probs], [int(e.label == "contradiction") for e in examples]
            )
    return binary_result(
        "e-SNLI dev",
        scores,
        y,
        threshold,
        len(pairs),
        seconds,
        accuracy_3way=acc3,
        contradiction_auroc=contra_auroc,
    )


def score_wice(
    scorer: EntailmentScorer,
    claims: list[WiceClaim],
    premises: Callable[[WiceClaim], list[str]],
    progress: ProgressFn | None = None,
    chunk: int = 256,
) -> tuple[list[float], int, float]:
    """Claim scores (max over each claim's ``premises(claim)``), number of pairs scored and seconds."""
    pairs: list[tuple[str, str]] = []
    owner: list[int] = []
    for ci, claim in enumerate(claims):
        for premise in premises(claim):
            pairs.append((premise, claim.claim))
            owner.append(ci)
    scores, _, seconds = _timed_scores(scorer, pairs, "WiCE", progress, chunk)
    best = [0.0] * len(claims)
    seen = [False] * len(claims)
    for ci, s in zip(owner, scores, strict=True):
        best[ci] = s if not seen[ci] else max(best[ci], s)
        seen[ci] = True
    return best, len(pairs), seconds


def evaluate_wice(
    scorer: EntailmentScorer,
    claims: list[WiceClaim],
    mode: WicePremise = "retrieved",
    k: int = 5,
    chunk_sentences: int = 5,
    progress: ProgressFn | None = None,
    threshold: float = ENTAILMENT_THRESHOLD,
) -> BinaryResult:
    """supported vs not_supported results; partially_supported summarised separately."""
    if not claims:
        raise NliDataError("no WiCE claims to score")
    scores, n_pairs, seconds = score_wice(
        scorer, claims, lambda claim: wice_premises(claim, mode, k, chunk_sentences), progress
    )
    binary = [
        (s, int(c.label == "supported"))
        for s, c in zip(scores, claims, strict=True)
        if c.label != "partially_supported"
    ]
    partial = [s for s, c in zip(scores, claims, strict=True) if c.label == "partially_supported"]
    if not binary:
        raise NliDataError("no supported / not_supported WiCE claims in the selection")
    b_scores, b_labels = [s for s, _ in binary], [y for _, y in binary]
    premise = {"retrieved": f"retrieved top-{k}", "chunks": f"chunks of {chunk_sentences}, max"}.get(
        mode, mode
    )
    return binary_result(
        "WiCE dev",
        b_scores,
        b_labels,
        threshold,
        n_pairs,
        seconds,
        premise=premise,
        partial_n=len(partial),
        partial_mean_score=sum(partial) / len(partial) if partial else None,
        partial_entailed_rate=sum(s >= threshold for s in partial) / len(partial) if partial else None,
    )


def run_nli_eval(
    scorer: EntailmentScorer,
    data_dir: str | Path | None = None,
    datasets: Sequence[str] = ("esnli", "wice"),
    limit: int | None = None,
    wice_limit: int | None = None,
    wice_premise: WicePremise = "retrieved",
    k: int = 5,
    chunk_sentences: int = 5,
    progress: ProgressFn | None = None,
) -> NliEvalReport:
    """Load the requested datasets from ``data_dir`` and evaluate ``scorer`` on each."""
    unknown = set(datasets) - {"esnli", "wice"}
    if unknown:
        raise ValueError(f"unknown dataset(s) {sorted(unknown)}; choose from esnli, wice")
    root = resolve_data_dir(data_dir)
    results: list[BinaryResult] = []
    problems: list[str] = []
    if "esnli" in datasets:
        examples, bad = load_esnli(root, limit)
        problems += bad
        results.append(evaluate_esnli(scorer, examples, progress))
    if "wice" in datasets:
        claims, bad = load_wice(root, wice_limit)
        problems += bad
        results.append(evaluate_wice(scorer, claims, wice_premise, k, chunk_sentences, progress))
    return NliEvalReport(
        model=scorer.name,
        data_dir=str(root),
        limit=limit,
        wice_limit=wice_limit,
        results=results,
        problems=problems,
    )
