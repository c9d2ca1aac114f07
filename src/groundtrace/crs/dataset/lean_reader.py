"""The fast dataset reader for evaluation: dataset lines → :class:`~.lean.LeanDialogue`, with the exact
outcome of the pydantic reader (``crs.dataset.files.read_dataset``).

Each line takes one of two paths:

* **fast** — ``msgspec`` decodes the line into typed wire structs mirroring the written form (format
  2.0) of :class:`~groundtrace.crs.schema.Dialogue` (field names and order, types, ``Literal`` values,
  numeric bounds, unknown keys refused), and the line is accepted only when re-encoding those structs
  gives the line back byte for byte, its ``schema_version`` is the current one, and the checks of the
  schema's validators hold: each constraint ``value`` is the canonical text of its ``value_type``
  (``encode_value(decode_value(value, value_type))`` gives it back), ``review_refs`` tags and ``features``
  names are distinct, and no feature is a float of magnitude >= 1e16 (pydantic writes ``1e+16`` where
  msgspec writes ``1e16``, the only difference between the two encoders). Such a line is the canonical
  serialisation of a valid dialogue, so the pydantic reader would accept it with the same values, and it
  *is* its canonical line (the dataset hash hashes it as is).
* **reference** — any other line (not canonical, an older format version, invalid, not UTF-8 ...) goes
  through the pydantic path of ``read_dataset``: the same ``file:line: message`` for a bad line, the same
  values (converted with :func:`~.lean.lean_dialogue`) and the canonical line for a good one.

A fast-path struct can therefore only accept what pydantic accepts *if the wire structs are no looser than
the schema*; ``tests/crs/dataset/test_lean_reader.py`` checks this against the schema (fields, order,
defaults, bounds) and by mutating real lines, so a schema change that is not mirrored here fails there.

Duplicates (a ``dialogue_id`` seen in this or an earlier split file is skipped with the reference
message), error order and the manifest follow ``read_dataset``; :func:`read_lean` applies the split
selection of ``loading.load_split`` and computes the dataset hash of the selected dialogues while reading.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from pydantic import ValidationError

from groundtrace.core.files.errors import LineError
from groundtrace.core.files.jsonl import decode_line, iter_lines
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
from groundtrace.crs.schema import (
    SCHEMA_VERSION,
    ConstraintKind,
    Dialogue,
    PoiType,
    ValueType,
    decode_value,
    encode_value,
)

# -- the written form (dataset format 2.0), as strict as crs.schema ----------------------------------------

Lat = Annotated[float, msgspec.Meta(ge=-90, le=90)]
Lon = Annotated[float, msgspec.Meta(ge=-180, le=180)]
NonNegative = Annotated[int, msgspec.Meta(ge=0)]


class _Wire(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """Base of the wire structs: unknown keys refused (``extra="forbid"``), fields in schema order."""


class WireConstraint(_Wire, kw_only=True):
    kind: ConstraintKind
    value: str
    value_type: ValueType
    label: str


class WireAnchor(_Wire, kw_only=True):
    name: str
    lat: Lat
    lon: Lon


class WireTaggedReviewRef(_Wire, kw_only=True):
    tag: str
    review_id: str
    poi_id: str


class WireFeature(_Wire, kw_only=True):
    name: str
    value: float


class WireQuoteSpan(_Wire, kw_only=True):
    tag: str
    review_id: str
    start: int
    end: int
    review_start: int
    review_end: int


class WireGold(_Wire, kw_only=True):
    gold_poi: str
    multi_ref: list[str] = []
    open_pool: list[str] = []
    active_constraints: list[WireConstraint] = []


class WireTurn(_Wire, kw_only=True):
    index: NonNegative
    role: Literal["user", "system"]
    act: str
    text: str
    constraints_added: list[WireConstraint] = []
    rejected: list[str] = []
    recommended: list[str] = []
    cited_tags: list[str] = []
    quote_spans: list[WireQuoteSpan] = []
    gold: WireGold | None = None


class WireLeg(_Wire, kw_only=True):
    poi_type: PoiType
    first_turn: NonNegative
    candidates: list[str]
    anchor: WireAnchor | None = None


class WireDialogue(_Wire, kw_only=True):
    schema_version: str = SCHEMA_VERSION
    dialogue_id: str
    split: Literal["train", "validation", "test"] = "train"
    city: str
    poi_type: PoiType
    persona_id: str
    persona: str
    anchor: WireAnchor | None = None
    difficulty: Literal["Easy", "Medium", "Hard", "Expert"] = "Easy"
    features: list[WireFeature] = []
    has_rejection: bool = False
    candidates: list[str]
    review_refs: list[WireTaggedReviewRef] = []
    turns: list[WireTurn]
    kb_hash: str = ""
    realiser: str = "template"
    seed: int | None = None
    legs: list[WireLeg] = []


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
    ids, string, ref = interner.ids, interner.string, interner.ref
    turns = []
    for t in w.turns:
        for c in t.constraints_added:
            _value(c)
        g = t.gold
        gold = None
        if g is not None:
            gold = LeanGold(
                string(g.gold_poi),
                ids(g.multi_ref),
                ids(g.open_pool),
                tuple(
                    [LeanConstraint(string(c.kind), _value(c), string(c.label)) for c in g.active_constraints]
                ),
            )
        rejected = ids(t.rejected) if t.rejected else ()
        turns.append(LeanTurn(t.index, string(t.role), string(t.act), string(t.text), rejected, gold))
    refs = {string(r.tag): ref(r.review_id, r.poi_id) for r in w.review_refs}
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
    files = dataset_files(path)
    present = [f.stem for f in files]
    take_all = split == "all" or path.is_file()
    if not take_all and split not in present:
        raise ValueError(
            f"{path}: no split {split!r} (have: {', '.join(sorted(present)) or 'none'}, or 'all')"
        )
    interner = Interner()
    digest = hashlib.sha256()
    kept: list[LeanDialogue] = []
    errors: list[LineError] = []
    first_at: dict[str, str] = {}
    counts = [0, 0]
    for file in files:
        wanted = take_all or file.stem == split
        errors.extend(_read_file(file, wanted, interner, digest, kept, first_at, counts))
    manifest: dict[str, Any] = {}
    manifest_path = path / "manifest.json" if path.is_dir() else path.with_name("manifest.json")
    if manifest_path.is_file():
        manifest, problem = read_manifest(manifest_path)
        if problem is not None:
            errors.append(problem)
    return LeanSplit(
        kept, manifest, [str(e) for e in errors], digest.hexdigest(), counts[0], counts[1], files
    )


def _read_file(
    file: Path,
    wanted: bool,
    interner: Interner,
    digest: Any,
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
            digest.update(canonical)
    problems.sort(key=lambda e: e.line)
    return problems
