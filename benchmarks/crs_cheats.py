"""Score the cheats of ``groundtrace.crs.metrics.cheats`` (issue 23) and the two reference systems on a
dataset folder, and print one row per answer set.

    python benchmarks/crs_cheats.py --dataset DS [--kb KB] [--split all] [--metrics es,ce,gs,cgs,...]

Rows: ``oracle`` and ``random`` (the real reference systems), ``gold`` (the dataset's own answers) and
every cheat; columns: the aggregates of ``--metrics``. Nothing is written.
"""

from __future__ import annotations

import argparse

from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.evaluation.loading import load_dataset, resolve_kb
from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.metrics.cheats import make_cheats
from groundtrace.crs.systems.reference import OracleSystem, RandomSystem

DEFAULT_METRICS = (
    "evidence_support,constraint_evidence,gs,cgs,rejected_repeat,hallucinated_attribute_rate,recall@1"
)


def _system_predictions(system, dialogues, kb, needs_gold: bool):
    from groundtrace.crs.systems.predictions import Prediction

    out = []
    for d in dialogues:
        for t, inp in system_inputs(d, kb, "closed"):
            result = system.respond(inp, t.gold) if needs_gold else system.respond(inp)
            out.append(
                Prediction(
                    dialogue_id=d.dialogue_id,
                    turn_index=t.index,
                    ranking=result.ranking,
                    response=result.response,
                )
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--kb", default=None)
    ap.add_argument("--split", default="all")
    ap.add_argument("--metrics", default=DEFAULT_METRICS)
    args = ap.parse_args()
    dialogues = load_dataset(args.dataset, args.split)
    kb = resolve_kb(args.kb, dialogues.manifest, dialogues)
    runs = {
        "oracle": _system_predictions(OracleSystem(), dialogues, kb, True),
        "random": _system_predictions(RandomSystem(), dialogues, kb, False),
    }
    runs |= make_cheats(dialogues, kb)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    print("answers".ljust(22) + "".join(m[:12].rjust(13) for m in metrics))
    for name, preds in runs.items():
        table = score_predictions(list(dialogues), preds, kb, metrics=metrics)
        cells = []
        for m in metrics:
            v = table.value(m)
            cells.append(("n/a" if v is None else f"{v:.3f}").rjust(13))
        print(name.ljust(22) + "".join(cells), flush=True)


if __name__ == "__main__":
    main()
