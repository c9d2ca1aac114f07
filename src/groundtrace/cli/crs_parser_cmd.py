"""``groundtrace crs train-parser``: train the systems' constraint understanding on a dataset's train split,
save it as a model file and print its precision / recall per constraint kind on the validation split."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from groundtrace.cli.apps import crs_app
from groundtrace.cli.console import err_console


@crs_app.command("train-parser")
def train_parser(
    dataset: Annotated[
        Path, typer.Option("--dataset", help="Dataset folder with a train split (train.jsonl + manifest).")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Model file to write (joblib; a .json header beside it).")
    ],
    kb: Annotated[
        str | None, typer.Option("--kb", help="Knowledge base (default: the dataset's own).")
    ] = None,
    split: Annotated[str, typer.Option("--train-split", help="Split to train on (default train).")] = "train",
    score_split: Annotated[
        str, typer.Option("--score-split", help="Split to report precision/recall on (default validation).")
    ] = "validation",
    features: Annotated[
        str | None,
        typer.Option(
            "--features",
            help="Parser features: embed (TF-IDF + MiniLM sentence embeddings, the default when the dense "
            "extra is installed) or tfidf (TF-IDF alone, the default without it).",
        ),
    ] = None,
) -> None:
    """Train the constraint parser + evidence model + priors the offline systems use (they also train it
    themselves on first use of a dataset, and cache it); use it with ``crs run --system-arg parser=OUT``."""
    from rich.table import Table

    from groundtrace.crs.evaluation.loading import load_dataset, resolve_kb
    from groundtrace.crs.systems.understanding.model import (
        DEFAULT_PARSER_OPTIONS,
        default_parser_options,
        review_sentences_of,
        save_understanding,
        train_understanding,
        training_data,
    )
    from groundtrace.crs.systems.understanding.scoring import parse_scores

    err = err_console()
    try:
        train = load_dataset(dataset, split)
        knowledge = resolve_kb(kb, train.manifest, train)
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--dataset") from None
    data = training_data(train, review_sentences_of(knowledge, train))
    if not any(t.constraints for t in data.turns):
        raise typer.BadParameter(
            f"{dataset}: split {split!r} has no user turn with constraints_added: nothing to learn",
            param_hint="--dataset",
        )
    options = default_parser_options()
    if features is not None:
        if features not in ("embed", "tfidf"):
            raise typer.BadParameter(f"{features!r}: expected embed or tfidf", param_hint="--features")
        options = {"features": "tfidf", "augment": True} if features == "tfidf" else DEFAULT_PARSER_OPTIONS
    try:
        understanding = train_understanding(data, dict(options))
    except RuntimeError as exc:  # DenseUnavailable: --features embed without the [dense] extra
        raise typer.BadParameter(str(exc), param_hint="--features") from None
    save_understanding(understanding, out)
    counts = understanding.header["counts"]
    typer.echo(
        f"wrote {out} (+ {out.name}.json): {len(understanding.header['labels'])} constraint classes from "
        f"{counts['turns']} user turns, {counts['quotes']} quotes; train hash "
        f"{understanding.header['train_hash'][:16]}; parser options {understanding.header['parser_options']}"
    )
    try:
        scored = load_dataset(dataset, score_split)
    except (ValueError, FileNotFoundError) as exc:
        err.print(f"not scored: {exc}", markup=False)
        return
    table = Table(title=f"parser on {score_split} ({len(scored)} dialogues)")
    for col in ("kind", "precision", "recall", "tp", "fp", "fn"):
        table.add_column(col, justify="left" if col == "kind" else "right")
    for kind, row in parse_scores(understanding, scored, knowledge).items():
        fmt = [f"{row[k]:.3f}" if row[k] is not None else "-" for k in ("precision", "recall")]
        table.add_row(kind, *fmt, str(row["tp"]), str(row["fp"]), str(row["fn"]))
    from rich.console import Console

    Console(width=100).print(table)
