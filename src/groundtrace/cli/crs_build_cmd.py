"""``groundtrace crs build``: the five-stage dataset builder (personas → pools → dialogues → QC → tiers)."""

from __future__ import annotations

from pathlib import Path

import typer

from groundtrace.cli.apps import crs_app


@crs_app.command("build")
def build(
    kb: str = typer.Option(..., "--kb", help="A KB file saved by `crs kb build`/`crs kb demo`, or 'demo' for the generated city."),
    dialogues: int = typer.Option(10_000, "--dialogues", min=1, help="Number of dialogues to build."),
    seed: int = typer.Option(0, "--seed", help="Random seed; the output is byte-identical for a seed."),
    out: Path = typer.Option(..., "--out", help="Output folder (train/validation/test.jsonl, schema, manifest, report)."),
    realiser: str = typer.Option("template", "--realiser", help="'template' (offline, default) or 'llm'."),
    llm: str = typer.Option(None, "--llm", help="LLM spec for --realiser llm (e.g. 'local', 'openai:MODEL', 'http://host:port/v1#MODEL')."),
    rejection_share: float = typer.Option(0.294, "--rejection-share", min=0.0, max=1.0, help="Share of dialogues with a reject_and_refine turn."),
    demo_seed: int = typer.Option(0, "--demo-seed", help="Seed of the generated city when --kb demo."),
    workers: int = typer.Option(1, "--workers", min=1, help="Threads realising dialogues at once (for --realiser llm); same output."),
) -> None:
    """Build a TRACE-CRS dialogue dataset from a knowledge base and print the build report."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from groundtrace.crs.build import REALISERS, BuildConfig, build_dataset
    from groundtrace.crs.planner import PlanningError

    console = Console()
    if realiser not in REALISERS:
        raise typer.BadParameter(f"unknown realiser {realiser!r}; choose from {REALISERS.names()}", param_hint="--realiser")
    if kb == "demo":
        from groundtrace.crs.demo_kb import generate_demo_kb

        knowledge = generate_demo_kb(demo_seed)
    else:
        from groundtrace.crs.kb_store import load_kb

        path = Path(kb)
        if not path.is_file():
            raise typer.BadParameter(f"{path}: no such KB file (or pass 'demo')", param_hint="--kb")
        knowledge = load_kb(path)
    config = BuildConfig(rejection_share=rejection_share, llm=llm, workers=workers)
    try:
        with Progress(TextColumn("building"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task("build", total=dialogues)
            report = build_dataset(knowledge, dialogues, seed, out, realiser=realiser, config=config,
                                   progress=lambda n: bar.advance(task, n))
    except PlanningError as exc:
        console.print(f"[red]cannot build from {escape(kb)}: {escape(str(exc))}[/red]")
        raise typer.Exit(1) from exc
    report.print_summary(console)
    console.print(f"wrote {escape(str(out))}/{{train,validation,test}}.jsonl, schema.json, manifest.json, build_report.json")
