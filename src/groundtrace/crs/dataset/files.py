"""Read and write TRACE-CRS dataset files (JSONL of :class:`~groundtrace.crs.schema.Dialogue`).

Layout of a dataset folder: ``train.jsonl``, ``validation.jsonl``, ``test.jsonl`` (any may be absent)
and ``manifest.json``. Each line is one dialogue serialised by :func:`dialogue_line` — pydantic's compact
JSON, UTF-8, ``\\n``-terminated — so writing what was read gives byte-identical files.

Reading is forgiving by default: a malformed line becomes a :class:`LineError` in ``reader.errors`` and the
rest of the file is still read; ``strict=True`` raises :class:`DatasetFormatError` on the first one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from groundtrace.core.files.errors import LineError
from groundtrace.core.files.jsonl import iter_jsonl
from groundtrace.core.files.validation import validation_message
from groundtrace.crs.schema import SCHEMA_VERSION, Dialogue

SPLITS: tuple[str, ...] = ("train", "validation", "test")
MANIFEST = "manifest.json"
SCHEMA_ID = f"https://groundtrace.dev/schemas/trace-crs/dialogue-{SCHEMA_VERSION}.json"


class DatasetFormatError(ValueError):
    """Raised by strict reading on the first malformed line; carries the :class:`LineError`."""

    def __init__(self, error: LineError) -> None:
        super().__init__(str(error))
        self.error = error


def dialogue_line(dialogue: Dialogue) -> str:
    """The canonical one-line serialisation of a dialogue (with the trailing newline). Every field is
    written, ``legs`` too (an empty list for a single-type dialogue): format v2 gives every record the
    same fields, so column-typed readers see one type per column."""
    return dialogue.model_dump_json() + "\n"


class DialogueReader:
    """An iterator over the dialogues of one JSONL file (single pass, lazy); malformed lines land in
    :attr:`errors` (or raise :class:`DatasetFormatError` if strict). ``iter_numbered()`` starts a new pass
    yielding ``(line_number, dialogue)``."""

    def __init__(self, path: Path | str, *, strict: bool = False) -> None:
        self.path = Path(path)
        self.strict = strict
        self.errors: list[LineError] = []
        self._numbered: Iterator[tuple[int, Dialogue]] | None = None

    def _fail(self, line: int, message: str) -> None:
        error = LineError(file=str(self.path), line=line, message=message)
        if self.strict:
            raise DatasetFormatError(error)
        self.errors.append(error)

    def iter_numbered(self) -> Iterator[tuple[int, Dialogue]]:
        """``(line_number, dialogue)`` pairs; a new pass (``errors`` restarts empty)."""
        self.errors.clear()
        for number, obj, error in iter_jsonl(self.path):  # lines split on b"\n" only
            if error is not None:
                self._fail(number, error.message)
                continue
            try:
                yield number, Dialogue.model_validate(obj)
            except ValidationError as exc:
                self._fail(
                    number, f"not a valid Dialogue: {validation_message(exc, model=Dialogue, limit=5)}"
                )

    def __iter__(self) -> DialogueReader:
        return self

    def __next__(self) -> Dialogue:
        if self._numbered is None:
            self._numbered = self.iter_numbered()
        return next(self._numbered)[1]


def read_dialogues(path: Path | str, *, strict: bool = False) -> DialogueReader:
    """An iterator over the dialogues of ``path``; see :class:`DialogueReader` (``.errors`` after
    iterating)."""
    return DialogueReader(path, strict=strict)


def write_dialogues(path: Path | str, dialogues: Iterable[Dialogue]) -> int:
    """Write dialogues as canonical JSONL (atomic replace); returns how many were written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    count = 0
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        for dialogue in dialogues:
            handle.write(dialogue_line(dialogue))
            count += 1
    tmp.replace(path)
    return count


class Dataset(BaseModel):
    """A dataset read from a folder or a single file: dialogues per split, the manifest, the line errors."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    splits: dict[str, list[Dialogue]]
    manifest: dict[str, Any]
    errors: list[LineError]

    def all_dialogues(self) -> list[Dialogue]:
        return [d for split in SPLITS for d in self.splits.get(split, [])] + [
            d for name, ds in self.splits.items() if name not in SPLITS for d in ds
        ]


def dataset_files(dir_or_file: Path | str) -> list[Path]:
    """The JSONL files of a dataset: the file itself, or the split files present in a folder."""
    path = Path(dir_or_file)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such dataset file or folder")
    files = [path / f"{split}.jsonl" for split in SPLITS if (path / f"{split}.jsonl").is_file()]
    if not files:
        raise FileNotFoundError(f"{path}: no train.jsonl / validation.jsonl / test.jsonl found")
    return files


def read_dataset(dir_or_file: Path | str, *, strict: bool = False) -> Dataset:
    """Read a dataset folder (split files + manifest.json) or a single JSONL file (split = file stem; the
    ``manifest.json`` next to it, when there is one, is its manifest).

    A ``dialogue_id`` seen before (in this file or an earlier split file) is a line error
    ``duplicate dialogue_id 'X' (first at FILE:LINE); skipped`` and only its first line is kept. A
    ``manifest.json`` that is not a JSON object (bad JSON, not UTF-8, NaN, an array...) is one line error
    and the manifest is empty.
    """
    path = Path(dir_or_file)
    splits: dict[str, list[Dialogue]] = {}
    errors: list[LineError] = []
    first_at: dict[str, str] = {}
    for file in dataset_files(path):
        reader = read_dialogues(file, strict=strict)
        kept: list[Dialogue] = []
        duplicates: list[LineError] = []
        for number, dialogue in reader.iter_numbered():
            if dialogue.dialogue_id in first_at:
                first = first_at[dialogue.dialogue_id]
                message = f"duplicate dialogue_id {dialogue.dialogue_id!r} (first at {first}); skipped"
                duplicate = LineError(file=str(file), line=number, message=message)
                if strict:
                    raise DatasetFormatError(duplicate)
                duplicates.append(duplicate)
                continue
            first_at[dialogue.dialogue_id] = f"{file}:{number}"
            kept.append(dialogue)
        splits[file.stem] = kept
        errors.extend(sorted([*reader.errors, *duplicates], key=lambda e: e.line))
    manifest: dict[str, Any] = {}
    # a single split file reads the manifest next to it (the dataset folder it came from)
    manifest_path = path / MANIFEST if path.is_dir() else path.with_name(MANIFEST)
    if manifest_path is not None and manifest_path.is_file():
        manifest, problem = read_manifest(manifest_path)
        if problem is not None:
            errors.append(problem)
    return Dataset(splits=splits, manifest=manifest, errors=errors)


def read_manifest(path: Path) -> tuple[dict[str, Any], LineError | None]:
    """The manifest object, or ``({}, LineError)`` when the file is not a JSON object."""

    def refuse(name: str) -> float:
        raise ValueError(f"non-finite number {name} is not JSON")

    try:
        value = json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)
    except json.JSONDecodeError as exc:
        return {}, LineError(file=str(path), line=exc.lineno, message=f"invalid JSON: {exc.msg}")
    except UnicodeDecodeError as exc:
        return {}, LineError(file=str(path), line=0, message=f"not valid UTF-8 ({exc.reason})")
    except RecursionError:
        return {}, LineError(file=str(path), line=0, message="JSON nested too deeply")
    except ValueError as exc:
        return {}, LineError(file=str(path), line=0, message=str(exc))
    if not isinstance(value, dict):
        return {}, LineError(
            file=str(path), line=0, message=f"expected a JSON object, got {type(value).__name__}"
        )
    return value, None


class MigrationReport(BaseModel):
    """What :func:`migrate_dataset` wrote: dialogues per split file, old versions seen, skipped lines."""

    files: dict[str, int]
    old_versions: dict[str, int]
    errors: list[LineError]


def migrate_dataset(source: Path | str, out_dir: Path | str) -> MigrationReport:
    """Rewrite a dataset (any readable format version) in the current format into ``out_dir``.

    Each split file is read (old lines are migrated on read, see :mod:`groundtrace.crs.schema`) and written
    canonically; ``manifest.json`` is copied with its ``schema_version`` set to the current one. Bad lines
    are skipped and reported; the rest is written.
    """
    source, out_dir = Path(source), Path(out_dir)
    folder = source if source.is_dir() else source.parent
    if folder.resolve() == out_dir.resolve():
        raise ValueError(f"{out_dir}: the output folder must differ from the input folder")
    files: dict[str, int] = {}
    old: dict[str, int] = {}
    errors: list[LineError] = []
    for file in dataset_files(source):
        for _, obj, _error in iter_jsonl(file):
            version = obj.get("schema_version") if isinstance(obj, dict) else None
            if isinstance(version, str) and version != SCHEMA_VERSION:
                old[version] = old.get(version, 0) + 1
        reader = read_dialogues(file)
        files[file.name] = write_dialogues(out_dir / file.name, reader)
        errors.extend(reader.errors)
    manifest_path = folder / MANIFEST
    if manifest_path.is_file():
        manifest, problem = read_manifest(manifest_path)
        if problem is not None:
            errors.append(problem)
        else:
            manifest["schema_version"] = SCHEMA_VERSION
            (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return MigrationReport(files=files, old_versions=old, errors=errors)


def dialogue_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of one dataset line, generated from :class:`Dialogue`, with $id and
    version."""
    schema = Dialogue.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "version": SCHEMA_VERSION,
        **schema,
    }


def write_json_schema(path: Path | str) -> Path:
    """Write :func:`dialogue_json_schema` to ``path`` (pretty, sorted keys); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(dialogue_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return path
