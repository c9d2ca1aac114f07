"""Every CLI command and group has help text; --help and --version work."""

from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from groundtrace import __version__
from groundtrace.cli import app

runner = CliRunner()


def _walk(command, path: tuple[str, ...] = ()):
    """Every (path, command) below ``command``; typer >= 0.29 vendors click, so duck-type groups."""
    yield path, command
    subcommands = getattr(command, "commands", None)
    if subcommands:
        for name, sub in subcommands.items():
            yield from _walk(sub, (*path, name))


def test_every_command_has_help() -> None:
    root = typer.main.get_command(app)
    missing = [" ".join(p) or "groundtrace" for p, c in _walk(root) if not (c.help or "").strip()]
    assert not missing, f"commands without help text: {missing}"


def test_expected_groups_exist() -> None:
    root = typer.main.get_command(app)
    names = {" ".join(p) for p, _ in _walk(root)}
    assert {"crs", "catalog", "demo", "crs kb", "nli-eval", "llm", "catalog templates"} <= names


@pytest.mark.slow  # end to end: --help of every command
def test_every_command_help_runs() -> None:
    root = typer.main.get_command(app)
    for path, _ in _walk(root):
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage" in result.output


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_help_shows_bracketed_text_and_defaults() -> None:
    """rich treats ``[...]`` in help as markup and drops it; defaults are written in parentheses instead."""
    result = runner.invoke(app, ["crs", "kb", "build", "--help"])
    assert result.exit_code == 0
    assert "(default: 8)" in result.output and "(default: 800 each)" in result.output
    assert " ." not in result.output.replace("...", "")
    root = typer.main.get_command(app)
    for path, command in _walk(root):
        for param in command.params:
            assert "[" not in (getattr(param, "help", None) or ""), (path, param.name)
