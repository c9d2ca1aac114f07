"""The simulation loop: a :class:`~.user.SimulatedUser` talks to a system until it accepts or runs out.

:func:`simulate_dialogue` — turn 0 is the user's opening; then up to ``max_turns`` system turns, each
followed by the user's reply (:meth:`SimulatedUser.reply` on the system's top-ranked POI). The system sees
exactly what the runner shows it (``SystemInput``: the transcript so far as history, the dialogue's pool
of the setting as cards, their reviews under the dialogue's ``[Rn]`` tags); its answer goes through
``check_output`` (a failure ends the dialogue unsuccessfully, the error recorded). A ``needs_gold`` system
(the oracle) gets the dialogue's last gold turn — its gold POI meets every hidden constraint.

Per-dialogue outcome (:class:`Transcript`): ``success`` (accepted within ``max_turns``), ``turns``
(system turns used; to success when successful), ``rejections`` (the user's own), ``recovered``
(rejections whose very next system top-1 met every hidden constraint), ``repeats`` (recommendations of
an already rejected POI).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from groundtrace.core.llm.base import LLMClient
from groundtrace.crs.evaluation.inputs import candidate_card, check_output
from groundtrace.crs.kb.knowledge_base import KnowledgeBase, open_review_refs
from groundtrace.crs.schema import Dialogue, TurnGold
from groundtrace.crs.simulate.user import SimulatedUser, final_index, final_leg_start
from groundtrace.crs.systems.base import CRSSystem
from groundtrace.crs.systems.predictions import HistoryTurn, Setting, SystemInput, TaggedReview

DEFAULT_MAX_TURNS = 6


@dataclass
class SimTurn:
    """One transcript turn (system turns carry the ranking, usage and latency)."""

    index: int
    role: str
    act: str
    text: str
    ranking: list[str] = field(default_factory=list)
    error: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


@dataclass
class Transcript:
    """One simulated dialogue and its outcome (module docstring)."""

    dialogue_id: str
    system: str
    setting: str
    persona: str
    hidden: list[dict[str, Any]]
    turns: list[SimTurn] = field(default_factory=list)
    success: bool = False
    accepted: str | None = None
    system_turns: int = 0
    rejections: int = 0
    recovered: int = 0
    repeats: int = 0
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def pool_of(dialogue: Dialogue, kb: KnowledgeBase, setting: Setting) -> tuple[list[str], list[TaggedReview]]:
    """The pool the system ranks (closed: the 8 candidates; open: the first turn's open pool), its reviews.

    An itinerary dialogue is simulated on its last leg: that leg's candidates and first open pool."""
    start = final_leg_start(dialogue)
    turns = [t for t in dialogue.recommendation_turns() if t.index >= start]
    pool = list(dialogue.candidates_at(final_index(dialogue)))
    if setting == "open" and turns and turns[0].gold is not None and turns[0].gold.open_pool:
        pool = list(turns[0].gold.open_pool)
    refs = dialogue.review_refs if setting == "closed" else open_review_refs(kb, dialogue.review_refs, pool)
    members = set(pool)
    reviews = [
        TaggedReview(
            tag=tag,
            review_id=ref.review_id,
            poi_id=ref.poi_id,
            text=kb.reviews[ref.review_id].text,
            stance=[(s.start, s.end, s.polarity) for s in kb.stances.get(ref.review_id, ())],
        )
        for tag, ref in refs.items()
        if ref.poi_id in members and ref.review_id in kb.reviews
    ]
    return pool, reviews


def _ask(system: CRSSystem, inp: SystemInput, gold: TurnGold | None) -> tuple[SimTurn, str | None]:
    start = time.perf_counter()
    try:
        raw = system.respond(inp, gold) if system.needs_gold else system.respond(inp)  # type: ignore[call-arg]
        latency = time.perf_counter() - start
        output, usage = check_output(raw, [c.poi_id for c in inp.candidates])
    except Exception as exc:  # noqa: BLE001 - a failed system turn ends the dialogue, recorded
        err = f"{type(exc).__name__}: {exc}"
        return SimTurn(
            inp.turn_index, "system", "recommend", "", error=err, latency_s=time.perf_counter() - start
        ), err
    turn = SimTurn(
        inp.turn_index,
        "system",
        "recommend",
        output.response,
        ranking=list(output.ranking),
        latency_s=latency,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cost_usd=usage.cost_usd,
    )
    return turn, None


def simulate_dialogue(
    system: CRSSystem,
    dialogue: Dialogue,
    kb: KnowledgeBase,
    *,
    setting: Setting = "closed",
    max_turns: int = DEFAULT_MAX_TURNS,
    llm: LLMClient | None = None,
) -> Transcript:
    """One simulated conversation (module docstring)."""
    user = SimulatedUser(dialogue, kb, llm)
    pool, reviews = pool_of(dialogue, kb, setting)
    cards = [candidate_card(kb, p) for p in pool]
    rec = dialogue.recommendation_turns()
    gold = rec[-1].gold if rec else None
    t = Transcript(
        dialogue.dialogue_id,
        system.name,
        setting,
        dialogue.persona,
        [c.model_dump(mode="json") for c in user.hidden],
    )
    opening = user.opening()
    t.turns.append(SimTurn(0, "user", opening.act, opening.text))
    anchor = user.anchor.model_dump(mode="json") if user.anchor is not None else None
    pending_rejection = False
    for _ in range(max_turns):
        inp = SystemInput(
            dialogue_id=dialogue.dialogue_id,
            turn_index=len(t.turns),
            setting=setting,
            city=dialogue.city,
            poi_type=dialogue.poi_type_at(final_index(dialogue)),
            anchor=anchor,
            history=[HistoryTurn(role=x.role, act=x.act, text=x.text) for x in t.turns],  # type: ignore[arg-type]
            candidates=cards,
            reviews=reviews,
        )
        sys_turn, err = _ask(system, inp, gold)
        t.turns.append(sys_turn)
        t.system_turns += 1
        if err is not None:
            t.error = err
            break
        top = sys_turn.ranking[0] if sys_turn.ranking else None
        if pending_rejection and top is not None and user.satisfied(top):
            t.recovered += 1
        line = user.reply(top)
        t.turns.append(SimTurn(len(t.turns), "user", line.act, line.text))
        t.repeats += line.repeat
        pending_rejection = line.rejected is not None and not line.repeat
        t.rejections += pending_rejection
        if line.accepted is not None:
            t.success, t.accepted = True, line.accepted
            break
    return t
