"""The catalog store (SQLAlchemy + Alembic; SQLite by default, PostgreSQL by URL): SKUs, every candidate,
verdict and decision per run, published values with their evidence, an append-only audit log and the
review queue. See docs/catalog-store.md."""

from groundtrace.catalog.store.migrate import DEFAULT_URL, StoreError, upgrade
from groundtrace.catalog.store.store import (
    CatalogStore,
    ReviewConflict,
    RunRef,
    SkuOutcome,
    StorePolicy,
    WriteStats,
    content_hash,
)

__all__ = [
    "DEFAULT_URL",
    "CatalogStore",
    "ReviewConflict",
    "RunRef",
    "SkuOutcome",
    "StoreError",
    "StorePolicy",
    "WriteStats",
    "content_hash",
    "upgrade",
]
