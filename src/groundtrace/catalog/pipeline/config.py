"""Stage 0 — the run's configuration: :class:`EnrichConfig`, what ``groundtrace catalog enrich`` takes.

Plain data (pydantic, ``extra="forbid"``): components are *named* here and built by
:mod:`~groundtrace.catalog.pipeline.factory`; the config crosses process boundaries as JSON (the process
workers of :mod:`~groundtrace.catalog.pipeline.batch` rebuild their components from it).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from groundtrace.catalog.policy import WritePolicy

DEPRECATED_ENGINE = (
    "EnrichConfig 'engine' is deprecated: it is the extraction engine, now 'extractor' "
    "(EnrichConfig(extractor='learned'), catalog enrich --extractor); the run engine is --runner local|ray"
)


class EnrichConfig(BaseModel):
    """What ``groundtrace catalog enrich`` takes (``None`` = the offline default).

    Components are named by registry name and built through the registries: ``sources`` (evidence sources,
    :data:`~groundtrace.catalog.sources.EVIDENCE_SOURCES`; ``syndicated``, ``image_ocr`` and ``image_vlm``
    join automatically when ``feed``, ``images`` and ``vlm`` are given), ``search`` (a
    :data:`~groundtrace.catalog.sources.SEARCH_PROVIDERS` spec ``NAME:ARG``; ``corpus`` / ``searxng`` are
    shortcuts for ``local:PATH`` / ``searxng:URL``), ``extractor`` (the extraction engine,
    :data:`~groundtrace.catalog.scout.engine.EXTRACTION_ENGINES`: ``offline`` alias ``rule``, ``learned``,
    ``llm``; default ``llm`` with ``llm``, else ``offline``) and ``judge``
    (:data:`~groundtrace.catalog.judge.registry.JUDGES`). ``options`` passes keyword options to a named
    component (``{"my-source": {"token": "..."}}``). ``policy`` is a
    :class:`~groundtrace.catalog.policy.WritePolicy` in memory, a YAML file or a built-in name.

    One word per meaning (issue 25): the *extractor* is what proposes values; the *runner* (``local`` /
    ``ray``, ``catalog enrich --db --runner``) is how SKUs are executed and is no part of this config. The
    old keyword ``engine=`` for the extractor is still accepted with a ``DeprecationWarning``.
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
    extractor: str | None = Field(
        default=None, description="Extraction engine by registry name (default: llm with llm, else offline)."
    )
    judge: str = "rule"
    options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Keyword options per named source, extractor or judge."
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

    def extractor_name(self) -> str:
        """``extractor``, else ``llm`` when an LLM is configured, else ``offline``."""
        return self.extractor or ("llm" if self.llm else "offline")

    @model_validator(mode="before")
    @classmethod
    def _old_engine_keyword(cls, data: Any) -> Any:
        """``engine=`` (the name before issue 25) → ``extractor=``, with a DeprecationWarning."""
        if not isinstance(data, dict) or "engine" not in data:
            return data
        warnings.warn(DEPRECATED_ENGINE, DeprecationWarning, stacklevel=3)
        data = dict(data)
        old = data.pop("engine")
        if data.get("extractor") is not None and old is not None and data["extractor"] != old:
            new = data["extractor"]
            raise ValueError(f"engine={old!r} and extractor={new!r} disagree; give extractor= only")
        if data.get("extractor") is None:
            data["extractor"] = old
        return data

    @property
    def engine(self) -> str | None:
        """Deprecated name of :attr:`extractor` (read with a DeprecationWarning)."""
        warnings.warn(DEPRECATED_ENGINE, DeprecationWarning, stacklevel=2)
        return self.extractor

    def engine_name(self) -> str:
        """Deprecated name of :meth:`extractor_name`."""
        warnings.warn(DEPRECATED_ENGINE, DeprecationWarning, stacklevel=2)
        return self.extractor_name()
