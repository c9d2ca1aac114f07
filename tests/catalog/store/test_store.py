"""The catalog store on SQLite and PostgreSQL: migrations, skipping unchanged SKUs, publishing policy,
the append-only audit log, the review queue and a sorted export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.model import (
    SKU,
    Action,
    AttributeResult,
    Candidate,
    CandidateStatus,
    Decision,
    Evidence,
    Verdict,
    VerdictLabel,
)
from groundtrace.catalog.pipeline import EnrichConfig, build_components
from groundtrace.catalog.store import CatalogStore, SkuOutcome, StoreError, StorePolicy
from groundtrace.catalog.store.export import export_rows, write_export
from groundtrace.catalog.store.migrate import current_revision, head_revision
from groundtrace.catalog.store.runner import StoreRunOptions, enrich_to_store


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path, EnrichConfig]:
    """The demo catalog with its first 6 SKUs in ``small.jsonl`` (enough to see every action)."""
    paths = write_demo_catalog(tmp_path_factory.mktemp("demo"))
    small = paths.root / "small.jsonl"
    lines = paths.skus.read_text(encoding="utf-8").splitlines()
    small.write_text("\n".join(lines[:6]) + "\n", encoding="utf-8")
    return paths, small, EnrichConfig(feed=paths.feed, corpus=paths.corpus)


def _counts(store: CatalogStore) -> dict[str, int]:
    names = ("skus", "candidates", "verdicts", "decisions", "published_values", "audit_log", "review_queue")
    return {name: len(store.table(name)) for name in names}


def test_migrations_build_the_schema_of_the_code(store_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from groundtrace.catalog.store.schema import metadata

    store = CatalogStore(store_url)
    assert current_revision(store.engine) == head_revision() == "0004"
    with store.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diffs == []
    CatalogStore(store_url).close()  # a second upgrade is a no-op
    assert CatalogStore(store_url, migrate=False).runs() == []


def test_an_unmigrated_store_is_refused_with_the_command_to_run(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="catalog db upgrade"):
        CatalogStore(f"sqlite:///{tmp_path / 'empty.db'}", migrate=False)


@pytest.mark.slow
def test_rerun_of_an_unchanged_batch_writes_nothing(store_url: str, demo: tuple) -> None:
    _, small, config = demo
    store = CatalogStore(store_url)
    first = enrich_to_store(small, store, config)
    assert first.skus_processed == 6 and first.skus_failed == 0
    assert first.actions.get("WRITE") and first.published == first.actions["WRITE"]
    before = _counts(store)
    assert before["decisions"] == first.results and before["audit_log"] == first.published
    export_before = export_rows(store)
    second = enrich_to_store(small, store, config)
    assert (second.skus_unchanged, second.skus_processed, second.results, second.published) == (6, 0, 0, 0)
    assert _counts(store) == before and export_rows(store) == export_before
    assert len(store.runs()) == 1  # same options: the same run


@pytest.mark.slow
def test_changed_sku_is_redone_and_audited_old_to_new(store_url: str, demo: tuple, tmp_path: Path) -> None:
    _, small, config = demo
    store = CatalogStore(store_url)
    enrich_to_store(small, store, config)
    skus = [SKU.model_validate_json(line) for line in small.read_text(encoding="utf-8").splitlines()]
    published = {(r["sku_id"], r["attribute"]): r["value"] for r in store.table("published_values")}
    sku_id, attribute = next((k for k in published if k[1] == "pack_count"), next(iter(published)))
    changed = list(skus)
    index = next(i for i, s in enumerate(skus) if s.sku_id == sku_id)
    # the seller corrects the record: the catalog field the value came from now says something else
    new_specs = {**skus[index].specs, "Pack Count": "12"} if attribute == "pack_count" else skus[index].specs
    changed[index] = skus[index].model_copy(
        update={"title": skus[index].title + " (12 pack)", "specs": new_specs}
    )
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(s.model_dump_json() + "\n" for s in changed), encoding="utf-8")
    audit_before = len(store.table("audit_log"))
    summary = enrich_to_store(edited, store, config)
    assert (summary.skus_unchanged, summary.skus_processed) == (5, 1)
    audit = store.table("audit_log")[audit_before:]
    assert all(row["sku_id"] == sku_id for row in audit)
    updates = [row for row in audit if row["action"] == "update"]
    for row in updates:
        assert row["old_value"] == published[(sku_id, row["attribute"])] != row["new_value"]
    assert len(store.table("decisions")) == len(store.run_results(store.runs()[0]["id"]))


def _result(sku_id: str, attribute: str, value: str, action: Action = Action.WRITE) -> AttributeResult:
    quote = f"{attribute}: {value}"
    return AttributeResult(
        sku_id=sku_id,
        category="grocery",
        attribute=attribute,
        candidate=Candidate(
            sku_id=sku_id,
            attribute=attribute,
            value=value,
            evidence=[
                Evidence(
                    source="catalog",
                    source_type="catalog",
                    source_ref="catalog:title",
                    quote=quote,
                    span=(0, 5),
                )
            ],
            confidence=0.9,
            status=CandidateStatus.EXTRACTED,
            engine="test",
        ),
        verdict=Verdict(sku_id=sku_id, attribute=attribute, verdict=VerdictLabel.PASS, quote_verified=True),
        decision=Decision(sku_id=sku_id, attribute=attribute, action=action, reason=f"test {action.value}"),
    )


def _outcome(value: str, action: Action = Action.WRITE, title: str = "Oat bar") -> SkuOutcome:
    sku = SKU(sku_id="S1", title=title, category="grocery")
    return SkuOutcome(sku=sku, results=[_result("S1", "flavor", value, action)])


@pytest.mark.slow
def test_published_value_keeps_its_evidence_and_policy_options_hold(store_url: str) -> None:
    store = CatalogStore(store_url)
    run = store.start_run({"k": 1}, name="a")
    stats = store.record_batch(run, [_outcome("vanilla")])
    assert stats.published == 1
    (row,) = store.table("published_values")
    assert (row["value"], row["source_ref"], row["quote"], row["span_start"], row["span_end"]) == (
        "vanilla",
        "catalog:title",
        "flavor: vanilla",
        0,
        5,
    )
    assert (row["status"], row["set_by"]) == ("auto", "run:a")
    # replaying the same batch writes nothing
    assert store.record_batch(run, [_outcome("vanilla")]).unchanged == 1
    # fill-empty-only keeps the existing value
    stats = store.record_batch(run, [_outcome("cocoa")], policy=StorePolicy(fill_empty_only=True))
    assert stats.kept_filled == 1 and store.table("published_values")[0]["value"] == "vanilla"
    # a person approves it: a run never overwrites it (default), unless told to
    store.approve_value("S1", "flavor", reviewer="ana", comment="checked the pack")
    assert store.record_batch(run, [_outcome("cocoa")]).kept_approved == 1
    assert store.table("published_values")[0]["value"] == "vanilla"
    stats = store.record_batch(run, [_outcome("cocoa")], policy=StorePolicy(keep_approved=False))
    assert stats.published == 1 and store.table("published_values")[0]["value"] == "cocoa"
    audit = [(r["action"], r["actor"], r["old_value"], r["new_value"]) for r in store.table("audit_log")]
    assert audit == [
        ("publish", "run:a", None, "vanilla"),
        ("approve", "reviewer:ana", "vanilla", "vanilla"),
        ("update", "run:a", "vanilla", "cocoa"),
    ]


def test_audit_log_is_append_only(store_url: str) -> None:
    store = CatalogStore(store_url)
    run = store.start_run({"k": 1}, name="a")
    store.record_batch(run, [_outcome("vanilla")])
    for statement in ("UPDATE audit_log SET reason = 'x'", "DELETE FROM audit_log"):
        with pytest.raises(DBAPIError, match="append-only"), store.engine.begin() as conn:
            conn.execute(text(statement))
    assert len(store.table("audit_log")) == 1


def test_review_queue_items_and_decisions(store_url: str) -> None:
    store = CatalogStore(store_url)
    run = store.start_run({"k": 1}, name="a")
    assert store.record_batch(run, [_outcome("vanilla", Action.REVIEW)]).queued == 1
    store.record_batch(run, [_outcome("vanilla", Action.REVIEW)])  # a replay: still one item
    (item,) = store.review_items()
    assert (item["sku_id"], item["attribute"], item["value"], item["status"]) == (
        "S1",
        "flavor",
        "vanilla",
        "open",
    )
    assert item["evidence"][0]["quote"] == "flavor: vanilla" and item["verdict"] == "PASS"
    assert store.table("published_values") == []  # REVIEW publishes nothing
    store.decide_review(
        item["id"], reviewer="ana", decision="edit", value="vanilla bean", comment="pack says so"
    )
    (decided,) = store.review_items(status=None)
    assert (decided["status"], decided["reviewer"], decided["decided_value"], decided["comment"]) == (
        "edited",
        "ana",
        "vanilla bean",
        "pack says so",
    )
    assert decided["decided_at"] is not None
    (pv,) = store.table("published_values")
    assert (pv["value"], pv["status"], pv["set_by"]) == ("vanilla bean", "approved", "reviewer:ana")
    assert store.table("audit_log")[-1]["review_id"] == item["id"]
    with pytest.raises(StoreError, match="not open"):
        store.decide_review(item["id"], reviewer="bo", decision="reject")
    # a re-processed SKU leaves the decided item alone
    store.record_batch(run, [_outcome("cocoa", Action.REVIEW, title="Oat bar v2")])
    assert store.review_items(status=None)[0]["status"] == "edited"


def test_a_run_name_cannot_be_reused_with_other_options(store_url: str) -> None:
    store = CatalogStore(store_url)
    store.start_run({"llm": None}, name="nightly")
    assert store.start_run({"llm": None}, name="nightly").name == "nightly"
    with pytest.raises(StoreError, match="other options \\(llm\\)"):
        store.start_run({"llm": "openai:x"}, name="nightly")


@pytest.mark.slow
def test_a_failing_sku_is_recorded_and_retried_without_stopping_the_batch(
    store_url: str, demo: tuple
) -> None:
    _, small, config = demo
    comp = build_components(config)
    real = comp.scout

    class Flaky:
        broken = True

        def scout(self, sku: SKU) -> Any:
            if self.broken and sku.sku_id == "G02":
                raise RuntimeError("source timed out")
            return real.scout(sku)

    comp.scout = Flaky()
    store = CatalogStore(store_url)
    summary = enrich_to_store(small, store, config, components=comp)
    assert (summary.skus_processed, summary.skus_failed) == (5, 1)
    assert summary.issues[-1] == "G02: RuntimeError: source timed out"
    comp.scout.broken = False
    again = enrich_to_store(small, store, config, components=comp)
    assert (again.skus_unchanged, again.skus_processed, again.skus_failed) == (5, 1, 0)


@pytest.mark.slow
def test_export_is_sorted_and_identical_for_identical_input(
    store_url: str, other_store_url: str, demo: tuple, tmp_path: Path
) -> None:
    pytest.importorskip("pyarrow", reason="Parquet export needs pyarrow (groundtrace[parquet])")
    import pyarrow.parquet as pq

    _, small, config = demo
    outs = []
    for i, url in enumerate((store_url, other_store_url)):
        store = CatalogStore(url)
        enrich_to_store(small, store, config, StoreRunOptions(batch_size=1 + 4 * i))
        outs.append(write_export(export_rows(store), tmp_path / f"export{i}.jsonl"))
        rows = export_rows(store)
    assert outs[0].read_bytes() == outs[1].read_bytes()
    keys = [(r["sku_id"], r["attribute"]) for r in rows]
    assert keys == sorted(keys) and len(keys) == len(set(keys))
    written = [r for r in rows if r["action"] == "WRITE"]
    assert written and all(r["value"] is not None and r["quote"] for r in written)
    parquet = write_export(rows, tmp_path / "export.parquet")
    table = pq.read_table(parquet).to_pylist()
    assert [(r["sku_id"], r["attribute"], r["action"]) for r in table] == [
        (r["sku_id"], r["attribute"], r["action"]) for r in rows
    ]
    assert [json.loads(r["value"]) if r["value"] else None for r in table] == [r["value"] for r in rows]


def test_reviewer_accounts_hold_a_hash_and_can_be_disabled(store_url: str) -> None:
    store = CatalogStore(store_url)
    assert store.reviewer_hash("ana") is None
    assert store.set_reviewer("ana", "$argon2id$first") is True
    assert store.reviewer_hash("ana") == "$argon2id$first"
    created = store.table("reviewers")[0]["created_at"]
    assert store.set_reviewer("ana", "$argon2id$second") is False  # a new password, same account
    row = store.table("reviewers")[0]
    assert (row["password_hash"], row["created_at"]) == ("$argon2id$second", created)
    store.set_reviewer("ana", "$argon2id$second", active=False)
    assert store.reviewer_hash("ana") is None
    with pytest.raises(StoreError, match="reviewer name"):
        store.set_reviewer(" ana", "x")
