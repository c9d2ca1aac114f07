"""CLI error messages are never hard-wrapped: a long path stays one string (CI paths vary in length)."""

from __future__ import annotations

import pytest

from groundtrace.cli.console import print_error


def test_long_error_message_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    long_path = "/check/" + "/".join(["a-rather-long-folder-name"] * 8) + "/dataset"
    print_error(f"{long_path}: the output folder must differ from the input folder")
    err = capsys.readouterr().err
    assert err == f"error: {long_path}: the output folder must differ from the input folder\n"


def test_error_text_is_escaped_not_markup(capsys: pytest.CaptureFixture[str]) -> None:
    print_error("[bold]not markup[/bold] [R1]")
    assert capsys.readouterr().err == "error: [bold]not markup[/bold] [R1]\n"
