"""``crs run --config`` / ``crs leaderboard --config`` and ``--log mlflow``: the CLI side of experiments.

The work is :func:`groundtrace.crs.report.experiment.run_experiment` and
:func:`groundtrace.crs.report.tracking.log_runs`; this module maps their errors to exit codes (a config or
tracking-option problem is a usage error, exit 2, each message ``file:line: ...``; a failed run, exit 1,
after the report is written) and shows progress.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from groundtrace.cli.console import err_console, print_error

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Experiment file (YAML: dataset, systems with label/args, settings, splits, seeds, metrics, "
        "report options); runs every combination and writes the report. See docs/crs-evaluation.md.",
    ),
]
LogOption = Annotated[
    str | None,
    typer.Option(
        "--log", help="Also log params, metrics and artifacts to: 'mlflow' (needs the 'tracking' extra)."
    ),
]
MlflowUriOption = Annotated[
    str | None,
    typer.Option(
        "--mlflow-uri",
        help="MLflow store: a folder (local SQLite store + artifacts; default ./mlruns or "
        "$MLFLOW_TRACKING_URI) or a tracking URI (sqlite:///..., http://server:5000).",
    ),
]
MlflowExperimentOption = Annotated[
    str | None,
    typer.Option(
        "--mlflow-experiment",
        help="MLflow experiment name (default: the config's name, else 'groundtrace-crs').",
    ),
]

#: options that may be combined with --config (they override the file, or say where to log)
CONFIG_OVERRIDES = frozenset({"config", "out", "workers", "limit", "log", "mlflow_uri", "mlflow_experiment"})


def check_log(log: str | None) -> None:
    if log is not None and log != "mlflow":
        raise typer.BadParameter(f"unknown tracker {log!r}; choose 'mlflow'", param_hint="--log")
    if log is not None:
        from groundtrace.crs.report.tracking import import_mlflow

        try:
            import_mlflow()  # only checks that the extra is installed, before any work (telemetry off)
        except ImportError as exc:
            raise typer.BadParameter(str(exc), param_hint="--log") from None


def refuse_with_config(ctx: typer.Context, allowed: frozenset[str] = CONFIG_OVERRIDES) -> None:
    """A usage error naming the first option given on the command line that the config file sets
    (typer vendors click; the parameter source is compared by name)."""
    for param in ctx.command.params:
        name = param.name or ""
        if name in allowed:
            continue
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":
            flag = param.opts[0] if param.opts else name
            raise typer.BadParameter(f"{flag} is set in the config file, not with --config", param_hint=flag)


def _config_errors(exc: ValueError) -> typer.Exit:
    for line in str(exc).splitlines():
        print_error(line)
    return typer.Exit(2)


def run_config_command(
    config: Path,
    *,
    out: Path | None,
    workers: int | None,
    limit: int | None,
    log: str | None,
    mlflow_uri: str | None,
    mlflow_experiment: str | None,
) -> None:
    """Run an experiment file (progress over all its dialogues), print one line per run and the files
    written, log to MLflow when asked; exit 1 when a run failed (the report is still written)."""
    from groundtrace.cli.progress import track
    from groundtrace.core.files.yaml_loader import YamlError
    from groundtrace.crs.report.config import load_run_config
    from groundtrace.crs.report.experiment import output_folder, plan_runs, run_experiment

    check_log(log)
    try:
        loaded = load_run_config(config)
    except YamlError as exc:
        raise _config_errors(exc) from None

    def show(planned, run, seconds: float) -> None:
        table = run.table
        r1 = table.aggregate.get("recall@1" if planned.setting == "closed" else "open_recall@1")
        cgs = table.aggregate.get("cgs")
        shown = " ".join(
            f"{name}={value:.3f}" for name, value in (("R@1", r1), ("CGS", cgs)) if value is not None
        )
        typer.echo(f"{planned.label} · {planned.setting} · {planned.split}  {shown}  {seconds:.1f}s")

    try:
        out = output_folder(loaded, out)
        plan_runs(loaded)  # every spec and its args checked before anything runs
    except YamlError as exc:
        raise _config_errors(exc) from None
    with track(f"crs run --config {config.name}", unit="dialogues") as bar:
        try:
            result = run_experiment(
                loaded,
                out,
                workers=workers,
                limit=limit,
                progress=lambda done, total: bar.update(done=done, total=total),
                on_run=show,
            )
        except YamlError as exc:
            raise _config_errors(exc) from None
        except (ImportError, RuntimeError) as exc:  # e.g. `dense` without the [dense] extra
            print_error(f"experiment failed: {exc}")
            raise typer.Exit(1) from exc
    for paths in result.reports.values():
        for path in paths:
            typer.echo(f"wrote {path}")
    if log == "mlflow":
        from groundtrace.crs.report.tracking import log_runs

        reports = result.report_dirs()
        logged = log_runs(
            [folder for _, folder, _ in result.runs],
            uri=mlflow_uri,
            experiment=mlflow_experiment or loaded.name,
            reports={("" if len(reports) == 1 else split): folder for split, folder in reports.items()},
            config_file=loaded.path,
            parent_name=loaded.name,
            parent_params={"config": loaded.path.name, "config_sha256": loaded.sha256},
        )
        typer.echo(
            f"logged {len(logged.run_ids)} runs to MLflow ({logged.uri}, parent run {logged.parent_run_id})"
        )
    for problem in result.problems:
        print_error(problem)
    if result.problems:
        raise typer.Exit(1)


def log_single_run(out: Path, log: str | None, mlflow_uri: str | None, mlflow_experiment: str | None) -> None:
    """``crs run`` / ``crs score --log mlflow``: one MLflow run for the run folder ``out``."""
    if log != "mlflow":
        return
    from groundtrace.crs.report.tracking import log_runs

    logged = log_runs([out], uri=mlflow_uri, experiment=mlflow_experiment or "groundtrace-crs")
    err_console().print(
        f"logged {out} to MLflow ({logged.uri}, run {logged.run_ids[str(out)]})",
        markup=False,
        highlight=False,
    )
