"""Repeat memory: whether to offer again a POI the conversation already recommended, learned from a train
split — conversation memory beside the rejection memory (:func:`~.base.move_rejected_last`).

A recommender that ranks by the stated constraints alone gives the same top-1 at every turn whose
constraints did not change: asked "could you compare it with another option?" it names the POI it just
recommended. Whether users want a new POI there is a property of the conversations, so it is learned:

* **Training** (:meth:`RepeatPolicy.fit`) — every system turn of the train dialogues with a gold
  recommendation (``gold.gold_poi``, a training label like ``constraints_added``) counts, under the act
  of the user turn just before it, as a *repeat* when that POI was the gold recommendation of an earlier
  system turn of the same dialogue. ``rate(act) = (repeats + 1) / (turns + 2)`` (Laplace); an act never
  seen uses the pooled counts of all acts.
* **Use** (:meth:`RepeatPolicy.order`) — when ``rate(act of the current user turn) < 0.5`` (the train
  conversations mostly move on to a new POI), the POIs named in earlier system turns
  (:attr:`~.state.DialogueState.shown`) go after the others, before the rejected ones; otherwise the
  ranking is left as it is. An unfitted policy (no train split) changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: The smoothed repeat rate below which already-recommended POIs move behind the others.
AVOID_BELOW = 0.5


@dataclass
class RepeatPolicy:
    """Per-act repeat counts ``act -> (turns, repeats)`` from a train split (module docstring)."""

    counts: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def fitted(self) -> bool:
        return bool(self.counts)

    def fit(self, dialogues: Iterable[Any]) -> RepeatPolicy:
        """Count the repeats of ``dialogues`` (full dialogues with ``turns``; others contribute nothing)."""
        counts: dict[str, list[int]] = {}
        for d in dialogues:
            earlier: set[str] = set()
            previous_act = ""
            for turn in getattr(d, "turns", None) or []:
                if turn.role == "user":
                    previous_act = turn.act
                    continue
                gold = getattr(turn.gold, "gold_poi", None) if turn.gold is not None else None
                if not gold:
                    continue
                entry = counts.setdefault(previous_act, [0, 0])
                entry[0] += 1
                entry[1] += gold in earlier
                earlier.add(gold)
        self.counts = {act: (n, r) for act, (n, r) in sorted(counts.items())}
        return self

    def rate(self, act: str) -> float:
        """``(repeats + 1) / (turns + 2)`` for ``act`` (pooled over all acts when ``act`` was not seen)."""
        pooled = (sum(v[0] for v in self.counts.values()), sum(v[1] for v in self.counts.values()))
        n, r = self.counts.get(act) or pooled
        return (r + 1) / (n + 2)

    def avoids(self, act: str) -> bool:
        """Whether already-recommended POIs go behind the others after a user turn of ``act``."""
        return self.fitted and self.rate(act) < AVOID_BELOW

    def order(self, ranking: list[str], act: str, shown: Iterable[str], rejected: set[str]) -> list[str]:
        """``ranking`` with the ``rejected`` ids last and, when :meth:`avoids` ``act``, the ``shown`` ones
        (not rejected) just before them; each part keeps its order."""
        seen = set(shown) - rejected if self.avoids(act) else set()
        fresh = [p for p in ranking if p not in rejected and p not in seen]
        again = [p for p in ranking if p in seen]
        return fresh + again + [p for p in ranking if p in rejected]

    def key(self) -> str:
        """What a run key records: the acts after which shown POIs move back (``-`` when none; unfitted:
        empty)."""
        if not self.fitted:
            return ""
        return ",".join(act for act in self.counts if self.avoids(act)) or "-"
