"""Alembic environment of the catalog store: runs on the connection :func:`..migrate.upgrade` hands over
(``config.attributes["connection"]``), or on ``sqlalchemy.url`` when run by the ``alembic`` command."""

from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from groundtrace.catalog.store.schema import metadata

config = context.config


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    engine = engine_from_config(
        config.get_section(config.config_ini_section) or {}, prefix="sqlalchemy.", poolclass=pool.NullPool
    )
    with engine.connect() as conn:
        _run(conn)
