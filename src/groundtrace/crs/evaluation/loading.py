"""Loading what a run needs: a knowledge base from a spec, the dialogues of a split, the dataset's KB.

* :func:`load_kb` — ``"demo"`` / ``"demo:SEED"`` (the generated city) or a KB file (``crs kb build``).
* :func:`load_dataset` — the dialogues of one split of a dataset folder (or a single JSONL file, its own
  split) as a :class:`DialogueList`: a ``list`` of :class:`Dialogue` that also carries the manifest and
  the ``file:line`` messages of the lines that were skipped.
* :func:`load_records` — the same split as lean records (:class:`~groundtrace.crs.dataset.lean.LeanDialogue`)
  in a :class:`RecordList`, read by the fast reader (:mod:`groundtrace.crs.dataset.lean_reader`): the same
  dialogues, values, skipped lines and messages, about 10x faster and in about a tenth of the memory. What
  ``crs run`` / ``crs score`` and :func:`~.evaluate.evaluate` read; its ``dataset_hash`` is computed while
  reading.
* :func:`resolve_kb` — the KB a dataset was built on: a spec, or (``None``) the demo city named by the
  manifest; refused when its content hash differs from the one recorded in the dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec

from groundtrace.crs.dataset.files import read_dataset
from groundtrace.crs.dataset.lean import LeanDialogue
from groundtrace.crs.dataset.lean_reader import DialogueLines, read_lean, read_lean_splits
from groundtrace.crs.kb.demo_cache import demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.store import load_kb as load_kb_file
from groundtrace.crs.schema import Dialogue

T = TypeVar("T")


class SplitList(list[T], Generic[T]):
    """The dialogues of a split (a plain list), plus ``manifest``, ``errors`` (skipped lines), ``path`` and
    ``split``: what both readers return (:class:`DialogueList`, :class:`RecordList`)."""

    def __init__(
        self,
        dialogues: Sequence[T] = (),
        *,
        manifest: dict[str, Any] | None = None,
        errors: Sequence[str] = (),
        path: Path | None = None,
        split: str = "",
    ) -> None:
        super().__init__(dialogues)
        self.manifest: dict[str, Any] = dict(manifest or {})
        self.errors: list[str] = list(errors)
        self.path = path
        self.split = split


class DialogueList(SplitList[Dialogue]):
    """The validated dialogues of a split (:func:`load_dataset`), with :class:`SplitList`'s attributes."""


class RecordList(SplitList[LeanDialogue]):
    """The lean records of a split (:func:`load_records`), with :class:`SplitList`'s attributes and
    ``dataset_hash`` (``run_files.dataset_hash`` of the whole list: a slice is a plain list without it)."""

    def __init__(
        self,
        dialogues: Sequence[LeanDialogue] = (),
        *,
        manifest: dict[str, Any] | None = None,
        errors: Sequence[str] = (),
        path: Path | None = None,
        split: str = "",
        dataset_hash: str = "",
    ) -> None:
        super().__init__(dialogues, manifest=manifest, errors=errors, path=path, split=split)
        self.dataset_hash = dataset_hash


@dataclass
class LoadedDataset:
    """The dialogues of one split (``all`` = every split), the manifest and the line errors."""

    dialogues: list[Dialogue]
    manifest: dict[str, Any]
    errors: list[str]


def load_split(path: Path | str, split: str = "test") -> LoadedDataset:
    """Dialogues of ``split`` from a dataset folder or file (a single file is its own split).

    ``ValueError`` naming the splits present when ``split`` is not one of them (``all`` = every split).
    """
    data = read_dataset(path)
    if split == "all" or Path(path).is_file():
        dialogues = data.all_dialogues()
    elif split in data.splits:
        dialogues = data.splits[split]
    else:
        raise ValueError(
            f"{path}: no split {split!r} (have: {', '.join(sorted(data.splits)) or 'none'}, or 'all')"
        )
    return LoadedDataset(dialogues, data.manifest, [str(e) for e in data.errors])


def load_dataset(path: Path | str, split: str = "test") -> DialogueList:
    """The dialogues of ``split`` (``train``, ``validation``, ``test`` or ``all``) as a :class:`DialogueList`.

    Bad lines are skipped and listed in ``.errors`` as ``file:line: message``; the rest is loaded.
    """
    data = load_split(path, split)
    return DialogueList(
        data.dialogues, manifest=data.manifest, errors=data.errors, path=Path(path), split=split
    )


def load_records(path: Path | str, split: str = "test") -> RecordList:
    """The dialogues of ``split`` as lean records in a :class:`RecordList` (the outcome of
    :func:`load_dataset`: same dialogues and values, same ``errors``, manifest and ``ValueError``)."""
    return _record_list(read_lean(path, split), path, split)


def _record_list(data: Any, path: Path | str, split: str) -> RecordList:
    return RecordList(
        data.dialogues,
        manifest=data.manifest,
        errors=data.errors,
        path=Path(path),
        split=split,
        dataset_hash=data.dataset_hash,
    )


def _predicted_ids(predictions: Path | str) -> set[str]:
    """The ``dialogue_id`` of every line of a predictions file that has one (bad lines are ignored here:
    the scorer reports them)."""

    class _Id(msgspec.Struct):
        dialogue_id: str

    decoder = msgspec.json.Decoder(_Id)
    ids: set[str] = set()
    with open(predictions, "rb") as handle:
        for line in handle:
            try:
                ids.add(decoder.decode(line).dialogue_id)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                continue  # RecursionError: a line nested deeper than msgspec's limit
    return ids


def load_predicted_split(dataset: Path | str, predictions: Path | str) -> tuple[str, RecordList]:
    """The split whose dialogues the predictions answer (:func:`predictions_split`'s rule) and its
    records, from one read of the dataset by the fast reader (every split is kept until the choice)."""
    splits = read_lean_splits(dataset, keep="all")
    split = _covering_split(dataset, splits.dialogues, predictions)
    return split, _record_list(splits.select(split), dataset, split)


def _covering_split(
    dataset: Path | str, by_split: dict[str, Sequence[Dialogue | LeanDialogue]], predictions: Path | str
) -> str:
    if Path(dataset).is_file():
        return Path(dataset).stem
    ids = _predicted_ids(predictions)
    covering = [name for name, dialogues in by_split.items() if ids & {d.dialogue_id for d in dialogues}]
    return covering[0] if len(covering) == 1 else "all"


def predictions_split(dataset: Path | str, predictions: Path | str) -> str:
    """The split whose dialogues the predictions answer: the one split holding every predicted dialogue
    id that the dataset has, ``all`` when they span several (or none is found). A single JSONL dataset
    file is its own split."""
    return load_predicted_split(dataset, predictions)[0]


def report_dialogues(dialogues: Sequence[Dialogue | LeanDialogue], dataset: Path | str | None) -> Any:
    """What a report reads for its evidence view and dialogue pages: ``dialogues`` as given when they are
    validated models; for lean records (which leave out persona, added constraints, cited tags ...) the
    whole dialogues of ``dataset`` by id, each parsed from its line when the report asks
    (:class:`~groundtrace.crs.dataset.lean_reader.DialogueLines`) — not the whole dataset again; None (the
    report finds the dataset itself, or goes without) for lean records and no ``dataset``."""
    if not any(isinstance(d, LeanDialogue) for d in dialogues[:1]):
        return list(dialogues)
    return DialogueLines(dataset, [d.dialogue_id for d in dialogues]) if dataset else None


def load_kb(spec: str | Path, *, expected: str = "") -> KnowledgeBase:
    """A knowledge base from ``"demo"`` (seed 0), ``"demo:SEED"`` or the path of a KB file. For the demo
    city, ``expected`` (a content hash) lets it be read from the user's cache
    (:func:`~groundtrace.crs.kb.demo_cache.demo_kb`) instead of generated."""
    text = str(spec)
    if text == "demo" or text.startswith("demo:"):
        raw_seed = text.split(":", 1)[1] if ":" in text else "0"
        if not raw_seed.lstrip("-").isdigit():
            raise ValueError(f"demo KB spec {text!r}: the seed must be an integer, e.g. 'demo:3'")
        return demo_kb(int(raw_seed), expected)
    return load_kb_file(spec)


def resolve_kb(
    spec: str | None, manifest: dict[str, Any], dialogues: Sequence[Dialogue | LeanDialogue]
) -> KnowledgeBase:
    """The KB of a dataset: a KB file, ``demo`` / ``demo:SEED``, or (``spec=None``) the KB file the
    manifest records (``kb_path``) or the generated demo city it names, when the content hash matches.
    Raises ``ValueError`` otherwise. The demo city is read from the user's cache when it holds the one of
    that hash (:mod:`groundtrace.crs.kb.demo_cache`), else generated (and then cached)."""
    expected = manifest.get("kb_hash") or next((d.kb_hash for d in dialogues if d.kb_hash), "")
    if spec is None and manifest.get("kb_path") and Path(str(manifest["kb_path"])).is_file():
        spec = str(manifest["kb_path"])
    if spec is None:
        name = str(manifest.get("kb_name", ""))
        if name.startswith("demo:") and name.rsplit(":", 1)[-1].startswith("seed"):
            kb = demo_kb(int(name.rsplit("seed", 1)[-1]), expected)
            if not expected or kb.content_hash == expected:
                return kb
        raise ValueError(
            f"cannot locate the KB of this dataset (kb {name or '?'}, hash {expected[:12] or '?'}): "
            "pass --kb FILE"
        )
    kb = load_kb(spec, expected=expected)
    if expected and kb.content_hash != expected:
        raise ValueError(
            f"KB {spec} has content hash {kb.content_hash[:12]}, the dataset was built on {expected[:12]}"
        )
    return kb
