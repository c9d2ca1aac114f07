"""``groundtrace demo``: the main job end to end on the embedded default (demo KB, offline engines,
SQLite)."""

from __future__ import annotations

from pathlib import Path

import typer

from groundtrace.cli.apps import app
from groundtrace.cli.console import print_error


@app.command("demo")
def demo(
    out: Path = typer.Option(Path("groundtrace-demo"), "--out", help="Folder for every demo artefact."),
    dialogues: int = typer.Option(200, "--dialogues", min=1, help="Number of demo dialogues to build."),
    seed: int = typer.Option(7, "--seed", help="Random seed; the demo is deterministic for a seed."),
) -> None:
    """Run the whole pipeline offline on generated demo data and print where the results are."""
    from groundtrace.demo import run_demo

    if out.exists() and not out.is_dir():
        print_error(f"--out {out} is a file, not a folder")
        raise typer.Exit(2)
    try:
        out.mkdir(parents=True, exist_ok=True)  # fail on a bad --out before any work is done
        run_demo(out_dir=out, n_dialogues=dialogues, seed=seed)
    except OSError as exc:  # unwritable, a path under a regular file, disk full
        where = "" if exc.filename in (None, str(out)) else f"{exc.filename}: "
        print_error(f"cannot write the demo to {out}: {where}{exc.strerror or exc}")
        raise typer.Exit(2) from exc
