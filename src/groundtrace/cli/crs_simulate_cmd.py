"""``groundtrace crs simulate``: a rule-based simulated user talks to a system (docs/crs-simulate.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from groundtrace.cli.apps import crs_app
from groundtrace.cli.console import print_error
from groundtrace.cli.crs_eval_cmd import KbOption, LimitOption, _check_setting, _load
from groundtrace.core.llm.factory import LLM_OPTION_HELP


@crs_app.command("simulate")
def simulate_cmd(
    *,
    dataset: Annotated[Path, typer.Option("--dataset", help="Dataset folder or one JSONL file.")],
    system: Annotated[
        str,
        typer.Option(
            "--system",
            help="A registered system, an http(s):// endpoint, or 'all-offline' (each offline system "
            "into OUT/NAME/).",
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Folder for transcripts.jsonl, summary.json, transcripts.html.")
    ],
    system_arg: Annotated[
        list[str] | None,
        typer.Option("--system-arg", help="key=value passed to the system's constructor (repeatable)."),
    ] = None,
    max_turns: Annotated[
        int, typer.Option("--max-turns", min=1, help="System turns before the user gives up.")
    ] = 6,
    setting: Annotated[str, typer.Option("--setting", help="'closed' or 'open'.")] = "closed",
    split: Annotated[str, typer.Option("--split", help="train, validation, test or all.")] = "test",
    limit: LimitOption = None,
    kb: KbOption = None,
    user_llm: Annotated[
        str | None,
        typer.Option("--user-llm", help="Optional LLM phrasing of the user's lines. " + LLM_OPTION_HELP),
    ] = None,
) -> None:
    """Simulated users (persona + hidden constraints) reject, refine and accept; success, recovery,
    repeats and grounding of the system's turns, with saved transcripts and an HTML view."""
    from groundtrace.cli.progress import track
    from groundtrace.core.llm.config import LLMConfigError
    from groundtrace.core.llm.factory import make_llm
    from groundtrace.core.registry import UnknownNameError
    from groundtrace.crs.simulate import simulate
    from groundtrace.crs.systems import OFFLINE_SYSTEMS
    from groundtrace.crs.systems.factory import parse_system_args, system_factory

    _check_setting(setting)
    try:
        options = parse_system_args(system_arg or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--system-arg") from None
    names = list(OFFLINE_SYSTEMS) if system == "all-offline" else [system]
    try:
        factories = [system_factory(name, options) for name in names]
        systems = [f() if callable(f) else f for f in factories]
    except (UnknownNameError, ImportError, ValueError, TypeError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--system") from None
    try:
        llm = make_llm(user_llm) if user_llm else None
    except (LLMConfigError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--user-llm") from None
    from groundtrace.crs.evaluation.loading import load_dataset

    try:  # the simulated user reads whole dialogues (turn texts, constraints as spoken), not lean records
        full = load_dataset(dataset, split)
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--dataset") from None
    data, knowledge = _load(dataset, split, kb, preloaded=full)
    dialogues = list(data)[:limit] if limit else list(data)
    for built in systems:
        target = out / built.name if len(systems) > 1 else out
        try:
            with track(f"crs simulate {built.name} · {setting}", unit="dialogues") as bar:
                summary, _ = simulate(
                    built,
                    dialogues,
                    knowledge,
                    target,
                    setting=setting,
                    max_turns=max_turns,
                    llm=llm,  # type: ignore[arg-type]
                    progress=lambda done, total: bar.update(done=done, total=total),
                )
        except Exception as exc:  # noqa: BLE001 - a run-time failure of one system: exit 1, named
            print_error(f"{built.name}: {type(exc).__name__}: {exc}")
            raise typer.Exit(1) from None
        rate = summary["success_rate"] or 0.0
        recovery = summary["recovery_rate"]
        typer.echo(
            f"{built.name}: success {rate:.3f} over {summary['dialogues']} dialogues, "
            f"recovery {'-' if recovery is None else f'{recovery:.3f}'}, repeats {summary['repeats']}, "
            f"errors {summary['errors']} -> {target}/transcripts.html"
        )
