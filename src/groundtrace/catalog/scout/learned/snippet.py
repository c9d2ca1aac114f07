"""The write-policy snippet of a trained model (``catalog train`` prints it; ``catalog enrich --policy``
takes it): θ per learned attribute on the *candidate* confidence the policy sees.

The model's θ is on its calibrated confidence ``c`` (the estimated probability that the value is right,
picked for the target precision on held-out train parts, :mod:`.calibration`). A learned value is a
catalog finding, so its candidate confidence is ``w · c`` with ``w`` the catalog source weight
(:data:`~groundtrace.catalog.scout.reconcile.SOURCE_WEIGHT`, 0.9; noisy-OR over one source) — lower when
the rule engine's explicit fields name another value. The policy threshold of an attribute is therefore
``floor(w · θ, 3 decimals)``; attributes whose θ never reaches the target (:data:`.calibration.NEVER`)
keep the policy's default. Format: ``src/groundtrace/catalog/policy.py`` (``attributes.<slug>.threshold``).
"""

from __future__ import annotations

import json
import math
import re

from groundtrace.catalog.scout.learned.calibration import NEVER
from groundtrace.catalog.scout.learned.model import LearnedModel
from groundtrace.catalog.scout.reconcile import SOURCE_WEIGHT


def policy_thresholds(model: LearnedModel) -> dict[str, float]:
    """``slug → floor(w · θ, 3)`` for every attribute whose θ reaches the target (module docstring)."""
    w = SOURCE_WEIGHT["catalog"]
    out = {}
    for slug in sorted(model.attributes):
        theta = model.threshold(slug)
        if theta < NEVER and theta <= 1.0:
            out[slug] = math.floor(w * theta * 1000 + 1e-9) / 1000
    return out


def policy_snippet(model: LearnedModel, name: str = "learned", default: float = 0.7) -> str:
    """A complete write-policy YAML (``default`` θ for every other attribute, the defaults of
    :class:`~groundtrace.catalog.policy.WritePolicy` otherwise) with θ per learned attribute."""
    lines = [
        f"# θ per learned attribute for {model.target_precision:.0%} precision on held-out train parts",
        f"# (catalog train; calibrated θ × catalog source weight {SOURCE_WEIGHT['catalog']})",
        "# use: catalog enrich --policy FILE",
        f"name: {name}",
        f"threshold: {default}",
    ]
    thresholds = policy_thresholds(model)
    if thresholds:
        lines.append("attributes:")
        for slug, theta in thresholds.items():
            key = slug if re.fullmatch(r"[a-z0-9_]+", slug) else json.dumps(slug)
            lines += [f"  {key}:", f"    threshold: {theta}"]
    return "\n".join(lines) + "\n"
