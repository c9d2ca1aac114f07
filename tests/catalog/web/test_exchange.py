"""The review queue exported for Label Studio and Argilla, annotated as those tools export it, and
imported back: decisions land in the store like page decisions (round trip), bad tasks are reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.web.exchange import export_argilla, export_label_studio, import_decisions
from groundtrace.cli import app
from tests.catalog.web.conftest import item_id


def _ls_annotation(decision: str, value: str | None = None, comment: str = "", who: Any = 7) -> dict:
    result = [
        {"from_name": "decision", "to_name": "evidence", "type": "choices", "value": {"choices": [decision]}}
    ]
    if value is not None:
        result.append(
            {"from_name": "value", "to_name": "evidence", "type": "textarea", "value": {"text": [value]}}
        )
    if comment:
        result.append(
            {"from_name": "comment", "to_name": "evidence", "type": "textarea", "value": {"text": [comment]}}
        )
    return {"id": 1, "result": result, "was_cancelled": False, "completed_by": who}


def test_label_studio_export_marks_each_quote_inside_the_evidence_text(review_store: CatalogStore) -> None:
    tasks = {t["data"]["sku_id"]: t for t in export_label_studio(review_store)}
    assert set(tasks) == {"G1", "G2", "E1", "X1"}
    g2 = tasks["G2"]
    assert g2["data"]["evidence"] == "[catalog catalog:spec:Flavor]\nFlavor: Vanilla"
    (span,) = g2["predictions"][0]["result"]
    start, end = span["value"]["start"], span["value"]["end"]
    assert g2["data"]["evidence"][start:end] == span["value"]["text"] == "Vanilla"
    assert tasks["G1"]["data"]["value"] == "vegan"  # a list value as display text


def test_label_studio_round_trip(review_store: CatalogStore, tmp_path: Path) -> None:
    db = str(review_store.url)
    out = tmp_path / "queue.json"
    result = CliRunner().invoke(
        app, ["catalog", "review", "export", "--db", db, "--format", "label-studio", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert '<Choices name="decision"' in (tmp_path / "queue.label-config.xml").read_text()
    tasks = json.loads(out.read_text())
    by_sku = {t["data"]["sku_id"]: t for t in tasks}
    # what Label Studio exports after annotation: one approved, one edited (list value), one cancelled,
    # one left alone; plus a task naming an item that does not exist
    by_sku["G2"]["annotations"] = [_ls_annotation("approve", who={"email": "li@example.org"})]
    by_sku["G1"]["annotations"] = [_ls_annotation("edit", "vegan, gluten_free", "label says so")]
    by_sku["E1"]["annotations"] = [{**_ls_annotation("reject"), "was_cancelled": True}]
    bogus = {"id": 99, "data": {"review_id": 999}, "annotations": [_ls_annotation("approve")]}
    (tmp_path / "done.json").write_text(json.dumps([*tasks, bogus]))
    result = CliRunner().invoke(
        app,
        ["catalog", "review", "import", str(tmp_path / "done.json"), "--db", db, "--format", "label-studio"],
    )
    assert result.exit_code == 1  # one task refused, the rest applied
    assert "2 decisions applied, 2 without a decision, 1 refused" in result.output
    assert "task 5 (review 999): no review item 999" in result.stderr
    published = {(r["sku_id"], r["attribute"]): r for r in review_store.table("published_values")}
    assert published["G2", "flavor"]["value"] == "vanilla"
    assert published["G2", "flavor"]["set_by"] == "reviewer:label-studio:li@example.org"
    assert published["G1", "dietary_labels"]["value"] == ["vegan", "gluten_free"]
    audit = {r["sku_id"]: r for r in review_store.table("audit_log")}
    assert (audit["G1"]["actor"], audit["G1"]["reason"]) == ("reviewer:label-studio:7", "label says so")
    assert {i["sku_id"] for i in review_store.review_items("open")} == {"E1", "X1"}
    # importing the same file again decides nothing twice
    again = import_decisions(review_store, tmp_path / "done.json", "label-studio")
    assert again.decided == 0 and len(again.problems) == 3


def test_argilla_round_trip(review_store_on_each_backend: CatalogStore, tmp_path: Path) -> None:
    review_store = review_store_on_each_backend
    records = export_argilla(review_store)
    by_sku = {r["metadata"]["sku_id"]: r for r in records}
    assert by_sku["X1"]["fields"]["evidence"].endswith("<img src=x onerror=alert(1)> flavour")  # plain text
    assert by_sku["G2"]["suggestions"]["value"]["value"] == "vanilla"
    # what Record.to_dict() gives after annotation in Argilla
    by_sku["E1"]["responses"] = {
        "decision": [{"value": "reject", "user_id": "u-1", "status": "submitted"}],
        "comment": [{"value": "wrong colour", "user_id": "u-1", "status": "submitted"}],
    }
    by_sku["X1"]["responses"] = {
        "decision": [{"value": "edit", "user_id": "u-2", "status": "submitted"}],
        "value": [{"value": "dark cocoa", "user_id": "u-2", "status": "submitted"}],
    }
    by_sku["G2"]["responses"] = {"decision": [{"value": "approve", "user_id": "u-3", "status": "draft"}]}
    path = tmp_path / "argilla.json"
    path.write_text(json.dumps(records))
    report = import_decisions(review_store, path, "argilla")
    assert (report.decided, report.skipped, report.problems) == (2, 2, [])
    items = {i["sku_id"]: i for i in review_store.review_items(None)}
    assert (items["E1"]["status"], items["E1"]["reviewer"], items["E1"]["comment"]) == (
        "rejected",
        "argilla:u-1",
        "wrong colour",
    )
    assert (items["X1"]["status"], items["X1"]["decided_value"]) == ("edited", "dark cocoa")
    assert items["G2"]["status"] == "open"  # a draft response is not a decision
    published = {(r["sku_id"], r["attribute"]): r["value"] for r in review_store.table("published_values")}
    assert published == {("X1", "flavor"): "dark cocoa"}
    assert [r["action"] for r in review_store.table("audit_log")] == ["reject", "approve"]


def test_bad_exports_are_one_line_errors(review_store: CatalogStore, tmp_path: Path) -> None:
    db = str(review_store.url)
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    result = CliRunner().invoke(
        app, ["catalog", "review", "import", str(bad), "--db", db, "--format", "argilla"]
    )
    assert result.exit_code == 2 and "expected a JSON list of records" in result.stderr
    result = CliRunner().invoke(
        app, ["catalog", "review", "export", "--db", db, "--format", "csv", "--out", str(bad)]
    )
    assert result.exit_code == 2 and "--format must be one of" in result.stderr
    g1 = item_id(review_store, "G1")
    bad.write_text(
        json.dumps([{"id": g1, "data": {"review_id": g1}, "annotations": [_ls_annotation("edit")]}])
    )
    report = import_decisions(review_store, bad, "label-studio")
    assert report.problems == [f"{bad}: task 1 (review {g1}): an edit needs the corrected value"]


def test_an_imported_edit_outside_the_allowed_values_is_refused(
    review_store: CatalogStore, tmp_path: Path
) -> None:
    """Issue 24: an edit from Label Studio is checked against the template like one made on the page."""
    g1 = item_id(review_store, "G1")  # grocery dietary_labels: enum
    path = tmp_path / "ls.json"
    bad = _ls_annotation("edit", "<script>alert(1)</script>, vegan")
    path.write_text(json.dumps([{"id": g1, "data": {"review_id": g1}, "annotations": [bad]}]))
    report = import_decisions(review_store, path, "label-studio")
    assert report.decided == 0 and len(report.problems) == 1
    assert report.problems[0].startswith(
        f"{path}: task 1 (review {g1}): dietary_labels: '<script>alert(1)</script>' is not an allowed value"
    )
    assert review_store.table("published_values") == [] and review_store.table("audit_log") == []
