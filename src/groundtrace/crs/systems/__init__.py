"""CRS systems: the :class:`CRSSystem` contract, the :data:`SYSTEMS` registry, reference systems and the
HTTP adapter. Baselines register themselves here (one module each) — see docs/crs-evaluation.md."""

from __future__ import annotations

from groundtrace.crs.systems import reference  # noqa: F401  (registers oracle, random)
from groundtrace.crs.systems.base import (
    SYSTEMS,
    CRSSystem,
    SystemReply,
    TurnUsage,
    build_system,
    system_description,
)
from groundtrace.crs.systems.http import HTTPSystem, is_url

_B = "groundtrace.crs.systems.baselines"
#: The offline systems ``crs leaderboard --systems all-offline`` runs (registry names are a contract).
OFFLINE_SYSTEMS: tuple[str, ...] = (
    "popularity",
    "tfidf",
    "aspect",
    "dense",
    "spatial",
    "hybrid-rrf",
    "itinerary",
    "knowledge",
    "persona",
    "trace-hybrid",
)
for _name, _path, _desc in (
    (
        "popularity",
        "lexical:PopularitySystem",
        "Stars x review count with a Bayesian prior; ignores the user.",
    ),
    (
        "tfidf",
        "lexical:TfidfSystem",
        "TF-IDF of POI documents vs the user's turns; quotes best-matching sentences.",
    ),
    (
        "aspect",
        "lexical:AspectSystem",
        "Aspect decomposition of reviews, aspect-weighted match to preferences.",
    ),
    (
        "dense",
        "dense:DenseSystem",
        "Bi-encoder all-MiniLM-L6-v2 (extra [dense]); negative preferences subtracted.",
    ),
    ("spatial", "spatial:SpatialSystem", "Haversine filter and distance-aware ranking around the anchor."),
    (
        "hybrid-rrf",
        "hybrid:HybridRRFSystem",
        "Reciprocal rank fusion of sparse, dense and structured rankings.",
    ),
    (
        "itinerary",
        "spatial:ItinerarySystem",
        "Best match, then nearby POIs in greedy nearest-neighbour order.",
    ),
    ("knowledge", "structured:KnowledgeSystem", "KB attributes matched to the parsed constraints."),
    (
        "persona",
        "structured:PersonaSystem",
        "Inferred persona preference priors combined with TF-IDF retrieval.",
    ),
    (
        "trace-hybrid",
        "trace_hybrid:TraceHybridSystem",
        "Ours: state + hybrid retrieval + hard filter + verified stance-aware quotes.",
    ),
):
    SYSTEMS.register_lazy(_name, f"{_B}.{_path}", description=_desc)

_L = "groundtrace.crs.systems.llm.systems"
#: The LLM baselines (need ``--system-arg llm=SPEC`` or ``$GROUNDTRACE_LLM``; registry names are a contract).
LLM_SYSTEMS: tuple[str, ...] = ("llm-zero-shot", "llm-dst", "rag-citation", "multi-review-synthesis")
for _name, _cls, _desc in (
    (
        "llm-zero-shot",
        "LLMZeroShotSystem",
        "LLM: POI cards + dialogue, minimal prompt (opt. proximity graph).",
    ),
    ("llm-dst", "LLMDSTSystem", "LLM dialogue-state tracking (incl. rejected POIs), filtering, generation."),
    (
        "rag-citation",
        "RagCitationSystem",
        "LLM over retrieved review snippets; only verbatim citations kept.",
    ),
    (
        "multi-review-synthesis",
        "MultiReviewSynthesisSystem",
        "LLM over aspect summaries synthesised across reviews, with provenance tags.",
    ),
):
    SYSTEMS.register_lazy(_name, f"{_L}:{_cls}", description=_desc)

__all__ = [
    "LLM_SYSTEMS",
    "OFFLINE_SYSTEMS",
    "SYSTEMS",
    "CRSSystem",
    "HTTPSystem",
    "SystemReply",
    "TurnUsage",
    "build_system",
    "is_url",
    "system_description",
]
