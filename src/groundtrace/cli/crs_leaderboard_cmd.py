"""``groundtrace crs leaderboard``: every named system, closed and open, on one dataset, one report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from groundtrace.cli.apps import crs_app
from groundtrace.cli.console import print_error
from groundtrace.cli.crs_experiment import (
    CONFIG_OVERRIDES,
    ConfigOption,
    LogOption,
    MlflowExperimentOption,
    MlflowUriOption,
    check_log,
    refuse_with_config,
    run_config_command,
)


@crs_app.command("leaderboard")
def leaderboard(
    ctx: typer.Context,
    *,
    dataset: Annotated[
        Path | None,
        typer.Option("--dataset", help="Dataset folder (split files + manifest; required without --config)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for runs/<system>-<setting>/ and the report files (with --config: default the "
            "config's 'out').",
        ),
    ] = None,
    systems: Annotated[
        str,
        typer.Option(
            "--systems",
            help="'all-offline' (random + the ten offline systems) or comma-separated registered names.",
        ),
    ] = "all-offline",
    settings: Annotated[
        str, typer.Option("--settings", help="Comma-separated: closed, open.")
    ] = "closed,open",
    split: Annotated[str, typer.Option("--split", help="train, validation, test or all.")] = "test",
    kb: Annotated[
        str | None, typer.Option("--kb", help="KB file, or 'demo'/'demo:SEED'; default: from the manifest.")
    ] = None,
    no_dense: Annotated[
        bool, typer.Option("--no-dense", help="Skip `dense` and run the hybrids without the dense encoder.")
    ] = False,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Dialogues answered in parallel (default 1).")
    ] = None,
    resamples: Annotated[int, typer.Option("--resamples", min=10, help="Bootstrap resamples.")] = 1000,
    config: ConfigOption = None,
    log: LogOption = None,
    mlflow_uri: MlflowUriOption = None,
    mlflow_experiment: MlflowExperimentOption = None,
) -> None:
    """Run every named system (closed and open) on a dataset split and write the leaderboard report — or
    the experiment of a --config file (the same as `crs run --config`)."""
    from groundtrace.cli.progress import track
    from groundtrace.core.registry import UnknownNameError
    from groundtrace.crs.evaluation.loading import load_records, resolve_kb
    from groundtrace.crs.report.suite import expand_systems, run_suite

    if config is not None:
        refuse_with_config(ctx, CONFIG_OVERRIDES - {"limit"})
        run_config_command(
            config,
            out=out,
            workers=workers,
            limit=None,
            log=log,
            mlflow_uri=mlflow_uri,
            mlflow_experiment=mlflow_experiment,
        )
        return
    for value, flag in ((dataset, "--dataset"), (out, "--out")):
        if value is None:
            raise typer.BadParameter(f"missing {flag} (or give --config FILE)", param_hint=flag)
    assert dataset is not None and out is not None
    check_log(log)

    wanted = [s.strip() for s in settings.split(",") if s.strip()]
    bad = [s for s in wanted if s not in ("closed", "open")]
    if bad or not wanted:
        raise typer.BadParameter(f"unknown setting(s) {bad or settings!r}", param_hint="--settings")
    try:
        names = expand_systems(systems)
    except (UnknownNameError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--systems") from None
    options = {}
    if no_dense:
        names = [n for n in names if n != "dense"]
        options = {n: {"dense": False} for n in ("hybrid-rrf", "trace-hybrid")}
    try:
        data = load_records(dataset, split)  # the fast reader, once
        knowledge = resolve_kb(kb, data.manifest, data)
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc)) from None

    def show(name: str, setting: str, run, seconds: float) -> None:
        table = run.table
        r1 = table.value("recall@1") if setting == "closed" else table.value("open_recall@1")
        es = table.aggregate.get("evidence_support")  # the grounding axis next to CGS (saturates at ~1)
        es_text = "—" if es is None else f"{es:.3f}"
        typer.echo(
            f"{name:>13} · {setting:<6} R@1={r1:.3f} CGS={table.value('cgs'):.3f} ES={es_text} "
            f"recovery={table.value('rejection_recovery'):.3f}  {seconds:.1f}s"
        )

    try:
        with track(f"crs leaderboard {dataset.name}", unit="dialogues") as bar:
            result = run_suite(
                names,
                data,
                knowledge,
                out,
                settings=wanted,
                split=split,
                options=options,
                dataset=str(dataset.resolve()),
                workers=workers or 1,
                on_run=show,
                resamples=resamples,
                progress=lambda done, total: bar.update(done=done, total=total),
            )
    except (ImportError, RuntimeError) as exc:  # e.g. `dense` without the [dense] extra
        print_error(f"leaderboard failed: {exc}")
        raise typer.Exit(1) from exc
    for path in result.report:
        typer.echo(f"wrote {path}")
    if log == "mlflow":
        from groundtrace.crs.report.tracking import log_runs

        logged = log_runs(
            [run.out for run in result.runs.values()],
            uri=mlflow_uri,
            experiment=mlflow_experiment or "groundtrace-crs",
            reports={"": out},
            parent_name=f"leaderboard {dataset.name}",
            parent_params={"systems": systems, "settings": settings, "split": split},
        )
        typer.echo(
            f"logged {len(logged.run_ids)} runs to MLflow ({logged.uri}, parent run {logged.parent_run_id})"
        )
