"""Metric spec objects, the ``METRICS`` registry and ``parse_metric``.

In the ir_measures style, a metric is a small immutable spec: a :class:`MetricFamily` (name, axis,
level, aggregation, direction, default for a missing answer, formula docstring, kernel) is registered
once under its name and aliases; ``parse_metric("R@3")`` binds its parameter and returns a
:class:`Metric` whose ``str`` is the canonical ``"recall@3"``; equality and hashing use that string, so
metrics are dictionary keys. Computation lives in the kernels (``accuracy``, ``grounding``,
``recovery``, ``practicality``) and in :mod:`groundtrace.crs.evaluation.score`.

Adding a metric touches one file: the module that defines its kernel registers the family (with
``defaults=`` when it belongs to the default set); the scorer calls ``family.kernel`` for whatever is
asked, and :data:`~groundtrace.crs.metrics.defaults.DEFAULT_METRICS` is read off the registry.

Aggregations
------------
* ``turn-mean`` — mean over recommendation turns of the per-turn value (``None`` = not applicable,
  left out of the mean and counted as such);
* ``dialogue-mean`` — mean over dialogues of the per-dialogue value;
* ``pooled`` — the kernel returns ``(numerator, denominator)`` per turn; the run value is
  Σ numerator / Σ denominator (a missing answer contributes ``(default, 1)``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from groundtrace.core.registry import Registry

Axis = Literal["accuracy", "grounding", "recovery", "practicality"]
Level = Literal["turn", "dialogue"]
Aggregation = Literal["turn-mean", "dialogue-mean", "pooled"]
SettingScope = Literal["closed", "open", "any"]


class MetricParseError(ValueError):
    """A metric string cannot be parsed (unknown name, bad or missing parameter)."""


@dataclass(frozen=True, eq=False)
class MetricFamily:
    """A registered metric, possibly parametrised by a cutoff ``k`` (``recall`` → ``recall@3``).

    ``kernel(metric, ctx)`` computes one value: ``ctx`` is a ``TurnContext`` for turn-level metrics,
    a ``DialogueContext`` for dialogue-level ones. It returns a float, ``None`` (not applicable) or,
    for pooled metrics, a ``(numerator, denominator)`` pair. Turn kernels only see scorable turns; a
    turn with a missing answer takes ``default`` unless ``applies(ctx)`` (a test on the gold labels
    only) says the metric does not apply to that turn at all.
    """

    name: str
    axis: Axis
    level: Level
    aggregation: Aggregation
    higher_is_better: bool
    default: float | None
    formula: str
    kernel: Callable[..., Any]
    takes_k: bool = False
    setting: SettingScope = "any"
    requires: str | None = None
    value_range: tuple[float, float | None] = (0.0, 1.0)
    default_note: str = ""
    applies: Callable[[Any], bool] | None = None
    #: The members of this family in :data:`~groundtrace.crs.metrics.defaults.DEFAULT_METRICS`: cutoffs
    #: for a family that takes ``k`` (e.g. ``(1, 3, 5)``), ``(None,)`` for one without, ``()`` for none.
    defaults: tuple[int | None, ...] = ()
    #: Definition version, recorded in ``scores.json`` (``metric_versions``): bumped whenever the same
    #: answers may score differently, so numbers of different versions are never compared unknowingly.
    version: int = 1

    def bind(self, k: int | None = None) -> Metric:
        """The concrete metric (``k`` is required exactly when the family takes one)."""
        if self.takes_k and k is None:
            raise MetricParseError(f"metric {self.name!r} needs a cutoff, e.g. '{self.name}@3'")
        if not self.takes_k and k is not None:
            raise MetricParseError(f"metric {self.name!r} takes no cutoff (got '@{k}')")
        if k is not None and k < 1:
            raise MetricParseError(f"cutoff of {self.name!r} must be >= 1 (got {k})")
        return Metric(self, k)


@dataclass(frozen=True, eq=False)
class Metric:
    """A concrete metric: a family plus its parameters. ``str(m)`` is canonical; eq/hash use it."""

    family: MetricFamily
    k: int | None = None
    _key: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        key = self.family.name if self.k is None else f"{self.family.name}@{self.k}"
        object.__setattr__(self, "_key", key)

    # -- identity ----------------------------------------------------------------------------------
    def __str__(self) -> str:
        return self._key

    def __repr__(self) -> str:
        return self._key

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Metric):
            return self._key == other._key
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key)

    # -- spec passthrough --------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.family.name

    @property
    def params(self) -> dict[str, int]:
        return {} if self.k is None else {"k": self.k}

    @property
    def axis(self) -> Axis:
        return self.family.axis

    @property
    def level(self) -> Level:
        return self.family.level

    @property
    def aggregation(self) -> Aggregation:
        return self.family.aggregation

    @property
    def higher_is_better(self) -> bool:
        return self.family.higher_is_better

    @property
    def default(self) -> float | None:
        """Value of a turn with a missing answer (None: dialogue metric, see ``default_note``)."""
        return self.family.default

    @property
    def setting(self) -> SettingScope:
        return self.family.setting

    @property
    def requires(self) -> str | None:
        return self.family.requires

    @property
    def formula(self) -> str:
        """The docstring of the metric: its exact formula and conventions."""
        return self.family.formula

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description (name, params, axis, direction, aggregation, default, formula)."""
        return {
            "metric": str(self),
            "name": self.name,
            "params": self.params,
            "axis": self.axis,
            "level": self.level,
            "aggregation": self.aggregation,
            "higher_is_better": self.higher_is_better,
            "default": self.default,
            "default_note": self.family.default_note,
            "setting": self.setting,
            "requires": self.requires,
            "formula": self.family.formula,
            "version": self.family.version,
        }


METRICS: Registry[MetricFamily] = Registry("metric", base=MetricFamily)

_METRIC_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_\-]*)\s*(?:@\s*(\S+))?\s*$")


def register(family: MetricFamily, aliases: tuple[str, ...] = ()) -> MetricFamily:
    """Register ``family`` in :data:`METRICS` under its name and ``aliases``."""
    METRICS.add(
        family.name, family, aliases=aliases, axis=family.axis, description=family.formula.split("\n")[0]
    )
    return family


def parse_metric(text: str | Metric) -> Metric:
    """``"recall@3"``, ``"R@3"``, ``"mrr"``, ``"nDCG@3"``, ``"cgs"`` → :class:`Metric` (round-trips via
    ``str``)."""
    if isinstance(text, Metric):
        return text
    m = _METRIC_RE.match(text)
    if not m:
        raise MetricParseError(f"cannot parse metric {text!r}: expected 'name' or 'name@k'")
    name, raw_k = m.group(1), m.group(2)
    family = METRICS.get(name)  # UnknownNameError carries did-you-mean suggestions
    k: int | None = None
    if raw_k is not None:
        if not raw_k.isdigit():
            raise MetricParseError(
                f"cannot parse metric {text!r}: cutoff {raw_k!r} is not a positive integer"
            )
        k = int(raw_k)
    return family.bind(k)


def parse_metrics(spec: str | Metric | Iterable[str | Metric]) -> list[Metric]:
    """``"recall@1, cgs,mrr"`` (comma-separated) or an iterable of names/metrics → metrics, repeats dropped.

    Every name goes through :func:`parse_metric` (aliases, did-you-mean errors for unknown names); an
    empty list is refused.
    """
    items: Iterable[str | Metric]
    if isinstance(spec, Metric):
        items = [spec]
    elif isinstance(spec, str):
        items = [part for part in spec.split(",") if part.strip()]
    else:
        items = spec
    out = list(dict.fromkeys(parse_metric(m) for m in items))
    if not out:
        raise MetricParseError(f"no metric named in {spec!r}")
    return out
