"""Issue-10 numbers: a TRACE-CRS build on the demo KB or on a Yelp folder, and oracle vs random.

Builds ``--dialogues`` dialogues (template realiser, ``--seed``) and prints, as JSON: supporting quotes
whose stored stance is negative (must be 0), warnings, persona-constraint use, open-pool sizes and the
reasons of any shortfall, tier mix, turns per dialogue, gold stars vs pool, and the closed-setting scores
of the ``oracle`` and ``random`` systems on ``evidence_support``, ``constraint_evidence``, ``cgs`` and
``recall@1``.

    python benchmarks/crs_real_data.py --kb demo
    python benchmarks/crs_real_data.py --yelp-dir ../shared/data/yelp_dense [--show 3] [--strip-attributes]

With ``--yelp-dir`` the KB is selected as ``crs kb build`` does, attributes mined from reviews included
(``--strip-attributes`` first drops Yelp's attributes and price levels: the case of a slice without them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.build.evidence import quotable
from groundtrace.crs.dataset.stance import is_warning, quote_stance
from groundtrace.crs.dataset.text import quoted_snippets
from groundtrace.crs.evaluation.runner import run_dialogue
from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.mining import fill_from_reviews
from groundtrace.crs.kb.stance import COMPLAINT_RE
from groundtrace.crs.schema import Dialogue
from groundtrace.crs.systems.base import SYSTEMS

METRICS = ("evidence_support", "constraint_evidence", "cgs", "recall@1")


def quote_stats(dialogues: list[Dialogue], kb: KnowledgeBase) -> dict[str, int]:
    """Supporting quotes by stored polarity, and warnings; supporting quotes holding a complaint cue
    (``kb.stance.COMPLAINT_RE``: mixed praise such as "great food, albeit overpriced", or a complaint the
    stance missed) and ones that do not read alone (``build.evidence.quotable``)."""
    out: Counter[str] = Counter()
    for d in dialogues:
        for t in d.turns:
            if t.role != "system":
                continue
            for quote, tags, start, _ in quoted_snippets(t.text):
                stance = quote_stance(kb, d.review_refs[tags[0]].review_id, quote)
                polarity = (
                    "unknown"
                    if stance is None
                    else {1: "positive", 0: "neutral", -1: "negative"}[stance.polarity]
                )
                kind = "warning" if is_warning(t.text, start) else "supporting"
                out[f"{kind}_{polarity}"] += 1
                if kind == "supporting" and COMPLAINT_RE.search(quote):  # mixed praise, or a missed complaint
                    out["supporting_with_complaint_cue"] += 1
                if kind == "supporting" and not quotable(quote):
                    out["supporting_not_reading_alone"] += 1
    return dict(sorted(out.items()))


def systems_scores(dialogues: list[Dialogue], kb: KnowledgeBase) -> dict[str, dict[str, float | None]]:
    scores = {}
    for name in ("oracle", "random"):
        system = SYSTEMS.get(name)()
        preds = [p for d in dialogues for p in run_dialogue(system, d, kb, "closed")]
        table = score_predictions(dialogues, preds, kb, setting="closed", metrics=list(METRICS))
        scores[name] = {m: (None if v is None else round(v, 3)) for m, v in table.aggregate.items()}
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", default=None, help="'demo' or a KB file")
    parser.add_argument("--yelp-dir", type=Path, default=None)
    parser.add_argument("--dialogues", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=0, help="print this many full dialogues")
    parser.add_argument(
        "--strip-attributes", action="store_true", help="drop Yelp attributes and prices before mining"
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    extra: dict[str, object] = {}
    if args.yelp_dir is not None:
        from groundtrace.crs.kb.select import SelectionConfig, select_kb
        from groundtrace.crs.kb.yelp import yelp_files

        business, review = yelp_files(args.yelp_dir)
        kb, _ = select_kb(business, review, SelectionConfig(), name=args.yelp_dir.name)
        if args.strip_attributes:  # the case: a Yelp slice without attributes
            pois = [p.model_copy(update={"attributes": {}, "price_level": None}) for p in kb.pois.values()]
            kb = KnowledgeBase(pois, kb.reviews.values(), name=kb.name)
        kb, mining = fill_from_reviews(kb)
        extra["mining"] = mining
    elif args.kb in (None, "demo"):
        kb = generate_demo_kb(args.seed)
    else:
        from groundtrace.crs.kb.store import load_kb

        kb = load_kb(args.kb)
    kb.stances  # noqa: B018 - computed once here so the timings below are the build's own
    t_kb = time.perf_counter() - t0
    dialogues, report = build_dialogues(kb, args.dialogues, args.seed)
    t_build = time.perf_counter() - t0 - t_kb
    result = {
        "kb": kb.summary(),
        "seconds": {"kb_and_stance": round(t_kb, 1), "build": round(t_build, 1)},
        "report": json.loads(report.model_dump_json()),
        "quotes": quote_stats(dialogues, kb),
        "turns_per_dialogue": round(statistics.mean(len(d.turns) for d in dialogues), 2) if dialogues else 0,
        "types": dict(Counter(d.poi_type for d in dialogues)),
        "leg_types": report.coverage.get("leg_types", {}),
        "itinerary": report.coverage.get("itinerary", {}),
        "systems": systems_scores(dialogues, kb),
        **extra,
    }
    result["kb"].pop("content_hash", None)
    print(json.dumps(result, indent=2, ensure_ascii=False))
    for d in dialogues[: args.show]:
        legs = " > ".join(leg.poi_type for leg in d.legs) or d.poi_type
        print(f"\n--- {d.dialogue_id} ({d.city}, {legs}, persona {d.persona_id}, {d.difficulty})")
        for t in d.turns:
            print(f"{t.role.upper():6} [{t.act}] {t.text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
