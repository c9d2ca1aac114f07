"""``groundtrace catalog serve`` (the review page) and ``groundtrace catalog user add`` (reviewer accounts);
both need the ``[web]`` extra."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from groundtrace.cli.apps import catalog_app
from groundtrace.cli.console import print_error

DB_HELP = "Store URL: sqlite:///PATH.db or postgresql+psycopg2://user@host:port/db."
WEB_EXTRA = "the review page needs the web extra: pip install 'groundtrace[web]'"

user_app = typer.Typer(help="Reviewer accounts of the review page.", no_args_is_help=True)
catalog_app.add_typer(user_app, name="user")


def _web_modules() -> None:
    try:
        import argon2  # noqa: F401
        import fastapi  # noqa: F401
        import itsdangerous  # noqa: F401
        import python_multipart  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        print_error(f"{WEB_EXTRA} ({exc.name} is missing)")
        raise typer.Exit(2) from None


def _store(db: str):  # type: ignore[no-untyped-def]
    from groundtrace.catalog.store import CatalogStore, StoreError

    try:
        return CatalogStore(db)
    except StoreError as exc:
        print_error(exc)
        raise typer.Exit(2) from None


@user_app.command("add")
def user_add(
    name: str = typer.Argument(..., help="Reviewer name (shown in the audit log as reviewer:NAME)."),
    db: str = typer.Option("sqlite:///groundtrace.db", "--db", help=DB_HELP),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the password from the first line of stdin (no prompt)."
    ),
) -> None:
    """Create a reviewer account (or set a new password); the password is stored as an argon2 hash."""
    _web_modules()
    from groundtrace.catalog.store import StoreError
    from groundtrace.catalog.web.auth import hash_password

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        hashed = hash_password(password)
    except ValueError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    store = _store(db)
    try:
        created = store.set_reviewer(name, hashed)
        if not created:  # a new password ends the account's open sessions
            from groundtrace.catalog.store.access import end_sessions_of

            end_sessions_of(store, name)
    except StoreError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    finally:
        store.close()
    typer.echo(f"reviewer {name}: {'created' if created else 'password changed'}")


@catalog_app.command("serve")
def serve(
    db: str = typer.Option("sqlite:///groundtrace.db", "--db", help=DB_HELP),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback by default)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    secret_file: Path = typer.Option(
        None,
        "--secret-file",
        help="File holding the session secret (created when missing; default "
        "~/.config/groundtrace/web_secret); $GROUNDTRACE_WEB_SECRET overrides it.",
    ),
    forwarded_allow_ips: str = typer.Option(
        "",
        "--forwarded-allow-ips",
        help="Comma-separated proxy addresses (IPs or networks; * = any) whose X-Forwarded-For / "
        "X-Forwarded-Proto headers are trusted. Default: none — the client address is the socket peer "
        "(set it to your reverse proxy's address when the page runs behind one).",
    ),
) -> None:
    """Serve the review page: reviewers log in and approve, reject or edit the REVIEW items of a store."""
    _web_modules()
    import uvicorn

    from groundtrace.catalog.web.app import create_app, server_options
    from groundtrace.catalog.web.auth import session_secret

    try:
        secret = session_secret(secret_file)
    except (OSError, ValueError) as exc:
        print_error(f"session secret: {exc}")
        raise typer.Exit(2) from None
    store = _store(db)
    if not store.table("reviewers"):
        typer.echo(f"no reviewer accounts yet: groundtrace catalog user add NAME --db {db}", err=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: serving on {host}, reachable from other machines; use HTTPS in front", err=True)
    typer.echo(f"review page: http://{host}:{port}/")
    if forwarded_allow_ips.strip():
        typer.echo(f"trusting X-Forwarded-For from: {forwarded_allow_ips}", err=True)
    uvicorn.run(create_app(store, secret), **server_options(host, port, forwarded_allow_ips))


review_app = typer.Typer(
    help="The review queue in Label Studio / Argilla formats, and their decisions back.", no_args_is_help=True
)
catalog_app.add_typer(review_app, name="review")
FORMAT_HELP = "label-studio (tasks JSON + labelling config XML) or argilla (records JSON + settings JSON)."


@review_app.command("export")
def review_export(
    db: str = typer.Option(..., "--db", help=DB_HELP),
    fmt: str = typer.Option(..., "--format", help=FORMAT_HELP),
    out: Path = typer.Option(
        ..., "--out", help="JSON file; the tool's project config is written next to it."
    ),
    all_items: bool = typer.Option(False, "--all", help="Every item, decided ones included (default: open)."),
) -> None:
    """Write the review queue as Label Studio tasks or Argilla records, with the project configuration."""
    import json

    from groundtrace.catalog.web.exchange import (
        FORMATS,
        argilla_settings,
        export_argilla,
        export_label_studio,
        label_studio_config,
    )

    if fmt not in FORMATS:
        print_error(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        raise typer.Exit(2)
    store = _store(db)
    status = None if all_items else "open"
    try:
        if fmt == "label-studio":
            rows = export_label_studio(store, status)
            config = out.with_name(out.stem + ".label-config.xml")
            config_text = label_studio_config()
        else:
            rows = export_argilla(store, status)
            config = out.with_name(out.stem + ".argilla-settings.json")
            config_text = json.dumps(argilla_settings(), indent=2) + "\n"
        out.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        config.write_text(config_text, encoding="utf-8")
    except OSError as exc:
        print_error(f"cannot write {exc.filename or out}: {exc.strerror or exc}")
        raise typer.Exit(2) from None
    finally:
        store.close()
    typer.echo(f"{len(rows)} review items -> {out} (project config: {config})")


@review_app.command("import")
def review_import(
    file: Path = typer.Argument(..., help="The tool's JSON export (Label Studio tasks / Argilla records)."),
    db: str = typer.Option(..., "--db", help=DB_HELP),
    fmt: str = typer.Option(..., "--format", help=FORMAT_HELP),
    reviewer: str = typer.Option(
        None, "--reviewer", help="Name for the audit log (default: the tool's annotator, e.g. argilla:<id>)."
    ),
) -> None:
    """Apply the decisions of a Label Studio / Argilla export to the store, like decisions on the page."""
    from groundtrace.catalog.web.exchange import ExchangeError, import_decisions

    store = _store(db)
    try:
        report = import_decisions(store, file, fmt, reviewer=reviewer)
    except ExchangeError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    finally:
        store.close()
    for problem in report.problems:
        print_error(problem)
    typer.echo(
        f"{report.decided} decisions applied, {report.skipped} without a decision, "
        f"{len(report.problems)} refused"
    )
    if report.problems:
        raise typer.Exit(1)
