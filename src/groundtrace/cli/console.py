"""Consoles for the CLI: one place decides how messages reach the terminal.

Error and progress messages go to stderr with ``soft_wrap=True``: rich never inserts hard line breaks
into them, so a long path in a message stays one copyable string (and tests that look for a phrase do
not depend on how long the path happens to be). Tables go to stdout through the normal console.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


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
