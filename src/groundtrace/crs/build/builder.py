"""The five-stage TRACE-CRS dataset builder behind ``groundtrace crs build``.

For dialogue ``i`` of a build with seed ``S``:

1. persona, 2. pools, 3. plan (``groundtrace.crs.build.planner``) with ``random.Random(f"{S}:{i}:{a}:{p}")``
   for QC attempt ``a`` and planning try ``p`` (an infeasible draw moves to the next ``p``); a dialogue is
   a multi-type itinerary (``groundtrace.crs.build.itinerary``) when
   ``random.Random(f"{S}:{i}:itinerary").random() < itinerary_share`` and the KB has a city with full pools
   of two or more types — its first half of the planning tries plan an itinerary, the rest (if those all
   fail) a single-type dialogue;
   realise it (template or LLM); 4. QC (``groundtrace.crs.build.qc``): on failure retry with ``a + 1`` up to
   ``max_attempts``, then drop; every failed attempt is counted by rule; 5. tiers
   (``groundtrace.crs.dataset.tiers``).

User language: before realisation the plan's user constraints get phrasings of the dialogue's split
(``groundtrace.crs.build.speak.phrase_plan``) from the build's bank — the bundled
``crs/data/phrasings.yaml`` plus phrasings mined from the KB's reviews (:func:`build_bank`); the test
split's constraint phrases never occur in train/validation (``_hold_out`` enforces GT-F007) and
``BuildReport.phrasing`` / the card report the bank, the mined phrasings and distinct-1/2 per split.

Rejection share: the dialogues that get a ``reject_and_refine`` turn are the first
``round(share · N)`` indices of a seeded permutation of ``0..N-1``, so the realised share is exact
up to dropped dialogues. Split: ``u = int(sha256(dialogue_id)[:8], 16) / 16**8``; train ``u < 0.8``,
validation ``u < 0.9``, test otherwise.

Outputs (all deterministic for a seed — no timestamps): ``train.jsonl``, ``validation.jsonl``,
``test.jsonl``, ``schema.json``, ``manifest.json``, ``build_report.json``. :meth:`BuildReport.health`
says when a written result is unusable (nothing built; the LLM realiser realised no turn at all) or
needs a look (part of the LLM turns fell back to the template); ``crs build`` exits 1 on the former.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from groundtrace import __version__
from groundtrace.core.llm.factory import make_llm
from groundtrace.core.registry import Registry
from groundtrace.crs.build.coverage import coverage_stats
from groundtrace.crs.build.itinerary import itinerary_cities, plan_itinerary
from groundtrace.crs.build.mining import MinedPhrasing, mine_phrasings
from groundtrace.crs.build.phrasing import PhrasingBank, bundled_bank, load_bank
from groundtrace.crs.build.planner import PlanConfig, PlanContext, PlanningError, plan_dialogue
from groundtrace.crs.build.qc import QC_RULES, check_dialogue
from groundtrace.crs.build.realise import Realiser, TemplateRealiser
from groundtrace.crs.build.speak import DIALOGUE_SPLIT_BOUNDS, split_of
from groundtrace.crs.dataset.card import language_card_notes, write_build_card
from groundtrace.crs.dataset.files import write_dialogues, write_json_schema
from groundtrace.crs.dataset.language import constraint_labels, held_out, user_language
from groundtrace.crs.dataset.rules import HELD_OUT_PHRASING
from groundtrace.crs.dataset.tiers import TIERS, assign_tier
from groundtrace.crs.kb.constraints import satisfies_all
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import SCHEMA_VERSION, Dialogue

DEFAULT_REJECTION_SHARE = 0.294
SPLIT_BOUNDS = DIALOGUE_SPLIT_BOUNDS

#: Dialogue realisers by name; the LLM one is imported only when asked for.
REALISERS: Registry[Any] = Registry("realiser")
REALISERS.add("template", TemplateRealiser, aliases=("offline",))
REALISERS.register_lazy("llm", "groundtrace.crs.build.llm_realiser:LLMRealiser")


@dataclass
class BuildConfig:
    """Builder knobs: rejection share, QC/planning attempt bounds, planner config, LLM spec."""

    rejection_share: float = DEFAULT_REJECTION_SHARE
    max_attempts: int = 3
    max_plan_tries: int = 25
    plan: PlanConfig = field(default_factory=PlanConfig)
    llm: str | None = None
    workers: int = (
        1  # threads realising dialogues concurrently (useful for LLM realisers); output is identical
    )
    #: processes building dialogues at once with a process-safe (offline) realiser; 0 = automatic
    #: (:func:`build_processes`); output is identical, so it is not recorded in the manifest
    processes: int = 1
    #: mine need statements from the KB's reviews into the build's phrasing bank (build/mining.py)
    mine_phrasings: bool = True
    #: a phrasing bank file (YAML, as crs/data/phrasings.yaml); None: the bundled one
    phrasings: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.rejection_share <= 1.0:
            raise ValueError(f"rejection_share must be in [0, 1], got {self.rejection_share}")
        if self.max_attempts < 1 or self.max_plan_tries < 1 or self.workers < 1:
            raise ValueError("max_attempts, max_plan_tries and workers must be >= 1")
        if self.processes < 0:
            raise ValueError(f"processes must be >= 0 (0 = automatic), got {self.processes}")


class BuildReport(BaseModel):
    """What a build produced and what it rejected, by reason."""

    kb_name: str
    kb_hash: str
    seed: int
    realiser: str
    requested: int
    built: int = 0
    dropped: int = 0
    attempts: int = 0
    planning_failures: int = 0
    qc_failures: dict[str, int] = Field(
        default_factory=dict, description="Failed attempts per QC rule ('<code> <name>')."
    )
    dropped_by_reason: dict[str, int] = Field(
        default_factory=dict, description="Dropped dialogues per last reason."
    )
    target_rejection_share: float = DEFAULT_REJECTION_SHARE
    rejection_share: float = 0.0
    tiers: dict[str, int] = Field(default_factory=dict)
    splits: dict[str, int] = Field(default_factory=dict)
    distinct_reviews_quoted: int = 0
    mean_turns: float = 0.0
    mean_citations_per_system_turn: float = 0.0
    realiser_fallback_turns: int = 0
    realiser_turns: int = Field(
        default=0,
        description=(
            "Turns phrased by a realiser that can fall back to the template (the LLM one), over "
            "every attempt; realiser_fallback_turns of them fell back. 0 for the template realiser."
        ),
    )
    coverage: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "Types and cities, persona-constraint use, near misses, open-pool sizes and quote stance "
            "(groundtrace.crs.build.coverage)."
        ),
    )
    llm_usage: dict[str, float] | None = Field(
        default=None, description="Token/cost ledger of the LLM realiser."
    )
    phrasing: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "User language (groundtrace.crs.build.phrasing / mining, groundtrace.crs.dataset.language): "
            "bank size per kind, mined phrasings with provenance, the share of test constraint phrases "
            "seen in train/validation, distinct-1/2 of user turns per split."
        ),
    )

    def summary_rows(self) -> list[tuple[str, str]]:
        """``(label, value)`` rows of the printed summary."""
        rows = [
            ("KB", f"{self.kb_name} ({self.kb_hash[:12]})"),
            ("realiser", self.realiser),
            ("dialogues", f"{self.built} built / {self.requested} requested ({self.dropped} dropped)"),
            ("splits", ", ".join(f"{k} {v}" for k, v in self.splits.items())),
            ("with rejection", f"{self.rejection_share:.3f} (target {self.target_rejection_share:.3f})"),
            ("tiers", ", ".join(f"{k} {v}" for k, v in self.tiers.items())),
            ("mean turns", f"{self.mean_turns:.2f}"),
            ("distinct reviews quoted", str(self.distinct_reviews_quoted)),
            *self._coverage_rows(),
            *self._phrasing_rows(),
            ("QC failures (attempts)", ", ".join(f"{k} {v}" for k, v in self.qc_failures.items()) or "none"),
            ("planning retries", str(self.planning_failures)),
        ]
        if self.dropped_by_reason:
            rows.append(
                ("dropped by reason", ", ".join(f"{k} {v}" for k, v in self.dropped_by_reason.items()))
            )
        if self.realiser_fallback_turns:
            share = self.fallback_share
            of = f" of {self.realiser_turns} ({share:.1%})" if share is not None else ""
            rows.append(("LLM turns replaced by templates", f"{self.realiser_fallback_turns}{of}"))
        if self.llm_usage:
            u = self.llm_usage
            usage = (
                f"{u.get('calls', 0):g} calls, {u.get('prompt_tokens', 0):g} + "
                f"{u.get('completion_tokens', 0):g} tokens, ${u.get('cost_usd', 0):.4f}"
            )
            rows.append(("LLM usage", usage))
        return rows

    def _coverage_rows(self) -> list[tuple[str, str]]:
        cov = self.coverage
        if not cov:
            return []
        pools = cov.get("open_pools", {})
        quotes = cov.get("quotes", {})
        return [
            ("types", ", ".join(f"{k} {v}" for k, v in cov.get("types", {}).items())),
            ("legs by type", ", ".join(f"{k} {v}" for k, v in cov.get("leg_types", {}).items())),
            ("itineraries", _itinerary_row(cov.get("itinerary", {}))),
            ("persona-constraint use", f"{cov.get('persona_constraint_share', 0):.3f}"),
            ("pools with a near miss", f"{cov.get('near_miss_share', 0):.3f}"),
            (
                "open pools",
                (
                    f"min {pools.get('min_size', 0)}, below 50: {pools.get('below_min', 0)}, widened: "
                    f"{pools.get('widened_with_other_cities', 0)} other city / "
                    f"{pools.get('widened_with_other_types', 0)} other type"
                ),
            ),
            ("negative quotes in support", str(quotes.get("supporting_negative", 0))),
        ]

    def _phrasing_rows(self) -> list[tuple[str, str]]:
        ph = self.phrasing
        if not ph:
            return []
        bank = ph.get("bank", {}).get("by_kind", {})
        held = ph.get("held_out", {})
        lang = ph.get("user_language", {})
        return [
            (
                "phrasing bank",
                (
                    f"{sum(v['phrasings'] for v in bank.values())} phrasings of "
                    f"{sum(v['constraints'] for v in bank.values())} constraints; "
                    f"{ph.get('mined', {}).get('count', 0)} mined from reviews"
                ),
            ),
            (
                "test phrases seen in train/val",
                (
                    f"{held.get('seen_in_train_or_validation', 0)} of {held.get('test_phrases', 0)} "
                    f"({held.get('seen_share', 0.0):.1%})"
                ),
            ),
            (
                "user distinct-1 / distinct-2",
                ", ".join(f"{s} {v['distinct_1']:.3f}/{v['distinct_2']:.3f}" for s, v in lang.items()),
            ),
        ]

    @property
    def fallback_share(self) -> float | None:
        """Share of :attr:`realiser_turns` that fell back to the template; ``None`` when none were counted."""
        if not self.realiser_turns:
            return None
        return self.realiser_fallback_turns / self.realiser_turns

    def health(self) -> tuple[list[str], list[str]]:
        """``(errors, warnings)`` about the result: errors make the build unusable (the CLI exits 1).

        Errors: nothing was built; the LLM realiser realised no turn at all (every turn is template text
        although the dataset says ``realiser llm``). Warning: part of the LLM turns fell back.
        """
        errors: list[str] = []
        warnings: list[str] = []
        if self.requested and not self.built:
            reasons = ", ".join(f"{k} {v}" for k, v in self.dropped_by_reason.items()) or "no reason recorded"
            top = max(self.dropped_by_reason, key=self.dropped_by_reason.__getitem__, default="")
            if top == "planning":
                cause = (
                    "the planner found no feasible dialogue in any try: the KB is probably too sparse "
                    "(too few POIs with reviews to quote in one city and type); rebuild it with more "
                    "cities or reviews and check it with `groundtrace crs kb info`"
                )
            else:
                cause = "every attempt failed QC; qc_failures in build_report.json counts the reasons"
            errors.append(
                f"no dialogue was built: all {self.requested} requested dialogues were dropped "
                f"(dropped by reason: {reasons}); {cause}"
            )
        share = self.fallback_share
        if share is not None and self.realiser_fallback_turns >= self.realiser_turns:
            usage = self.llm_usage or {}
            answered = int(usage.get("calls", 0) + usage.get("cache_hits", 0))
            if answered == 0:
                cause = (
                    "no LLM request was answered (0 calls): the endpoint is probably unreachable or "
                    "misconfigured; check the LLM spec (--llm URL and #MODEL) and that the server is running"
                )
            else:
                cause = (
                    f"the LLM answered {answered} requests but every answer failed the schema or "
                    "verbatim-quote checks: the model is probably unsuitable for this task"
                )
            errors.append(
                f"the LLM realised no turn: all {self.realiser_fallback_turns} of "
                f"{self.realiser_turns} turns fell back to the template realiser, so every turn is "
                f"template text although the dataset says realiser {self.realiser!r}; {cause}"
            )
        elif share is not None and self.realiser_fallback_turns:
            warnings.append(
                f"{self.realiser_fallback_turns} of {self.realiser_turns} LLM turns ({share:.1%}) "
                "fell back to the template realiser (the LLM call failed or its answer was "
                "rejected); realiser_fallback_turns in build_report.json counts them"
            )
        return errors, warnings

    def print_summary(self, console: Any = None) -> None:
        """Print a rich table of :meth:`summary_rows` (values escaped: KB names come from files)."""
        table = Table(title="TRACE-CRS build", show_header=False)
        table.add_column(style="bold")
        table.add_column()
        for label, value in self.summary_rows():
            table.add_row(escape(label), escape(value))
        (console or Console()).print(table)


def _itinerary_row(it: dict[str, Any]) -> str:
    if not it.get("dialogues"):
        return f"none ({it['why_none']})" if it.get("why_none") else "none"
    return f"{it['dialogues']} ({it.get('share', 0):.1%}): " + ", ".join(
        f"{k} {v}" for k, v in it.get("sequences", {}).items()
    )


def rejection_indices(n: int, share: float, seed: int) -> set[int]:
    """The first ``round(share · n)`` indices of a seeded permutation of ``range(n)``."""
    order = list(range(n))
    random.Random(f"{seed}:rejection").shuffle(order)
    return set(order[: round(share * n)])


def make_realiser(realiser: str | Realiser, config: BuildConfig) -> Realiser:
    """A realiser instance from a name (``template``, ``llm``) or pass an instance through."""
    if not isinstance(realiser, str):
        return realiser
    target = REALISERS.get(realiser)
    if REALISERS.canonical(realiser) == "llm":
        return target(make_llm(config.llm))
    return target()


def build_dialogues(
    kb: KnowledgeBase,
    n_dialogues: int,
    seed: int,
    *,
    realiser: str | Realiser = "template",
    config: BuildConfig | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Dialogue], BuildReport]:
    """Build ``n_dialogues`` (fewer if some are dropped) and the report; nothing is written."""
    config = config or BuildConfig()
    real = make_realiser(realiser, config)
    ctx = PlanContext(kb, config.plan)
    bank, mined = build_bank(kb, config)
    report = BuildReport(
        kb_name=kb.name,
        kb_hash=kb.content_hash,
        seed=seed,
        realiser=real.name,
        requested=n_dialogues,
        target_rejection_share=config.rejection_share,
    )
    with_rejection = rejection_indices(n_dialogues, config.rejection_share, seed)

    def one(i: int) -> _Outcome:
        outcome = _build_one(ctx, real, config, seed, i, i in with_rejection, bank)
        if progress is not None:
            progress(1)
        return outcome

    processes = build_processes(config.processes, n_dialogues, real)
    if processes > 1:
        job = _Job(ctx, real, config, seed, frozenset(with_rejection), bank)
        outcomes = build_in_processes(job, n_dialogues, processes, progress)
    elif config.workers > 1 and n_dialogues > 1:
        with ThreadPoolExecutor(max_workers=config.workers) as pool:
            outcomes = list(pool.map(one, range(n_dialogues)))  # map keeps index order: deterministic
    else:
        outcomes = [one(i) for i in range(n_dialogues)]
    qc_fail: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    out: list[Dialogue] = []
    for o in outcomes:
        report.attempts += o.attempts
        report.planning_failures += o.planning_failures
        report.realiser_fallback_turns += o.fallback_turns
        report.realiser_turns += o.realiser_turns
        qc_fail.update(o.qc_reasons)
        if o.dialogue is None:
            dropped[o.drop_reason] += 1
        else:
            out.append(o.dialogue)
    out = _hold_out(out, dropped)
    _fill_stats(report, out, qc_fail, dropped)
    report.phrasing = phrasing_stats(bank, mined, out)
    reason = ""
    if not itinerary_cities(ctx):
        reason = (
            f"no city of the KB has {config.plan.pool_size}+ POIs of two types (pools per city and type: "
            + ", ".join(
                f"{c} {'/'.join(str(len(kb.pois_in(c, t))) for t in ('restaurant', 'hotel', 'attraction'))}"
                for c in kb.cities()[:8]
            )
            + " restaurant/hotel/attraction)"
        )
    report.coverage = coverage_stats(out, kb, ctx.personas, config.plan.open_min, reason)
    client = getattr(real, "client", None)
    if client is not None and hasattr(client, "usage"):
        report.llm_usage = client.usage().model_dump()
    return out, report


#: With ``processes = 0`` (automatic), a build of fewer dialogues than this stays in one process: starting
#: processes costs more than it saves.
AUTO_PROCESSES_MIN_DIALOGUES = 500
#: At most this many processes are started automatically.
AUTO_PROCESSES_MAX = 8


def build_processes(requested: int, n_dialogues: int, real: Realiser) -> int:
    """How many processes build the dialogues: 1 for a realiser that is not ``process_safe`` (an LLM
    client holds connections and a rate budget shared by its threads) or where ``fork`` is unavailable;
    ``requested`` when ≥ 1; for 0 (automatic) the usable CPUs (at most :data:`AUTO_PROCESSES_MAX`) when
    ``n_dialogues ≥`` :data:`AUTO_PROCESSES_MIN_DIALOGUES`, else 1. Never more than ``n_dialogues``."""
    if not getattr(real, "process_safe", False) or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if requested >= 1:
        return max(1, min(requested, n_dialogues))
    if n_dialogues < AUTO_PROCESSES_MIN_DIALOGUES:
        return 1
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(usable, AUTO_PROCESSES_MAX, n_dialogues))


@dataclass(frozen=True)
class _Job:
    """What every dialogue of a build shares (inherited by forked processes, never pickled)."""

    ctx: PlanContext
    real: Realiser
    config: BuildConfig
    seed: int
    with_rejection: frozenset[int]
    bank: PhrasingBank | None


_JOB: _Job | None = None  # set in the parent just before the fork; the children read their copy


def _build_range(bounds: tuple[int, int]) -> list[_Outcome]:
    """Dialogues ``start..stop-1`` of the forked build (runs in a child process)."""
    job = _JOB
    assert job is not None, "the build job is set before the processes are forked"
    return [
        _build_one(job.ctx, job.real, job.config, job.seed, i, i in job.with_rejection, job.bank)
        for i in range(*bounds)
    ]


def build_in_processes(
    job: _Job, n_dialogues: int, processes: int, progress: Callable[[int], None] | None = None
) -> list[_Outcome]:
    """``_build_one`` for ``0..n_dialogues-1`` in ``processes`` forked processes, in index order.

    Each dialogue depends only on the job and its index (seeded ``random.Random`` per dialogue, module
    docstring), so the outcomes are the ones one process would produce. Chunks of about
    ``n / (8 · processes)`` dialogues keep the processes evenly busy and ``progress`` moving."""
    global _JOB
    size = max(1, min(250, n_dialogues // (8 * processes)))
    chunks = [(start, min(start + size, n_dialogues)) for start in range(0, n_dialogues, size)]
    _JOB = job
    try:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            outcomes: list[_Outcome] = []
            for part in pool.imap(_build_range, chunks):  # imap keeps chunk order: deterministic
                outcomes.extend(part)
                if progress is not None:
                    progress(len(part))
    finally:
        _JOB = None
    return outcomes


@dataclass
class _Outcome:
    dialogue: Dialogue | None = None
    drop_reason: str = "planning"
    attempts: int = 0
    planning_failures: int = 0
    fallback_turns: int = 0
    realiser_turns: int = 0  # turns of realisers that report fallbacks (every attempt)
    qc_reasons: list[str] = field(default_factory=list)


def build_bank(kb: KnowledgeBase, config: BuildConfig) -> tuple[PhrasingBank, list[MinedPhrasing]]:
    """The build's phrasing bank: the bundled (or ``config.phrasings``) bank plus, with
    ``config.mine_phrasings``, the phrasings mined from the KB's reviews (those new to the bank)."""
    bank = load_bank(config.phrasings) if config.phrasings else bundled_bank()
    if not config.mine_phrasings:
        return bank, []
    found = mine_phrasings(kb, bank)
    bank, kept = bank.with_mined([(m.kind, m.value, m.phrasing) for m in found])
    kept_ids = {id(p) for p in kept}
    return bank, [m for m in found if id(m.phrasing) in kept_ids]


def _hold_out(dialogues: list[Dialogue], dropped: Counter[str]) -> list[Dialogue]:
    """Drop test dialogues that say a constraint phrase also said in train/validation (rule GT-F007;
    none by construction — the split pools are disjoint — but an LLM's fresh phrasing is checked here)."""
    labels = constraint_labels(d for d in dialogues if d.split != "test")
    other = labels["train"] | labels["validation"]
    out = []
    for d in dialogues:
        if d.split == "test" and constraint_labels([d])["test"] & other:
            dropped[str(HELD_OUT_PHRASING)] += 1
            continue
        out.append(d)
    return out


def phrasing_stats(
    bank: PhrasingBank, mined: list[MinedPhrasing], dialogues: list[Dialogue]
) -> dict[str, Any]:
    """``BuildReport.phrasing``: bank size per kind, mined phrasings (with provenance), held-out measure,
    distinct-1/2 of user turns per split."""
    by_kind: Counter[str] = Counter(m.kind for m in mined)
    return {
        "bank": {"file": bank.name, "by_kind": bank.size_by_kind()},
        "mined": {
            "count": len(mined),
            "by_kind": dict(sorted(by_kind.items())),
            "by_split": dict(sorted(Counter(m.phrasing.split for m in mined).items())),
            "phrasings": [m.record() for m in mined],
        },
        "held_out": held_out(constraint_labels(dialogues)).as_dict(),
        "user_language": user_language(dialogues),
    }


def _build_one(
    ctx: PlanContext,
    real: Realiser,
    config: BuildConfig,
    seed: int,
    i: int,
    rejection: bool,
    bank: PhrasingBank | None = None,
) -> _Outcome:
    """Plan, realise, QC and tier dialogue ``i`` (regenerating on QC failure); see the module docstring."""
    kb = ctx.kb
    dialogue_id = f"trace-s{seed}-{i:06d}"
    o = _Outcome()
    itinerary = random.Random(f"{seed}:{i}:itinerary").random() < config.plan.itinerary_share and bool(
        itinerary_cities(ctx)
    )
    for attempt in range(config.max_attempts):
        o.attempts += 1
        plan = None
        for p in range(config.max_plan_tries):
            rng = random.Random(f"{seed}:{i}:{attempt}:{p}")
            planner = (
                plan_itinerary if itinerary and p < max(1, config.max_plan_tries // 2) else plan_dialogue
            )
            try:
                plan = planner(ctx, dialogue_id, rng, with_rejection=rejection, seed=seed)
                break
            except PlanningError:
                o.planning_failures += 1
        if plan is None:
            o.drop_reason = "planning"
            continue
        plan.phrasing_bank = bank
        dialogue = real.realise(plan, rng)
        fallbacks = dialogue.features.get("realiser_fallback_turns")
        if fallbacks is not None:
            o.fallback_turns += int(fallbacks)
            o.realiser_turns += len(dialogue.turns)
        issues = check_dialogue(
            dialogue,
            kb,
            pool_size=config.plan.pool_size,
            open_min=config.plan.open_min,
            open_max=config.plan.open_max,
        )
        if issues:
            reasons = sorted({str(x.rule) for x in issues})
            o.qc_reasons.extend(reasons)
            o.drop_reason = reasons[0]
            continue
        last = dialogue.recommendation_turns()[-1]
        final = last.gold
        assert final is not None
        anchor = dialogue.anchor_at(last.index)
        poi_type = dialogue.poi_type_at(last.index)
        ok = ctx.sat_all(plan.city, poi_type, final.active_constraints, anchor)
        home = ctx.ids(plan.city, poi_type)
        n_open = sum(  # a widened pool's POIs of other cities/types are checked one by one
            1
            for pid in final.open_pool
            if pid in ok or (pid not in home and satisfies_all(kb.poi(pid), final.active_constraints, anchor))
        )
        assign_tier(dialogue, kb, n_open_satisfying=n_open)
        if fallbacks is not None:
            dialogue.features["realiser_fallback_turns"] = fallbacks
        dialogue.split = split_of(dialogue_id)  # type: ignore[assignment]
        o.dialogue = dialogue
        return o
    return o


def _fill_stats(
    report: BuildReport, dialogues: list[Dialogue], qc_fail: Counter[str], dropped: Counter[str]
) -> None:
    report.built = len(dialogues)
    report.dropped = report.requested - report.built
    report.qc_failures = {str(r): qc_fail[str(r)] for r in QC_RULES if qc_fail[str(r)]}
    report.dropped_by_reason = dict(sorted(dropped.items()))
    if not dialogues:
        return
    report.rejection_share = round(sum(d.has_rejection for d in dialogues) / len(dialogues), 6)
    tiers = Counter(d.difficulty for d in dialogues)
    report.tiers = {t: tiers[t] for t in TIERS}
    splits = Counter(d.split for d in dialogues)
    report.splits = {s: splits[s] for s in ("train", "validation", "test")}
    quoted = {span.review_id for d in dialogues for t in d.turns for span in t.quote_spans}
    report.distinct_reviews_quoted = len(quoted)
    report.mean_turns = round(sum(len(d.turns) for d in dialogues) / len(dialogues), 4)
    system_turns = [t for d in dialogues for t in d.turns if t.role == "system"]
    report.mean_citations_per_system_turn = round(
        sum(len(t.cited_tags) for t in system_turns) / len(system_turns), 4
    )


def build_dataset(
    kb: KnowledgeBase,
    n_dialogues: int,
    seed: int,
    out_dir: str | Path,
    *,
    realiser: str | Realiser = "template",
    config: BuildConfig = BuildConfig(),  # noqa: B008
    progress: Callable[[int], None] | None = None,
    kb_path: str | Path | None = None,
) -> BuildReport:
    """Build and write the dataset folder (see module docstring); returns the report.

    ``kb_path`` (the KB file the dataset is built on) is recorded in the manifest as an absolute path, so
    ``crs run``/``crs score`` find the KB without ``--kb``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dialogues, report = build_dialogues(
        kb, n_dialogues, seed, realiser=realiser, config=config, progress=progress
    )
    for split in ("train", "validation", "test"):
        write_dialogues(out / f"{split}.jsonl", (d for d in dialogues if d.split == split))
    write_json_schema(out / "schema.json")
    manifest = {
        "name": "TRACE-CRS",
        "schema_version": SCHEMA_VERSION,
        "generator": f"groundtrace {__version__}",
        "kb_name": kb.name,
        "kb_hash": kb.content_hash,
        **({"kb_path": str(Path(kb_path).resolve())} if kb_path is not None else {}),
        "seed": seed,
        "realiser": report.realiser,
        "counts": {**report.splits, "total": report.built},
        "rejection_share": report.rejection_share,
        "tiers": report.tiers,
        "config": _config_dict(config),
        "phrasing": {
            "held_out": True,
            "rule": "60/20/20 by sha256 of the normalised phrasing (groundtrace.crs.build.phrasing)",
            "bank": report.phrasing.get("bank", {}).get("file"),
            "mined": report.phrasing.get("mined", {}).get("count", 0),
        },
    }
    (out / "manifest.json").write_text(
        json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    (out / "build_report.json").write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    notes = language_card_notes(report.phrasing)
    write_build_card(out, kb, manifest, notes=notes)  # README.md + knowledge_base/*.jsonl: HF configs
    return report


def _config_dict(config: BuildConfig) -> dict[str, Any]:
    data = asdict(config)
    data.pop("processes")  # how many processes built it does not change what was built
    data["plan"]["initial_constraint_weights"] = list(config.plan.initial_constraint_weights)
    return data
