"""The extraction-engine contract: Documents → per-attribute findings with verbatim evidence.

Contract (:class:`ExtractionEngine`)::

    engine.extract(sku, attributes, documents, template_attributes=None) -> EngineOutput
        .findings      list[Finding]  one proposed value with ONE Evidence (quote + span in its Document)
        .abstentions   {slug: Abstention}  engine-declared statuses (not_applicable ...) — LLM engines
        .flags         {slug: [flag]}      e.g. quote_not_found, injection_quote

Engines are registered in :data:`EXTRACTION_ENGINES`: ``offline`` (aliases ``lexicon``, ``extractive``;
:class:`~groundtrace.catalog.scout.lexicon_engine.LexiconEngine`, the default) and ``llm``
(:class:`~groundtrace.catalog.scout.llm_engine.LLMEngine`). :func:`build_engine(name, context)
<build_engine>` builds one for an enrich run: the class's ``from_context(context)`` when it has one (an
:class:`EngineContext`: the run's LLM client, prompt-token limit and the engine's options), else
``cls(**context.options)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from groundtrace.catalog.model import SKU, AttributeSpec, CandidateStatus, Document, Evidence
from groundtrace.core.registry import Registry

# -- public records ----------------------------------------------------------------------------------
FLAG_QUOTE_NOT_FOUND = "quote_not_found"
FLAG_INJECTION = "injection_quote"
FLAG_NOT_ALLOWED = "value_not_allowed"
FLAG_UNKNOWN_SOURCE = "unknown_source_ref"


class Finding(BaseModel):
    """One proposed value for one attribute with one piece of evidence."""

    model_config = ConfigDict(extra="forbid")

    attribute: str
    value: str
    evidence: Evidence
    quality: float = Field(
        ge=0.0, le=1.0, description="Match quality: 1 explicit field ... 0.6 bare mention."
    )
    explicit: bool = False
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="Engine's own score (LLM).")
    flags: list[str] = Field(default_factory=list)


class Abstention(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: CandidateStatus
    note: str = ""


class EngineOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    findings: list[Finding] = Field(default_factory=list)
    abstentions: dict[str, Abstention] = Field(default_factory=dict)
    flags: dict[str, list[str]] = Field(default_factory=dict)
    identity: dict[str, Any] | None = None
    calls: int = 0


@runtime_checkable
class ExtractionEngine(Protocol):
    """``extract(sku, attributes, documents) -> EngineOutput`` (see module docstring)."""

    name: str

    def extract(
        self,
        sku: SKU,
        attributes: list[AttributeSpec],
        documents: list[Document],
        *,
        template_attributes: list[AttributeSpec] | None = None,
    ) -> EngineOutput: ...


EXTRACTION_ENGINES: Registry[Any] = Registry("extraction engine")

EXTRACTION_ENGINES.register_lazy(
    "offline",
    "groundtrace.catalog.scout.lexicon_engine:LexiconEngine",
    aliases=("rule", "lexicon", "extractive"),
    description="Deterministic rule-based lexicon/regex/unit extractor (default, no LLM).",
)
EXTRACTION_ENGINES.register_lazy(
    "learned",
    "groundtrace.catalog.scout.learned.engine:LearnedEngine",
    aliases=("crf",),
    description="Trained offline tagger + lexicons (catalog train; option model=FILE).",
)
EXTRACTION_ENGINES.register_lazy(
    "llm",
    "groundtrace.catalog.scout.llm_engine:LLMEngine",
    aliases=("scout-llm",),
    description="One LLM call per SKU in the seed's JSON contract.",
)


@dataclass
class EngineContext:
    """What an enrich run offers an extraction engine to be built from."""

    llm: Any = None  # the run's LLM client (--llm), or None offline
    max_prompt_tokens: int | None = None
    options: dict[str, Any] = field(default_factory=dict)  # keyword options for this engine


def build_engine(name: str, context: EngineContext) -> ExtractionEngine:
    """The extraction engine registered as ``name`` built for ``context`` (module docstring)."""
    cls = EXTRACTION_ENGINES.get(name)
    from_context = getattr(cls, "from_context", None)
    return from_context(context) if from_context is not None else cls(**context.options)
