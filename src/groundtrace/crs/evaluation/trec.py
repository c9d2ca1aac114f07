"""TREC run and qrels files of a CRS run, so that ranx / ir-measures / trec_eval users can cross-check.

A query is one recommendation turn: ``qid = "{dialogue_id}:{turn_index}"`` (whitespace in ids is
replaced by ``_``). Relevance is the one our accuracy metrics use (:mod:`groundtrace.crs.metrics.accuracy`):
binary, single-reference — the turn's ``gold.gold_poi`` only.

* qrels line: ``qid 0 gold_poi 1`` — one per recommendation turn.
* run line: ``qid Q0 poi_id rank score tag`` — the prediction's ranking with repeats after the first
  occurrence removed (as the metrics read it), ``rank`` from 1 and ``score = n − rank + 1`` for a ranking
  of ``n`` ids, so that a tool re-sorting by score keeps our order (no ties). Ids outside the pool are
  kept (never relevant). A missing or errored prediction writes no line.

Our means count such a turn as 0 over every turn of the split; trec_eval / ir-measures average over
the queries present in the run, so they agree with ours only when every turn has a ranking — ranx does
with ``evaluate(qrels, run, ..., make_comparable=True)`` (docs/crs-evaluation.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from groundtrace.crs.dataset.lean import AnyDialogue
from groundtrace.crs.evaluation.loading import load_records
from groundtrace.crs.evaluation.run_files import PREDICTIONS_FILE, RUN_FILE, SCORES_FILE, read_predictions
from groundtrace.crs.systems.predictions import Prediction

_SPACE = re.compile(r"\s+")


def trec_id(text: str) -> str:
    """``text`` with each whitespace run replaced by ``_`` (TREC files are whitespace-separated)."""
    return _SPACE.sub("_", text.strip()) or "_"


def query_id(dialogue_id: str, turn_index: int) -> str:
    """The TREC query id of a recommendation turn: ``"{dialogue_id}:{turn_index}"``."""
    return f"{trec_id(dialogue_id)}:{turn_index}"


def qrels_lines(dialogues: Iterable[AnyDialogue]) -> list[str]:
    """``qid 0 gold_poi 1`` for each recommendation turn of ``dialogues`` (module docstring)."""
    lines = []
    for dialogue in dialogues:
        for turn in dialogue.recommendation_turns():
            assert turn.gold is not None
            lines.append(f"{query_id(dialogue.dialogue_id, turn.index)} 0 {trec_id(turn.gold.gold_poi)} 1")
    return lines


def run_lines(
    predictions: Iterable[Prediction], dialogues: Sequence[AnyDialogue], setting: str, tag: str
) -> list[str]:
    """``qid Q0 poi rank score tag`` for the predictions of ``setting`` that answer a recommendation turn
    of ``dialogues`` without error (first prediction of a turn only; module docstring)."""
    turns = {(d.dialogue_id, t.index) for d in dialogues for t in d.recommendation_turns()}
    seen: set[tuple[str, int]] = set()
    lines = []
    name = trec_id(tag)
    for p in predictions:
        key = (p.dialogue_id, p.turn_index)
        if p.setting != setting or key not in turns or key in seen:
            continue
        seen.add(key)
        if p.error is not None:
            continue
        ranking = list(dict.fromkeys(p.ranking))
        qid = query_id(*key)
        n = len(ranking)
        lines.extend(
            f"{qid} Q0 {trec_id(poi)} {rank} {n - rank + 1} {name}" for rank, poi in enumerate(ranking, 1)
        )
    return lines


def write_lines(lines: Sequence[str], out: Path | str) -> Path:
    """Write ``lines`` (newline-terminated) to ``out``; returns the path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return out


def export_run(
    run_dir: Path | str,
    out: Path | str,
    *,
    qrels: Path | str | None = None,
    dataset: Path | str | None = None,
    tag: str | None = None,
) -> tuple[int, int, list[str]]:
    """Write the TREC run of the run folder ``run_dir`` to ``out`` (and its qrels to ``qrels``).

    The queries are the recommendation turns of the dialogues the run scored (``scores.json``), read
    from ``dataset`` (default: ``run.json["dataset"]``) at ``run.json["split"]``; ``tag`` defaults to
    ``run.json["label"]`` or ``["system"]``. Returns ``(run lines, qrels lines, bad prediction lines)``.
    ``ValueError`` / ``FileNotFoundError`` naming the file when the folder or dataset cannot be read.
    """
    folder = Path(run_dir)
    for name in (RUN_FILE, SCORES_FILE, PREDICTIONS_FILE):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder / name}: no such file (not a finished run folder)")
    try:
        info = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
        scores = json.loads((folder / SCORES_FILE).read_text(encoding="utf-8"))
        scored = {str(d["dialogue_id"]) for d in scores.get("dialogues", [])}
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"{folder}: unreadable run.json / scores.json: {exc}") from None
    source = dataset if dataset is not None else info.get("dataset")
    if not source:
        raise ValueError(f"{folder / RUN_FILE}: names no dataset; pass one")
    data = load_records(source, str(info.get("split", "test")))  # the fast reader: ids and gold suffice
    dialogues = [d for d in data if d.dialogue_id in scored]
    file = read_predictions(folder / PREDICTIONS_FILE)
    setting = str(scores.get("setting", info.get("setting", "closed")))
    name = tag or str(info.get("label") or info.get("system") or folder.name)
    lines = run_lines(file.predictions, dialogues, setting, name)
    write_lines(lines, out)
    judged = qrels_lines(dialogues)
    if qrels is not None:
        write_lines(judged, qrels)
    return len(lines), len(judged) if qrels is not None else 0, list(file.errors)
