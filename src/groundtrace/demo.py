"""The end-to-end demo behind ``groundtrace demo``; each capability adds its step here as it lands."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console


def run_demo(out_dir: Path, n_dialogues: int = 200, seed: int = 7, console: Console | None = None) -> dict[str, Path]:
    """Run every available step offline into ``out_dir``; return the artefacts written, by name."""
    console = console or Console()
    out_dir.mkdir(parents=True, exist_ok=True)
    artefacts: dict[str, Path] = {}
    console.print(f"[bold]groundtrace demo[/bold] → {out_dir}")
    return artefacts
