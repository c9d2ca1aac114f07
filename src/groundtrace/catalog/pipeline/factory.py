"""Stage 1 — the component factory: :func:`build_components` turns an
:class:`~groundtrace.catalog.pipeline.config.EnrichConfig` into :class:`Components` (templates, Scout with
its sources / search / extraction engine, Judge, write policy, the LLM clients of the run), each component
built through its registry by name. Heavy modules (engines, judges, LLM clients) are imported here, when a
run builds its components, not when the pipeline is imported.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundtrace.catalog.judge.base import Judge
from groundtrace.catalog.judge.registry import JudgeContext, build_judge
from groundtrace.catalog.pipeline.config import EnrichConfig
from groundtrace.catalog.policy import WritePolicy, resolve_policy
from groundtrace.catalog.scout.engine import EngineContext, build_engine
from groundtrace.catalog.templates import TemplateSet, builtin_template_dir, load_templates
from groundtrace.core.llm.factory import make_llm


@dataclass
class Components:
    templates: TemplateSet
    scout: Any
    judge: Judge
    policy: WritePolicy
    errors: list[str]
    llm_clients: list[Any] = field(default_factory=list)  # every LLM client the run calls (usage ledger)


_TEMPLATES: dict[tuple[Any, ...], TemplateSet] = {}
_TEMPLATES_LOCK = threading.Lock()


def cached_templates(directory: Path | None) -> TemplateSet:
    """:func:`~groundtrace.catalog.templates.load_templates` of ``directory``, kept while none of its
    template files changes (key: every ``*.yaml`` / ``*.yml`` path with its modification time in ns and
    size). A :class:`TemplateSet` is immutable, so runs share it; parsing the YAML is most of building the
    components (~0.25 s), which every worker process of a sharded LLM run paid at its start — inside the
    run's clock — and now inherits from the parent that built its own components first (fork)."""
    root = builtin_template_dir() if directory is None else Path(directory)
    try:
        files = sorted([*root.glob("*.yaml"), *root.glob("*.yml")])
        key = (str(root), *((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files))
    except OSError:  # load_templates reports it
        return load_templates(directory)
    with _TEMPLATES_LOCK:
        hit = _TEMPLATES.get(key)
    if hit is not None:
        return hit
    templates = load_templates(directory)
    if files:
        with _TEMPLATES_LOCK:
            if len(_TEMPLATES) >= 16:
                _TEMPLATES.clear()
            _TEMPLATES[key] = templates
    return templates


def build_components(config: EnrichConfig) -> Components:
    """Templates, Scout (sources, search, extractor), Judge and policy for ``config``, each component built
    through its registry by name (``EVIDENCE_SOURCES``, ``SEARCH_PROVIDERS``, ``EXTRACTION_ENGINES``,
    ``JUDGES``; ``from_context`` of the registered class)."""
    # deferred: the Scout and the evidence sources pull in numpy/scipy (~0.15 s); building needs them
    from groundtrace.catalog.scout.agent import ScoutAgent
    from groundtrace.catalog.sources import EVIDENCE_SOURCES, SourceContext, make_search

    templates = cached_templates(config.templates)
    errors: list[str] = []
    llm_clients: list[Any] = []
    if config.vlm and config.images is None:
        raise ValueError("--vlm needs --images DIR")
    vlm_client = make_llm(config.vlm) if config.vlm else None
    if vlm_client is not None:
        llm_clients.append(vlm_client)  # image calls go through the client: counted in the ledger
    sources: list[Any] = []
    built: set[str] = set()
    for name in config.source_names():
        canonical = EVIDENCE_SOURCES.canonical(name)
        if canonical in built:  # "feed" given and implied by --feed: one source
            continue
        built.add(canonical)
        context = SourceContext(
            feed=config.feed,
            images=config.images,
            vlm=vlm_client,
            options=dict(config.options.get(name, config.options.get(canonical, {}))),
        )
        source = EVIDENCE_SOURCES.get(canonical).from_context(context)
        errors.extend(getattr(source, "errors", []))
        sources.append(source)
    search: Any = make_search(config.search_spec())
    if search is not None:
        errors.extend(getattr(search, "errors", []))
    llm = make_llm(config.llm, **config.llm_options) if config.llm else None
    if llm is not None:
        llm_clients.append(llm)
    extractor = config.extractor_name()
    engine = build_engine(
        extractor,
        EngineContext(llm, config.max_prompt_tokens, dict(config.options.get(extractor, {}))),
    )
    scout = ScoutAgent(templates, sources, search, engine, max_queries=config.max_queries)
    judge = build_judge(
        config.judge,
        JudgeContext(llm, search, config.max_prompt_tokens, dict(config.options.get(config.judge, {}))),
    )
    policy = resolve_policy(config.policy)  # a WritePolicy in memory, a YAML file or a built-in name
    return Components(templates, scout, judge, policy, errors, llm_clients)
