"""The knowledge base as JSONL records with one JSON type per field (the card's KB configs).

A dataset folder ships its KB next to the dialogues so that column-typed readers (Hugging Face
``datasets``) can load it as a config of the dataset card:

* ``pois.jsonl[.gz]`` — one :class:`PoiRecord` per POI: the :class:`~groundtrace.crs.schema.POI` fields,
  with ``attributes`` (a mapping keyed by attribute name, values of mixed types) written as a list of
  ``{"key", "value", "value_type"}`` records. ``value_type`` is ``str``/``int``/``float``/``bool`` as for
  constraint values (:func:`~groundtrace.crs.schema.encode_value`) or ``json`` for a list or object value
  (``value`` is then its canonical JSON: sorted keys, no spaces), e.g. ``{"key": "ambience",
  "value": "[\\"classy\\",\\"upscale\\"]", "value_type": "json"}``. Records are in key order.
* ``reviews.jsonl`` — one :class:`~groundtrace.crs.schema.Review` per review, text included (a built
  dataset, never a release);
* ``review_index.jsonl.gz`` — one :class:`ReviewIndexRecord` per review, *without* its text: the review
  id, POI, stars, date, the text's length in code points and a fingerprint (first 16 hex of the sha256 of
  its UTF-8 text) so an importer can tell the user's copy of a review from a different one.

Reading (:func:`read_records`) is forgiving: a bad line (not JSON, not a record, or a corrupt gzip stream)
becomes a ``file:line`` :class:`~groundtrace.core.files.errors.LineError` and the rest is read.
:func:`poi_from_record` inverts :func:`poi_record` exactly, so a KB rebuilt from these files has the
same content hash when the review texts are the same.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundtrace.core.files.errors import LineError
from groundtrace.core.files.validation import validation_message
from groundtrace.crs.dataset.fingerprints import fingerprint
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import POI, PoiType, Review, decode_value, encode_value

POIS = "pois"
REVIEWS = "reviews"
REVIEW_INDEX = "review_index"
M = TypeVar("M", bound=BaseModel)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AttributeRecord(_Record):
    """One POI attribute as written."""

    key: str
    value: str
    value_type: Literal["str", "int", "float", "bool", "json"]


class PoiRecord(_Record):
    """A POI as written to ``pois.jsonl``: :class:`~groundtrace.crs.schema.POI` with listed attributes."""

    poi_id: str
    name: str
    city: str
    state: str = ""
    poi_type: PoiType
    lat: float
    lon: float
    stars: float
    review_count: int
    price_level: int | None = None
    categories: list[str] = Field(default_factory=list)
    attributes: list[AttributeRecord] = Field(default_factory=list)
    address: str = ""


class ReviewIndexRecord(_Record):
    """A review of a release's KB without its text (``review_index.jsonl.gz``)."""

    review_id: str
    poi_id: str
    stars: float
    date: str | None = None
    text_chars: int = Field(ge=0, description="Length of the review text in code points.")
    text_sha256: str = Field(description="First 16 hex digits of sha256 of the UTF-8 review text.")


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def attribute_records(attributes: dict[str, Any]) -> list[AttributeRecord]:
    """``attributes`` as records in key order (lists and objects as canonical JSON text)."""
    out = []
    for key in sorted(attributes):
        value = attributes[key]
        if isinstance(value, (list, dict)):
            out.append(AttributeRecord(key=key, value=_canonical_json(value), value_type="json"))
        else:
            text, value_type = encode_value(value)
            out.append(AttributeRecord(key=key, value=text, value_type=value_type))  # type: ignore[arg-type]
    return out


def attributes_from_records(records: Iterable[AttributeRecord]) -> dict[str, Any]:
    """Inverse of :func:`attribute_records`; ``ValueError`` on a repeated key or a malformed value."""
    out: dict[str, Any] = {}
    for r in records:
        if r.key in out:
            raise ValueError(f"attribute {r.key!r} appears twice")
        out[r.key] = json.loads(r.value) if r.value_type == "json" else decode_value(r.value, r.value_type)
    return out


def poi_record(poi: POI) -> PoiRecord:
    """The written form of ``poi``."""
    fields = poi.model_dump(exclude={"attributes"})
    return PoiRecord(**fields, attributes=attribute_records(poi.attributes))


def poi_from_record(record: PoiRecord) -> POI:
    """The POI of a written record (exact inverse of :func:`poi_record`)."""
    fields = record.model_dump(exclude={"attributes"})
    return POI(**fields, attributes=attributes_from_records(record.attributes))


def review_index_record(review: Review) -> ReviewIndexRecord:
    """The written form of ``review`` without its text."""
    return ReviewIndexRecord(
        review_id=review.review_id,
        poi_id=review.poi_id,
        stars=review.stars,
        date=review.date,
        text_chars=len(review.text),
        text_sha256=fingerprint(review.text),
    )


@contextmanager
def open_text(path: Path, mode: Literal["rt", "wt"]) -> Iterator[IO[str]]:
    """A text handle on ``path``, through gzip when its name ends in ``.gz``. Written gzip streams carry no
    name and mtime 0, so the same content gives byte-identical files."""
    if path.suffix != ".gz":
        with open(path, mode, encoding="utf-8", newline="\n" if mode == "wt" else None) as handle:
            yield handle
        return
    with open(path, mode[0] + "b") as raw:
        zipped = gzip.GzipFile(filename="", fileobj=raw, mode=mode[0] + "b", mtime=0)
        with io.TextIOWrapper(zipped, encoding="utf-8", newline="\n" if mode == "wt" else None) as handle:
            yield handle


def write_records(path: Path, records: Iterable[BaseModel]) -> int:
    """Write records as JSONL (gzipped when the name ends in ``.gz``, reproducibly); returns the count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp" + (".gz" if path.suffix == ".gz" else ""))
    n = 0
    with open_text(tmp, "wt") as handle:
        for record in records:
            handle.write(record.model_dump_json() + "\n")
            n += 1
    tmp.replace(path)
    return n


def iter_lines(path: Path, errors: list[LineError]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of a JSONL file, gzipped or not; a corrupt or truncated gzip stream or bad
    UTF-8 ends the file with one error at the line where it broke."""
    number = 0
    try:
        with open_text(path, "rt") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, line
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        where = number + 1
        errors.append(
            LineError(
                file=str(path), line=where, message=f"unreadable from here on ({exc}); rest of file lost"
            )
        )


def read_records(path: Path, model: type[M], errors: list[LineError]) -> Iterator[tuple[int, M]]:
    """``(line, record)`` for each valid line of ``path``; each bad line is one ``file:line`` error."""
    for number, line in iter_lines(path, errors):
        try:
            yield number, model.model_validate_json(line)
        except ValidationError as exc:
            message = f"not a valid {model.__name__}: {validation_message(exc, model=model, limit=3)}"
            errors.append(LineError(file=str(path), line=number, message=message))


def write_kb_files(kb: KnowledgeBase, folder: Path, *, text: bool, gz: bool = False) -> dict[str, Path]:
    """Write ``pois`` and ``reviews`` (``text=True``) or ``review_index`` (no text) into ``folder``; returns
    ``{config name: path}``. POIs and reviews are in id order."""
    suffix = ".jsonl.gz" if gz else ".jsonl"
    pois = folder / f"{POIS}{suffix}"
    write_records(pois, (poi_record(kb.pois[i]) for i in sorted(kb.pois)))
    reviews = [kb.reviews[i] for i in sorted(kb.reviews)]
    if text:
        path = folder / f"{REVIEWS}{suffix}"
        write_records(path, reviews)
        return {POIS: pois, REVIEWS: path}
    path = folder / f"{REVIEW_INDEX}{suffix}"
    write_records(path, (review_index_record(r) for r in reviews))
    return {POIS: pois, REVIEW_INDEX: path}
