"""``catalog user add`` and ``catalog serve``'s argument checks (the server: test_app, test_browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.web.auth import verify_password
from groundtrace.cli import app


@pytest.mark.slow  # argon2 hashing is slow by design
def test_user_add_reads_the_password_from_stdin_and_stores_an_argon2_hash(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    runner = CliRunner()
    added = runner.invoke(
        app, ["catalog", "user", "add", "ana", "--db", db, "--password-stdin"], input="pw12345678\n"
    )
    assert added.exit_code == 0 and "reviewer ana: created" in added.output
    again = runner.invoke(
        app, ["catalog", "user", "add", "ana", "--db", db, "--password-stdin"], input="other-pass\n"
    )
    assert again.exit_code == 0 and "password changed" in again.output
    short = runner.invoke(
        app, ["catalog", "user", "add", "bo", "--db", db, "--password-stdin"], input="short\n"
    )
    assert short.exit_code == 2 and "at least 8 characters" in short.output
    with CatalogStore(db) as store:
        stored = store.reviewer_hash("ana")
        assert store.reviewer_hash("bo") is None
    assert stored is not None and stored.startswith("$argon2id$")
    assert verify_password(stored, "other-pass") and not verify_password(stored, "pw12345678")


def test_serve_refuses_a_short_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_WEB_SECRET", "too-short")
    result = CliRunner().invoke(app, ["catalog", "serve", "--db", f"sqlite:///{tmp_path / 's.db'}"])
    assert result.exit_code == 2 and "at least 32 characters" in result.output


def test_session_secret_is_generated_once_into_a_private_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groundtrace.catalog.web.auth import session_secret

    monkeypatch.delenv("GROUNDTRACE_WEB_SECRET", raising=False)
    path = tmp_path / "cfg" / "secret"
    first = session_secret(path)
    assert session_secret(path) == first and len(first) >= 32
    assert path.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    ("args", "proxy_headers", "allowed"),
    [([], False, None), (["--forwarded-allow-ips", "10.0.0.5, 10.1.0.0/16"], True, "10.0.0.5,10.1.0.0/16")],
)
def test_serve_trusts_forwarded_headers_only_from_the_given_proxies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], proxy_headers: bool, allowed: str | None
) -> None:
    """Issue 24: uvicorn's own default trusts X-Forwarded-For from 127.0.0.1; `catalog serve` turns proxy
    headers off unless --forwarded-allow-ips names the proxies."""
    import uvicorn

    seen: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: seen.update(options))
    monkeypatch.setenv("GROUNDTRACE_WEB_SECRET", "x" * 40)
    result = CliRunner().invoke(app, ["catalog", "serve", "--db", f"sqlite:///{tmp_path / 's.db'}", *args])
    assert result.exit_code == 0, result.output
    assert (seen["proxy_headers"], seen["forwarded_allow_ips"]) == (proxy_headers, allowed)
    assert (seen["host"], seen["port"]) == ("127.0.0.1", 8000)
