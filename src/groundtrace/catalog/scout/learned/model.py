"""The learned engine's model file: one JSON document (``FORMAT``, ``VERSION``) holding the per-category
value lexicons, the calibration curves and thresholds, and the CRF weights (crfsuite's binary model,
base64), so a model is one small, versioned, self-contained file that loads offline without pickle.

Version 2 adds ``curves`` (raw score → estimated probability of being right, per attribute and proposal
kind, :mod:`.calibration`); its thresholds are on that probability. A version-1 file (no curves: the
confidence is the raw score, the thresholds too) still loads. Version 3 adds ``ranker``: the candidate
reranker (:mod:`.rerank`) whose score is the raw score of proposal kind ``ranker``; a version-2 file (no
ranker: the best calibrated span wins) still loads. Version 4 adds ``templates``: the category templates
(attribute set, value types, units) the model was trained with — the ``--templates`` given to
``catalog train``, else inferred from the training gold (``templates from-gold``) — so ``catalog enrich
--model`` and ``catalog evaluate --model`` need no template folder; ``templates_from`` says which. A file of
an older version still loads; :func:`notes` says what it lacks.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundtrace.catalog.model import CategoryTemplate
from groundtrace.catalog.scout.learned.calibration import Curve
from groundtrace.catalog.scout.learned.rerank import Ranker
from groundtrace.catalog.templates import TemplateSet

FORMAT = "groundtrace-learned-scout"
VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)


class LexiconEntry(BaseModel):
    """A gold value seen in training: its surface form, how often it was the gold value, and how often it
    occurred in a training text of the category at all (``precision`` = gold / (seen + 2): smoothed, so a
    value seen once is no certainty)."""

    model_config = ConfigDict(extra="forbid")

    value: str
    gold: int
    seen: int

    @property
    def precision(self) -> float:
        return self.gold / (self.seen + 2)


class LearnedModel(BaseModel):
    """A trained model (see module docstring)."""

    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    version: int = VERSION
    attributes: list[str] = Field(description="Attribute slugs the tagger labels.")
    lexicons: dict[str, dict[str, dict[str, LexiconEntry]]] = Field(
        default_factory=dict, description="category (lower case) → slug → norm_key(value) → entry."
    )
    thresholds: dict[str, float] = Field(
        default_factory=dict, description="θ per slug on the confidence: findings below it are not proposed."
    )
    curves: dict[str, Curve] = Field(
        default_factory=dict,
        description="Calibration per '<slug>|<kind>' (kind: tagger, lexicon, ranker) and pooled "
        "'*|<kind>': raw score → estimated probability of being right.",
    )
    allocation: str = Field(default="per-attribute", description="How θ was picked: pooled | per-attribute.")
    default_threshold: float = 0.5
    target_precision: float = 0.95
    calibration: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="Per slug: held-out predictions, precision and coverage at θ."
    )
    ranker: Ranker | None = Field(
        default=None, description="Candidate reranker (version 3); None: the best calibrated span wins."
    )
    trained_on: dict[str, int] = Field(default_factory=dict)
    templates: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Version 4: the category templates (CategoryTemplate, JSON) the model was trained with.",
    )
    templates_from: str = Field(
        default="",
        description="Where ``templates`` came from: 'templates' (catalog train --templates) or 'gold'.",
    )
    crf: str = Field(description="crfsuite model bytes, base64.")

    def crf_bytes(self) -> bytes:
        return base64.b64decode(self.crf)

    def threshold(self, slug: str) -> float:
        return self.thresholds.get(slug, self.default_threshold)

    def confidence(self, slug: str, kind: str, raw: float) -> float:
        """The calibrated confidence of a raw score: the attribute's curve for this proposal kind, else the
        pooled curve of the kind, else the raw score (version-1 models)."""
        curve = self.curves.get(f"{slug}|{kind}") or self.curves.get(f"*|{kind}")
        return raw if curve is None else curve(raw)

    def lexicon_gold(self, category: str) -> dict[tuple[str, str], int]:
        """``(slug, value key) → gold count`` of the category's lexicon entries (reranker feature)."""
        entries = self.lexicons.get(category.lower(), {})
        return {(slug, key): e.gold for slug, es in entries.items() for key, e in es.items()}

    def template_set(self) -> TemplateSet | None:
        """The templates the model was trained with (:class:`~groundtrace.catalog.templates.TemplateSet`),
        None when the file has none (version < 4, or trained by a caller that gave none)."""
        if not self.templates:
            return None
        return TemplateSet(CategoryTemplate.model_validate(t) for t in self.templates)

    def save(self, path: Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=None), encoding="utf-8")


class ModelFileError(ValueError):
    """A model file that cannot be read (one line naming the file)."""


def load_model(path: Path) -> LearnedModel:
    """Read a model file; raises :class:`ModelFileError` for a missing, foreign or damaged file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read model ({exc.strerror or exc})") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}:1: not a learned-engine model (not JSON: {exc})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ModelFileError(f"{path}:1: not a learned-engine model (format is not {FORMAT!r})")
    if data.get("version") not in READABLE_VERSIONS:
        readable = ", ".join(map(str, READABLE_VERSIONS))
        raise ModelFileError(
            f"{path}:1: model version {data.get('version')!r}, this version reads {readable}"
        )
    try:
        return LearnedModel.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ModelFileError(f"{path}:1: {where}: {first['msg']}") from exc


def notes(model: LearnedModel, path: Path | str = "") -> list[str]:
    """What an older model file lacks (one line each, naming ``path``); empty for a current file."""
    where = f"{path}: " if path else ""
    out = []
    if model.version < VERSION and not model.templates:
        out.append(
            f"{where}model version {model.version} stores no templates (attribute set and value types): "
            "pass --templates, or retrain with `catalog train` to store them"
        )
    return out
