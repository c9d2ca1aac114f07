"""Token prices and the per-run usage ledger.

Cost of one answered request::

    cost_usd = prompt_tokens * input_usd_per_1M / 1e6 + completion_tokens * output_usd_per_1M / 1e6

Prices come from a YAML data file (``data/prices.yaml``; override with ``GROUNDTRACE_LLM_PRICES``):
a list of ``{pattern, input, output}`` rules, shell-style globs matched case-insensitively against the
model name, first match wins. A model no rule matches costs 0 and is *flagged*: the ledger lists it in
``unpriced_models`` so a report can say its cost is unknown rather than free.
"""

from __future__ import annotations

import fnmatch
import os
import threading
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from groundtrace.core.files.validation import validation_errors
from groundtrace.core.files.yaml_loader import YamlError, read_yaml
from groundtrace.core.llm.base import Usage

DEFAULT_PRICES_PATH = Path(__file__).with_name("data") / "prices.yaml"
PRICES_ENV = "GROUNDTRACE_LLM_PRICES"


class PriceRule(BaseModel):
    """USD per 1M tokens for model names matching ``pattern``."""

    pattern: str = Field(min_length=1)
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    note: str = ""

    def matches(self, model: str) -> bool:
        return fnmatch.fnmatchcase(model.lower(), self.pattern.lower())


@dataclass(frozen=True)
class PriceTable:
    """Ordered price rules; ``errors`` lists rules skipped at load time (``file:line: message``)."""

    rules: tuple[PriceRule, ...]
    source: str = "<memory>"
    errors: tuple[str, ...] = ()

    @classmethod
    def from_rules(cls, rules: Iterable[PriceRule | dict[str, Any]]) -> PriceTable:
        return cls(tuple(r if isinstance(r, PriceRule) else PriceRule.model_validate(r) for r in rules))

    @classmethod
    def from_file(cls, path: str | Path) -> PriceTable:
        """Load a YAML price file (``core.files.yaml_loader``); bad rules are skipped with a ``file:line``
        warning naming the offending key, the rest load."""
        doc = read_yaml(path)
        entries = doc.data.get("prices") if isinstance(doc.data, dict) else None
        if not isinstance(entries, list):
            raise YamlError.at(str(path), 1, "expected a mapping with a 'prices' list")
        rules: list[PriceRule] = []
        errors: list[str] = []
        for index, entry in enumerate(entries):
            try:
                rules.append(PriceRule.model_validate(entry))
            except ValidationError as exc:
                first = validation_errors(
                    exc, file=str(path), line=doc.line_of, model=PriceRule, limit=1, prefix=("prices", index)
                )
                errors.append(str(first[0]))
        for message in errors:
            warnings.warn(f"skipped price rule: {message}", stacklevel=2)
        return cls(tuple(rules), source=str(path), errors=tuple(errors))

    @classmethod
    def default(cls) -> PriceTable:
        """``$GROUNDTRACE_LLM_PRICES`` if set, else the bundled ``data/prices.yaml``."""
        return cls.from_file(os.environ.get(PRICES_ENV) or DEFAULT_PRICES_PATH)

    def lookup(self, model: str) -> PriceRule | None:
        return next((rule for rule in self.rules if rule.matches(model)), None)

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Cost in USD, or ``None`` when the model has no price (see module docstring)."""
        rule = self.lookup(model)
        if rule is None:
            return None
        return prompt_tokens * rule.input / 1e6 + completion_tokens * rule.output / 1e6


class Ledger:
    """Thread-safe running sum of :class:`Usage`, in total and per model, for one run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = Usage()
        self._by_model: dict[str, Usage] = {}
        self._unpriced: set[str] = set()

    def record(self, model: str, usage: Usage, *, priced: bool = True) -> None:
        with self._lock:
            self._total = self._total + usage
            self._by_model[model] = self._by_model.get(model, Usage()) + usage
            if not priced:
                self._unpriced.add(model)

    def total(self) -> Usage:
        with self._lock:
            return self._total.model_copy()

    def by_model(self) -> dict[str, Usage]:
        with self._lock:
            return {name: usage.model_copy() for name, usage in self._by_model.items()}

    @property
    def unpriced_models(self) -> set[str]:
        """Models that made paid calls but have no price rule (their cost is counted as 0)."""
        with self._lock:
            return set(self._unpriced)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary for run metadata."""
        return {
            "total": self.total().model_dump(),
            "by_model": {name: u.model_dump() for name, u in sorted(self.by_model().items())},
            "unpriced_models": sorted(self.unpriced_models),
        }
