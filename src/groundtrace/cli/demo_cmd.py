"""``groundtrace demo``: the main job end to end on the embedded default (demo KB, offline engines, SQLite)."""

from __future__ import annotations

from pathlib import Path

import typer

from groundtrace.cli.apps import app


@app.command("demo")
def demo(
    out: Path = typer.Option(Path("groundtrace-demo"), "--out", help="Folder for every demo artefact."),
    dialogues: int = typer.Option(200, "--dialogues", min=1, help="Number of demo dialogues to build."),
    seed: int = typer.Option(7, "--seed", help="Random seed; the demo is deterministic for a seed."),
) -> None:
    """Run the whole pipeline offline on generated demo data and print where the results are."""
    from groundtrace.demo import run_demo

    run_demo(out_dir=out, n_dialogues=dialogues, seed=seed)
