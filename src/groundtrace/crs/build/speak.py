"""Stage 3b — how the user says a plan's constraints: phrasing choice per split, hedges, typos, casing.

:func:`phrase_plan` rewrites, in place, every user-added constraint of a
:class:`~groundtrace.crs.build.planner.DialoguePlan` with a phrasing drawn from the dialogue split's pool
of the bank (:mod:`groundtrace.crs.build.phrasing`), and records on each user :class:`TurnPlan` how to
say it (:class:`Spoken`: a list phrase or a sentence of its own, an optional hedge). The same constraint
object keeps its new label everywhere in the plan (``replaced``, ``active``, gold ``active_constraints``,
``final_constraints``), so gold and text agree.

Contract of ``Constraint.label`` for user turns: it is exactly the span the turn text contains —
``label in turn.text`` always holds. Noise is applied to the phrasing *before* it becomes the label: a
typo (rate :data:`TYPO_RATE`: one swapped, dropped or doubled letter in a word of 4+ letters outside
``{anchor}``) or a casing slip (rate :data:`CASING_RATE`: the phrase in lower case) is carried by the
label. A sentence-shaped phrasing starts its own sentence, so its label is capitalised. Hedges ("ideally
…", "… if possible") wrap the label and stay outside it. A typo that would turn a phrasing into one of
another split's (normalised) is not applied.

Determinism: the draws use ``random.Random(f"{seed}:{dialogue_id}:phrasing")`` — a stream of their own,
so the plan's stream (and every system turn) is unchanged by the phrasing.
"""

from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING

from groundtrace.crs.build.phrasing import SENTENCE, SPLIT_CUTS, SPLITS, PhrasingBank, bundled_bank
from groundtrace.crs.build.plan import Spoken
from groundtrace.crs.schema import Constraint

if TYPE_CHECKING:
    from groundtrace.crs.build.plan import DialoguePlan, TurnPlan

TYPO_RATE = 0.04
CASING_RATE = 0.03
HEDGE_RATE = 0.2
#: P(a sentence-shaped phrasing is drawn when the split's pool has both shapes)
SENTENCE_RATE = 0.3
#: split bounds of dialogue ids (u = sha256(dialogue_id)[:8] / 16**8): train < 0.8 <= validation < 0.9
DIALOGUE_SPLIT_BOUNDS = (("train", 0.8), ("validation", 0.9), ("test", 1.0))

assert SPLITS == tuple(s for s, _ in DIALOGUE_SPLIT_BOUNDS) and len(SPLIT_CUTS) == 2


def split_of(dialogue_id: str) -> str:
    """train / validation / test from the sha256 of the dialogue id (≈ 80/10/10); the builder's split."""
    u = int(hashlib.sha256(dialogue_id.encode("utf-8")).hexdigest()[:8], 16) / 16**8
    return next(name for name, bound in DIALOGUE_SPLIT_BOUNDS if u < bound)


def _key(c: Constraint) -> tuple[str, str, str]:
    return (c.kind, str(c.value), c.label)


def typo(text: str, rng: random.Random) -> str:
    """One letter edit (swap / drop / double) in a word of 4+ letters outside ``{anchor}``; the text
    unchanged when it has no such word."""
    words = [(i, w) for i, w in enumerate(text.split(" ")) if len(w) >= 4 and w.isalpha()]
    if not words:
        return text
    i, w = rng.choice(words)
    j = rng.randrange(1, len(w) - 1)
    edit = rng.choice(("swap", "drop", "double"))
    if edit == "swap":
        new = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    elif edit == "drop":
        new = w[:j] + w[j + 1 :]
    else:
        new = w[:j] + w[j] + w[j:]
    parts = text.split(" ")
    parts[i] = new
    return " ".join(parts)


def _anchor_name(plan: DialoguePlan, index: int) -> str:
    """The anchor a user turn's distance is measured from: that of the next system turn with one."""
    for tp in plan.turns[index + 1 :]:
        if tp.role == "system" and tp.anchor is not None:
            return tp.anchor.name
    return plan.anchor.name if plan.anchor is not None else "the centre"


class _Chooser:
    def __init__(self, bank: PhrasingBank, split: str, rng: random.Random) -> None:
        self.bank, self.split, self.rng = bank, split, rng
        self.used: set[str] = set()

    def say(self, c: Constraint, poi_type: str, anchor: str) -> Spoken:
        pool = self.bank.pool(c.kind, c.value, self.split, poi_type)
        if not pool:  # unreachable for a validated bank (every pool is repaired to be non-empty)
            return Spoken(c)
        shapes = {p.shape for p in pool}
        if len(shapes) == 2:
            want = SENTENCE if self.rng.random() < SENTENCE_RATE else "phrase"
            pool = [p for p in pool if p.shape == want]
        fresh = [p for p in pool if p.text not in self.used] or pool
        p = self.rng.choice(fresh)
        self.used.add(p.text)
        text = p.text
        if self.rng.random() < TYPO_RATE:
            noisy = typo(text, self.rng)
            if not self.bank.seen_elsewhere(noisy, self.split):
                text = noisy
        if self.rng.random() < CASING_RATE:
            text = text.lower()
        text = text.replace("{anchor}", anchor)
        sentence = p.shape == SENTENCE
        if sentence:
            text = text[:1].upper() + text[1:]
        hedges = self.bank.hedges[self.split]
        hedge = self.rng.choice(hedges) if not sentence and self.rng.random() < HEDGE_RATE else ""
        # kind and value come from a validated constraint: construct without re-validating (hot path)
        said = Constraint.model_construct(kind=c.kind, value=c.value, label=text)
        return Spoken(said, sentence, hedge)


def phrase_plan(plan: DialoguePlan, bank: PhrasingBank | None = None) -> DialoguePlan:
    """Rephrase ``plan``'s user constraints for its split (see module docstring); idempotent."""
    if plan.spoken_split:
        return plan
    bank = bank or plan.phrasing_bank or bundled_bank()
    split = split_of(plan.dialogue_id)
    chooser = _Chooser(bank, split, random.Random(f"{plan.seed}:{plan.dialogue_id}:phrasing"))
    said: dict[tuple[str, str, str], Spoken] = {}  # a constraint said twice (itinerary legs) keeps its words
    for index, tp in enumerate(plan.turns):
        if tp.role != "user" or not tp.constraints_added:
            continue
        for c in tp.constraints_added:
            if _key(c) not in said:
                said[_key(c)] = chooser.say(c, tp.poi_type or plan.poi_type, _anchor_name(plan, index))
        tp.spoken = [said[_key(c)] for c in tp.constraints_added]
    relabel(plan, {k: s.constraint for k, s in said.items()})
    plan.spoken_split = split
    return plan


def relabel(plan: DialoguePlan, mapping: dict[tuple[str, str, str], Constraint], start: int = 0) -> None:
    """Replace every constraint of ``plan.turns[start:]`` (and the final constraints) found in ``mapping``
    (keyed by kind, value and old label)."""

    if not mapping:
        return

    def m(cs: list[Constraint]) -> list[Constraint]:
        return [mapping.get((c.kind, str(c.value), c.label), c) for c in cs]

    for tp in plan.turns[start:]:
        _relabel_turn(tp, m)
    plan.final_constraints = m(plan.final_constraints)


def _relabel_turn(tp: TurnPlan, m) -> None:  # type: ignore[no-untyped-def]
    if tp.constraints_added:
        tp.constraints_added = m(tp.constraints_added)
    if tp.replaced:
        tp.replaced = m(tp.replaced)
    if tp.active:
        tp.active = m(tp.active)
    if tp.spoken:
        tp.spoken = [Spoken(m([s.constraint])[0], s.sentence, s.hedge) for s in tp.spoken]
    if tp.gold is not None and tp.gold.active_constraints:
        tp.gold.active_constraints = m(tp.gold.active_constraints)  # the turn's own gold (TurnMaker.gold)


def spoken_of(tp: TurnPlan) -> list[Spoken]:
    """The turn's :class:`Spoken` list (plain list phrases of its labels for an unphrased plan)."""
    return tp.spoken or [Spoken(c) for c in tp.constraints_added]
