"""Consoles for the CLI: one place decides how messages reach the terminal.

Error and progress messages go to stderr with ``soft_wrap=True``: rich never inserts hard line breaks
into them, so a long path in a message stays one copyable string (and tests that look for a phrase do
not depend on how long the path happens to be). Tables go to stdout through the normal console.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


PIPE_WIDTH = 200  # wide enough that no help panel or table of ours is cut with "…" (tested)


def use_pipe_width() -> None:
    """When stdout is not a terminal and ``COLUMNS`` is unset, set ``COLUMNS=PIPE_WIDTH``.

    rich (and typer's help) otherwise render 80 columns in pipes and logs and cut option names and table
    cells with ``…``; tables stay as narrow as their content. An explicit ``COLUMNS`` always wins.
    """
    if "COLUMNS" not in os.environ and not sys.stdout.isatty():
        os.environ["COLUMNS"] = str(PIPE_WIDTH)


def err_console() -> Console:
    """A stderr console that never hard-wraps messages."""
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


def out_console() -> Console:
    """The stdout console (tables and summaries; rich wraps tables to the terminal width)."""
    from rich.console import Console

    return Console()


def print_error(message: object) -> None:
    """Print ``error: <message>`` to stderr; the message is untrusted text and is escaped, never markup."""
    from rich.markup import escape

    err_console().print(f"[red]error:[/red] {escape(str(message))}")


def registry_names(registry_path: str) -> str:
    """The names of the registry at ``"module:attr"`` (plug-ins included), comma-separated, for help text.

    Help text is built when the command module is imported, so that ``--help`` lists exactly what the
    registry holds; a plug-in that fails to load gives ``(unavailable: ...)`` instead of breaking ``--help``.
    """
    import importlib

    module, _, attr = registry_path.partition(":")
    try:
        return ", ".join(getattr(importlib.import_module(module), attr).names())
    except Exception as exc:  # noqa: BLE001 - a broken plug-in must not break --help
        return f"(unavailable: {exc})"
