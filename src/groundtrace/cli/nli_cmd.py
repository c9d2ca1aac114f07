"""``groundtrace nli-eval``: score an entailment model on e-SNLI dev and WiCE dev (library: core.nli_eval)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from groundtrace.cli.apps import app
from groundtrace.cli.console import err_console, print_error

if TYPE_CHECKING:
    from rich.console import Console

    from groundtrace.core.nli.evaluation import NliEvalReport


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


@app.command("nli-eval")
def nli_eval(
    model: Annotated[
        str,
        typer.Option(
            "--model", "-m", help="Registered scorer name (see --list) or a local checkpoint directory."
        ),
    ] = "lexical",
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="Folder with esnli/ and wice/ (default: ../shared/data/nli from the current directory).",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Score only the first N e-SNLI pairs.")
    ] = None,
    wice_limit: Annotated[
        int | None, typer.Option("--wice-limit", min=1, help="Score only the first N WiCE claims.")
    ] = None,
    datasets: Annotated[
        str, typer.Option("--datasets", help="Comma-separated subset of: esnli, wice.")
    ] = "esnli,wice",
    wice_premise: Annotated[
        str,
        typer.Option(
            "--wice-premise", help="WiCE premise: retrieved (top-k sentences), chunks (max), oracle (leaks)."
        ),
    ] = "retrieved",
    top_k: Annotated[
        int, typer.Option("--top-k", min=1, help="Sentences kept by --wice-premise retrieved.")
    ] = 5,
    chunk_sentences: Annotated[
        int, typer.Option("--chunk-sentences", min=1, help="Window size for --wice-premise chunks.")
    ] = 5,
    device: Annotated[str, typer.Option("--device", help="auto, cpu or cuda (checkpoint models).")] = "auto",
    batch_size: Annotated[
        int | None,
        typer.Option(
            "--batch-size",
            min=1,
            help="Pairs per forward pass (default: the model's own; 32 for checkpoints).",
        ),
    ] = None,
    max_length: Annotated[
        int, typer.Option("--max-length", min=8, help="Max tokens per pair (checkpoint models).")
    ] = 256,
    entailment_index: Annotated[
        int | None,
        typer.Option(
            "--entailment-index",
            min=0,
            help="Column of the entailment class of a checkpoint directory whose config.json labels do "
            "not name it (e.g. LABEL_0..2). Default: the one label containing 'entail'.",
        ),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the full report as JSON to this file.")
    ] = None,
    list_models: Annotated[
        bool, typer.Option("--list", help="List the registered scorers and exit.")
    ] = False,
) -> None:
    """Evaluate an entailment scorer on e-SNLI dev and WiCE dev: accuracy@0.5, AUROC, n, pairs/s."""
    from rich.console import Console

    from groundtrace.core.nli.entailment import make_scorer
    from groundtrace.core.nli.evaluation import NliDataError, run_nli_eval

    console = Console()
    err = err_console()
    if list_models:
        _print_scorers(console)
        raise typer.Exit()
    chosen = [d.strip() for d in datasets.split(",") if d.strip()]
    if wice_premise not in ("retrieved", "chunks", "oracle"):
        raise typer.BadParameter(
            f"{wice_premise!r}; use retrieved, chunks or oracle", param_hint="--wice-premise"
        )
    options = _scorer_options(model, device, max_length, batch_size, entailment_index)
    try:
        scorer = make_scorer(model, **options)
    except (FileNotFoundError, ImportError, ValueError, RuntimeError) as exc:
        # the library names its keyword argument; on the command line it is an option
        print_error(exc)
        raise typer.Exit(2) from exc

    with _progress_bar(scorer.name) as progress:
        try:
            report = run_nli_eval(
                scorer,
                data_dir,
                chosen,
                limit,
                wice_limit,
                wice_premise,  # type: ignore[arg-type]
                top_k,
                chunk_sentences,
                progress,
            )
        except (NliDataError, ValueError) as exc:
            err.print(f"error: {exc}", markup=False)
            raise typer.Exit(2) from exc
    _print_report(console, err, report)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        console.print(f"wrote {json_out}", markup=False)


def _print_scorers(console: Console) -> None:
    """One line per registered scorer: name, aliases, description."""
    from groundtrace.core.nli.entailment import ENTAILMENT_SCORERS

    for name in ENTAILMENT_SCORERS.names():
        aliases = ENTAILMENT_SCORERS.aliases(name)
        also = f" (aliases: {', '.join(aliases)})" if aliases else ""
        description = ENTAILMENT_SCORERS.meta(name).get("description", "")
        console.print(f"{name}{also}: {description}", markup=False)


def _scorer_options(
    model: str, device: str, max_length: int, batch_size: int | None, entailment_index: int | None
) -> dict[str, object]:
    """Keyword arguments for ``make_scorer``; ``--entailment-index`` is refused for a registered scorer."""
    from groundtrace.core.nli.entailment import ENTAILMENT_SCORERS

    options: dict[str, object] = {"device": device, "max_length": max_length}
    if batch_size is not None:
        options["batch_size"] = batch_size
    if entailment_index is not None:
        if model in ENTAILMENT_SCORERS:
            raise typer.BadParameter(
                f"applies only to a checkpoint directory, not to the registered scorer {model!r}",
                param_hint="--entailment-index",
            )
        options["entailment_index"] = entailment_index
    return options


@contextmanager
def _progress_bar(scorer_name: str) -> Iterator[Callable[[str, int, int], None]]:
    """The ``progress(task, done, total)`` callback: one bar per task (e-SNLI, then WiCE) with rate and ETA
    on a terminal, heartbeat lines when stderr is not one (``groundtrace.cli.progress.track``)."""
    from contextlib import ExitStack

    from groundtrace.cli.progress import track

    with ExitStack() as stack:
        bars: dict[str, Any] = {}

        def progress(task: str, done: int, total: int) -> None:
            if task not in bars:  # the tasks come one after the other: close the previous one's bar
                stack.close()
                bars.clear()
                bars[task] = stack.enter_context(track(f"nli-eval {scorer_name} · {task}", unit="pairs"))
            bars[task].update(done=done, total=total)

        yield progress


def _print_report(console: Console, err: Console, report: NliEvalReport) -> None:
    """Skipped lines on ``err``; the results table, contradiction and partial-support lines on ``console``."""
    from rich.markup import escape
    from rich.table import Table

    for problem in report.problems:
        err.print(f"skipped {problem}", markup=False)
    table = Table(title=f"nli-eval · {escape(str(report.model))}")  # a user path: never markup
    for col in ("dataset", "n", "pos", "acc@0.5", "AUROC", "acc 3-way", "pairs", "pairs/s", "premise"):
        table.add_column(col)
    for r in report.results:
        table.add_row(
            r.dataset,
            str(r.n),
            str(r.n_positive),
            _fmt(r.accuracy),
            _fmt(r.auroc),
            _fmt(r.accuracy_3way),
            str(r.pairs_scored),
            f"{r.pairs_per_s:.1f}",
            r.premise or "-",
        )
    console.print(table)
    for r in report.results:
        if r.contradiction_auroc is not None:
            console.print(
                f"{r.dataset} contradiction vs rest: AUROC of P(contradiction) = "
                f"{_fmt(r.contradiction_auroc)}",
                markup=False,
            )
        if r.partial_n:
            console.print(
                f"{r.dataset} partially_supported: n={r.partial_n} mean score={_fmt(r.partial_mean_score)} "
                f"share >= {r.threshold}={_fmt(r.partial_entailed_rate)}",
                markup=False,
            )
