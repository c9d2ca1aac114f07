"""``groundtrace crs run | score | report | calibrate | systems | metrics``: evaluate CRS systems."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from groundtrace.cli.apps import crs_app
from groundtrace.cli.console import err_console, print_error, registry_names
from groundtrace.cli.crs_experiment import (
    ConfigOption,
    LogOption,
    MlflowExperimentOption,
    MlflowUriOption,
    check_log,
    log_single_run,
    refuse_with_config,
    run_config_command,
)

# Options shared by `crs run` and `crs score` (declared once).
LimitOption = Annotated[
    int | None, typer.Option("--limit", min=1, help="Only the first N dialogues of the split.")
]
KbOption = Annotated[
    str | None,
    typer.Option(
        "--kb", help="KB file, or 'demo'/'demo:SEED'; default: the demo city named by the manifest."
    ),
]
NliOption = Annotated[
    str | None,
    typer.Option(
        "--nli",
        help="Entailment scorer for the NLI metric: a registered name "
        f"({registry_names('groundtrace.core.nli.entailment:ENTAILMENT_SCORERS')}) or a local model dir.",
    ),
]


MetricsOption = Annotated[
    str | None,
    typer.Option(
        "--metrics",
        help="Comma-separated metrics to compute, e.g. 'recall@1,cgs,mrr' (default: the 27 of "
        f"`crs metrics`). Registered: {registry_names('groundtrace.crs.metrics:METRICS')}.",
    ),
]


LabelOption = Annotated[
    str | None,
    typer.Option(
        "--label",
        help="Name of this run in reports (run.json 'label'; default: the system name), e.g. 'release'.",
    ),
]


def _check_setting(setting: str) -> None:
    if setting not in ("closed", "open"):
        raise typer.BadParameter("choose 'closed' or 'open'", param_hint="--setting")


def _note_untrained(dataset: Path, system: str, options: dict) -> None:
    """Say so when a registered system that learns its constraint understanding gets no train split."""
    from groundtrace.crs.systems.base import SYSTEMS
    from groundtrace.crs.systems.toolkit.learning import Learns

    if system not in SYSTEMS or "parser" in options or (dataset / "train.jsonl").is_file():
        return
    cls = SYSTEMS.get(system)
    if isinstance(cls, type) and issubclass(cls, Learns):
        err_console().print(
            f"note: {dataset} has no train split: the system understands constraints by its generic keyword "
            "rules only; pass --system-arg parser=MODEL (groundtrace crs train-parser) to use a trained "
            "parser",
            markup=False,
        )


def _load(dataset: Path, split: str, kb: str | None, preloaded=None):
    """The split read once by the fast reader (``load_records``: lean records, the dataset hash computed
    while reading; ``preloaded``: already read) and the dataset's KB; bad lines are listed on stderr."""
    from groundtrace.crs.evaluation.loading import load_records, resolve_kb

    err = err_console()
    try:
        data = preloaded if preloaded is not None else load_records(dataset, split)
        knowledge = resolve_kb(kb, data.manifest, data)
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc)) from None
    for line in data.errors[:20]:
        err.print(f"[yellow]skipped[/yellow] {line}", markup=True, highlight=False)
    if len(data.errors) > 20:
        err.print(f"... {len(data.errors) - 20} more bad dataset lines")
    return data, knowledge


def _metrics(spec: str | None):
    """The metrics named by ``--metrics`` (None: the defaults); a usage error for an unknown name."""
    if spec is None:
        return None
    from groundtrace.core.registry import UnknownNameError
    from groundtrace.crs.metrics import MetricParseError, parse_metrics

    try:
        return parse_metrics(spec)
    except (UnknownNameError, MetricParseError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--metrics") from None


def _scorer(nli: str | None):
    """The entailment scorer for the NLI metric (None leaves the metric unavailable)."""
    if nli is None:
        return None
    from groundtrace.core.nli.entailment import make_scorer

    try:
        return make_scorer(nli)
    except (FileNotFoundError, ImportError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--nli") from None


def _print_scores(table, info: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from groundtrace.crs.metrics import parse_metric

    console = Console()
    view = Table(
        title=f"{info.get('system')} · {table.setting} · {table.n_dialogues} dialogues, {table.n_turns} turns"
    )
    view.add_column("metric")
    view.add_column("value", justify="right")
    view.add_column("scored / unscorable / n.a.", justify="right")
    for name in table.metrics:
        if name in table.unavailable:  # NLI without a scorer is shown as unavailable, never 0
            if parse_metric(name).setting in ("any", table.setting):
                view.add_row(name, "unavailable", table.unavailable[name])
            continue
        value, count = table.aggregate.get(name), table.counts[name]
        view.add_row(
            name,
            "—" if value is None else f"{value:.4f}",
            f"{count.scored} / {count.unscorable} / {count.not_applicable}",
        )
    console.print(view)
    usage = info.get("usage", {})
    lat = usage.get("latency_s", {})
    console.print(
        f"unscorable turns: {info['counts']['unscorable_turns']} · latency mean {lat.get('mean', 0):.4f}s "
        f"p95 {lat.get('p95', 0):.4f}s · tokens {usage.get('prompt_tokens', 0)}+"
        f"{usage.get('completion_tokens', 0)}"
        f" · cost ${usage.get('cost_usd', 0):.4f}"
    )


def _warn_unmatched(table, split: str) -> None:
    """A stderr warning when predictions were left out for another setting or matched no turn (orphans)."""
    stats = table.predictions
    parts = []
    if stats.other_setting:
        other = "open" if table.setting == "closed" else "closed"
        parts.append(
            f"{stats.other_setting} prediction(s) are for another setting than {table.setting!r} and were "
            f"ignored (pass --setting {other} to score them)"
        )
    if stats.orphan:
        parts.append(
            f"{stats.orphan} prediction(s) match no recommendation turn of split {split!r} (orphans; pass "
            "--split with the split they answer, e.g. --split all)"
        )
    if stats.duplicate:
        parts.append(
            f"{stats.duplicate} duplicate prediction(s) for a turn already answered were ignored (the first "
            "line of each turn is kept)"
        )
    if stats.over_limit:
        parts.append(
            f"{stats.over_limit} answer(s) exceed a size limit of the grounding metrics (over 50,000 "
            "characters or 64 quoted citations): the excess was not analysed (docs/crs-metrics.md)"
        )
    if parts:
        err_console().print(f"warning: {'; '.join(parts)}", markup=False, highlight=False)


@crs_app.command("run")
def run(
    ctx: typer.Context,
    *,
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            help="Dataset folder (split files + manifest) or one JSONL file (required without --config).",
        ),
    ] = None,
    system: Annotated[
        str | None,
        typer.Option(
            "--system",
            help=f"A registered system ({registry_names('groundtrace.crs.systems:SYSTEMS')}; see "
            "`crs systems`), an http(s):// endpoint, or a CRSSystem class as module.path:Class or "
            "path/to/file.py:Class (required without --config).",
        ),
    ] = None,
    system_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--system-arg",
            help="key=value passed to the system's constructor (repeatable); values are read as JSON "
            "scalars when they are (3, 0.5, true, null), else as text.",
        ),
    ] = None,
    setting: Annotated[
        str, typer.Option("--setting", help="'closed' (8 candidates) or 'open' (the 50–100 open-set pool).")
    ] = "closed",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Run folder (predictions.jsonl, scores.json, run.json); resumable. With --config: the "
            "folder for runs/ and the report (default: the config's 'out').",
        ),
    ] = None,
    split: Annotated[
        str, typer.Option("--split", help="Split to run on: train, validation, test or all.")
    ] = "test",
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Dialogues answered in parallel (thread pool; default 1)."),
    ] = None,
    limit: LimitOption = None,
    kb: KbOption = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed passed to systems that take one (e.g. random).")
    ] = 0,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.001, help="HTTP systems: total seconds per request.")
    ] = 30.0,
    max_response_bytes: Annotated[
        int,
        typer.Option(
            "--max-response-bytes", min=1, help="HTTP systems: larger answers are failed turns (1 MiB)."
        ),
    ] = 1 << 20,
    max_failed_share: Annotated[
        float,
        typer.Option(
            "--max-failed-share",
            min=0.0,
            max=1.0,
            help="Exit 1 when more than this share of turns failed (errored or missing); 0.05 = 5%.",
        ),
    ] = 0.05,
    retries: Annotated[
        int, typer.Option("--retries", min=0, help="HTTP systems: retries on time-outs, 429 and 5xx.")
    ] = 2,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="On resume, re-run dialogues that had an errored turn.")
    ] = False,
    nli: NliOption = None,
    metrics: MetricsOption = None,
    label: LabelOption = None,
    config: ConfigOption = None,
    log: LogOption = None,
    mlflow_uri: MlflowUriOption = None,
    mlflow_experiment: MlflowExperimentOption = None,
) -> None:
    """Run a CRS system on a dataset split, record per-turn predictions and score them — or, with --config,
    every system × setting × split × seed of an experiment file, then its report."""
    from groundtrace.cli.progress import track
    from groundtrace.core.registry import UnknownNameError
    from groundtrace.crs.evaluation.evaluate import evaluate
    from groundtrace.crs.evaluation.failures import run_problem
    from groundtrace.crs.evaluation.run_files import RunKeyMismatchError
    from groundtrace.crs.systems.factory import built_first, parse_system_args, system_factory
    from groundtrace.crs.systems.http import is_url
    from groundtrace.crs.systems.toolkit.learning import NothingToLearn

    if config is not None:
        refuse_with_config(ctx)
        run_config_command(
            config,
            out=out,
            workers=workers,
            limit=limit,
            log=log,
            mlflow_uri=mlflow_uri,
            mlflow_experiment=mlflow_experiment,
        )
        return
    for value, flag in ((dataset, "--dataset"), (system, "--system"), (out, "--out")):
        if value is None:
            raise typer.BadParameter(f"missing {flag} (or give --config FILE)", param_hint=flag)
    assert dataset is not None and system is not None and out is not None
    check_log(log)
    workers = workers or 1
    _check_setting(setting)
    try:
        options = parse_system_args(system_arg or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--system-arg") from None
    if is_url(system):
        options = {
            "timeout_s": timeout,
            "retries": retries,
            "max_response_bytes": max_response_bytes,
            **options,
        }
    wanted = _metrics(metrics)
    try:
        factory = built_first(system_factory(system, options, seed=seed))
    except (UnknownNameError, ImportError, ValueError, TypeError) as exc:
        hint = "--system-arg" if isinstance(exc, ValueError) and options else "--system"
        raise typer.BadParameter(str(exc), param_hint=hint) from None
    data, knowledge = _load(dataset, split, kb)
    _note_untrained(dataset, system, options)
    scorer = _scorer(nli)
    with track(f"crs run {label or system} · {setting}", unit="dialogues") as bar:

        def progress(done: int, total: int) -> None:
            bar.update(done=done, total=total)

        try:
            table = evaluate(
                factory,
                data,
                knowledge,
                setting,
                wanted,
                split=split,
                workers=workers,
                limit=limit,
                retry_errors=retry_errors,
                progress=progress,
                entailment=scorer,
                label=label,
                out=out,
            )
        except RunKeyMismatchError as exc:
            raise typer.BadParameter(str(exc), param_hint="--out") from None
        except NothingToLearn as exc:
            raise typer.BadParameter(f"{dataset}: {exc}", param_hint="--dataset") from None
    _print_scores(table, table.info)
    _warn_unmatched(table, split)
    typer.echo(f"wrote {out}/predictions.jsonl, scores.json, run.json")
    log_single_run(out, log, mlflow_uri, mlflow_experiment)
    problem = run_problem(table.info, max_failed_share)
    if problem is not None:
        print_error(f"{problem} (see {out}/run.json; rerun with --retry-errors)")
        raise typer.Exit(1)


def _score_file(predictions, data, knowledge, out, setting, split, limit, dataset, nli, wanted, label):
    """``score_file`` with the CLI's error mapping (another run in ``--out`` is a usage error) and its
    progress: recommendation turns scored (heartbeat lines when piped)."""
    from groundtrace.cli.progress import throttled, track
    from groundtrace.crs.evaluation.offline import score_file
    from groundtrace.crs.evaluation.run_files import RunKeyMismatchError

    scorer = _scorer(nli)
    with track(f"crs score {predictions.name} · {setting}", unit="turns") as bar:
        try:
            return score_file(
                predictions,
                data,
                knowledge,
                out,
                setting=setting,
                split=split,
                limit=limit,
                dataset=str(dataset.resolve()),
                entailment=scorer,
                metrics=wanted,
                label=label,
                progress=throttled(bar.update),
            )
        except RunKeyMismatchError as exc:
            raise typer.BadParameter(str(exc), param_hint="--out") from None


@crs_app.command("score")
def score(
    *,
    dataset: Annotated[
        Path, typer.Option("--dataset", help="Dataset folder or JSONL file the predictions answer.")
    ],
    predictions: Annotated[
        Path, typer.Option("--predictions", help="Predictions JSONL (one Prediction per line).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Run folder to write scores.json and run.json into.")],
    setting: Annotated[
        str,
        typer.Option("--setting", help="'closed' or 'open': predictions of the other setting are ignored."),
    ] = "closed",
    split: Annotated[
        str | None,
        typer.Option(
            "--split",
            help="Split the predictions answer: train, validation, test or all (default: the split that "
            "holds the predicted dialogues; all when they span several).",
        ),
    ] = None,
    limit: LimitOption = None,
    kb: KbOption = None,
    nli: NliOption = None,
    metrics: MetricsOption = None,
    label: LabelOption = None,
    log: LogOption = None,
    mlflow_uri: MlflowUriOption = None,
    mlflow_experiment: MlflowExperimentOption = None,
) -> None:
    """Score a predictions JSONL offline (bad lines are reported as file:line and skipped)."""
    check_log(log)
    _check_setting(setting)
    if not predictions.is_file():
        raise typer.BadParameter(f"{predictions}: no such file", param_hint="--predictions")
    wanted = _metrics(metrics)
    preloaded = None
    if split is None:
        from groundtrace.crs.evaluation.loading import load_predicted_split

        try:
            split, preloaded = load_predicted_split(dataset, predictions)
        except (ValueError, FileNotFoundError) as exc:
            raise typer.BadParameter(str(exc)) from None
        err_console().print(f"scoring split {split!r} (the split the predictions answer)", markup=False)
    data, knowledge = _load(dataset, split, kb, preloaded)
    result = _score_file(
        predictions, data, knowledge, out, setting, split, limit, dataset, nli, wanted, label
    )
    err = err_console()
    for line in result.info["prediction_errors"]:
        err.print(f"skipped {line}", markup=False, highlight=False)
    _print_scores(result.table, result.info)
    _warn_unmatched(result.table, split)
    typer.echo(f"wrote {out}/scores.json, run.json")
    log_single_run(out, log, mlflow_uri, mlflow_experiment)
    if result.table.predictions.used == 0:
        print_error(
            f"nothing scored: no usable prediction in {predictions} answers a recommendation turn of split "
            f"{split!r} (setting {setting!r})"
        )
        raise typer.Exit(1)


@crs_app.command("inputs")
def inputs(
    *,
    dataset: Annotated[
        Path, typer.Option("--dataset", help="Dataset folder (split files + manifest) or one JSONL file.")
    ],
    out: Annotated[Path, typer.Option("--out", help="JSONL file: one SystemInput per recommendation turn.")],
    setting: Annotated[
        str, typer.Option("--setting", help="'closed' (8 candidates) or 'open' (the open-set pool).")
    ] = "closed",
    split: Annotated[str, typer.Option("--split", help="train, validation, test or all.")] = "test",
    limit: LimitOption = None,
    kb: KbOption = None,
) -> None:
    """Write exactly what a system sees at each turn (the predictions-file contract: answer each line)."""
    from groundtrace.crs.evaluation.inputs import write_inputs

    _check_setting(setting)
    data, knowledge = _load(dataset, split, kb)
    dialogues = list(data)[:limit] if limit is not None else list(data)
    n_dialogues, n_turns = write_inputs(dialogues, knowledge, setting, out)  # type: ignore[arg-type]
    typer.echo(f"wrote {out}: {n_turns} turns of {n_dialogues} dialogues ({setting})")


@crs_app.command("export-run")
def export_run_cmd(
    *,
    run_dir: Annotated[Path, typer.Argument(help="Run folder written by `crs run` / `crs score`.")],
    out: Annotated[Path, typer.Option("--out", help="Run file to write (one line per ranked POI).")],
    fmt: Annotated[
        str, typer.Option("--format", help="Output format: 'trec' (qid Q0 doc rank score tag).")
    ] = "trec",
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="Also write the qrels (qid 0 gold_poi 1) to this file.")
    ] = None,
    dataset: Annotated[
        Path | None, typer.Option("--dataset", help="Dataset the run answers (default: the one in run.json).")
    ] = None,
    tag: Annotated[
        str | None, typer.Option("--tag", help="Run tag (last column; default: the run's label or system).")
    ] = None,
) -> None:
    """Export a run's rankings as a TREC run file (and qrels) for ranx, ir-measures or trec_eval."""
    from groundtrace.crs.evaluation.trec import export_run

    if fmt != "trec":
        raise typer.BadParameter(f"unknown format {fmt!r}; choose 'trec'", param_hint="--format")
    try:
        n_run, n_qrels, errors = export_run(run_dir, out, qrels=qrels, dataset=dataset, tag=tag)
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc)) from None
    err = err_console()
    for line in errors:
        err.print(f"skipped {line}", markup=False, highlight=False)
    typer.echo(f"wrote {out} ({n_run} lines)" + (f" and {qrels} ({n_qrels} queries)" if qrels else ""))


@crs_app.command("report")
def report(
    *,
    runs: Annotated[list[Path], typer.Argument(help="Run folders written by `crs run` / `crs score`.")],
    out: Annotated[
        Path,
        typer.Option("--out", help="Report folder (leaderboard.md/.csv/.tex/.json, plots, report.html)."),
    ],
    resamples: Annotated[
        int, typer.Option("--resamples", min=10, help="Bootstrap / permutation resamples.")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the numpy Generator used for resampling.")] = 0,
    dataset: Annotated[
        Path | None,
        typer.Option("--dataset", help="Dataset for the HTML evidence view (default: the one in run.json)."),
    ] = None,
    kb: Annotated[
        str | None,
        typer.Option("--kb", help="KB for the HTML evidence view (default: from the dataset manifest)."),
    ] = None,
    html_turns: Annotated[
        int, typer.Option("--html-turns", min=0, help="Turns per run shown in the HTML report.")
    ] = 40,
    sort_by: Annotated[
        str | None,
        typer.Option(
            "--sort-by",
            help="Metric the rows are sorted by, best first (any alias; default recall@1, open: "
            "open_recall@1; a closed-set name is mapped to its open-set twin). Bounds stay at the ends.",
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="Label or system name every other run is tested against (default: the last-ranked run "
            "that is not a bound).",
        ),
    ] = None,
    all_pairs: Annotated[
        bool,
        typer.Option("--all-pairs", help="Test every two runs instead of each run against the baseline."),
    ] = False,
    test_bounds: Annotated[
        bool,
        typer.Option("--test-bounds", help="Include the bounds (oracle: upper, random: lower) in the tests."),
    ] = False,
    dialogue_pages: Annotated[
        str,
        typer.Option(
            "--dialogue-pages",
            help="Dialogue pages to write (dialogues/*.html): N = the dialogues of the turns shown in "
            "report.html, at most N; 'all'; 0 = none.",
        ),
    ] = "50",
) -> None:
    """Leaderboard with bootstrap CIs, paired significance tests, breakdowns, plots and an HTML report."""
    from groundtrace.crs.report import build_report

    if dialogue_pages != "all" and not dialogue_pages.isdigit():
        raise typer.BadParameter("a number or 'all'", param_hint="--dialogue-pages")
    if sort_by is not None:
        from groundtrace.crs.metrics import MetricParseError, parse_metric

        try:
            parse_metric(sort_by)
        except (LookupError, MetricParseError) as exc:
            raise typer.BadParameter(str(exc).strip("'\""), param_hint="--sort-by") from None
    try:
        written = build_report(
            runs,
            out,
            resamples=resamples,
            seed=seed,
            dataset=dataset,
            kb=kb,
            html_turns=html_turns,
            sort_by=sort_by,
            baseline=baseline,
            all_pairs=all_pairs,
            test_bounds=test_bounds,
            dialogue_pages=None if dialogue_pages == "all" else int(dialogue_pages),
        )
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc)) from None
    for path in written:
        typer.echo(f"wrote {path}")


@crs_app.command("calibrate")
def calibrate(
    *,
    human: Annotated[
        Path, typer.Option("--human", help="Human labels: CSV/TSV/JSONL with dialogue_id, turn_index, label.")
    ],
    run_dir: Annotated[
        Path, typer.Option("--run", help="A run folder (its scores.json holds per-turn values).")
    ],
    metric: Annotated[
        str, typer.Option("--metric", help="Metric to correlate with the labels (any alias, e.g. R@1).")
    ] = "cgs",
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Spearman correlation (rho, p-value) of a metric against human labels."""
    import json

    from groundtrace.crs.report.calibrate import calibrate_run

    try:
        result = calibrate_run(human, run_dir, metric)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        raise typer.BadParameter(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        typer.echo(result.summary())


@crs_app.command("systems")
def systems(
    *,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List the registered CRS systems (names, aliases, descriptions)."""
    import json

    from groundtrace.crs.systems import SYSTEMS, system_description

    rows = [
        {"name": n, "aliases": list(SYSTEMS.aliases(n)), "description": system_description(n)}
        for n in SYSTEMS.names()
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        alias = f" (aliases: {', '.join(row['aliases'])})" if row["aliases"] else ""
        typer.echo(f"{row['name']:<22} {row['description']}{alias}")


@crs_app.command("metrics")
def metrics(
    *,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON (with formulas).")] = False,
) -> None:
    """List the 27 default metrics by axis (name, direction, aggregation, formula), then the others."""
    import json
    import textwrap

    from groundtrace.crs.metrics import DEFAULT_METRICS, METRICS

    if as_json:
        typer.echo(json.dumps([m.describe() for m in DEFAULT_METRICS], indent=2))
        return

    def row(axis: str, name: str, higher: bool, aggregation: str, formula: str) -> None:
        typer.echo(f"{axis:<13} {name:<28} {'↑' if higher else '↓'} {aggregation}")
        text = " ".join(formula.split())  # the whole formula: its docstring lines joined
        for line in textwrap.wrap(text, width=100, break_on_hyphens=False):
            typer.echo(f"    {line}")

    for m in DEFAULT_METRICS:
        row(m.axis, str(m), m.higher_is_better, m.aggregation, m.formula)
    in_defaults = {m.name for m in DEFAULT_METRICS}
    others = [METRICS.get(n) for n in METRICS.names() if n not in in_defaults]
    if others:
        typer.echo("not in the default set (ask for them with --metrics):")
    for family in others:
        name = f"{family.name}@k" if family.takes_k else family.name
        row(family.axis, name, family.higher_is_better, family.aggregation, family.formula)
