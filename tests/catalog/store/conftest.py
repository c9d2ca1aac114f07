"""The store test suite runs against SQLite and PostgreSQL (``store_url`` is parametrised).

PostgreSQL: one throwaway database per test session on ``$GROUNDTRACE_PG_URL`` (default
``postgresql+psycopg2://postgres@127.0.0.1:5432``), created at the first use and dropped at the end; each
test starts from an empty schema. When no server can be reached the PostgreSQL cases are skipped with the
reason — except in CI (``CI=true``), where that is a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

PG_SERVER = os.environ.get("GROUNDTRACE_PG_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432")


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true"}


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """URL of a throwaway PostgreSQL database for this session (dropped afterwards)."""
    try:
        import psycopg2  # noqa: F401
        from sqlalchemy import create_engine, text
    except ImportError as exc:  # pragma: no cover - psycopg2-binary is in [dev]
        _unavailable(f"psycopg2 not installed ({exc}); pip install 'groundtrace[postgres]'")
    admin = create_engine(f"{PG_SERVER}/postgres", isolation_level="AUTOCOMMIT")
    name = f"gt_store_test_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - any failure to reach the server
        admin.dispose()
        _unavailable(f"no PostgreSQL server at {PG_SERVER} ({str(exc).splitlines()[0]})")
    try:
        yield f"{PG_SERVER}/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _unavailable(reason: str) -> None:
    if _in_ci():
        pytest.fail(f"{reason}: CI needs the PostgreSQL store tests (scripts/test.sh starts the server)")
    pytest.skip(reason)


def reset_pg(url: str) -> None:
    """Empty the database: drop and recreate the public schema (tables, triggers, functions)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty store URL on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    url = request.getfixturevalue("pg_database")
    reset_pg(url)
    return url


@pytest.fixture
def other_store_url(store_url: str, tmp_path: Path) -> Iterator[str]:
    """A second empty store on the same backend as ``store_url`` (to compare two runs)."""
    if store_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'other.db'}"
        return
    from sqlalchemy import create_engine, text

    admin = create_engine(f"{PG_SERVER}/postgres", isolation_level="AUTOCOMMIT")
    name = f"gt_store_other_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{PG_SERVER}/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def poison_sku(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Any]:
    """``poison_sku(sku_id)``: the runner's ``process_one`` gives that SKU's outcome a value no INTEGER column
    holds (``llm_calls = 2**64``), so the batch holding it fails its transaction when written; returns the
    real ``process_one`` (to put back)."""
    from groundtrace.catalog.store import runner

    def poison(sku_id: str) -> Any:
        real = runner.process_one

        def poisoned(sku: Any, comp: Any, measure_usage: bool = False) -> Any:
            outcome = real(sku, comp, measure_usage)
            if sku.sku_id == sku_id:
                outcome.llm_calls = 2**64
            return outcome

        monkeypatch.setattr(runner, "process_one", poisoned)
        return real

    return poison
