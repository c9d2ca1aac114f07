"""The one YAML reader: safe by construction, every error ``file:line: message``, validation into pydantic.

Contract:

* :func:`parse_yaml(text, name) <parse_yaml>` → :class:`YamlDocument` (``.data``: plain Python values;
  ``.line_of(loc)``: the 1-based line of the key or item at a pydantic ``loc``, or of the nearest
  enclosing node that exists — a missing field points at its mapping). :func:`read_yaml(path)
  <read_yaml>` does the same for a file.
* Refused, as a :class:`YamlError` naming ``file:line``: YAML that does not parse; a file over
  ``max_bytes`` (default :data:`MAX_YAML_BYTES`, checked before reading); a file that is not UTF-8;
  **anchors and aliases** (``&a`` / ``*a`` — no alias bombs: a few lines cannot expand to gigabytes);
  **duplicate keys** in one mapping (the error names both lines; PyYAML would silently keep the last);
  nesting deeper than ``max_depth`` (default :data:`MAX_YAML_DEPTH`; no ``RecursionError``); more than
  one document. Only the safe tags build values (``yaml.SafeLoader``'s constructor: no Python objects).
* :func:`load_yaml_model(path, Model) <load_yaml_model>` — read + validate: the first ``limit`` pydantic
  errors are reported, each as ``file:line: field.path: message`` with the line of the offending key;
  unknown keys of ``extra="forbid"`` models read ``unknown key (did you mean 'x'?)``
  (:mod:`groundtrace.core.files.validation`). An empty file validates as ``{}`` (``empty``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from groundtrace.core.files.errors import LineError
from groundtrace.core.files.validation import validation_errors

M = TypeVar("M", bound=BaseModel)

#: largest YAML file read (bytes): config, templates and lexicons are a few KB
MAX_YAML_BYTES = 1 << 20
#: deepest nesting of mappings/sequences accepted
MAX_YAML_DEPTH = 64


class YamlError(ValueError):
    """A YAML file that cannot be used; ``errors`` holds one :class:`LineError` per problem and
    ``str()`` is their ``file:line: message`` lines joined by newlines."""

    def __init__(self, errors: Sequence[LineError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))

    @classmethod
    def at(cls, file: str, line: int, message: str) -> YamlError:
        return cls([LineError(file=file, line=line, message=message)])


def _line(node_or_mark: Any) -> int:
    mark = getattr(node_or_mark, "start_mark", node_or_mark)
    return getattr(mark, "line", 0) + 1


class _StrictLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses anchors, aliases, duplicate keys and deep nesting."""

    max_depth = MAX_YAML_DEPTH
    source_name = "<yaml>"

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise YamlError.at(self.source_name, _line(event), f"YAML alias *{event.anchor} is not allowed")
        if getattr(event, "anchor", None):
            raise YamlError.at(self.source_name, _line(event), f"YAML anchor &{event.anchor} is not allowed")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            self._depth += 1
            if self._depth > self.max_depth:
                raise YamlError.at(
                    self.source_name, _line(event), f"YAML nested deeper than {self.max_depth} levels"
                )
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
        return super().compose_node(parent, index)


def _check_duplicates(node: yaml.Node, name: str, loader: yaml.SafeLoader) -> None:
    """Raise :class:`YamlError` on the first mapping key listed twice (iterative: no recursion)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, value_node in current.value:
                key = (
                    loader.construct_object(key_node, deep=True)
                    if isinstance(key_node, yaml.ScalarNode)
                    else None
                )
                try:
                    first = seen.get(key) if key is not None else None
                except TypeError:  # an unhashable key: PyYAML's constructor reports it
                    first = None
                if first is not None:
                    raise YamlError.at(
                        name, _line(key_node), f"duplicate key {key!r} (first at line {first})"
                    )
                if key is not None:
                    seen[key] = _line(key_node)
                stack.append(value_node)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML document: its ``data``, its ``name`` (file) and the node tree for line lookups."""

    name: str
    data: Any
    root: yaml.Node | None

    def line_of(self, loc: Sequence[int | str]) -> int:
        """Line of the key (mapping) or item (sequence) at ``loc``; for a path that stops early, the line
        of the deepest node that exists (1 for an empty document)."""
        node = self.root
        line = _line(node) if node is not None else 1
        for step in loc:
            if isinstance(node, yaml.MappingNode):
                found = next(
                    (
                        (k, v)
                        for k, v in node.value
                        if isinstance(k, yaml.ScalarNode) and k.value == str(step)
                    ),
                    None,
                )
                if found is None:
                    return line
                line, node = _line(found[0]), found[1]
            elif (
                isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value)
            ):
                node = node.value[step]
                line = _line(node)
            else:
                return line
        return line


def parse_yaml(text: str, name: str = "<yaml>", *, max_depth: int = MAX_YAML_DEPTH) -> YamlDocument:
    """Parse one YAML document safely (see the module docstring); raise :class:`YamlError`."""
    try:  # the reader checks the characters already when the loader is built (control characters)
        loader = _StrictLoader(text)
    except yaml.YAMLError as exc:
        raise YamlError.at(name, 1, f"invalid YAML: {' '.join(str(exc).split())}") from None
    loader.source_name = name
    loader.max_depth = max_depth
    try:
        root = loader.get_single_node()
        if root is None:
            return YamlDocument(name=name, data=None, root=None)
        _check_duplicates(root, name, loader)
        data = loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise YamlError.at(name, _line(mark) if mark else 1, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise YamlError.at(name, 1, f"invalid YAML: {' '.join(str(exc).split())}") from None
    finally:
        loader.dispose()
    return YamlDocument(name=name, data=data, root=root)


def read_yaml_text(path: str | os.PathLike[str], *, max_bytes: int = MAX_YAML_BYTES) -> str:
    """The UTF-8 text of ``path``; :class:`YamlError` when missing, unreadable, larger than ``max_bytes``
    (checked before reading) or not UTF-8 (naming the line)."""
    name = str(path)
    try:
        size = os.stat(path).st_size
        if size > max_bytes:
            raise YamlError.at(name, 1, f"file is {size} bytes, over the {max_bytes}-byte limit for YAML")
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise YamlError.at(name, 0, "file not found") from None
    except OSError as exc:
        raise YamlError.at(name, 0, f"cannot read ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:  # grew between stat and read
        raise YamlError.at(name, 1, f"file is over the {max_bytes}-byte limit for YAML")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise YamlError.at(name, line, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})") from None


def read_yaml(
    path: str | os.PathLike[str], *, max_bytes: int = MAX_YAML_BYTES, max_depth: int = MAX_YAML_DEPTH
) -> YamlDocument:
    """:func:`parse_yaml` of the file at ``path`` (:func:`read_yaml_text` limits)."""
    return parse_yaml(read_yaml_text(path, max_bytes=max_bytes), str(path), max_depth=max_depth)


def validate_document(
    doc: YamlDocument,
    model: type[M],
    *,
    empty: Any = None,
    limit: int = 3,
) -> M:
    """Validate ``doc.data`` into ``model``; :class:`YamlError` with the first ``limit`` errors, each at the
    line of its key. ``empty`` replaces an empty document (e.g. ``{}``); otherwise an empty or non-mapping
    document is an error ("expected a mapping")."""
    data = doc.data if doc.data is not None or empty is None else empty
    if not isinstance(data, dict):
        got = "an empty document" if data is None else f"a {type(data).__name__}"
        raise YamlError.at(doc.name, doc.line_of(()), f"expected a mapping, got {got}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise YamlError(
            validation_errors(exc, file=doc.name, line=doc.line_of, model=model, limit=limit)
        ) from None


def load_yaml_model(
    path: str | os.PathLike[str],
    model: type[M],
    *,
    empty: Any = None,
    limit: int = 3,
    max_bytes: int = MAX_YAML_BYTES,
) -> M:
    """Read ``path`` (:func:`read_yaml`) and validate it into ``model`` (:func:`validate_document`)."""
    return validate_document(read_yaml(path, max_bytes=max_bytes), model, empty=empty, limit=limit)


def line_lookup(doc: YamlDocument, prefix: Sequence[int | str] = ()) -> Callable[[Sequence[int | str]], int]:
    """``loc -> line`` for errors of a value validated from the node at ``prefix`` of ``doc``."""
    return lambda loc: doc.line_of((*prefix, *loc))
