"""``groundtrace crs build``: the five-stage dataset builder (personas → pools → dialogues → QC → tiers)."""

from __future__ import annotations

from pathlib import Path

import typer

from groundtrace.cli.apps import crs_app
from groundtrace.cli.console import err_console, print_error, registry_names


@crs_app.command("build")
def build(
    kb: str = typer.Option(
        ...,
        "--kb",
        help="A KB file saved by `crs kb build`/`crs kb demo`, or 'demo' / 'demo:SEED' for the generated "
        "city.",
    ),
    dialogues: int = typer.Option(10_000, "--dialogues", min=1, help="Number of dialogues to build."),
    seed: int = typer.Option(0, "--seed", help="Random seed; the output is byte-identical for a seed."),
    out: Path = typer.Option(
        ..., "--out", help="Output folder (train/validation/test.jsonl, schema, manifest, report)."
    ),
    realiser: str = typer.Option(
        "template",
        "--realiser",
        help=f"How plans become text: {registry_names('groundtrace.crs.build.builder:REALISERS')} "
        "('template' is offline and the default; 'llm' needs --llm).",
    ),
    llm: str = typer.Option(
        None,
        "--llm",
        help="LLM spec for --realiser llm (e.g. 'local', 'openai:MODEL', 'http://host:port/v1#MODEL').",
    ),
    rejection_share: float = typer.Option(
        0.294, "--rejection-share", min=0.0, max=1.0, help="Share of dialogues with a reject_and_refine turn."
    ),
    demo_seed: int = typer.Option(0, "--demo-seed", help="Seed of the generated city when --kb demo."),
    workers: int = typer.Option(
        1, "--workers", min=1, help="Threads realising dialogues at once (for --realiser llm); same output."
    ),
    processes: int = typer.Option(
        1,
        "--processes",
        min=0,
        help="Processes building dialogues at once with the offline realiser (0 = one per usable CPU, at "
        "most 8, for 500+ dialogues). Same output for any value; pays off only beyond 2 cores.",
    ),
    phrasings: Path = typer.Option(
        None,
        "--phrasings",
        help="A user-language bank (YAML like groundtrace/crs/data/phrasings.yaml) to use instead.",
    ),
    mine_phrasings: bool = typer.Option(
        True,
        "--mine-phrasings/--no-mine-phrasings",
        help="Add phrasings mined from the KB's reviews ('we were looking for a quiet spot') to the bank.",
    ),
) -> None:
    """Build a TRACE-CRS dialogue dataset from a knowledge base and print the build report.

    Exits 1, files still written, when nothing was built or the LLM realised no turn (all fell back).
    """
    from rich.console import Console
    from rich.markup import escape

    from groundtrace.cli.progress import track
    from groundtrace.core.llm.base import LLMError
    from groundtrace.crs.build.builder import REALISERS, BuildConfig, build_dataset, make_realiser
    from groundtrace.crs.build.planner import PlanningError

    console = Console()
    if realiser not in REALISERS:
        raise typer.BadParameter(
            f"unknown realiser {realiser!r}; choose from {REALISERS.names()}", param_hint="--realiser"
        )
    from groundtrace.crs.build.phrasing import PhrasingFileError, load_bank

    config = BuildConfig(
        rejection_share=rejection_share,
        llm=llm,
        workers=workers,
        processes=processes,
        mine_phrasings=mine_phrasings,
        phrasings=str(phrasings) if phrasings is not None else None,
    )
    if phrasings is not None:
        try:
            load_bank(phrasings)
        except PhrasingFileError as exc:  # every bad entry, as file:line: message
            print_error(f"bad phrasing bank --phrasings {phrasings}:\n{exc}")
            raise typer.Exit(2) from None
    try:
        real = make_realiser(realiser, config)
    except LLMError as exc:  # LLMConfigError (bad spec, no LLM configured) or a client that cannot be built
        raise typer.BadParameter(str(exc), param_hint="--llm") from None
    knowledge = _load_kb_or_exit(kb, demo_seed)
    try:
        with track(f"crs build {realiser}", total=dialogues, unit="dialogues") as bar:
            report = build_dataset(
                knowledge,
                dialogues,
                seed,
                out,
                realiser=real,
                config=config,
                progress=lambda n: bar.update(advance=n),
                kb_path=None if _is_demo(kb) else Path(kb),
            )
    except PlanningError as exc:
        console.print(f"[red]cannot build from {escape(kb)}: {escape(str(exc))}[/red]")
        raise typer.Exit(1) from exc
    if _is_demo(kb):  # the city, stances included, into the user's cache: `crs score` reads it back
        from groundtrace.crs.kb.demo_cache import remember

        remember(knowledge, _demo_seed(kb, demo_seed))
    report.print_summary(console)
    console.print(
        f"wrote {escape(str(out))}/{{train,validation,test}}.jsonl, schema.json, manifest.json, "
        "build_report.json, README.md (the dataset card: Hugging Face configs) and knowledge_base/"
    )
    errors, warnings = report.health()
    for message in warnings:
        err_console().print(f"[yellow]warning:[/yellow] {escape(message)}")
    if errors:
        rejections = getattr(real, "rejections", None)
        for message in errors:
            if rejections and message.startswith("the LLM realised no turn"):
                message += f"; first failure: {rejections[0][:300]}"
            print_error(message)
        print_error(f"build failed; its files were still written to {out} (build_report.json has the counts)")
        raise typer.Exit(1)


def _is_demo(kb: str) -> bool:
    """``--kb demo`` or ``demo:SEED`` (as `crs run`/`crs score` accept it): the generated city."""
    return kb == "demo" or kb.startswith("demo:")


def _demo_seed(kb: str, demo_seed: int) -> int:
    """The seed of the generated city: the one in ``demo:SEED``, else ``--demo-seed``."""
    seed_text = kb.partition(":")[2]
    if seed_text and not seed_text.lstrip("-").isdigit():
        raise typer.BadParameter(
            f"{kb!r}: expected 'demo' or 'demo:SEED' with an integer seed", param_hint="--kb"
        )
    return int(seed_text) if seed_text else demo_seed


def _load_kb_or_exit(kb: str, demo_seed: int):  # returns KnowledgeBase
    """The KB ``--kb`` names ('demo' generates one); a missing, foreign or tampered file exits cleanly."""
    if _is_demo(kb):
        from groundtrace.crs.kb.demo import generate_demo_kb

        return generate_demo_kb(_demo_seed(kb, demo_seed))
    from groundtrace.crs.kb.store import KBIntegrityError, NotAKnowledgeBaseError, load_kb

    path = Path(kb)
    if not path.is_file():
        raise typer.BadParameter(f"{path}: no such KB file (or pass 'demo')", param_hint="--kb")
    try:
        return load_kb(path)
    except (FileNotFoundError, NotAKnowledgeBaseError, KBIntegrityError) as exc:  # incl. invalid records
        print_error(exc)
        raise typer.Exit(2) from None
