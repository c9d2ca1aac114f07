"""``crs simulate``: many simulated dialogues, their summary, grounding scores and files.

Summary (``summary.json``), over the dialogues simulated:

* ``success_rate`` — accepted share; ``turns_to_success`` — mean system turns of the accepted ones;
* ``recovery_rate`` — the user's rejections whose next system top-1 met every hidden constraint, over
  all its rejections; ``success_after_rejection`` — accepted share of the dialogues with a rejection;
* ``repeats`` — recommendations of an already rejected POI (total and per system turn);
* ``grounding`` — the grounding-axis metrics of ``crs.metrics`` on the system's turns: each transcript
  becomes a dialogue whose system turns carry the last gold turn's labels, scored by
  ``score_predictions`` (metrics needing an entailment scorer are left out);
* ``usage`` — LLM tokens, cost and latency summed over the system turns; ``errors`` — failed dialogues.

Files: ``transcripts.jsonl`` (one :class:`~.loop.Transcript` a line), ``summary.json``,
``transcripts.html`` (jinja2, autoescaped: every text shown is untrusted).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader

from groundtrace.core.llm.base import LLMClient
from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.metrics import metrics_by_axis
from groundtrace.crs.schema import Dialogue, Turn, TurnGold
from groundtrace.crs.simulate.loop import DEFAULT_MAX_TURNS, Transcript, simulate_dialogue
from groundtrace.crs.systems.base import CRSSystem
from groundtrace.crs.systems.predictions import Prediction, Setting


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def as_scored(t: Transcript, dialogue: Dialogue) -> tuple[Dialogue, list[Prediction]]:
    """The transcript as a dialogue with gold system turns, and the system's predictions on them."""
    rec = dialogue.recommendation_turns()
    gold: TurnGold | None = rec[-1].gold if rec else None
    turns, preds = [], []
    for x in t.turns:
        scored = x.role == "system" and x.error is None and gold is not None
        turns.append(Turn(index=x.index, role=x.role, act=x.act, text=x.text, gold=gold if scored else None))  # type: ignore[arg-type]
        if scored:
            preds.append(
                Prediction(
                    dialogue_id=t.dialogue_id,
                    turn_index=x.index,
                    setting=t.setting,  # type: ignore[arg-type]
                    system=t.system,
                    ranking=x.ranking,
                    response=x.text,
                )
            )
    return dialogue.model_copy(update={"turns": turns}), preds


def grounding_scores(
    transcripts: Sequence[Transcript], dialogues: Sequence[Dialogue], kb: KnowledgeBase, setting: Setting
) -> dict[str, float | None]:
    """The grounding-axis metrics over the system turns of ``transcripts`` (module docstring)."""
    by_id = {d.dialogue_id: d for d in dialogues}
    scored, preds = [], []
    for t in transcripts:
        d, p = as_scored(t, by_id[t.dialogue_id])
        scored.append(d)
        preds += p
    if not preds:
        return {}
    metrics = [str(m) for m in metrics_by_axis()["grounding"] if m.requires != "entailment"]
    table = score_predictions(scored, preds, kb, setting=setting, metrics=metrics)
    return {k: v for k, v in table.aggregate.items()}


def summarise(transcripts: Sequence[Transcript]) -> dict[str, Any]:
    """The outcome part of ``summary.json`` (module docstring)."""
    n = len(transcripts)
    wins = [t for t in transcripts if t.success]
    with_rejection = [t for t in transcripts if t.rejections]
    rejections = sum(t.rejections for t in transcripts)
    system_turns = sum(t.system_turns for t in transcripts)
    sys_turns = [x for t in transcripts for x in t.turns if x.role == "system"]
    return {
        "dialogues": n,
        "success_rate": len(wins) / n if n else None,
        "turns_to_success": _mean([t.system_turns for t in wins]),
        "rejections": rejections,
        "recovery_rate": sum(t.recovered for t in transcripts) / rejections if rejections else None,
        "success_after_rejection": (
            sum(t.success for t in with_rejection) / len(with_rejection) if with_rejection else None
        ),
        "repeats": sum(t.repeats for t in transcripts),
        "repeat_rate": sum(t.repeats for t in transcripts) / system_turns if system_turns else None,
        "system_turns": system_turns,
        "errors": sum(t.error is not None for t in transcripts),
        "usage": {
            "prompt_tokens": sum(x.prompt_tokens for x in sys_turns),
            "completion_tokens": sum(x.completion_tokens for x in sys_turns),
            "cost_usd": sum(x.cost_usd for x in sys_turns),
            "latency_s_mean": _mean([x.latency_s for x in sys_turns]),
        },
    }


def simulate(
    system: CRSSystem,
    dialogues: Sequence[Dialogue],
    kb: KnowledgeBase,
    out: Path | str | None = None,
    *,
    setting: Setting = "closed",
    max_turns: int = DEFAULT_MAX_TURNS,
    llm: LLMClient | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, Any], list[Transcript]]:
    """Simulate every dialogue; the summary (module docstring) and the transcripts, written to ``out``.

    ``progress(done, total)`` is called before the first dialogue and after each one."""
    if max_turns < 1:
        raise ValueError("max_turns must be >= 1")
    transcripts: list[Transcript] = []
    for d in dialogues:
        if progress is not None:
            progress(len(transcripts), len(dialogues))
        transcripts.append(simulate_dialogue(system, d, kb, setting=setting, max_turns=max_turns, llm=llm))
    if progress is not None:
        progress(len(transcripts), len(dialogues))
    summary = {
        "system": system.name,
        "config": system.config(),
        "setting": setting,
        "max_turns": max_turns,
        "user_phrasing": getattr(llm, "model", None) if llm is not None else "template",
        **summarise(transcripts),
        "grounding": grounding_scores(transcripts, dialogues, kb, setting),
    }
    if out is not None:
        write_files(Path(out), summary, transcripts, kb)
    return summary, transcripts


def write_files(
    out: Path, summary: dict[str, Any], transcripts: Sequence[Transcript], kb: KnowledgeBase
) -> None:
    """``transcripts.jsonl``, ``summary.json`` and ``transcripts.html`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(t.to_json(), ensure_ascii=False) + "\n" for t in transcripts)
    (out / "transcripts.jsonl").write_text(lines, encoding="utf-8")
    (out / "summary.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "transcripts.html").write_text(render_html(summary, transcripts, kb), encoding="utf-8")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if value is None:
        return "—"
    return str(value)


def render_html(summary: dict[str, Any], transcripts: Sequence[Transcript], kb: KnowledgeBase) -> str:
    """The transcript view (autoescaped: system replies and POI names are untrusted text)."""
    env = Environment(loader=PackageLoader("groundtrace.crs.simulate", "templates"), autoescape=True)
    rows = [(k, _fmt(v)) for k, v in summary.items() if k not in ("usage", "grounding", "config")]
    rows += [(f"usage.{k}", _fmt(v)) for k, v in summary["usage"].items()]
    rows += [(k, _fmt(v)) for k, v in summary["grounding"].items()]
    names = {p: kb.pois[p].name for t in transcripts for x in t.turns for p in x.ranking[:1] if p in kb.pois}
    return env.get_template("transcripts.html.j2").render(
        summary=summary, summary_rows=rows, transcripts=transcripts, names=names
    )
