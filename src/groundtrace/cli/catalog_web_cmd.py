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
) -> None:
    """Serve the review page: reviewers log in and approve, reject or edit the REVIEW items of a store."""
    _web_modules()
    import uvicorn

    from groundtrace.catalog.web.app import create_app
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
    uvicorn.run(create_app(store, secret), host=host, port=port, log_level="warning")
