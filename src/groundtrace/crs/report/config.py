"""The experiment file of ``crs run --config`` / ``crs leaderboard --config``: one file, one leaderboard.

Read with the repository's one YAML reader (:mod:`groundtrace.core.files.yaml_loader`: safe loader, no
anchors or aliases, duplicate keys refused) and validated into :class:`RunConfig` (``extra="forbid"``):
every problem is ``file:line: field.path: message`` at the line of the offending key, an unknown key reads
``unknown key (did you mean 'x'?)`` and an unknown system or metric name gets the registry's did-you-mean
suggestions. Example (``docs/crs-evaluation.md`` documents each key)::

    name: demo-leaderboard           # MLflow experiment and report title (default: the file's stem)
    dataset: ds                      # relative paths are read from this file's folder
    kb: null                         # KB file, demo or demo:SEED (default: from the dataset manifest)
    out: results                     # runs/ and the report (CLI --out wins)
    splits: [test]
    settings: [closed, open]
    seeds: [0, 1, 2]                 # systems that take a seed run once per seed; the others once
    metrics: [recall@1, mrr, cgs]    # default: the 27 of `crs metrics`
    systems:
      - random                       # a name, module:Class, path/to/file.py:Class or 'all-offline'
      - system: trace-hybrid
        label: trace-hybrid (no dense)
        args: {dense: false}
      - system: http://127.0.0.1:8000/respond
        label: my-crs                # required for an HTTP system: reports name runs by label
        args: {timeout_s: 30}
    report: {resamples: 1000, seed: 0, sort_by: recall@1, baseline: tfidf}
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from groundtrace.core.files.yaml_loader import YamlDocument, YamlError, read_yaml, validate_document
from groundtrace.crs.metrics import parse_metric, parse_metrics
from groundtrace.crs.systems import SYSTEMS
from groundtrace.crs.systems.factory import is_class_spec
from groundtrace.crs.systems.http import is_url

Scalar = str | int | float | bool | None
ALL_OFFLINE = "all-offline"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SystemEntry(_Strict):
    """One system of the experiment: what ``--system``, ``--label`` and ``--system-arg`` say on the CLI."""

    system: str = Field(min_length=1)
    label: str | None = Field(default=None, min_length=1)
    args: dict[str, Scalar] = Field(default_factory=dict)

    @field_validator("system")
    @classmethod
    def _known(cls, value: str) -> str:
        """A registered name must exist (did-you-mean); URLs and ``module:Class`` are checked when built."""
        if value == ALL_OFFLINE or is_url(value) or (value not in SYSTEMS and is_class_spec(value)):
            return value
        try:
            return SYSTEMS.canonical(value)
        except LookupError as exc:  # UnknownNameError: its message carries the suggestions
            raise ValueError(str(exc).strip("'\"")) from None

    @model_validator(mode="after")
    def _http_needs_label(self) -> SystemEntry:
        if is_url(self.system) and self.label is None:
            raise ValueError("an HTTP system needs a label (reports and MLflow name runs by it, not the URL)")
        if self.system == ALL_OFFLINE and (self.label is not None or self.args):
            raise ValueError(f"{ALL_OFFLINE!r} takes no label or args (list the systems one by one)")
        return self


class ReportOptions(_Strict):
    """How the report of each split is built (``crs report`` options)."""

    resamples: int = Field(default=1000, ge=10)
    seed: int = 0
    html_turns: int = Field(default=40, ge=0)
    sort_by: str | None = None
    baseline: str | None = None
    all_pairs: bool = False
    test_bounds: bool = False
    dialogue_pages: int | Literal["all"] = Field(default=50)

    @field_validator("sort_by")
    @classmethod
    def _known_metric(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return str(parse_metric(value))
        except (LookupError, ValueError) as exc:
            raise ValueError(str(exc).strip("'\"")) from None


class RunConfig(_Strict):
    """A whole experiment: systems × settings × splits × seeds on one dataset, then one report per split."""

    name: str | None = Field(default=None, min_length=1)
    dataset: str = Field(min_length=1)
    kb: str | None = None
    out: str | None = None
    splits: list[Literal["train", "validation", "test", "all"]] = Field(default=["test"], min_length=1)
    settings: list[Literal["closed", "open"]] = Field(default=["closed", "open"], min_length=1)
    seeds: list[int] = Field(default=[0], min_length=1)
    metrics: list[str] | None = None
    nli: str | None = None
    workers: int = Field(default=1, ge=1)
    limit: int | None = Field(default=None, ge=1)
    max_failed_share: float = Field(default=0.05, ge=0.0, le=1.0)
    retry_errors: bool = False
    systems: list[SystemEntry] = Field(min_length=1)
    report: ReportOptions = Field(default_factory=ReportOptions)

    @field_validator("systems", mode="before")
    @classmethod
    def _bare_names(cls, value: Any) -> Any:
        """``- random`` is short for ``- system: random``."""
        if isinstance(value, list):
            return [{"system": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("splits", "settings", "metrics", mode="before")
    @classmethod
    def _comma_lists(cls, value: Any) -> Any:
        """``settings: closed, open`` is read like ``[closed, open]``."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        try:
            return [str(m) for m in parse_metrics(value)]
        except (LookupError, ValueError) as exc:
            raise ValueError(str(exc).strip("'\"")) from None

    @field_validator("splits", "settings", "seeds")
    @classmethod
    def _no_repeats(cls, value: list[Any]) -> list[Any]:
        repeated = sorted({str(v) for v in value if value.count(v) > 1})
        if repeated:
            raise ValueError(f"listed twice: {', '.join(repeated)}")
        return value


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config with where it came from (for paths, line numbers and ``run.json``)."""

    path: Path
    config: RunConfig
    document: YamlDocument
    sha256: str

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def name(self) -> str:
        return self.config.name or self.path.stem

    def resolve(self, value: str) -> Path:
        """A path of the config, relative to the config file's folder."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.folder / path

    def line_of(self, *loc: int | str) -> int:
        return self.document.line_of(loc)

    def error(self, message: str, *loc: int | str) -> YamlError:
        """A :class:`YamlError` at the line of ``loc`` (e.g. ``("systems", 2)``)."""
        where = ".".join(str(p) for p in loc)
        return YamlError.at(str(self.path), self.line_of(*loc), f"{where}: {message}" if where else message)

    def record(self) -> dict[str, Any]:
        """What ``run.json["run_config"]`` keeps: file, sha256, name and the validated content."""
        return {
            "file": str(self.path.resolve()),
            "sha256": self.sha256,
            "name": self.name,
            "content": self.config.model_dump(mode="json"),
        }


def load_run_config(path: Path | str) -> LoadedConfig:
    """Read and validate an experiment file; :class:`YamlError` (a ``ValueError``) with ``file:line``
    messages for every problem found (up to 5)."""
    path = Path(path)
    document = read_yaml(path)
    config = validate_document(document, RunConfig, limit=5)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    loaded = LoadedConfig(path, config, document, digest)
    labels: dict[str, int] = {}
    for i, entry in enumerate(config.systems):
        label = entry.label or entry.system
        if label in labels:
            raise loaded.error(f"label {label!r} used twice (first: systems.{labels[label]})", "systems", i)
        labels[label] = i
    return loaded
