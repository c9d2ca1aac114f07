"""Command-line interface: a thin typer layer over library functions (``groundtrace --help``).

The command modules are imported when they are needed, not when this package loads: ``groundtrace
--version`` imports none, ``groundtrace catalog ...`` only the catalog ones (:data:`NOUNS`), and
``from groundtrace.cli import app`` (tests, embedding) all of them (PEP 562 ``__getattr__``).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer

from groundtrace import __version__
from groundtrace.cli import apps as _apps
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


#: The first word of a command line -> the command modules that define it (anything else loads them all,
#: so typer can list every command or suggest the right one).
NOUNS: dict[str, tuple[str, ...]] = {
    "crs": tuple(m for m in _COMMAND_MODULES if m.rpartition(".")[2].startswith("crs_")),
    "catalog": tuple(m for m in _COMMAND_MODULES if m.rpartition(".")[2].startswith("catalog_")),
    "demo": ("groundtrace.cli.demo_cmd",),
    "nli-eval": ("groundtrace.cli.nli_cmd",),
    "llm": ("groundtrace.cli.llm_cmd",),
}


def _load_commands(names: tuple[str, ...] = _COMMAND_MODULES) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real missing dependency inside an existing module
                raise


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"groundtrace {__version__}")
        raise typer.Exit()


@_apps.app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version_callback, is_eager=True
    ),
) -> None:
    """Accountable evidence: verbatim, checkable citations for recommenders (crs) and catalogs (catalog)."""


def __getattr__(name: str) -> Any:
    """``app``: the root application with every command loaded."""
    if name == "app":
        _load_commands()
        return _apps.app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (output to a pipe or file is rendered ``PIPE_WIDTH`` columns wide): loads
    the command modules the command line names (:data:`NOUNS`), then runs typer."""
    args = sys.argv[1:] if argv is None else argv
    use_pipe_width()
    if args == ["--version"]:
        typer.echo(f"groundtrace {__version__}")
        return
    first = next((a for a in args if not a.startswith("-")), None)
    _load_commands(NOUNS.get(first or "", _COMMAND_MODULES) if first else _COMMAND_MODULES)
    _apps.app(args=args, prog_name="groundtrace")


__all__ = ["app", "main"]
