"""The fast dataset reader for evaluation: dataset lines → :class:`~.lean.LeanDialogue`, with the exact
outcome of the pydantic reader (``crs.dataset.files.read_dataset``).

Each line takes one of two paths:

* **fast** — ``msgspec`` decodes the line into typed wire structs of the written form (format 2.0) of
  :class:`~groundtrace.crs.schema.Dialogue`, generated from its JSON Schema (:func:`wire_structs`: field
  names and order, types, ``Literal`` values, numeric bounds, unknown keys refused), and the line is
  accepted only when re-encoding those structs gives the line back byte for byte, its ``schema_version``
  is the current one, and the checks of the schema's validators hold: each constraint ``value`` is the
  canonical text of its ``value_type`` (``encode_value(decode_value(value, value_type))`` gives it back),
  ``review_refs`` tags and ``features`` names are distinct, and no feature is a float of magnitude >= 1e16
  (pydantic writes ``1e+16`` where msgspec writes ``1e16``, the only difference between the two
  encoders). Such a line is the canonical serialisation of a valid dialogue, so the pydantic reader would
  accept it with the same values, and it *is* its canonical line (the dataset hash hashes it as is).
* **reference** — any other line (not canonical, an older format version, invalid, not UTF-8 ...) goes
  through the pydantic path of ``read_dataset``: the same ``file:line: message`` for a bad line, the same
  values (converted with :func:`~.lean.lean_dialogue`) and the canonical line for a good one.

A fast-path struct can therefore only accept what pydantic accepts *if the wire structs are no looser than
the schema*. They are generated from it, so a field added to a model is read with no edit here; the
generator refuses a JSON Schema keyword it does not translate (a ``pattern``, a length bound ...), and a
validator that the JSON Schema cannot express must be mirrored in :func:`_lean_from_wire` (as the three
above are). ``tests/crs/dataset/test_lean_reader.py`` checks the generated structs against the schema
(fields, order, defaults, bounds) and by mutating real lines; ``tests/crs/dataset/test_schema_sync.py``
checks the lean records against the models, field by field (``lean.LEAN_OF``).

Duplicates (a ``dialogue_id`` seen in this or an earlier split file is skipped with the reference
message), error order and the manifest follow ``read_dataset``; :func:`read_lean` applies the split
selection of ``loading.load_split`` and computes the dataset hash of the selected dialogues while reading.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import msgspec
from pydantic import ValidationError

from groundtrace.core.files.errors import LineError
from groundtrace.core.files.jsonl import MAX_LINE_BYTES, _bounded_lines, decode_line, iter_lines
from groundtrace.core.files.text import BOM
from groundtrace.core.files.validation import validation_message
from groundtrace.crs.dataset.files import dataset_files, dialogue_line, read_manifest
from groundtrace.crs.dataset.lean import (
    Interner,
    LeanAnchor,
    LeanConstraint,
    LeanDialogue,
    LeanGold,
    LeanLeg,
    LeanTurn,
    lean_dialogue,
)
from groundtrace.crs.schema import SCHEMA_VERSION, Dialogue, decode_value, encode_value

# -- the written form (dataset format 2.0), generated from crs.schema --------------------------------------


#: JSON Schema keywords the generator translates; ``allOf`` only as the constraint ``value`` patterns, which
#: the fast path checks itself (``_value``: the canonical text of its type).
_KNOWN_KEYWORDS = {
    "type", "title", "description", "default", "enum", "items", "properties", "required",
    "additionalProperties", "anyOf", "$ref", "minimum", "maximum", "$defs", "allOf",
}  # fmt: skip


def _wire_type(node: dict[str, Any], defs: dict[str, Any], built: dict[str, Any], where: str) -> Any:
    """The msgspec type of one JSON Schema node of the written form: strings, integers and numbers with
    their bounds, booleans, ``enum`` → ``Literal``, arrays, ``anyOf`` with null → optional, objects (a
    ``$ref`` or inline) → a wire struct. Anything else is refused, so a schema construct the generator
    does not know cannot make the fast path looser than the schema. ``where`` (``Parent_field``) names an
    inline object."""
    unknown = set(node) - _KNOWN_KEYWORDS
    if unknown:
        raise TypeError(f"the wire-struct generator does not translate {sorted(unknown)} (at {where})")
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return _wire_struct(name, defs[name], defs, built)
    if "anyOf" in node:
        options = tuple(_wire_type(x, defs, built, where) for x in node["anyOf"])
        return Union[options]  # noqa: UP007 - a runtime-built union of the generated types
    if "enum" in node:
        return Literal[tuple(node["enum"])]
    kind = node.get("type")
    if kind == "object" and "properties" in node:
        return _wire_struct(where, node, defs, built)
    if kind == "array":
        return list[_wire_type(node.get("items", {}), defs, built, where)]  # type: ignore[misc]
    scalars: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": None}
    if kind not in scalars:
        raise TypeError(f"the wire-struct generator does not know the schema node {node!r}")
    bounds = {"ge": node.get("minimum"), "le": node.get("maximum")}
    bounds = {k: v for k, v in bounds.items() if v is not None}
    return Annotated[scalars[kind], msgspec.Meta(**bounds)] if bounds else scalars[kind]


def _wire_struct(name: str, node: dict[str, Any], defs: dict[str, Any], built: dict[str, Any]) -> Any:
    """The wire struct of an object node: its properties in order (the order pydantic writes them),
    required keys required, the others with the schema's default (an array: empty); unknown keys
    refused (``extra="forbid"``)."""
    if name in built:
        return built[name]
    unknown = set(node) - _KNOWN_KEYWORDS
    if unknown or ("allOf" in node and name != "Constraint"):
        raise TypeError(
            f"the wire-struct generator does not translate {sorted(unknown or {'allOf'})} ({name})"
        )
    if node.get("additionalProperties") is not False:
        raise TypeError(f"schema object {name} allows extra keys: the fast path needs a closed form")
    required = set(node.get("required", []))
    fields: list[Any] = []
    for key, prop in node["properties"].items():
        kind = _wire_type(prop, defs, built, f"{name}_{key}")
        if key in required:
            fields.append((key, kind))
        elif "default" in prop:
            fields.append((key, kind, prop["default"]))
        elif prop.get("type") == "array":
            fields.append((key, kind, msgspec.field(default_factory=list)))
        else:
            raise TypeError(f"schema field {name}.{key} is optional without a default")
    struct = msgspec.defstruct(
        f"Wire{name}", fields, kw_only=True, forbid_unknown_fields=True, gc=False, module=__name__
    )
    built[name] = struct
    return struct


def wire_structs(model: type[Dialogue] = Dialogue) -> dict[str, Any]:
    """The wire structs of the written form (format 2.0) by schema name (``Dialogue``, ``Turn``,
    ``TurnGold``, ``Constraint``, ``Anchor``, ``Leg``, ``QuoteSpan``, ``Feature``,
    ``TaggedReviewRef``), generated from the JSON Schema of :class:`~groundtrace.crs.schema.Dialogue`
    (``dataset.files.dialogue_json_schema``): field names and order, types, ``Literal`` values, numeric
    bounds, defaults. A field added to the schema is in the wire structs with no other edit. ``model``: the
    pydantic model to generate from (a subclass in tests)."""
    schema = model.model_json_schema()
    built: dict[str, Any] = {}
    _wire_struct("Dialogue", schema, schema.get("$defs", {}), built)
    return built


_WIRE = wire_structs()
WireDialogue: Any = _WIRE["Dialogue"]
WireConstraint: Any = _WIRE["Constraint"]
WireAnchor: Any = _WIRE["Anchor"]

_DECODER = msgspec.json.Decoder(WireDialogue)
_ENCODER = msgspec.json.Encoder()


class _NotCanonical(Exception):
    """The line needs the reference path."""


def _value(c: WireConstraint) -> str | int | float | bool:
    """The typed value of a written constraint, when its text is the canonical one for its type."""
    try:
        value = decode_value(c.value, c.value_type)
    except ValueError:
        raise _NotCanonical from None
    if encode_value(value) != (c.value, c.value_type):
        raise _NotCanonical
    return value


def _anchor(a: WireAnchor | None) -> LeanAnchor | None:
    return LeanAnchor(a.name, a.lat, a.lon) if a is not None else None


def _lean_from_wire(w: WireDialogue, interner: Interner) -> LeanDialogue:
    """The :class:`LeanDialogue` of a decoded line; :class:`_NotCanonical` when a validator's check fails
    (module docstring). Written for speed: about 600k references per 10k dialogues go through here."""
    ids, setdefault = interner.ids, interner._strings.setdefault
    turns = []
    for t in w.turns:
        for c in t.constraints_added:
            _value(c)
        g = t.gold
        gold = None
        if g is not None:
            gold = LeanGold(
                setdefault(g.gold_poi, g.gold_poi),
                ids(g.multi_ref),
                ids(g.open_pool),
                tuple(
                    [
                        LeanConstraint(setdefault(c.kind, c.kind), _value(c), setdefault(c.label, c.label))
                        for c in g.active_constraints
                    ]
                ),
            )
        rejected = ids(t.rejected) if t.rejected else ()
        role, act, text = t.role, t.act, t.text
        turns.append(
            LeanTurn(
                t.index, setdefault(role, role), setdefault(act, act), setdefault(text, text), rejected, gold
            )
        )
    string = interner.string
    refs = interner.ref_table(w.review_refs)
    names = {f.name for f in w.features}
    if len(refs) != len(w.review_refs) or len(names) != len(w.features):
        raise _NotCanonical  # a repeated tag or feature name: pydantic refuses the line
    if any(abs(f.value) >= 1e16 for f in w.features):
        raise _NotCanonical
    return LeanDialogue(
        dialogue_id=w.dialogue_id,
        split=string(w.split),
        city=string(w.city),
        poi_type=string(w.poi_type),
        difficulty=string(w.difficulty),
        has_rejection=w.has_rejection,
        kb_hash=string(w.kb_hash),
        anchor=_anchor(w.anchor),
        candidates=ids(w.candidates),
        review_refs=refs,
        turns=tuple(turns),
        legs=tuple(
            [LeanLeg(string(x.poi_type), x.first_turn, ids(x.candidates), _anchor(x.anchor)) for x in w.legs]
        ),
    )


def fast_line(raw: bytes, interner: Interner) -> LeanDialogue | None:
    """The dialogue of a canonical, current-version, valid line (``raw`` with or without its ``\\n``);
    ``None`` when the line needs the reference path (module docstring)."""
    body = raw[:-1] if raw.endswith(b"\n") else raw
    try:
        wire = _DECODER.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if wire.schema_version != SCHEMA_VERSION or _ENCODER.encode(wire) != body:
        return None
    try:
        return _lean_from_wire(wire, interner)
    except _NotCanonical:
        return None


def reference_line(raw: bytes) -> tuple[Dialogue | None, str | None]:
    """``(dialogue, None)`` or ``(None, message)``: one line read exactly as ``DialogueReader`` reads it."""
    obj, problem = decode_line(raw)
    if problem is not None:
        return None, problem
    try:
        return Dialogue.model_validate(obj), None
    except ValidationError as exc:
        return None, f"not a valid Dialogue: {validation_message(exc, model=Dialogue, limit=5)}"


# -- files and splits --------------------------------------------------------------------------------------


@dataclass
class LeanSplit:
    """The dialogues of a split as lean records, the manifest, the line errors, and the dataset hash
    (``run_files.dataset_hash`` of exactly these dialogues, in order)."""

    dialogues: list[LeanDialogue]
    manifest: dict[str, Any]
    errors: list[str]
    dataset_hash: str
    #: lines read by the fast path / by the reference (pydantic) path, for benchmarks and tests
    fast_lines: int = 0
    reference_lines: int = 0
    files: list[Path] = field(default_factory=list)


def read_lean(path: Path | str, split: str = "test") -> LeanSplit:
    """The dialogues of ``split`` (``train``, ``validation``, ``test`` or ``all``; a single JSONL file is
    its own split) of a dataset folder or file, with the outcome of ``loading.load_split``: the same
    dialogues, values, skipped lines and messages, manifest and ``ValueError`` for a missing split.

    Every split file is read (a ``dialogue_id`` repeated from an earlier file is skipped there too); only
    the selected split's dialogues are kept and hashed.
    """
    path = Path(path)
    present = [f.stem for f in dataset_files(path)]
    if not (split == "all" or path.is_file()) and split not in present:
        raise ValueError(
            f"{path}: no split {split!r} (have: {', '.join(sorted(present)) or 'none'}, or 'all')"
        )
    return read_lean_splits(path, keep=split).select(split)


@dataclass
class LeanSplits:
    """Every split file of a dataset read once (:func:`read_lean_splits`): the kept files' dialogues and
    dataset hashes by split name (``all``: every file's, in order), the manifest and the line errors."""

    path: Path
    files: list[Path]
    dialogues: dict[str, list[LeanDialogue]]
    hashes: dict[str, str]
    manifest: dict[str, Any]
    errors: list[str]
    fast_lines: int = 0
    reference_lines: int = 0

    def names(self) -> list[str]:
        """The split names present (the file stems)."""
        return [f.stem for f in self.files]

    def select(self, split: str) -> LeanSplit:
        """The :class:`LeanSplit` of ``split`` (``all``: every split; a single file is its own split);
        ``ValueError`` naming the splits present when it is not one of them, ``KeyError`` when it was not
        kept by the read."""
        take_all = split == "all" or self.path.is_file()
        if not take_all and split not in self.names():
            have = ", ".join(sorted(self.names())) or "none"
            raise ValueError(f"{self.path}: no split {split!r} (have: {have}, or 'all')")
        key = "all" if take_all else split
        dialogues = (
            [d for f in self.files for d in self.dialogues[f.stem]] if take_all else self.dialogues[key]
        )
        return LeanSplit(
            dialogues,
            self.manifest,
            self.errors,
            self.hashes[key],
            self.fast_lines,
            self.reference_lines,
            self.files,
        )


def read_lean_splits(path: Path | str, keep: str = "all") -> LeanSplits:
    """Read every split file of a dataset folder (or the one file) once; keep the dialogues of split
    ``keep`` (``all``: of every split, each split's hash computed too, so that any split can be
    chosen afterwards (:meth:`~LeanSplits.select`) — what ``crs score`` without ``--split`` needs to pick the
    split the predictions answer without a second read)."""
    path = Path(path)
    files = dataset_files(path)
    take_all = keep == "all" or path.is_file()
    interner = Interner()
    total = hashlib.sha256()
    kept: dict[str, list[LeanDialogue]] = {}
    hashes: dict[str, str] = {}
    errors: list[LineError] = []
    first_at: dict[str, str] = {}
    counts = [0, 0]
    for file in files:
        wanted = take_all or file.stem == keep
        own = hashlib.sha256()
        digests = (own, total) if take_all else (own,)
        dialogues: list[LeanDialogue] = []
        errors.extend(_read_file(file, wanted, interner, digests, dialogues, first_at, counts))
        if wanted:
            kept[file.stem] = dialogues
            hashes[file.stem] = own.hexdigest()
    if take_all:
        hashes["all"] = total.hexdigest()
    manifest: dict[str, Any] = {}
    manifest_path = path / "manifest.json" if path.is_dir() else path.with_name("manifest.json")
    if manifest_path.is_file():
        manifest, problem = read_manifest(manifest_path)
        if problem is not None:
            errors.append(problem)
    return LeanSplits(path, files, kept, hashes, manifest, [str(e) for e in errors], counts[0], counts[1])


def _read_file(
    file: Path,
    wanted: bool,
    interner: Interner,
    digests: tuple[Any, ...],
    kept: list[LeanDialogue],
    first_at: dict[str, str],
    counts: list[int],
) -> list[LineError]:
    """Read one split file; its dialogues are appended to ``kept`` (and hashed) when ``wanted``. Returns
    its line errors sorted by line, as ``read_dataset`` lists them."""
    problems: list[LineError] = []
    name = str(file)
    for number, raw, error in iter_lines(file):
        if raw is None:
            assert error is not None
            problems.append(error)
            continue
        record = fast_line(raw, interner)
        canonical: bytes | None = None
        if record is not None:
            counts[0] += 1
            canonical = raw if raw.endswith(b"\n") else raw + b"\n"
        else:
            counts[1] += 1
            model, problem = reference_line(raw)
            if model is None:
                problems.append(LineError(file=name, line=number, message=str(problem)))
                continue
            record = lean_dialogue(model, interner)
            canonical = dialogue_line(model).encode("utf-8")
        did = record.dialogue_id
        if did in first_at:
            message = f"duplicate dialogue_id {did!r} (first at {first_at[did]}); skipped"
            problems.append(LineError(file=name, line=number, message=message))
            continue
        first_at[did] = f"{file}:{number}"
        if wanted:
            kept.append(record)
            for digest in digests:
                digest.update(canonical)
    problems.sort(key=lambda e: e.line)
    return problems


# -- whole dialogues on demand -----------------------------------------------------------------------------


class _Id(msgspec.Struct):
    dialogue_id: str


class DialogueLines(Mapping[str, Dialogue]):
    """The validated :class:`~groundtrace.crs.schema.Dialogue` of a dataset's dialogues by id, each parsed
    from its line when asked for — what a report needs for the few dialogues it shows, next to the lean
    records a run reads, without validating the whole dataset again.

    ``ids`` are the keys (e.g. the ids of the records read). The first lookup scans the split files once
    for line offsets (line length limit and BOM as :func:`~groundtrace.core.files.jsonl.iter_lines`; only
    ``dialogue_id`` is decoded); a lookup then reads that one line through the reference (pydantic) path.
    The first line of an id is used (a duplicate is skipped by the readers too). A line that does not
    validate gives ``KeyError`` (``get``: None).
    """

    def __init__(self, path: Path | str, ids: Sequence[str]) -> None:
        self.path = Path(path)
        self._ids = list(dict.fromkeys(ids))
        self._known = set(self._ids)
        self._offsets: dict[str, tuple[Path, int]] | None = None
        self._cache: dict[str, Dialogue | None] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __contains__(self, key: object) -> bool:
        return key in self._known

    def __getitem__(self, key: str) -> Dialogue:
        if key not in self._known:
            raise KeyError(key)
        if key not in self._cache:
            self._cache[key] = self._parse(key)
        found = self._cache[key]
        if found is None:
            raise KeyError(key)
        return found

    def _parse(self, key: str) -> Dialogue | None:
        where = self._index().get(key)
        if where is None:
            return None
        file, offset = where
        with file.open("rb") as handle:
            handle.seek(offset)
            raw = next(_bounded_lines(handle, MAX_LINE_BYTES))[0]
        if raw is None:
            return None
        if offset == 0 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        return reference_line(raw)[0]

    def _index(self) -> dict[str, tuple[Path, int]]:
        if self._offsets is None:
            decoder = msgspec.json.Decoder(_Id)
            offsets: dict[str, tuple[Path, int]] = {}
            for file in dataset_files(self.path):
                with file.open("rb") as handle:
                    offset = 0
                    for raw, size in _bounded_lines(handle, MAX_LINE_BYTES):
                        if raw is not None:
                            body = raw[len(BOM) :] if offset == 0 and raw.startswith(BOM) else raw
                            try:
                                did = decoder.decode(body).dialogue_id
                            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                                did = None
                            if did in self._known and did not in offsets:
                                offsets[did] = (file, offset)
                        offset += size
            self._offsets = offsets
        return self._offsets
