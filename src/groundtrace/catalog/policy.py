"""The write-policy stage: (candidate, verdict, template flag) → WRITE / BLOCK / REVIEW, as configuration.

Decoupled from the Judge (seed §3.3): publication rules change by editing a YAML file
(``data/default_policy.yaml``; ``--policy FILE``) or by handing a :class:`WritePolicy` in memory
(``EnrichConfig(policy=WritePolicy(threshold=0.9))``), never the Judge. :func:`resolve_policy` turns any
of these into the run's policy. Routing, in order:

0. a ``conflict`` candidate that carries evidence (the catalog record and a GTIN-matched source, or
   equal-priority sources, name different values; reconcile rule 5) → ``conflict`` (default REVIEW): a
   person sees every side instead of the run writing one or blocking both;
1. abstention (status ≠ extracted or no value) → ``abstention`` (default BLOCK, reason "no value");
1b. a value lent by a sibling-variant page (note flag ``identity.FLAG_SIBLING_VARIANT``) → REVIEW, or
   BLOCK on a FAIL verdict — under every policy, never WRITE (it is another variant's page);
2. safety-critical attribute (template flag, or ``attributes.<slug>.safety_critical``):
   FAIL → ``on_fail`` (BLOCK); verdict ∈ ``write_verdicts`` (PASS) with ``quote_verified`` (when
   required) and confidence ≥ θ → WRITE; anything else → ``otherwise`` (REVIEW);
3. FAIL → ``verdicts.FAIL`` (BLOCK);
4. confidence < θ → ``below_threshold`` (BLOCK);
5. otherwise ``verdicts[verdict]`` (PASS, UNVERIFIED → WRITE; UNCERTAIN → REVIEW).

θ is ``threshold`` (0.7), overridden by ``categories.<category>.threshold`` and then
``attributes.<slug>.threshold``.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundtrace.catalog.identity import FLAG_SIBLING_VARIANT
from groundtrace.catalog.model import (
    Action,
    AttributeSpec,
    Candidate,
    CandidateStatus,
    Decision,
    Verdict,
    VerdictLabel,
)
from groundtrace.core.files.validation import validation_message
from groundtrace.core.files.yaml_loader import YamlError, load_yaml_model


class PolicyError(ValueError):
    """A policy file that cannot be read or does not validate (message names the file)."""


class _Cfg(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SafetyRules(_Cfg):
    write_verdicts: list[VerdictLabel] = Field(default_factory=lambda: [VerdictLabel.PASS])
    require_quote_verified: bool = True
    otherwise: Action = Action.REVIEW
    on_fail: Action = Action.BLOCK


class Override(_Cfg):
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    safety_critical: bool | None = None


def _default_verdicts() -> dict[VerdictLabel, Action]:
    return {
        VerdictLabel.PASS: Action.WRITE,
        VerdictLabel.UNVERIFIED: Action.WRITE,
        VerdictLabel.UNCERTAIN: Action.REVIEW,
        VerdictLabel.FAIL: Action.BLOCK,
    }


class WritePolicy(_Cfg):
    """A write policy (the YAML file's content; see module docstring for the routing)."""

    name: str = "default"
    threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    verdicts: dict[VerdictLabel, Action] = Field(default_factory=_default_verdicts)
    below_threshold: Action = Action.BLOCK
    abstention: Action = Action.BLOCK
    conflict: Action = Field(
        default=Action.REVIEW, description="A conflict candidate with both sides' evidence (never WRITE)."
    )
    safety_critical: SafetyRules = Field(default_factory=SafetyRules)
    attributes: dict[str, Override] = Field(default_factory=dict)
    categories: dict[str, Override] = Field(default_factory=dict)

    def model_post_init(self, _context: object) -> None:
        missing = [v.value for v in VerdictLabel if v not in self.verdicts]
        if missing:
            raise ValueError(f"verdicts must map every verdict; missing {', '.join(missing)}")
        if self.conflict == Action.WRITE:
            raise ValueError("conflict must be REVIEW or BLOCK: a conflict candidate has no value to write")

    def theta(self, category: str, attribute: str) -> float:
        """θ for one (category, attribute): attribute override > category override > ``threshold``."""
        for scope, key in ((self.attributes, attribute), (self.categories, category)):
            o = scope.get(key)
            if o is not None and o.threshold is not None:
                return o.threshold
        return self.threshold

    def is_safety_critical(self, spec: AttributeSpec | None, attribute: str) -> bool:
        o = self.attributes.get(attribute)
        if o is not None and o.safety_critical is not None:
            return o.safety_critical
        return bool(spec is not None and spec.safety_critical)

    def decide(
        self, candidate: Candidate, verdict: Verdict, spec: AttributeSpec | None = None, category: str = ""
    ) -> Decision:
        """Route one candidate (module docstring); ``Decision.reason`` says which rule fired."""
        theta = self.theta(category, candidate.attribute)

        def out(action: Action, reason: str) -> Decision:
            return Decision(
                sku_id=candidate.sku_id,
                attribute=candidate.attribute,
                action=action,
                reason=reason,
                policy=self.name,
            )

        label = verdict.verdict
        conf = candidate.confidence
        if candidate.status == CandidateStatus.CONFLICT and candidate.evidence:
            return out(self.conflict, f"sources disagree ({len(candidate.evidence)} sides): {candidate.note}")
        if candidate.status != CandidateStatus.EXTRACTED or candidate.value is None:
            return out(self.abstention, f"no value ({candidate.status.value})")
        if FLAG_SIBLING_VARIANT in candidate.note:
            if label == VerdictLabel.FAIL:
                return out(Action.BLOCK, f"value from a sibling-variant page, verdict FAIL/{_ft(verdict)}")
            return out(Action.REVIEW, "value from a sibling-variant page of the same line: a person confirms")
        if self.is_safety_critical(spec, candidate.attribute):
            rules = self.safety_critical
            if label == VerdictLabel.FAIL:
                return out(rules.on_fail, f"safety-critical, verdict FAIL/{_ft(verdict)}")
            ok_verdict = label in rules.write_verdicts
            ok_quote = verdict.quote_verified or not rules.require_quote_verified
            if ok_verdict and ok_quote and conf >= theta:
                return out(
                    Action.WRITE,
                    f"safety-critical, {label.value} with verified quote, "
                    f"confidence {conf:.2f} >= {theta:.2f}",
                )
            why = (
                "verdict " + label.value + " is not " + "/".join(v.value for v in rules.write_verdicts)
                if not ok_verdict
                else "quote not verified"
                if not ok_quote
                else f"confidence {conf:.2f} < {theta:.2f}"
            )
            return out(rules.otherwise, f"safety-critical: {why}")
        if label == VerdictLabel.FAIL:
            return out(self.verdicts[label], f"verdict FAIL/{_ft(verdict)}")
        if conf < theta:
            return out(self.below_threshold, f"confidence {conf:.2f} < {theta:.2f}")
        return out(self.verdicts[label], f"verdict {label.value}, confidence {conf:.2f} >= {theta:.2f}")


def _ft(verdict: Verdict) -> str:
    return verdict.failure_type.value if verdict.failure_type else "unspecified"


BUILTIN_POLICIES = ("default", "cautious")  # data/<name>_policy.yaml


def builtin_policy_path(name: str) -> Path:
    """The bundled policy file of a built-in policy name (``default``, ``cautious``)."""
    if name not in BUILTIN_POLICIES:
        raise PolicyError(f"unknown built-in policy {name!r} (built-in: {', '.join(BUILTIN_POLICIES)})")
    return Path(str(resources.files("groundtrace.catalog") / "data" / f"{name}_policy.yaml"))


def default_policy_path() -> Path:
    return builtin_policy_path("default")


def load_policy(path: str | Path | None = None) -> WritePolicy:
    """The policy in ``path`` — a YAML file, or a built-in name (``default``, ``cautious``) when no such
    file exists; ``None`` is ``default``. Errors name the file."""
    file = Path(path) if path is not None else default_policy_path()
    if path is not None and not file.exists() and str(path) in BUILTIN_POLICIES:
        file = builtin_policy_path(str(path))
    try:
        return load_yaml_model(file, WritePolicy)
    except YamlError as exc:
        raise PolicyError(str(exc)) from None


PolicySpec = WritePolicy | Mapping[str, Any] | str | Path | None


def resolve_policy(spec: PolicySpec = None) -> WritePolicy:
    """The run's policy from ``spec``: a :class:`WritePolicy` as it is (in memory, no file), a mapping
    validated as one (``PolicyError`` naming the field), else :func:`load_policy` (a YAML file, a built-in
    name, ``None`` = ``default``)."""
    if isinstance(spec, WritePolicy):
        return spec
    if isinstance(spec, Mapping):
        try:
            return WritePolicy.model_validate(dict(spec))
        except ValidationError as exc:
            message = validation_message(exc, model=WritePolicy)
            raise PolicyError(f"in-memory write policy: {message}") from None
    return load_policy(spec)
