"""The learned engine's short flow as a new user runs it (issue 26 item 3): ``catalog import`` →
``catalog train`` (no templates step: the model infers and stores them) → ``catalog enrich --extractor learned
--model`` → ``catalog evaluate --model``, each a ``groundtrace`` subprocess, on held-out splits the model
never trains on. Prints one Markdown row per dataset (accuracy, coverage of gold values, coverage at 95 %
precision, precision of written values, publish coverage, train and enrich CPU of the child processes).

    PYTHONPATH=src python benchmarks/catalog_short_flow.py [--data ../shared/data/catalog] [--work DIR]
        [--only oa-mine] [--split validation|dev|test] [--test-data DIR] [--seed 12] [--reuse-model]
        [--policy] [--train-arg=--folds=0]

Splits (``--split``):

* ``validation`` (default) — OA-Mine / AE-110K: the shared validation file, trained on the train file with
  ``--exclude-titles-of`` the validation SKUs; WDC-PAVE (one file): the seeded 20 % of its SKUs of
  ``benchmarks/catalog_learned.py`` (sorted by SKU id, ``random.Random(seed).shuffle``, last 20 %; seed 12
  there), trained on the other 80 %.
* ``test`` — fresh test files (``--test-data DIR`` with ``oa_mine/test.jsonl``, ``ae_110k/test.jsonl``,
  ``wdc_pave/test.jsonl``, as ``benchmarks/holdout.py catalog`` reads them): trained on the whole shared
  train file with ``--exclude-titles-of`` the test SKUs.
* ``dev`` — a split nobody tuned on: OA-Mine / AE-110K: a seeded 20 % of the train SKUs (by title; the
  validation titles left out of both sides), trained on the other 80 %; WDC-PAVE: the seeded 20 % with
  ``--seed`` (pick another seed than 12).

The split files are written once as ``skus.jsonl`` / ``gold.jsonl`` (data preparation); everything after
that is the CLI of docs/catalog-learned.md, "The short flow". Reuses ``benchmarks/holdout.py``'s runner.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from holdout import CATALOG_SETS, _read_jsonl, _write_jsonl, find_test_file, gt, pct

DATASETS = ("oa-mine", "ae-110k", "wdc-pave")


def _title_key(title: str) -> str:
    from groundtrace.catalog.importers.train_templates import title_key

    return title_key(title)


def _write_split(folder: Path, skus: list[dict[str, Any]], gold: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    ids = {s["sku_id"] for s in skus}
    _write_jsonl(folder / "skus.jsonl", skus)
    _write_jsonl(folder / "gold.jsonl", [g for g in gold if g["sku_id"] in ids])


def seeded_share(skus: list[dict[str, Any]], seed: int, share: float = 0.2) -> tuple[list, list]:  # type: ignore[type-arg]
    """``(rest, held)``: SKUs sorted by id, shuffled with ``random.Random(seed)``, the last ``share`` held
    (``catalog_learned.py``'s WDC-PAVE split for seed 12)."""
    order = sorted(skus, key=lambda s: s["sku_id"])
    random.Random(seed).shuffle(order)
    cut = int(len(order) * (1 - share))
    return order[:cut], order[cut:]


def by_title(skus: list[dict[str, Any]], seed: int, share: float = 0.2) -> tuple[list, list]:  # type: ignore[type-arg]
    """``(rest, held)``: ``share`` of the distinct titles held out (seeded), so no title is on both sides."""
    titles = sorted({_title_key(s["title"]) for s in skus})
    random.Random(seed).shuffle(titles)
    held = set(titles[: round(len(titles) * share)])
    return [s for s in skus if _title_key(s["title"]) not in held], [
        s for s in skus if _title_key(s["title"]) in held
    ]


def _import(fmt: str, file: Path, out: Path, log: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    gt("catalog", "import", "--format", fmt, str(file), "--out", str(out), log=log)
    return _read_jsonl(out / "skus.jsonl"), _read_jsonl(out / "gold.jsonl")


def prepare(name: str, args: argparse.Namespace, work: Path) -> tuple[Path, Path, list[str]]:
    """Import the dataset and write the train / test split folders; returns them and the extra train args
    (``--exclude-titles-of`` the test SKUs where the test file is a separate file)."""
    fmt, folder, train_name = CATALOG_SETS[name]
    data = args.data / folder
    train, test = work / "train", work / "test"
    separate = args.split == "test" or (args.split == "validation" and name != "wdc-pave")
    extra = ["--exclude-titles-of", str(test / "skus.jsonl")] if separate else []
    if (train / "skus.jsonl").is_file() and (test / "skus.jsonl").is_file():
        return train, test, extra
    skus, gold = _import(fmt, data / train_name, work / "all", work / "import.log")
    if args.split == "test":  # a fresh test file (holdout.py's layout): train on the whole train file
        test_file = find_test_file(args.test_data / folder, "test")
        if test_file is None:
            raise SystemExit(f"{name}: no test file in {args.test_data / folder}")
        _import(fmt, test_file, test, work / "import_test.log")
        _write_split(train, skus, gold)
        return train, test, extra
    if name == "wdc-pave":
        rest, held = seeded_share(skus, args.seed)
        _write_split(train, rest, gold)
        _write_split(test, held, gold)
        return train, test, extra
    _import(fmt, data / "validation.jsonl", work / "val", work / "import_val.log")
    if args.split == "validation":
        shutil.copytree(work / "val", test)
        _write_split(train, skus, gold)  # --exclude-titles-of drops the validation titles at train time
        return train, test, extra
    val_titles = {_title_key(s["title"]) for s in _read_jsonl(work / "val" / "skus.jsonl")}
    kept = [s for s in skus if _title_key(s["title"]) not in val_titles]
    rest, held = by_title(kept, args.seed)
    _write_split(train, rest, gold)
    _write_split(test, held, gold)
    return train, test, extra


def written(results: Path, gold: Path, model: Path) -> tuple[int, int]:
    """(correct, judged) over WRITE results with gold, judged with the model's stored templates."""
    from groundtrace.catalog.evaluation.scoring import evaluate
    from groundtrace.catalog.model import AttributeResult, GoldLabel
    from groundtrace.catalog.scout.learned.model import load_model

    rows = [
        AttributeResult.model_validate(r) for r in _read_jsonl(results) if r["decision"]["action"] == "WRITE"
    ]
    labels = [GoldLabel.model_validate(g) for g in _read_jsonl(gold)]
    report = evaluate(rows, labels, templates=load_model(model).template_set(), scope="results")
    acc = report.overall.metrics["accuracy"]
    return acc.numerator, acc.denominator


def run_set(name: str, args: argparse.Namespace) -> str:
    work = args.work / f"{name}-{args.split}-{args.seed}"
    if not args.reuse_model:
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    train, test, extra = prepare(name, args, work)
    model, policy = work / "model.json", work / "policy.yaml"
    train_cpu = 0.0
    if not (args.reuse_model and model.is_file()):
        fit = ["catalog", "train", "--skus", str(train / "skus.jsonl"), "--gold", str(train / "gold.jsonl")]
        fit += [*extra, *args.train_arg, "--out", str(model), "--policy-out", str(policy)]
        _, train_cpu = gt(*fit, log=work / "train.log")
    tag = "-policy" if args.policy else ""
    results, report = work / f"results{tag}.jsonl", work / f"eval{tag}.json"
    results.unlink(missing_ok=True)  # enrich resumes an existing --out only with the same options
    enrich = ["catalog", "enrich", str(test / "skus.jsonl"), "--extractor", "learned", "--model", str(model)]
    enrich += [*(["--policy", str(policy)] if args.policy else []), "--out", str(results), "--no-progress"]
    _, enrich_cpu = gt(*enrich, log=work / "enrich.log")
    evaluate = ["catalog", "evaluate", "--results", str(results), "--gold", str(test / "gold.jsonl")]
    gt(*evaluate, "--model", str(model), "--json", str(report), "--markdown", str(work / f"report{tag}.md"),
       log=work / "evaluate.log")  # fmt: skip
    rep = json.loads(report.read_text(encoding="utf-8"))
    m = rep["overall"]["metrics"]
    point = rep["thresholds"]["overall"]["point"]
    cov95 = "none" if point is None else pct(point["covered"], point["gold_values"])
    ok, judged = written(results, test / "gold.jsonl", model)
    n = len(_read_jsonl(test / "skus.jsonl"))
    label = f"{name} {args.split}" + ("" if args.split == "test" else f" (seed {args.seed})")
    cells = [name if args.split == "validation" and name != "wdc-pave" else label]
    cells += [str(n), pct(m["accuracy"]["numerator"], m["accuracy"]["denominator"])]
    cells += [pct(m["coverage_gold"]["numerator"], m["coverage_gold"]["denominator"]), cov95, pct(ok, judged)]
    cells += [pct(m["publish_coverage"]["numerator"], m["publish_coverage"]["denominator"])]
    cells += [f"{train_cpu:.0f} s" if train_cpu else "(reused)", f"{enrich_cpu:.1f} s"]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/catalog"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/gt_short_flow"))
    parser.add_argument("--only", action="append", choices=DATASETS, help="Run only these datasets.")
    parser.add_argument("--split", choices=("validation", "dev", "test"), default="validation")
    parser.add_argument(
        "--test-data", type=Path, help="With --split test: folder of <dataset>/test.jsonl files."
    )
    parser.add_argument(
        "--seed", type=int, default=12, help="Seed of the held-out 20 %% (see the docstring)."
    )
    parser.add_argument("--reuse-model", action="store_true", help="Keep the split and model of a past run.")
    parser.add_argument("--policy", action="store_true", help="enrich with the train step's policy snippet.")
    parser.add_argument("--train-arg", action="append", default=[], help="Extra `catalog train` argument.")
    args = parser.parse_args(argv)
    if args.split == "dev" and args.seed == 12:
        args.seed = 7
    if args.split == "test" and args.test_data is None:
        parser.error("--split test needs --test-data DIR")
    columns = ["held-out split", "SKUs", "accuracy", "coverage of gold values", "coverage at 95 % precision"]
    columns += ["precision of written", "publish coverage", "train CPU", "enrich CPU"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for name in DATASETS:
        if args.only and name not in args.only:
            continue
        print(run_set(name, args), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
