"""The extraction-engine contract: Documents → per-attribute findings with verbatim evidence.

Contract (:class:`ExtractionEngine`)::

    engine.extract(sku, attributes, documents, template_attributes=None) -> EngineOutput
        .findings      list[Finding]  one proposed value with ONE Evidence (quote + span in its Document)
        .abstentions   {slug: Abstention}  engine-declared statuses (not_applicable ...) — LLM engines
        .flags         {slug: [flag]}      e.g. quote_not_found, injection_quote

Engines are registered in :data:`EXTRACTION_ENGINES`: ``offline`` (aliases ``lexicon``, ``extractive``;
:class:`~groundtrace.catalog.scout.lexicon_engine.LexiconEngine`, the default) and ``llm``
(:class:`~groundtrace.catalog.scout.llm_engine.LLMEngine`).
"""

from __future__ import annotations

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
    aliases=("lexicon", "extractive"),
    description="Deterministic lexicon/regex/unit extractor (default, no LLM).",
)
EXTRACTION_ENGINES.register_lazy(
    "llm",
    "groundtrace.catalog.scout.llm_engine:LLMEngine",
    aliases=("scout-llm",),
    description="One LLM call per SKU in the seed's JSON contract.",
)
