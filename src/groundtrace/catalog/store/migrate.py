"""Opening a store URL and bringing its schema to the newest migration (Alembic, shipped in the package).

``make_engine(url)`` — SQLAlchemy engine for ``sqlite:///PATH`` (the parent folder is created; foreign
keys on; a 30 s busy timeout; the write-ahead log with ``synchronous=NORMAL``, :func:`_sqlite_pragmas`)
or ``postgresql+psycopg2://user@host:port/db``. ``upgrade(engine)`` runs every
pending migration of ``migrations/versions`` in one transaction and returns the revision now current.
Migrating is serialised across processes, so two processes creating the same new store at once both
succeed (the second finds the schema at head and changes nothing): on SQLite the transaction starts with
``BEGIN IMMEDIATE`` (the database's write lock, waited for up to the 30 s busy timeout), on PostgreSQL
with ``pg_advisory_xact_lock`` (:data:`MIGRATION_LOCK`, released at commit);
``current_revision(engine)`` reads it (``None`` for an empty database). A URL that cannot be parsed, a
driver that is not installed or a server that cannot be reached raise :class:`StoreError` with one line.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
DEFAULT_URL = "sqlite:///groundtrace.db"
MIGRATION_LOCK = 0x67745F6D6967  # pg_advisory_xact_lock key of the store's migrations ("gt_mig")


class StoreError(RuntimeError):
    """The store cannot be opened or migrated (one line naming the URL)."""


def redact(url: str) -> str:
    """``url`` with any password masked (for messages and logs)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def make_engine(url: str) -> Engine:
    """An engine for ``url`` (module docstring); raises :class:`StoreError` on an unusable URL."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"not a database URL: {url!r} (e.g. {DEFAULT_URL})") from exc
    try:
        if parsed.get_backend_name() == "sqlite":
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(parsed, connect_args={"timeout": 30})
            event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        options: dict[str, object] = {"pool_pre_ping": True}
        if parsed.get_driver_name() == "psycopg2":
            # batched executemany (upserts of many rows): one round trip per page, not per row
            options["executemany_mode"] = "values_plus_batch"
        return create_engine(parsed, **options)
    except (NoSuchModuleError, ImportError) as exc:
        hint = " (pip install 'groundtrace[postgres]')" if parsed.get_backend_name() == "postgresql" else ""
        raise StoreError(f"{redact(url)}: database driver not available: {exc}{hint}") from exc


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    """Foreign keys on; the write-ahead log (``journal_mode=WAL``, kept by the file) with
    ``synchronous=NORMAL``: a commit appends to the log without waiting for the disk (the rollback journal
    with ``FULL`` waited ~20 ms per commit here: once per batch of 32 SKUs, and at every run's start and
    end), readers and the one writer no longer block each other, and a killed process loses nothing
    committed. Only an OS crash or power loss can drop the last commits, and the database stays
    consistent: a run then redoes those SKUs, as it redoes any it had not recorded."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _alembic_config():  # type: ignore[no-untyped-def]
    from alembic.config import Config  # deferred: alembic (~0.1 s), only when migrating

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    """Run the pending migrations up to ``revision``; returns the revision now current."""
    from alembic import command  # deferred: alembic (~0.1 s), only when migrating

    config = _alembic_config()
    try:
        with engine.begin() as connection:
            _migration_lock(connection)
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    except DBAPIError as exc:
        # a process without the lock (an older groundtrace) may have migrated the store meanwhile
        if revision == "head" and _at_head(engine):
            return current_revision(engine)
        raise StoreError(f"{redact(str(engine.url))}: {str(exc.orig).strip().splitlines()[0]}") from exc
    return current_revision(engine)


def _at_head(engine: Engine) -> bool:
    try:
        return current_revision(engine) == head_revision()
    except StoreError:
        return False


def _migration_lock(connection: Connection) -> None:
    """Take the migration lock as the first statement of the transaction (module docstring)."""
    if connection.dialect.name == "sqlite":
        # pysqlite leaves BEGIN to the statement: an explicit BEGIN IMMEDIATE takes the write lock now
        # (a deferred transaction would read the empty schema and race to CREATE the same tables)
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    elif connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})


def current_revision(engine: Engine) -> str | None:
    """The migration revision recorded in the database (``None`` when it was never migrated)."""
    # deferred: alembic (~0.1 s), only when migrating or checking the revision
    from alembic.runtime.migration import MigrationContext

    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    except OperationalError as exc:
        raise StoreError(f"{redact(str(engine.url))}: {str(exc.orig).strip().splitlines()[0]}") from exc


def head_revision() -> str:
    """The newest migration shipped with this version of groundtrace."""
    # deferred: alembic (~0.1 s), only when migrating or checking the revision
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert head is not None
    return head
