"""Stage 0 — the run's configuration: :class:`EnrichConfig`, what ``groundtrace catalog enrich`` takes.

Plain data (pydantic, ``extra="forbid"``): components are *named* here and built by
:mod:`~groundtrace.catalog.pipeline.factory`; the config crosses process boundaries as JSON (the process
workers of :mod:`~groundtrace.catalog.pipeline.batch` rebuild their components from it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groundtrace.catalog.policy import WritePolicy


class EnrichConfig(BaseModel):
    """What ``groundtrace catalog enrich`` takes (``None`` = the offline default).

    Components are named by registry name and built through the registries: ``sources`` (evidence sources,
    :data:`~groundtrace.catalog.sources.EVIDENCE_SOURCES`; ``syndicated``, ``image_ocr`` and ``image_vlm``
    join automatically when ``feed``, ``images`` and ``vlm`` are given), ``search`` (a
    :data:`~groundtrace.catalog.sources.SEARCH_PROVIDERS` spec ``NAME:ARG``; ``corpus`` / ``searxng`` are
    shortcuts for ``local:PATH`` / ``searxng:URL``), ``engine``
    (:data:`~groundtrace.catalog.scout.engine.EXTRACTION_ENGINES`; default ``llm`` with ``llm``, else
    ``offline``) and ``judge`` (:data:`~groundtrace.catalog.judge.registry.JUDGES`). ``options`` passes
    keyword options to a named component (``{"my-source": {"token": "..."}}``).
    """

    model_config = ConfigDict(extra="forbid")

    templates: Path | None = None
    llm: str | None = None
    llm_options: dict[str, Any] = Field(
        default_factory=dict, description="Extra client arguments for make_llm (e.g. n_ctx for 'local')."
    )
    max_prompt_tokens: int | None = Field(
        default=None,
        ge=256,
        description="Prompt + answer token limit of the LLM (default: the client's n_ctx "
        "when known); prompts that would not fit switch to the compact mode.",
    )
    sources: list[str] = Field(default_factory=lambda: ["catalog"], description="Evidence sources by name.")
    search: str | None = Field(default=None, description="Search provider spec NAME:ARG (e.g. local:pages/).")
    engine: str | None = Field(default=None, description="Extraction engine name (default: llm with --llm).")
    judge: str = "rule"
    options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Keyword options per named source, engine or judge."
    )
    feed: Path | None = None
    corpus: Path | None = None
    searxng: str | None = None
    images: Path | None = Field(default=None, description="Base folder of SKU image paths (enables OCR).")
    vlm: str | None = Field(
        default=None,
        description="Vision LLM spec (OpenAI-compatible endpoint) that also "
        "transcribes the SKU images (needs ``images``).",
    )
    policy: Path | WritePolicy | None = Field(
        default=None,
        description="Write policy: a WritePolicy in memory, a YAML file, or a built-in name "
        "('default', 'cautious'); None = default.",
    )
    workers: int = Field(default=1, ge=1, le=64)
    max_queries: int = 12

    def source_names(self) -> list[str]:
        """The evidence sources of the run, in order: ``sources``, then the ones the files imply."""
        names = list(dict.fromkeys(self.sources))
        implied = [("syndicated", self.feed), ("image_ocr", self.images), ("image_vlm", self.vlm)]
        return names + [name for name, given in implied if given and name not in names]

    def search_spec(self) -> str | None:
        """``search``, else ``local:CORPUS`` or ``searxng:URL`` from the shortcuts, else None."""
        if self.search:
            return self.search
        if self.corpus is not None:
            return f"local:{self.corpus}"
        return f"searxng:{self.searxng}" if self.searxng else None

    def engine_name(self) -> str:
        """``engine``, else ``llm`` when an LLM is configured, else ``offline``."""
        return self.engine or ("llm" if self.llm else "offline")
