"""Redact review text out of a TRACE-CRS release, and hydrate it back from the user's own Yelp download.

Yelp's terms forbid redistributing review text, so a release replaces every quoted snippet in a turn text
by a placeholder and ships only what is needed to restore it from ``yelp_academic_dataset_review.json``.

Placeholder grammar (in a redacted turn text)
---------------------------------------------
``⟦Q:<review_id>:<start>-<end>⟧`` — the snippet is exactly ``review.text[start:end]`` (code-point offsets).
``⟦Q:<review_id>:<start>-<end>~<k>⟧`` — near-verbatim: apply edit script ``k`` of ``redaction.json`` to
``review.text[start:end]``. The review id may not contain ``⟦`` or ``⟧``; the offsets are decimal.

Escaping: every literal ``⟦`` of the original text is written ``⟦⟦``. A reader scans left to right:
``⟦⟦`` is a literal ``⟦``, ``⟦Q:...⟧`` a placeholder, any other ``⟦`` is an error. ``⟧`` needs no escape
(it only ends a placeholder). So a text that already contains placeholder-like characters round-trips.

Edit script: difflib opcodes from the review slice to the quote, without the ``equal`` ones, as
``[i1, i2, replacement]`` (replace ``slice[i1:i2]`` by ``replacement``; i1 == i2 is an insertion,
an empty replacement a deletion), applied left to right.

``redaction.json`` (next to the redacted split files) holds the format version, the grammar, the edit
scripts, a fingerprint per restored span (first 16 hex of ``sha256(review.text[start:end])``, to detect a
different version of the review) and the sha256 of every original file, so hydration can prove it gave back
byte-identical files. ``manifest.json`` is copied verbatim. Which snippets to redact: each turn's
``quote_spans`` (turn offsets ``start``/``end``, review offsets ``review_start``/``review_end``), plus any
quoted snippet cited with ``[Rn]`` that no span covers, located in its cited review at >= 0.80
(:meth:`Redactor.uncovered_spans`).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, locate_quote
from groundtrace.core.files.errors import LineError
from groundtrace.crs.dataset.card import write_export_card
from groundtrace.crs.dataset.files import (
    MANIFEST,
    dataset_files,
    dialogue_line,
    read_dialogues,
    write_json_schema,
)
from groundtrace.crs.dataset.fingerprints import fingerprint
from groundtrace.crs.dataset.placeholders import (
    CLOSE,
    OPEN,
    PLACEHOLDER_GRAMMAR,
    Placeholder,
    RedactionError,
    escape_text,
    placeholder_text,
    split_redacted,
)
from groundtrace.crs.dataset.text import quoted_snippets
from groundtrace.crs.kb.yelp import iter_json_lines
from groundtrace.crs.schema import Dialogue, QuoteSpan, Turn

FORMAT = "groundtrace-redaction"
FORMAT_VERSION = 1
SIDECAR = "redaction.json"
EditOp = tuple[int, int, str]


# -- edit scripts -------------------------------------------------------------------------------------


def edit_script(source: str, target: str) -> list[EditOp]:
    """Non-equal difflib opcodes turning ``source`` into ``target`` as ``(i1, i2, replacement)``."""
    matcher = difflib.SequenceMatcher(None, source, target, autojunk=False)
    return [(i1, i2, target[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def apply_edits(source: str, ops: Iterable[EditOp | list[Any]]) -> str:
    """Apply an :func:`edit_script` to ``source`` (ops sorted by position, non-overlapping)."""
    out: list[str] = []
    pos = 0
    for i1, i2, replacement in ops:
        if i1 < pos or i2 < i1 or i2 > len(source):
            raise RedactionError(
                f"invalid edit op {[i1, i2, replacement]!r} for a span of length {len(source)}"
            )
        out.append(source[pos:i1])
        out.append(replacement)
        pos = i2
    out.append(source[pos:])
    return "".join(out)


# -- text level -----------------------------------------------------------------------------------------


class Redactor:
    """Redacts dialogues against a mapping ``review_id -> review text``; accumulates edits and
    fingerprints."""

    def __init__(self, review_texts: Mapping[str, str]) -> None:
        self.review_texts = review_texts
        self.edits: list[list[EditOp]] = []
        self.fingerprints: dict[str, str] = {}
        self.quotes = 0
        self.near_verbatim = 0

    def resolve_spans(self, turn: Turn, spans: Iterable[QuoteSpan]) -> list[tuple[QuoteSpan, str, str]]:
        """``(span, review slice, quote)`` for each span in text order, after checking that the spans do not
        overlap, lie inside the turn text and inside a known review (:class:`RedactionError` otherwise)."""
        text = turn.text
        out: list[tuple[QuoteSpan, str, str]] = []
        pos = 0
        for span in sorted(spans, key=lambda s: (s.start, s.end)):
            if not (pos <= span.start < span.end <= len(text)):
                raise RedactionError(
                    f"turn {turn.index}: quote span {span.start}-{span.end} overlaps another or lies "
                    "outside the text"
                )
            if OPEN in span.review_id or CLOSE in span.review_id:
                raise RedactionError(f"turn {turn.index}: review id {span.review_id!r} contains ⟦ or ⟧")
            review = self.review_texts.get(span.review_id)
            if review is None:
                raise RedactionError(f"turn {turn.index}: review {span.review_id!r} is not in the KB")
            if not (0 <= span.review_start <= span.review_end <= len(review)):
                raise RedactionError(
                    f"turn {turn.index}: review span {span.review_start}-{span.review_end} outside review "
                    f"{span.review_id!r} (length {len(review)})"
                )
            out.append((span, review[span.review_start : span.review_end], text[span.start : span.end]))
            pos = span.end
        return out

    def redact_turn(self, turn: Turn, extra_spans: Iterable[QuoteSpan] = ()) -> str:
        """The redacted text of ``turn``: its ``quote_spans`` (plus ``extra_spans``) become placeholders."""
        text = turn.text
        out: list[str] = []
        pos = 0
        for span, source, quote in self.resolve_spans(turn, [*turn.quote_spans, *extra_spans]):
            placeholder = Placeholder(review_id=span.review_id, start=span.review_start, end=span.review_end)
            if quote != source:
                self.edits.append(edit_script(source, quote))
                placeholder.edit = len(self.edits) - 1
                self.near_verbatim += 1
            self.fingerprints[f"{span.review_id}:{span.review_start}-{span.review_end}"] = fingerprint(source)
            self.quotes += 1
            out.append(escape_text(text[pos : span.start]))
            out.append(placeholder_text(placeholder))
            pos = span.end
        out.append(escape_text(text[pos:]))
        return "".join(out)

    def uncovered_spans(self, dialogue: Dialogue, turn: Turn) -> tuple[list[QuoteSpan], list[str]]:
        """Spans for cited quotes that no ``quote_spans`` entry covers, located in their cited review.

        Each quoted snippet attached to ``[Rn]`` tags (``groundtrace.core.evidence.citations``) that
        overlaps no declared span is aligned with ``groundtrace.core.evidence.quotes.locate_quote`` against
        each cited review; the best match at >= 0.80 becomes a span (used for redaction only; the dialogue
        is not changed). Returns the spans and a note for every quote that matches no cited review (kept as
        written: it is not review text).
        """
        declared = [(s.start, s.end) for s in turn.quote_spans]
        spans: list[QuoteSpan] = []
        notes: list[str] = []
        for snippet, tags, q_start, q_end in quoted_snippets(turn.text):
            if any(a < q_end and q_start < b for a, b in declared):
                continue
            best: tuple[float, str, str, int, int] | None = None
            for tag in tags:
                ref = dialogue.review_refs.get(tag)
                review = self.review_texts.get(ref.review_id) if ref is not None else None
                if review is None:
                    continue
                match = locate_quote(snippet, review)
                if best is None or match.score > best[0]:
                    best = (match.score, tag, ref.review_id, match.start, match.end)  # type: ignore[union-attr]
            if best is None or best[0] < GROUNDED_THRESHOLD:
                notes.append(
                    f"turn {turn.index}: quote {snippet[:40]!r} matches no cited review; left as written"
                )
                continue
            _, tag, review_id, r_start, r_end = best
            spans.append(
                QuoteSpan(
                    tag=tag,
                    review_id=review_id,
                    start=q_start,
                    end=q_end,
                    review_start=r_start,
                    review_end=r_end,
                )
            )
        return spans, notes

    def redact_dialogue(self, dialogue: Dialogue) -> tuple[Dialogue, list[str]]:
        """A copy of ``dialogue`` with every turn text redacted, and notes on quotes left as written."""
        turns = []
        notes: list[str] = []
        for turn in dialogue.turns:
            extra, turn_notes = self.uncovered_spans(dialogue, turn)
            notes.extend(turn_notes)
            turns.append(turn.model_copy(update={"text": self.redact_turn(turn, extra)}))
        return dialogue.model_copy(update={"turns": turns}), notes


class RedactionReport(BaseModel):
    """What :func:`redact_dataset` did."""

    files: list[str]
    dialogues: int
    quotes: int
    near_verbatim: int
    problems: list[LineError]


def _distinct_dirs(source: Path, out_dir: Path) -> None:
    if source.resolve() == out_dir.resolve():
        raise RedactionError(f"{out_dir}: the output folder must differ from the input folder")


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def redact_dataset(source: Path, out_dir: Path, review_texts: Mapping[str, str]) -> RedactionReport:
    """Redact a dataset file or folder into ``out_dir`` (split files, copied manifest, ``redaction.json``).

    A dialogue that cannot be redacted (bad span, review not in ``review_texts``) is *left out* and
    reported as a problem: nothing unredacted is ever written. A line that is not canonical (as written by
    :func:`~groundtrace.crs.dataset.files.write_dialogues`) is reported, since hydration restores the
    canonical form.
    """
    _distinct_dirs(source if source.is_dir() else source.parent, out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    redactor = Redactor(review_texts)
    problems: list[LineError] = []
    files: dict[str, str] = {}
    n = 0
    for file in dataset_files(source):
        with open(file, "rb") as handle:
            raw_lines = handle.read().split(b"\n")  # only for the canonical-form check, by line number
        reader = read_dialogues(file)
        target = out_dir / file.name
        with open(target, "w", encoding="utf-8", newline="\n") as out:
            for number, dialogue in reader.iter_numbered():
                canonical = dialogue_line(dialogue).encode("utf-8")
                if raw_lines[number - 1] + b"\n" != canonical:
                    problems.append(
                        LineError(
                            file=str(file),
                            line=number,
                            message="line is not in canonical form; hydration will give the canonical form",
                        )
                    )
                try:
                    redacted, notes = redactor.redact_dialogue(dialogue)
                except RedactionError as exc:
                    problems.append(
                        LineError(
                            file=str(file),
                            line=number,
                            message=f"{dialogue.dialogue_id}: {exc} (dialogue left out)",
                        )
                    )
                    continue
                problems.extend(
                    LineError(file=str(file), line=number, message=f"{dialogue.dialogue_id}: {n}")
                    for n in notes
                )
                out.write(dialogue_line(redacted))
                n += 1
        problems.extend(reader.errors)
        files[file.name] = _sha256_file(file)
    manifest = source / MANIFEST if source.is_dir() else None
    if manifest is not None and manifest.is_file():
        shutil.copyfile(manifest, out_dir / MANIFEST)
    sidecar = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "placeholder": PLACEHOLDER_GRAMMAR,
        "edit_script": "[i1, i2, replacement] applied left to right to review.text[start:end]",
        "edits": [[list(op) for op in ops] for ops in redactor.edits],
        "fingerprints": dict(sorted(redactor.fingerprints.items())),
        "original_sha256": files,
    }
    (out_dir / SIDECAR).write_text(json.dumps(sidecar, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return RedactionReport(
        files=sorted(files),
        dialogues=n,
        quotes=redactor.quotes,
        near_verbatim=redactor.near_verbatim,
        problems=problems,
    )


# -- hydration ------------------------------------------------------------------------------------------


def needed_spans(redacted_dir: Path) -> dict[str, set[tuple[int, int]]]:
    """``review_id -> {(start, end)}`` over every placeholder of the redacted files."""
    needed: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for file in dataset_files(redacted_dir):
        for dialogue in read_dialogues(file):
            for turn in dialogue.turns:
                try:
                    parts = split_redacted(turn.text)
                except RedactionError:
                    continue  # reported by hydrate_dataset
                for part in parts:
                    if isinstance(part, Placeholder):
                        needed[part.review_id].add((part.start, part.end))
    return needed


_REVIEW_ID_RE = re.compile(rb'"review_id" ?: ?"([^"\\]*)"')


def collect_review_slices(
    review_file: Path,
    needed: Mapping[str, set[tuple[int, int]]],
    errors: list[LineError],
    on_bytes: Callable[[int], None] | None = None,
) -> dict[tuple[str, int, int], str]:
    """Stream a Yelp review file once, keeping only the needed slices ``(review_id, start, end) -> text``.

    Memory is the size of the slices, not of the file: lines whose ``review_id`` is not needed are skipped
    without JSON decoding. A needed span beyond the end of its review is left out (reported by hydration).
    """

    def keep(raw: bytes) -> bool:
        match = _REVIEW_ID_RE.search(raw)
        if match is None:  # unusual spacing or an escaped id: let the full parser decide
            return True
        return match.group(1).decode("utf-8", errors="replace") in needed

    slices: dict[tuple[str, int, int], str] = {}
    for number, obj in iter_json_lines(review_file, errors, on_bytes, prefilter=keep):
        rid, text = obj.get("review_id"), obj.get("text")
        if not isinstance(rid, str) or rid not in needed:
            continue
        if not isinstance(text, str):
            errors.append(
                LineError(file=str(review_file), line=number, message=f"review {rid!r} has no text")
            )
            continue
        for start, end in needed[rid]:
            if end <= len(text):
                slices[(rid, start, end)] = text[start:end]
    return slices


class HydrationReport(BaseModel):
    """What :func:`hydrate_dataset` did; ``missing``/``mismatched`` list every span it could not restore."""

    files: list[str]
    dialogues: int
    restored: int
    missing: list[str]
    mismatched: list[str]
    identical: dict[str, bool | None]
    problems: list[LineError]

    @property
    def ok(self) -> bool:
        return not self.missing and not self.mismatched and not self.problems


def hydrate_text(
    text: str,
    slices: Mapping[tuple[str, int, int], str],
    edits: list[list[list[Any]]],
    fingerprints: Mapping[str, str],
    missing: list[str],
    mismatched: list[str],
    where: str,
) -> tuple[str, int]:
    """Restore one redacted text; unrecoverable placeholders stay as they are and are recorded."""
    out: list[str] = []
    restored = 0
    for part in split_redacted(text):
        if isinstance(part, str):
            out.append(part)
            continue
        key = f"{part.review_id}:{part.start}-{part.end}"
        source = slices.get((part.review_id, part.start, part.end))
        if source is None:
            missing.append(
                f"{where}: review {part.review_id} ({part.start}-{part.end}) not found in the review file"
            )
            out.append(placeholder_text(part))
            continue
        expected = fingerprints.get(key)
        if expected is not None and fingerprint(source) != expected:
            mismatched.append(
                f"{where}: review {part.review_id} text differs from the one redacted (fingerprint)"
            )
            out.append(placeholder_text(part))
            continue
        if part.edit is not None:
            if part.edit >= len(edits):
                raise RedactionError(f"{where}: edit script {part.edit} not in {SIDECAR}")
            source = apply_edits(source, [tuple(op) for op in edits[part.edit]])
        out.append(source)
        restored += 1
    return "".join(out), restored


def hydrate_dataset(
    redacted_dir: Path,
    slices: Mapping[tuple[str, int, int], str],
    out_dir: Path,
) -> HydrationReport:
    """Write the hydrated dataset to ``out_dir`` and compare each file with its original sha256.

    Next to the split files, as ``crs export`` writes them: ``manifest.json`` and ``kb_ids.json``
    (copied), ``dialogue.schema.json`` and the dataset card ``README.md`` (review text included).
    An unrestorable placeholder is kept in the output as its placeholder string and listed in
    ``missing``/``mismatched``; nothing is dropped silently.
    """
    _distinct_dirs(redacted_dir, out_dir)
    sidecar_path = redacted_dir / SIDECAR
    if not sidecar_path.is_file():
        raise FileNotFoundError(f"{sidecar_path} not found: not a redacted release")
    sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
    if sidecar.get("format") != FORMAT or int(sidecar.get("format_version", 0)) > FORMAT_VERSION:
        raise RedactionError(
            f"{sidecar_path}: unsupported redaction format {sidecar.get('format')!r} "
            f"v{sidecar.get('format_version')}"
        )
    edits, fingerprints = sidecar.get("edits", []), sidecar.get("fingerprints", {})
    originals: dict[str, str] = sidecar.get("original_sha256", {})
    out_dir.mkdir(parents=True, exist_ok=True)
    missing: list[str] = []
    mismatched: list[str] = []
    problems: list[LineError] = []
    identical: dict[str, bool | None] = {}
    restored = n = 0
    for file in dataset_files(redacted_dir):
        reader = read_dialogues(file)
        target = out_dir / file.name
        with open(target, "w", encoding="utf-8", newline="\n") as out:
            for number, dialogue in reader.iter_numbered():
                turns = []
                for turn in dialogue.turns:
                    where = f"{file.name}:{number} {dialogue.dialogue_id} turn {turn.index}"
                    try:
                        text, k = hydrate_text(
                            turn.text, slices, edits, fingerprints, missing, mismatched, where
                        )
                    except RedactionError as exc:
                        problems.append(LineError(file=str(file), line=number, message=str(exc)))
                        text, k = turn.text, 0
                    restored += k
                    turns.append(turn.model_copy(update={"text": text}))
                out.write(dialogue_line(dialogue.model_copy(update={"turns": turns})))
                n += 1
        problems.extend(reader.errors)
        identical[file.name] = (
            (_sha256_file(target) == originals[file.name]) if file.name in originals else None
        )
    for name in (MANIFEST, "kb_ids.json"):
        if (redacted_dir / name).is_file():
            shutil.copyfile(redacted_dir / name, out_dir / name)
    write_json_schema(out_dir / "dialogue.schema.json")
    write_export_card(out_dir, None, redacted=False, hydrated=True)
    return HydrationReport(
        files=sorted(identical),
        dialogues=n,
        restored=restored,
        missing=missing,
        mismatched=mismatched,
        identical=identical,
        problems=problems,
    )


def kb_id_export(review_poi: Mapping[str, str], poi_ids: Iterable[str], kb_hash: str) -> dict[str, Any]:
    """A KB export without any review text: POI ids and ``review_id -> poi_id`` only."""
    return {
        "format": "groundtrace-kb-ids",
        "kb_hash": kb_hash,
        "poi_ids": sorted(poi_ids),
        "reviews": dict(sorted(review_poi.items())),
    }
