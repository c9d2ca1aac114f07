"""What a system sees at each recommendation turn, and the check applied to what it answers.

At each recommendation turn (a system turn with ``gold``) of each dialogue a system sees a
:class:`SystemInput`: the gold history before the turn (role/act/text only), the candidate pool of the
setting (closed: ``Dialogue.candidates``; open: the turn's ``gold.open_pool``) as cards, and those
candidates' reviews under their ``[Rn]`` tags (closed: ``Dialogue.review_refs``; open:
``groundtrace.crs.kb.knowledge_base.open_review_refs``). In an itinerary dialogue the closed pool,
``poi_type`` and ``anchor`` are those of the turn's leg (``Dialogue.candidates_at`` / ``poi_type_at`` /
``anchor_at``): the restaurant leg's system sees the restaurant pool and distances from the hotel picked
before.

Its answer is accepted by :func:`check_output` only when it is a valid :class:`SystemOutput` whose
ranking names POIs of the pool; :func:`check_pools` applies the same pool check to a predictions file,
so identical outputs score identically whichever path they come through (:func:`pool_violation` is the
one message for both).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import ValidationError

from groundtrace.core.files.validation import validation_message
from groundtrace.crs.dataset.lean import AnyDialogue, AnyTurn
from groundtrace.crs.kb.knowledge_base import KnowledgeBase, open_review_refs
from groundtrace.crs.systems.base import SystemReply, TurnUsage
from groundtrace.crs.systems.predictions import (
    CandidateCard,
    HistoryTurn,
    Prediction,
    Setting,
    SystemInput,
    SystemOutput,
    TaggedReview,
)


def candidate_card(kb: KnowledgeBase, poi_id: str) -> CandidateCard:
    """The card of a KB POI as shown to systems."""
    poi = kb.pois[poi_id]
    return CandidateCard(
        poi_id=poi.poi_id,
        name=poi.name,
        city=poi.city,
        poi_type=poi.poi_type,
        categories=list(poi.categories),
        price_level=poi.price_level,
        stars=poi.stars,
        review_count=poi.review_count,
        lat=poi.lat,
        lon=poi.lon,
        attributes=dict(poi.attributes),
    )


def system_inputs(
    dialogue: AnyDialogue, kb: KnowledgeBase, setting: Setting
) -> Iterator[tuple[AnyTurn, SystemInput]]:
    """``(turn, SystemInput)`` for each recommendation turn of ``dialogue`` in order (module docstring)."""
    cards: dict[str, CandidateCard] = {}
    tagged: dict[tuple[str, ...], list[TaggedReview]] = {}  # per pool: every closed turn shares one list
    for turn in dialogue.recommendation_turns():
        assert turn.gold is not None
        where = dialogue.anchor_at(turn.index)
        anchor = where.model_dump(mode="json") if where is not None else None
        pool = list(dialogue.candidates_at(turn.index)) if setting == "closed" else list(turn.gold.open_pool)
        for pid in pool:
            if pid not in cards:
                cards[pid] = candidate_card(kb, pid)
        reviews = tagged.get(tuple(pool))
        if reviews is None:
            refs = (
                dialogue.review_refs
                if setting == "closed"
                else open_review_refs(kb, dialogue.review_refs, pool)
            )
            in_pool = set(pool)
            reviews = tagged[tuple(pool)] = [
                TaggedReview(
                    tag=tag,
                    review_id=ref.review_id,
                    poi_id=ref.poi_id,
                    text=kb.reviews[ref.review_id].text,
                    stance=[(s.start, s.end, s.polarity) for s in kb.stances.get(ref.review_id, ())],
                )
                for tag, ref in refs.items()
                if ref.poi_id in in_pool
            ]
        history = [HistoryTurn(role=t.role, act=t.act, text=t.text) for t in dialogue.turns[: turn.index]]
        yield (
            turn,
            SystemInput(
                dialogue_id=dialogue.dialogue_id,
                turn_index=turn.index,
                setting=setting,
                city=dialogue.city,
                poi_type=dialogue.poi_type_at(turn.index),
                anchor=anchor,
                history=history,
                candidates=[cards[p] for p in pool],
                reviews=reviews,
            ),
        )


def write_inputs(
    dialogues: Sequence[AnyDialogue], kb: KnowledgeBase, setting: Setting, out: Path | str
) -> tuple[int, int]:
    """Write every :class:`SystemInput` of ``dialogues`` (in order) to ``out`` as JSONL; returns
    ``(dialogues, turns)`` written.

    The predictions-file contract: each line is exactly what :func:`system_inputs` hands a system (and
    what an HTTP system receives as its request body); answering each line with a
    :class:`~groundtrace.crs.systems.predictions.Prediction` carrying its ``dialogue_id``,
    ``turn_index`` and ``setting`` gives a file ``crs score`` accepts.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    turns = 0
    with out.open("w", encoding="utf-8") as handle:
        for dialogue in dialogues:
            for _, inp in system_inputs(dialogue, kb, setting):
                handle.write(inp.model_dump_json() + "\n")
                turns += 1
    return len(dialogues), turns


def check_output(raw: object, pool: Sequence[str]) -> tuple[SystemOutput, TurnUsage]:
    """Coerce a system's return value to a valid output; ``ValueError`` naming the problem otherwise.

    Accepts a :class:`SystemReply`, a :class:`SystemOutput` or a dict in its shape. Every ranked id must
    be in ``pool``.
    """
    usage = TurnUsage()
    if isinstance(raw, SystemReply):
        raw, usage = raw.output, raw.usage
    if isinstance(raw, dict):
        try:
            raw = SystemOutput.model_validate(raw)
        except ValidationError as exc:
            raise ValueError(f"invalid output: {validation_message(exc, model=SystemOutput)}") from None
    if not isinstance(raw, SystemOutput):
        raise ValueError(f"invalid output: expected SystemOutput, got {type(raw).__name__}")  # noqa: TRY004
    # model_construct or later mutation can bypass validation: check the shape again
    if not isinstance(raw.ranking, list) or not all(isinstance(p, str) for p in raw.ranking):
        raise ValueError("invalid output: ranking must be a list of POI id strings")
    if not isinstance(raw.response, str):
        raise ValueError("invalid output: response must be a string")  # noqa: TRY004
    problem = pool_violation(raw.ranking, pool)
    if problem is not None:
        raise ValueError(problem)
    for name in ("prompt_tokens", "completion_tokens", "cost_usd"):
        value = getattr(usage, name)
        if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            raise ValueError(f"invalid output: usage.{name} must be a finite number >= 0, got {value!r}")
    return raw, usage


def pool_violation(ranking: Sequence[str], pool: Sequence[str] | set[str]) -> str | None:
    """The message for ranked ids outside ``pool`` (None when every id is in it).

    One function for the runner (:func:`check_output`) and for predictions files (:func:`check_pools`), so
    that both paths make the same turns unscorable with the same error text.
    """
    allowed = pool if isinstance(pool, set) else set(pool)
    unknown = [p for p in ranking if p not in allowed]
    if not unknown:
        return None
    more = f" (+{len(unknown) - 3} more)" if len(unknown) > 3 else ""
    named = ", ".join(map(repr, unknown[:3]))
    return f"invalid output: unknown POI id(s) {named}{more} not in the candidate pool"


def check_pools(
    preds: Sequence[Prediction], dialogues: Sequence[AnyDialogue], setting: Setting
) -> tuple[list[Prediction], int]:
    """``preds`` with the runner's pool check applied, and how many turns it made errored.

    A prediction of ``setting`` for a recommendation turn of ``dialogues`` whose ranking names a POI
    outside that turn's pool (closed: ``Dialogue.candidates_at``; open: ``gold.open_pool``) becomes errored
    exactly as the runner (``runner.run_dialogue``) records it: ``error`` = ``"ValueError: invalid
    output: unknown POI id(s) ..."``, empty ranking and response (latency and usage are kept). Other
    predictions are unchanged.
    """
    pools: dict[tuple[str, int], set[str]] = {}
    sets: dict[tuple[str, ...], set[str]] = {}  # one set per distinct pool (open pools repeat per dialogue)
    for d in dialogues:
        for turn in d.recommendation_turns():
            assert turn.gold is not None
            pool = tuple(d.candidates_at(turn.index) if setting == "closed" else turn.gold.open_pool)
            found = sets.get(pool)
            if found is None:
                found = sets[pool] = set(pool)
            pools[(d.dialogue_id, turn.index)] = found
    out: list[Prediction] = []
    errored = 0
    for p in preds:
        pool = pools.get((p.dialogue_id, p.turn_index)) if p.setting == setting and p.error is None else None
        problem = pool_violation(p.ranking, pool) if pool is not None else None
        if problem is None:
            out.append(p)
            continue
        errored += 1
        out.append(
            p.model_copy(update={"error": f"{ValueError.__name__}: {problem}", "ranking": [], "response": ""})
        )
    return out, errored
