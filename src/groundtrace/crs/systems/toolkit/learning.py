"""The training hook of the offline systems: ``learn(train_dialogues, kb)`` before a run.

The runner (``crs.evaluation.runner.run_system(train=...)``, which ``crs run`` fills with the dataset's
train split) calls :meth:`Learns.learn` on every instance it builds, before the first turn. ``learn`` gets
the understanding trained on that split (:func:`~groundtrace.crs.systems.understanding.understanding_for`:
from memory, else the cache file, else trained now and cached) and installs it in the system's memo,
which the state tracker, the aspect counts and the evidence selection all read. A model given with
``--system-arg parser=MODEL`` (:meth:`Learns.use_understanding`) is kept: ``learn`` then leaves the
understanding alone. Without ``learn`` a system keeps the generic keyword understanding.

``learn`` also fits the repeat memory (:class:`~.novelty.RepeatPolicy`: whether the train conversations
move on to a new POI after each user act), which the ranking applies; without ``learn`` it changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from groundtrace.crs.systems.toolkit.memo import Memo
from groundtrace.crs.systems.toolkit.novelty import RepeatPolicy
from groundtrace.crs.systems.understanding.model import (
    Understanding,
    review_sentences_of,
    training_data,
    understanding_for,
)


class NothingToLearn(ValueError):
    """The train dialogues hold no labelled constraint."""


class Learns:
    """Mixin: a system whose understanding is learned (module docstring). Needs ``self.memo``."""

    memo: Memo
    _understanding_fixed: bool = False
    _repeats: RepeatPolicy | None = None

    @property
    def repeat_policy(self) -> RepeatPolicy:
        """The repeat memory learned by :meth:`learn` (unfitted before: it changes no ranking)."""
        if self._repeats is None:
            self._repeats = RepeatPolicy()
        return self._repeats

    def use_understanding(self, understanding: Understanding, *, fixed: bool = True) -> None:
        """Install ``understanding``; ``fixed`` (a user's model file) makes later :meth:`learn` no-ops."""
        self.memo.set_understanding(understanding)
        self._understanding_fixed = self._understanding_fixed or fixed

    def learn(self, train_dialogues: Sequence[Any], kb: Any = None) -> None:
        """Learn the understanding from ``train_dialogues`` (module docstring); :class:`NothingToLearn`
        when they hold no labelled user turn."""
        self._repeats = RepeatPolicy().fit(train_dialogues)
        if self._understanding_fixed:
            return
        data = training_data(train_dialogues, review_sentences_of(kb, train_dialogues))
        if not any(t.constraints for t in data.turns):
            raise NothingToLearn(
                "the train dialogues hold no labelled constraint (constraints_added): pass a model with "
                "--system-arg parser=MODEL (groundtrace crs train-parser)"
            )
        self.use_understanding(understanding_for(data), fixed=False)

    def understanding_config(self) -> dict[str, Any]:
        """``{"understanding": key, "repeats": acts}`` once trained (absent otherwise: untrained run keys stay
        as before)."""
        u = self.memo.understanding
        out = {"understanding": u.key} if u.trained else {}
        if self.repeat_policy.fitted:
            out["repeats"] = self.repeat_policy.key()
        return out
