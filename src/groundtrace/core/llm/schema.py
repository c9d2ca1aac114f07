"""Output schemas: what a structured call asks for and how its answer is validated.

A schema is given either as a pydantic model class (the normal case: ``parsed`` is an instance of it) or
as a raw JSON Schema dict (e.g. from ``groundtrace llm ask --json-schema FILE``; ``parsed`` is the
validated ``dict``). Both become an :class:`OutputSchema` with

* ``name`` — a wire-safe name (``^[A-Za-z0-9_-]{1,64}$``, as the OpenAI API requires),
* ``json_schema()`` — the schema as sent to the server and hashed into the cache key,
* ``validate(obj)`` — the parsed value, or :class:`SchemaValidationFailure` whose message is what the
  model is shown when re-asked;
* ``shared_schema`` / ``wire_schema`` / ``instruction`` / ``canonical`` — the schema, its strict form, the
  prompt-mode instruction and its canonical JSON, each computed ONCE per schema object and shared by every
  request (read-only: a caller that wants to change one takes ``json_schema()``, a fresh copy). A pydantic
  model class always maps to the same :class:`PydanticSchema` (:func:`as_output_schema`), so a run
  rewrites and serialises each schema once, not once per request (it was ~40 % of the Scout's CPU per
  SKU: a deep copy and the strict rewrite of a ~400-node schema per call).

:func:`strict_json_schema` rewrites a schema into the OpenAI "strict" subset: every object gets
``additionalProperties: false`` and lists all its properties as ``required``; ``default`` keywords are
dropped. Validation still uses the original model, so nothing accepted by the model is lost.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import threading
import weakref
from typing import Any

from pydantic import BaseModel, ValidationError

_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]+")
MAX_ERROR_CHARS = 2000


class SchemaValidationFailure(ValueError):
    """An answer did not validate; ``str(exc)`` is the error text shown to the model on a re-ask."""


class OutputSchema:
    """Base class: a named JSON Schema with a validator."""

    name: str = "output"

    def json_schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def validate(self, obj: Any) -> Any:
        raise NotImplementedError

    @functools.cached_property
    def shared_schema(self) -> dict[str, Any]:
        """``json_schema()`` computed once (read-only, shared by every request of this schema)."""
        return self.json_schema()

    @functools.cached_property
    def wire_schema(self) -> dict[str, Any]:
        """``strict_json_schema(json_schema())`` computed once: what ``json_schema`` mode sends (shared)."""
        return strict_json_schema(self.shared_schema)

    @functools.cached_property
    def canonical(self) -> str:
        """``canonical_json(json_schema())`` (sorted keys, compact) computed once: hashed into cache keys."""
        return json.dumps(self.shared_schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @functools.cached_property
    def instruction(self) -> str:
        """:func:`schema_instruction` computed once (json_object / prompt modes)."""
        return schema_instruction(self)


def _wire_name(raw: str) -> str:
    name = _NAME_BAD.sub("_", raw).strip("_") or "output"
    return name[:64]


_PYDANTIC: weakref.WeakKeyDictionary[type[BaseModel], PydanticSchema] = weakref.WeakKeyDictionary()
_PYDANTIC_LOCK = threading.Lock()


class PydanticSchema(OutputSchema):
    """Validate with ``model.model_validate``; ``parsed`` is a model instance."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        self.name = _wire_name(model.__name__)
        self._schema = model.model_json_schema()

    @classmethod
    def of(cls, model: type[BaseModel]) -> PydanticSchema:
        """The one shared :class:`PydanticSchema` of ``model`` (built on first use, kept while the class
        lives), so its schema forms are computed once per class."""
        with _PYDANTIC_LOCK:
            schema = _PYDANTIC.get(model)
            if schema is None:
                schema = _PYDANTIC[model] = cls(model)
        return schema

    def json_schema(self) -> dict[str, Any]:
        return copy.deepcopy(self._schema)

    def validate(self, obj: Any) -> BaseModel:
        try:
            return self.model.model_validate(obj)
        except ValidationError as exc:
            raise SchemaValidationFailure(_clip(str(exc))) from exc


class RawJsonSchema(OutputSchema):
    """Validate with the ``jsonschema`` library (Draft 2020-12 unless ``$schema`` says otherwise)."""

    def __init__(self, schema: dict[str, Any], name: str | None = None) -> None:
        import jsonschema  # deferred: jsonschema (+ referencing, rpds: ~60 ms), only for raw JSON schemas

        validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator_cls.check_schema(schema)  # raises jsonschema.SchemaError on a bad schema
        self._schema = copy.deepcopy(schema)
        self._validator = validator_cls(self._schema)
        self.name = _wire_name(name or str(schema.get("title") or "output"))

    def json_schema(self) -> dict[str, Any]:
        return copy.deepcopy(self._schema)

    def validate(self, obj: Any) -> Any:
        errors = sorted(self._validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
        if errors:
            lines = [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]
            raise SchemaValidationFailure(_clip(f"{len(errors)} validation error(s)\n" + "\n".join(lines)))
        return obj


def as_output_schema(schema: type[BaseModel] | dict[str, Any] | OutputSchema | None) -> OutputSchema | None:
    """Normalise the ``schema`` argument of ``complete`` (``None`` stays ``None``)."""
    if schema is None or isinstance(schema, OutputSchema):
        return schema
    if isinstance(schema, dict):
        return RawJsonSchema(schema)
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return PydanticSchema.of(schema)
    raise TypeError(f"schema must be a pydantic model class, a JSON Schema dict or None, got {schema!r}")


_MAP_KEYS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_LIST_KEYS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SUB_KEYS = frozenset({"items", "not", "additionalProperties", "if", "then", "else", "contains"})


def strict_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI strict-mode form of ``schema`` (a new dict; see module docstring).

    Only schema positions are rewritten; data keywords (``enum``, ``const``, ``examples``) are copied.
    """
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "default":
            continue
        if key in _MAP_KEYS and isinstance(value, dict):
            out[key] = {k: strict_json_schema(v) if isinstance(v, dict) else v for k, v in value.items()}
        elif key in _LIST_KEYS and isinstance(value, list):
            out[key] = [strict_json_schema(v) if isinstance(v, dict) else v for v in value]
        elif key in _SUB_KEYS and isinstance(value, dict):
            out[key] = strict_json_schema(value)
        else:
            out[key] = copy.deepcopy(value)
    if out.get("type") == "object" and isinstance(out.get("properties"), dict):
        out["additionalProperties"] = False
        out["required"] = list(out["properties"])
    return out


def schema_instruction(schema: OutputSchema) -> str:
    """System-prompt text used when the server cannot enforce the schema (json_object / prompt modes)."""
    return (
        "Answer with one JSON object only (no prose, no code fences) that validates against this JSON "
        f"Schema:\n{json.dumps(schema.shared_schema, sort_keys=True)}"
    )


def _clip(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 15] + " ... (clipped)"
