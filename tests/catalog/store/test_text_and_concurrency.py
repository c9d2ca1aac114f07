"""Issue 24 (store): text a backend cannot hold never stops a batch, and two processes creating the same
new store at once both succeed — on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.model import SKU
from groundtrace.catalog.pipeline import EnrichConfig
from groundtrace.catalog.store import CatalogStore, SkuOutcome
from groundtrace.catalog.store.clean import clean_json, clean_rows, clean_text, text_problems
from groundtrace.catalog.store.migrate import current_revision, head_revision
from groundtrace.catalog.store.runner import enrich_to_store
from groundtrace.catalog.store.schema import skus as skus_table

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, EnrichConfig]:
    """The demo catalog's first 7 SKUs; line 2's title, line 4's description and a spec (key and value)
    of line 6 carry a NUL byte (a JSON ``\\u0000`` escape). A lone surrogate (``\\ud800``) is refused by
    the SKU model itself (pydantic, file:line from the reader); the rule for it is tested on rows."""
    paths = write_demo_catalog(tmp_path_factory.mktemp("hostile"))
    records = [json.loads(line) for line in paths.skus.read_text(encoding="utf-8").splitlines()[:7]]
    records[1]["title"] = "Oat\x00 bar " + records[1]["title"]
    records[3]["description"] = (records[3]["description"] or "") + " nul\x00here"
    records[5]["specs"] = {**records[5]["specs"], "Pack\x00": "6\x00 x 1"}
    lines = [json.dumps(r) for r in records]
    path = paths.root / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, EnrichConfig(feed=paths.feed, corpus=paths.corpus)


def test_cleaning_rule_by_hand() -> None:
    assert clean_text("a\x00b\x00") == "ab"
    assert clean_text("x\ud800y") == "x\ufffdy"
    assert clean_text("emoji \U0001f600 kept") == "emoji \U0001f600 kept"  # a real pair is not a surrogate
    assert clean_json({"k\x00": ["v\x00", 1, None, {"z": "\udfff"}]}) == {
        "k": ["v", 1, None, {"z": "\ufffd"}]
    }
    assert text_problems({"title": "a\x00\x00", "specs": {"Size": "\ud800"}}) == [
        "title: 2 NUL characters removed",
        "specs.Size: 1 lone surrogate replaced by U+FFFD",
    ]
    # a non-key String(500) column is cut to its length; the key column never is
    (row,) = clean_rows(
        skus_table,
        [{"sku_id": "k" * 300, "category": "c" * 600, "title": "t\x00\ud800", "record": {"\ud800": 1}}],
    )
    assert (len(row["sku_id"]), len(row["category"]), row["title"]) == (300, 500, "t\ufffd")
    assert row["record"] == {"\ufffd": 1}


@pytest.mark.slow
def test_nul_bytes_are_cleaned_reported_and_the_batch_is_written(
    store_url: str, hostile: tuple[Path, EnrichConfig]
) -> None:
    path, config = hostile
    store = CatalogStore(store_url)
    issues: list[str] = []
    first = enrich_to_store(path, store, config, on_issue=issues.append)
    assert (first.skus_read, first.skus_processed, first.skus_failed) == (7, 7, 0)
    titles = {r["sku_id"]: r["title"] for r in store.table("skus")}
    assert len(titles) == 7
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    ids = [r["sku_id"] for r in records]
    assert titles[ids[1]] == "Oat bar " + records[1]["title"].replace("\x00", "").removeprefix("Oat bar ")
    assert "\x00" not in json.dumps([r["record"] for r in store.table("skus")])
    specs = next(r for r in store.table("skus") if r["sku_id"] == ids[5])["record"]["specs"]
    assert specs["Pack"] == "6 x 1"
    described = next(r for r in store.table("skus") if r["sku_id"] == ids[3])["record"]["description"]
    assert described.endswith(" nulhere")
    cleaned = [i for i in issues if "removed" in i or "replaced" in i]
    assert f"{path}:2: {ids[1]!r}: title: 1 NUL character removed" in cleaned
    assert f"{path}:4: {ids[3]!r}: description: 1 NUL character removed" in cleaned
    assert f"{path}:6: {ids[5]!r}: specs.Pack (key): 1 NUL character removed" in cleaned
    assert f"{path}:6: {ids[5]!r}: specs.Pack: 1 NUL character removed" in cleaned
    assert not any(ids[i] in text for text in cleaned for i in (0, 2, 4, 6))  # clean SKUs: no note
    # the rerun succeeds and skips all 7 (content hash of the record as read)
    again = enrich_to_store(path, store, config)
    assert (again.skus_unchanged, again.skus_processed, again.skus_failed) == (7, 0, 0)
    store.close()


@pytest.mark.slow
def test_a_sku_whose_write_fails_is_reported_and_the_other_six_are_written(
    store_url: str,
    hostile: tuple[Path, EnrichConfig],
    monkeypatch: pytest.MonkeyPatch,
    poison_sku: Callable[[str], Any],
) -> None:
    """A failure the cleaning cannot foresee (here an LLM call count no INTEGER column holds, 2**64): the
    batch's transaction fails, the runner writes its SKUs one per transaction and reports only line 3."""
    from groundtrace.catalog.store import runner

    path, config = hostile
    ids = [json.loads(line)["sku_id"] for line in path.read_text(encoding="utf-8").splitlines()]
    real = poison_sku(ids[2])
    store = CatalogStore(store_url)
    issues: list[str] = []
    first = enrich_to_store(path, store, config, on_issue=issues.append)
    assert (first.skus_read, first.skus_processed, first.skus_failed) == (7, 6, 1)
    assert sorted(r["sku_id"] for r in store.table("sku_runs")) == sorted(ids[:2] + ids[3:])
    (failed,) = [i for i in issues if "not stored" in i]
    assert failed.startswith(f"{path}:3: {ids[2]!r}: not stored: ")
    monkeypatch.setattr(runner, "process_one", real)
    again = enrich_to_store(path, store, config)
    assert (again.skus_unchanged, again.skus_processed, again.skus_failed) == (6, 1, 0)
    store.close()


def _outcome(sku_id: str, title: str = "Plain title") -> SkuOutcome:
    # model_construct: a library caller can hand the store what the SKU model would refuse (an id over
    # the model's 200 characters); the store must still not stop on it
    return SkuOutcome(
        sku=SKU.model_construct(**SKU(sku_id="x", title="t", category="grocery").__dict__).model_copy(
            update={"sku_id": sku_id, "title": title}
        )
    )


def test_an_overlong_or_colliding_sku_id_is_reported_and_the_others_written(store_url: str) -> None:
    store = CatalogStore(store_url)
    run = store.start_run({"t": "keys"}, name="keys")
    long_id = "L" * 256
    stats = store.record_batch(
        run,
        [_outcome("A1"), _outcome(long_id), _outcome("B\x002"), _outcome("B2"), _outcome("C3", "x\x00" * 3)],
    )
    assert sorted(r["sku_id"] for r in store.table("skus")) == ["A1", "B2", "C3"]
    assert stats.rejected == [long_id, "B2"]  # "B\x002" is stored as B2; the real B2 repeats it
    notes = dict(stats.notes)
    assert notes[long_id] == "sku_id is 256 characters long (the store keeps at most 255): not stored"
    assert notes["C3"] == "title: 3 NUL characters removed"
    assert {r["sku_id"]: r["title"] for r in store.table("skus")}["C3"] == "xxx"
    store.close()


_OPEN = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from groundtrace.cli import app
    go = Path(sys.argv[2])
    while not go.exists():
        time.sleep(0.005)
    if sys.argv[3] == "cli":
        app(["catalog", "db", "upgrade", "--db", sys.argv[1]])  # exits with the command's code
    from groundtrace.catalog.store import CatalogStore
    store = CatalogStore(sys.argv[1])  # what catalog enrich --db and catalog serve do
    print(len(store.runs()))
    store.close()
    """
)


def _reset(url: str) -> None:
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).unlink(missing_ok=True)
    else:
        from tests.catalog.store.conftest import reset_pg

        reset_pg(url)


def test_two_processes_creating_the_same_new_store_both_succeed(store_url: str, tmp_path: Path) -> None:
    """Both processes import first, then create the (empty) store as soon as a start file appears — one
    with `groundtrace catalog db upgrade`, one by opening a CatalogStore — three rounds, each from an empty
    database."""
    for round_ in range(3):
        _reset(store_url)
        go = tmp_path / f"go{round_}"
        procs: list[Any] = [
            subprocess.Popen(
                [sys.executable, "-c", _OPEN, store_url, str(go), how],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for how in ("cli", "store")
        ]
        time.sleep(0.5)  # let both reach the wait (correctness does not depend on it)
        go.touch()
        try:
            results = [(*p.communicate(timeout=120), p.returncode) for p in procs]
        finally:
            for p in procs:  # never leave a hung child behind
                if p.poll() is None:
                    p.kill()
                    p.wait()
        results = [(rc, out, err) for out, err, rc in results]
        for rc, _out, err in results:
            assert rc == 0, err[-2000:]
        assert f"-> {head_revision()}" in results[0][1]
        assert results[1][1].strip() == "0"
        store = CatalogStore(store_url, migrate=False)
        assert current_revision(store.engine) == head_revision()
        store.close()
