"""The dialogue state an offline system reads from the history (no gold labels): what the user asked for,
what they turned down, and which candidates they rejected.

Constraint understanding — over the user's turns only — is the system's
:class:`~groundtrace.crs.systems.understanding.Understanding`: a parser learned from a dataset's train
split (``RankingSystem.fit``), or, untrained, the generic keyword rules
(:mod:`~groundtrace.crs.systems.understanding.keywords`); either way every candidate category whose word
occurs (``Sushi Bars`` → "sushi") is a constraint too. Nothing here reads the dataset builder.

Rejections: in a ``reject_and_refine`` turn the candidates whose name occurs in the text are rejected
(rejection memory: they stay rejected for the rest of the dialogue). The text before the refinement cue
(:func:`split_rejection`: ``ideally``/``preferably``, the clause before ``instead``/``rather``, else the
sentences up to the last one naming a candidate, or the first sentence) is the
*negative* part: constraints parsed there are dropped from the active set, and its words form the
negative query; the rest is positive.

Slots: a kind of :data:`SINGLE_VALUED` holds one value (a later turn's replaces it); an itinerary leg
starts a new request (:func:`request_start`).

Shown: the candidates a system turn of the history named (as written: whole words, case kept), in the order
first named — what the conversation already recommended (:mod:`.novelty` decides, from a train split,
whether to offer them again). ``act`` is the act of the last user turn (the one being answered).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.predictions import CandidateCard, SystemInput
from groundtrace.crs.systems.understanding.keywords import KEYWORD_RULES, category_words
from groundtrace.crs.systems.understanding.model import GENERIC, Understanding
from groundtrace.crs.systems.understanding.parser import SINGLE_VALUED, split_rejection

__all__ = [
    "KEYWORD_RULES",
    "SINGLE_VALUED",
    "DialogueState",
    "category_words",
    "parse_constraints",
    "request_start",
    "split_rejection",
    "track_state",
]


def parse_constraints(
    text: str, cards: list[CandidateCard] | None = None, understanding: Understanding | None = None
) -> list[Constraint]:
    """Constraints stated in ``text`` (module docstring), one per (kind, value)."""
    return list((understanding or GENERIC).parse(text, cards or []))


@dataclass
class DialogueState:
    """What the user wants at this turn: active constraints, dropped ones, rejected POIs, query texts.

    ``positive_text`` / ``negative_text`` join the turns' positive / negative parts with a space;
    ``positive_parts`` / ``negative_parts`` keep them apart, one (stripped, non-empty) text per turn."""

    constraints: list[Constraint] = field(default_factory=list)
    dropped: list[Constraint] = field(default_factory=list)
    rejected: set[str] = field(default_factory=set)
    positive_text: str = ""
    negative_text: str = ""
    positive_parts: list[str] = field(default_factory=list)
    negative_parts: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    act: str = ""


def _named(text: str, cards: list[CandidateCard]) -> set[str]:
    low = text.lower()
    return {c.poi_id for c in cards if c.name and c.name.lower() in low}


def named_in_order(text: str, cards: list[CandidateCard]) -> list[str]:
    """The ids of the ``cards`` whose name occurs in ``text`` as written (whole words, case kept: a cafe
    called "Milk" is not named by "the milk foam"), in the order of their first occurrence."""
    found: list[tuple[int, str]] = []
    for c in cards:
        name = (c.name or "").strip()
        if not name:
            continue
        m = re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text)
        if m is not None:
            found.append((m.start(), c.poi_id))
    return [poi for _, poi in sorted(found)]


def request_start(inp: SystemInput) -> int:
    """Index in ``inp.history`` where the current request starts (0: the whole history).

    An itinerary leg ("Great, X it is. Now I need a place to eat ...") is measured from the previous
    pick X, which is the turn's anchor: the last user turn naming the anchor *after a system turn named
    it* (the system recommended it) opens the current request — what the user asked for an earlier leg
    (another POI type) does not hold here. A landmark anchor the user introduces changes nothing.
    """
    name = str((inp.anchor or {}).get("name") or "").strip().lower()
    if len(name) < 3:
        return 0
    start, system_named = 0, False
    for i, turn in enumerate(inp.history):
        said = name in turn.text.lower()
        if turn.role == "system":
            system_named = system_named or said
        elif said and system_named:
            start = i
    return start


def track_state(inp: SystemInput, understanding: Understanding | None = None) -> DialogueState:
    """The :class:`DialogueState` after the user turns of ``inp.history`` (module docstring): from the
    current request's start (:func:`request_start`), constraints accumulate turn by turn, a value of a
    :data:`SINGLE_VALUED` kind replacing that kind's earlier values."""
    state = DialogueState()
    active: dict[tuple[str, str], Constraint] = {}
    positive: list[str] = []
    negative: list[str] = []
    u = understanding or GENERIC
    first = request_start(inp)
    for i, turn in enumerate(inp.history):
        if turn.role != "user":
            for poi in named_in_order(turn.text, inp.candidates):
                if poi not in state.shown:
                    state.shown.append(poi)
            continue
        state.act = turn.act
        text = turn.text
        if turn.act == "reject_and_refine":
            state.rejected |= _named(text, inp.candidates)
            if i < first:
                continue
            neg, text = split_rejection(text, [c.name for c in inp.candidates if c.name])
            for name in (c.name for c in inp.candidates if c.name and c.name.lower() in neg.lower()):
                neg = re.sub(re.escape(name), " ", neg, flags=re.IGNORECASE)
            negative.append(neg)
            for c in u.parse(neg, inp.candidates):
                if active.pop((c.kind, str(c.value)), None) is not None:
                    state.dropped.append(c)
        elif turn.act in ("ask_comparison", "ask_detail", "accept") or i < first:
            continue  # names a POI, states no preference (or belongs to an earlier request)
        positive.append(text)
        stated = u.parse(text, inp.candidates)
        replaced = {c.kind for c in stated if c.kind in SINGLE_VALUED}
        active = {k: c for k, c in active.items() if c.kind not in replaced}
        for c in stated:
            active[(c.kind, str(c.value))] = c
    state.constraints = list(active.values())
    state.positive_text = " ".join(positive)
    state.negative_text = " ".join(negative)
    state.positive_parts = [t for t in (p.strip() for p in positive) if t]
    state.negative_parts = [t for t in (n.strip() for n in negative) if t]
    return state
