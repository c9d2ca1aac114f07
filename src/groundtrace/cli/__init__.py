"""Command-line interface: a thin typer layer over library functions (``groundtrace --help``)."""

from __future__ import annotations

import importlib

import typer

from groundtrace import __version__
from groundtrace.cli.apps import app
from groundtrace.cli.console import use_pipe_width

# Command modules; each adds its commands to the apps in ``groundtrace.cli.apps``.
_COMMAND_MODULES = (
    "groundtrace.cli.demo_cmd",
    "groundtrace.cli.nli_cmd",
    "groundtrace.cli.llm_cmd",
    "groundtrace.cli.crs_kb_cmd",
    "groundtrace.cli.crs_build_cmd",
    "groundtrace.cli.crs_data_cmd",
    "groundtrace.cli.crs_eval_cmd",
    "groundtrace.cli.crs_parser_cmd",
    "groundtrace.cli.crs_simulate_cmd",
    "groundtrace.cli.crs_leaderboard_cmd",
    "groundtrace.cli.catalog_cmd",
    "groundtrace.cli.catalog_enrich_cmd",
    "groundtrace.cli.catalog_learned_cmd",
    "groundtrace.cli.catalog_store_cmd",
    "groundtrace.cli.catalog_web_cmd",
)


def _load_commands() -> None:
    for name in _COMMAND_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real missing dependency inside an existing module
                raise


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"groundtrace {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version_callback, is_eager=True
    ),
) -> None:
    """Accountable evidence: verbatim, checkable citations for recommenders (crs) and catalogs (catalog)."""


_load_commands()


def main() -> None:
    """Console-script entry point (output to a pipe or file is rendered ``PIPE_WIDTH`` columns wide)."""
    use_pipe_width()
    app()


__all__ = ["app", "main"]
