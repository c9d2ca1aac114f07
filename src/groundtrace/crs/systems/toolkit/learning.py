"""The training hook of the offline systems: ``learn(train_dialogues, kb)`` before a run.

The runner (``crs.evaluation.runner.run_system(train=...)``, which ``crs run`` fills with the dataset's
train split) calls :meth:`Learns.learn` on every instance it builds, before the first turn. ``learn`` gets
the understanding trained on that split (:func:`~groundtrace.crs.systems.understanding.understanding_for`:
from memory, else the cache file, else trained now and cached) and installs it in the system's memo,
which the state tracker, the aspect counts and the evidence selection all read. A model given with
``--system-arg parser=MODEL`` (:meth:`Learns.use_understanding`) is kept: ``learn`` then does nothing.
Without ``learn`` a system keeps the generic keyword understanding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from groundtrace.crs.systems.toolkit.memo import Memo
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

    def use_understanding(self, understanding: Understanding, *, fixed: bool = True) -> None:
        """Install ``understanding``; ``fixed`` (a user's model file) makes later :meth:`learn` no-ops."""
        self.memo.set_understanding(understanding)
        self._understanding_fixed = self._understanding_fixed or fixed

    def learn(self, train_dialogues: Sequence[Any], kb: Any = None) -> None:
        """Learn the understanding from ``train_dialogues`` (module docstring); :class:`NothingToLearn`
        when they hold no labelled user turn."""
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
        """``{"understanding": key}`` once trained (absent otherwise: untrained run keys stay as before)."""
        u = self.memo.understanding
        return {"understanding": u.key} if u.trained else {}
