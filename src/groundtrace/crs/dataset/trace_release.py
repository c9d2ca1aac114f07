"""The authors' public release layout (TRACE v1.0.0 dataset card), both ways.

Layout of a release folder::

    README.md                          dataset card: configs ``default`` (the splits), ``knowledge_base``
                                       (the POIs) and ``review_index`` (the reviews, without text)
    data/{train,validation,test}.jsonl.gz    one dialogue per line, quotes replaced by ``[Q:N]``
    knowledge_base/pois.jsonl.gz       the KB's POIs  (:class:`~groundtrace.crs.dataset.kb_files.PoiRecord`)
    knowledge_base/review_index.jsonl.gz     review id, POI, stars, date, length, fingerprint — no text
    release.json, manifest.json, schema.json   (ours: format, KB identity; the build manifest; line schema)

A release line is a dataset line (format v2, :class:`~groundtrace.crs.schema.Dialogue`) whose turn texts
carry ``[Q:N]`` placeholders: N (1-based) numbers the turn's ``quote_spans``, and each span is the review
id, the offsets of the quote in the hydrated turn text (``start``/``end``) and in the review
(``review_start``/``review_end``), plus ``edits`` — the small edit script that turns the review slice into
a near-verbatim quote (``[{"start", "end", "text"}]``: replace ``slice[start:end]`` by ``text``, left to
right; empty for a verbatim quote) — and ``added``: a span the dataset did not declare, added only to
redact a cited quote that no span covered (dropped again on import). A literal ``[Q:`` of a text is
written ``[Q:=``. Where the card is silent these are our reading (docs/crs-dataset.md).

:func:`export_release` writes the layout from a dataset and its KB; :func:`import_release` hydrates it
from the user's Yelp review file into a dataset folder plus ``kb.sqlite``. A bad line (corrupt gzip, not
JSON, not a record), a review missing from the user's file, a review whose text differs from the
released one, or offsets that do not fit, is a ``file:line`` problem; that dialogue (or review) is left
out and everything else is processed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from groundtrace.core.files.errors import LineError
from groundtrace.core.files.validation import validation_message
from groundtrace.crs.dataset.card import (
    Card,
    CardConfig,
    split_configs,
    write_build_card,
    write_card,
)
from groundtrace.crs.dataset.files import (
    MANIFEST,
    SPLITS,
    read_dataset,
    write_dialogues,
    write_json_schema,
)
from groundtrace.crs.dataset.kb_files import (
    POIS,
    REVIEW_INDEX,
    PoiRecord,
    ReviewIndexRecord,
    iter_lines,
    poi_from_record,
    read_records,
    write_kb_files,
    write_records,
)
from groundtrace.crs.dataset.placeholders import (
    RELEASE_GRAMMAR,
    RedactionError,
    escape_release,
    release_placeholder,
    split_release,
)
from groundtrace.crs.dataset.release import Redactor, apply_edits, edit_script, fingerprint
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.stance import annotate, make_model
from groundtrace.crs.kb.store import save_kb
from groundtrace.crs.kb.yelp import RecordError, iter_json_lines, review_from_obj
from groundtrace.crs.kb.yelp import business_id_prefilter as prefilter
from groundtrace.crs.schema import SCHEMA_VERSION, Dialogue, QuoteSpan, Review, Turn

FORMAT = "trace-release"
FORMAT_VERSION = 1
RELEASE_JSON = "release.json"
DATA = "data"
KB_DIR = "knowledge_base"


class EditRecord(BaseModel):
    """One edit of a near-verbatim quote: replace ``slice[start:end]`` of the review slice by ``text``."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str


class ReleaseQuoteSpan(QuoteSpan):
    """A quote span of a release line: where the quote sits, and how to rebuild it from the review."""

    edits: list[EditRecord] = Field(default_factory=list)
    added: bool = Field(default=False, description="Not in the dataset: added only to redact a quote.")


class ReleaseTurn(Turn):
    """A turn of a release line: ``text`` carries ``[Q:N]`` placeholders for its quote spans."""

    quote_spans: list[ReleaseQuoteSpan] = Field(default_factory=list)  # type: ignore[assignment]


class ReleaseDialogue(Dialogue):
    """One line of ``data/<split>.jsonl.gz``."""

    turns: list[ReleaseTurn]  # type: ignore[assignment]


# -- export ---------------------------------------------------------------------------------------------


def release_turn(redactor: Redactor, dialogue: Dialogue, turn: Turn) -> tuple[ReleaseTurn, list[str]]:
    """``turn`` with its quotes replaced by ``[Q:N]`` and its spans carrying their edit scripts; notes on
    cited quotes that match no cited review (left as written)."""
    added, notes = redactor.uncovered_spans(dialogue, turn)
    spans = [*turn.quote_spans, *added]
    number = {id(s): i for i, s in enumerate(spans, start=1)}
    release_spans: dict[int, ReleaseQuoteSpan] = {}
    out: list[str] = []
    pos = 0
    for span, source, quote in redactor.resolve_spans(turn, spans):
        n = number[id(span)]
        edits = [EditRecord(start=a, end=b, text=t) for a, b, t in edit_script(source, quote)]
        redactor.quotes += 1
        redactor.near_verbatim += bool(edits)
        release_spans[n] = ReleaseQuoteSpan(**span.model_dump(), edits=edits, added=n > len(turn.quote_spans))
        out.append(escape_release(turn.text[pos : span.start]))
        out.append(release_placeholder(n))
        pos = span.end
    out.append(escape_release(turn.text[pos:]))
    result = ReleaseTurn(
        **_turn_fields(turn), text="".join(out), quote_spans=[release_spans[n] for n in sorted(release_spans)]
    )
    return result, notes


def release_dialogue(redactor: Redactor, dialogue: Dialogue) -> tuple[ReleaseDialogue, list[str]]:
    """The release line of ``dialogue`` (:class:`RedactionError` when a span does not fit its review)."""
    turns, notes = [], []
    for turn in dialogue.turns:
        t, n = release_turn(redactor, dialogue, turn)
        turns.append(t)
        notes.extend(n)
    return ReleaseDialogue(**{**dict(dialogue), "turns": turns}), notes


class ReleaseReport(BaseModel):
    """What :func:`export_release` or :func:`import_release` did."""

    splits: dict[str, int]
    quotes: int = 0
    near_verbatim: int = 0
    pois: int = 0
    reviews: int = 0
    missing_reviews: int = 0
    kb_hash: str = ""
    kb_identical: bool | None = None
    problems: list[LineError] = Field(default_factory=list)


def export_release(dataset: Path, kb: KnowledgeBase, out_dir: Path) -> ReleaseReport:
    """Write ``dataset`` (folder or file) and ``kb`` in the public release layout into ``out_dir``.

    A dialogue that cannot be redacted is left out and reported (nothing unredacted is written)."""
    if dataset.resolve() == out_dir.resolve():
        raise ValueError(f"{out_dir}: the output folder must differ from the dataset folder")
    data = read_dataset(dataset)
    redactor = Redactor({rid: r.text for rid, r in kb.reviews.items()})
    problems: list[LineError] = list(data.errors)
    counts: dict[str, int] = {}
    files: dict[str, Path] = {}
    for split in [*SPLITS, *(s for s in data.splits if s not in SPLITS)]:
        if split not in data.splits:
            continue
        lines: list[ReleaseDialogue] = []
        for number, dialogue in enumerate(data.splits[split], start=1):
            where = f"{split} dialogue {number} ({dialogue.dialogue_id})"
            try:
                line, notes = release_dialogue(redactor, dialogue)
            except RedactionError as exc:
                problems.append(LineError(file=str(dataset), line=0, message=f"{where}: {exc} (left out)"))
                continue
            problems.extend(LineError(file=str(dataset), line=0, message=f"{where}: {n}") for n in notes)
            lines.append(line)
        files[split] = out_dir / DATA / f"{split}.jsonl.gz"
        counts[split] = write_records(files[split], lines)
    kb_files = write_kb_files(kb, out_dir / KB_DIR, text=False, gz=True)
    manifest = {k: v for k, v in data.manifest.items() if k != "kb_path"}  # a local path is no use to others
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (out_dir / "schema.json").write_text(
        json.dumps(ReleaseDialogue.model_json_schema(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    release = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "dataset_format": SCHEMA_VERSION,
        "placeholder": RELEASE_GRAMMAR,
        "edits": "[{start, end, text}]: replace review.text[review_start:review_end][start:end] by text, "
        "left to right",
        "kb": {
            "name": kb.name,
            "content_hash": kb.content_hash,
            "stance_model": kb.stance_model,
            "pois": len(kb.pois),
            "reviews": len(kb.reviews),
        },
        "splits": counts,
        "quotes": redactor.quotes,
        "near_verbatim": redactor.near_verbatim,
    }
    (out_dir / RELEASE_JSON).write_text(json.dumps(release, indent=1) + "\n", encoding="utf-8")
    write_card(out_dir, release_card(out_dir, files, counts, kb, kb_files, manifest))
    return ReleaseReport(
        splits=counts,
        quotes=redactor.quotes,
        near_verbatim=redactor.near_verbatim,
        pois=len(kb.pois),
        reviews=len(kb.reviews),
        kb_hash=kb.content_hash,
        problems=problems,
    )


def release_card(
    folder: Path,
    files: dict[str, Path],
    counts: dict[str, int],
    kb: KnowledgeBase,
    kb_files: dict[str, Path],
    manifest: dict[str, Any],
) -> Card:
    """The card of a release folder: configs ``default``, ``knowledge_base`` and ``review_index``."""
    configs = [
        split_configs(files, folder, ReleaseDialogue.model_json_schema(), counts),
        CardConfig(
            "knowledge_base",
            {POIS: kb_files[POIS].relative_to(folder).as_posix()},
            PoiRecord.model_json_schema(),
            {POIS: len(kb.pois)},
            "POIs of the knowledge base (attributes as key / value / value_type records)",
        ),
        CardConfig(
            REVIEW_INDEX,
            {REVIEW_INDEX: kb_files[REVIEW_INDEX].relative_to(folder).as_posix()},
            ReviewIndexRecord.model_json_schema(),
            {REVIEW_INDEX: len(kb.reviews)},
            "reviews of the knowledge base: ids, stars, dates, lengths, fingerprints (no text)",
        ),
    ]
    notes = [
        "## Hydrating the quotes",
        "",
        "Quotes are `[Q:N]` placeholders: N numbers the turn's `quote_spans` (1-based); each span gives the",
        "review id, the quote's offsets in the turn (`start`/`end`) and in the review",
        "(`review_start`/`review_end`) and `edits` for a near-verbatim quote. With your own Yelp Open",
        "Dataset download:",
        "",
        "```bash",
        "groundtrace crs import-release THIS_FOLDER --yelp-dir YELP_DIR --out my_dataset",
        "```",
    ]
    return Card(
        title="TRACE-CRS dialogues (public release layout)",
        summary=(
            "Multi-turn tourism recommendation dialogues whose system turns cite review snippets with `[Rn]` "
            "tags; review text is not redistributed."
        ),
        configs=configs,
        review_text_included=False,
        yelp_data=True,
        manifest=manifest,
        notes=notes,
        reading=(
            "groundtrace reads this layout through `groundtrace crs import-release` (below), which writes a "
            "dataset folder that `crs validate` and `crs run --dataset` read."
        ),
    )


# -- import ---------------------------------------------------------------------------------------------


def _turn_fields(turn: Turn) -> dict[str, Any]:
    """The fields of ``turn`` other than its text and spans, as objects (not serialised)."""
    return {k: getattr(turn, k) for k in Turn.model_fields if k not in ("text", "quote_spans")}


def _hydrated_text(turn: ReleaseTurn, reviews: Mapping[str, Review]) -> str:
    """The turn text with every ``[Q:N]`` restored; :class:`RedactionError` naming what does not fit (an
    unknown span or review, offsets outside the review, a span whose ``start``/``end`` do not hold its
    rebuilt quote, a span without its placeholder)."""
    out: list[str] = []
    pos = 0
    used: set[int] = set()
    for part in split_release(turn.text):
        if isinstance(part, str):
            out.append(part)
            pos += len(part)
            continue
        if part > len(turn.quote_spans) or part in used:
            raise RedactionError(
                f"turn {turn.index}: [Q:{part}] does not name a (single) span of the "
                f"{len(turn.quote_spans)} the turn has"
            )
        used.add(part)
        span = turn.quote_spans[part - 1]
        review = reviews.get(span.review_id)
        if review is None:
            raise RedactionError(f"turn {turn.index}: [Q:{part}] quotes review {span.review_id!r}, not found")
        if not (0 <= span.review_start <= span.review_end <= len(review.text)):
            raise RedactionError(
                f"turn {turn.index}: [Q:{part}] review offsets {span.review_start}-{span.review_end} outside "
                f"review {span.review_id!r} (length {len(review.text)})"
            )
        source = review.text[span.review_start : span.review_end]
        quote = apply_edits(source, [(e.start, e.end, e.text) for e in span.edits])
        if (span.start, span.end) != (pos, pos + len(quote)):
            raise RedactionError(
                f"turn {turn.index}: [Q:{part}] span offsets {span.start}-{span.end} do not hold its quote "
                f"(at {pos}-{pos + len(quote)} of the hydrated text)"
            )
        out.append(quote)
        pos += len(quote)
    if len(used) != len(turn.quote_spans):
        raise RedactionError(f"turn {turn.index}: {len(turn.quote_spans) - len(used)} span(s) have no [Q:N]")
    return "".join(out)


def hydrate_line(line: ReleaseDialogue, reviews: Mapping[str, Review]) -> Dialogue:
    """The dataset dialogue of a release line: quotes restored and checked against their spans, the spans
    added for redaction dropped; :class:`RedactionError` when a review it needs is not in ``reviews``."""
    missing = sorted({r.review_id for r in line.review_refs.values()} - set(reviews))
    if missing:
        raise RedactionError(f"review_refs name {len(missing)} review(s) not found, e.g. {missing[0]!r}")
    turns = []
    for turn in line.turns:
        text = _hydrated_text(turn, reviews)
        kept = [
            QuoteSpan(**s.model_dump(exclude={"edits", "added"})) for s in turn.quote_spans if not s.added
        ]
        turns.append(Turn(**_turn_fields(turn), text=text, quote_spans=kept))
    return Dialogue(**{**dict(line), "turns": turns})


class YelpReviews:
    """The reviews of a release's index read from the user's Yelp review file (one streaming pass)."""

    def __init__(self, index: Mapping[str, tuple[int, ReviewIndexRecord]], index_file: Path) -> None:
        self.index = index
        self.index_file = index_file
        self.reviews: dict[str, Review] = {}

    def read(
        self, review_file: Path, problems: list[LineError], on_bytes: Callable[[int], None] | None = None
    ) -> dict[str, Review]:
        """Keep each indexed review whose text matches the released length and fingerprint; every other
        indexed review is a problem (at the index's line: not found; at the Yelp line: text differs)."""
        pois = {rec.poi_id for _, rec in self.index.values()}
        differs: set[str] = set()
        for number, obj in iter_json_lines(review_file, problems, on_bytes, prefilter=prefilter(pois)):
            rid = obj.get("review_id")
            if not isinstance(rid, str) or rid not in self.index or rid in self.reviews:
                continue
            try:
                review = review_from_obj(obj)
            except RecordError as exc:
                problems.append(LineError(file=str(review_file), line=number, message=str(exc)))
                continue
            _, rec = self.index[rid]
            if len(review.text) != rec.text_chars or fingerprint(review.text) != rec.text_sha256:
                message = (
                    f"review {rid!r}: text differs from the released one (length {len(review.text)} vs "
                    f"{rec.text_chars}, or fingerprint); left out"
                )
                problems.append(LineError(file=str(review_file), line=number, message=message))
                differs.add(rid)
                continue
            self.reviews[rid] = Review(
                review_id=rid, poi_id=rec.poi_id, stars=rec.stars, text=review.text, date=rec.date
            )
        for rid, (line, _) in self.index.items():
            if rid not in self.reviews and rid not in differs:
                problems.append(
                    LineError(
                        file=str(self.index_file),
                        line=line,
                        message=f"review {rid!r} not found in {review_file}; left out of the KB",
                    )
                )
        return self.reviews


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def read_release_kb(
    release_dir: Path,
    review_file: Path,
    problems: list[LineError],
    on_bytes: Callable[[int], None] | None = None,
) -> KnowledgeBase:
    """The KB of a release: its POIs and the indexed reviews with their text from ``review_file``."""
    pois_file = release_dir / KB_DIR / f"{POIS}.jsonl.gz"
    index_file = release_dir / KB_DIR / f"{REVIEW_INDEX}.jsonl.gz"
    for path in (pois_file, index_file):
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: not a TRACE release folder")
    pois = {}
    for number, record in read_records(pois_file, PoiRecord, problems):
        try:
            poi = poi_from_record(record)
        except ValueError as exc:
            problems.append(LineError(file=str(pois_file), line=number, message=f"bad attributes: {exc}"))
            continue
        if poi.poi_id in pois:
            problems.append(
                LineError(file=str(pois_file), line=number, message=f"duplicate POI {poi.poi_id!r}")
            )
            continue
        pois[poi.poi_id] = poi
    index: dict[str, tuple[int, ReviewIndexRecord]] = {}
    for number, rec in read_records(index_file, ReviewIndexRecord, problems):
        if rec.poi_id not in pois:
            message = f"review {rec.review_id!r} of unknown POI {rec.poi_id!r}; left out"
            problems.append(LineError(file=str(index_file), line=number, message=message))
        elif rec.review_id in index:
            message = f"duplicate review {rec.review_id!r} (first at line {index[rec.review_id][0]})"
            problems.append(LineError(file=str(index_file), line=number, message=message))
        else:
            index[rec.review_id] = (number, rec)
    reviews = YelpReviews(index, index_file).read(review_file, problems, on_bytes)
    meta = _read_json(release_dir / RELEASE_JSON).get("kb", {})
    kb = KnowledgeBase(
        pois.values(), (reviews[r] for r in sorted(reviews)), name=str(meta.get("name") or "trace-release")
    )
    model = meta.get("stance_model")
    if isinstance(model, str) and model:
        polarity = make_model(model, kb.reviews.values())
        kb.set_stances(annotate(kb.reviews.values(), polarity), polarity.name)
    return kb


def import_release(
    release_dir: Path,
    review_file: Path,
    out_dir: Path,
    on_bytes: Callable[[int], None] | None = None,
) -> ReleaseReport:
    """Hydrate a release into ``out_dir``: ``{split}.jsonl`` (our dataset format), ``kb.sqlite``,
    ``manifest.json`` (with ``kb_path``), ``schema.json`` and the card. Problems are ``file:line``; the
    dialogues and reviews they concern are left out, the rest is written."""
    if release_dir.resolve() == out_dir.resolve():
        raise ValueError(f"{out_dir}: the output folder must differ from the release folder")
    problems: list[LineError] = []
    kb = read_release_kb(release_dir, review_file, problems, on_bytes)
    expected = _read_json(release_dir / RELEASE_JSON).get("kb", {}).get("content_hash")
    counts: dict[str, int] = {}
    out_dir.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        path = release_dir / DATA / f"{split}.jsonl.gz"
        if not path.is_file():
            continue
        counts[split] = write_dialogues(out_dir / f"{split}.jsonl", _hydrated_lines(path, kb, problems))
    if not counts:
        raise FileNotFoundError(f"{release_dir / DATA}: no train/validation/test .jsonl.gz found")
    kb_path = save_kb(kb, out_dir / "kb.sqlite", source=f"trace-release {release_dir}")
    manifest = _read_json(release_dir / MANIFEST)
    manifest.update(kb_path=str(kb_path.resolve()), kb_hash=kb.content_hash)
    manifest.setdefault("schema_version", SCHEMA_VERSION)
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    write_json_schema(out_dir / "schema.json")
    write_build_card(out_dir, kb, manifest)
    return ReleaseReport(
        splits=counts,
        pois=len(kb.pois),
        reviews=len(kb.reviews),
        kb_hash=kb.content_hash,
        kb_identical=None if not isinstance(expected, str) else expected == kb.content_hash,
        problems=problems,
    )


def _hydrated_lines(path: Path, kb: KnowledgeBase, problems: list[LineError]) -> Any:
    """The hydrated dialogues of one release split file (bad lines reported and left out)."""
    for number, raw in iter_lines(path, problems):
        try:
            line = ReleaseDialogue.model_validate_json(raw)
        except ValidationError as exc:
            message = f"not a release dialogue: {validation_message(exc, model=ReleaseDialogue, limit=3)}"
            problems.append(LineError(file=str(path), line=number, message=message))
            continue
        try:
            dialogue = hydrate_line(line, kb.reviews)
        except RedactionError as exc:
            message = f"{line.dialogue_id}: {exc}; dialogue left out"
            problems.append(LineError(file=str(path), line=number, message=message))
            continue
        yield dialogue
