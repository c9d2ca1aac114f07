"""A learned model file carries what it learned (issue 26, item 2): `catalog train` stores the templates
(attribute set, value types) it was trained with — inferred from the gold when no --templates is given —
and `catalog enrich --model` / `catalog evaluate --model` use them without --templates; `catalog train`
prints a write-policy snippet that `enrich --policy` takes; a version-3 file still loads, with a note.

The fixture is hand-written: 12 "Zorblax Gadgets" SKUs (a category no built-in template knows) with brand
and colour gold."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.catalog.model import SKU, GoldLabel
from groundtrace.catalog.policy import load_policy
from groundtrace.catalog.scout.learned.model import load_model, notes
from groundtrace.catalog.scout.learned.snippet import policy_snippet, policy_thresholds
from groundtrace.cli import app

CATEGORY = "Zorblax Gadgets"
TRAIN = [  # (title, brand, colour)
    ("Acme Red Gadget Pro with clip", "Acme", "Red"),
    ("Globex Blue Gadget Mini for desks", "Globex", "Blue"),
    ("Initech Green Gadget Max, 2 pack", "Initech", "Green"),
    ("Acme Blue Gadget Mini, travel size", "Acme", "Blue"),
    ("Globex Green Gadget Pro with case", "Globex", "Green"),
    ("Initech Red Gadget Lite for kids", "Initech", "Red"),
    ("Acme Green Gadget Max, 3 pack", "Acme", "Green"),
    ("Globex Red Gadget Lite, refurbished", "Globex", "Red"),
    ("Initech Blue Gadget Pro with strap", "Initech", "Blue"),
    ("Acme Red Gadget Mini, gift box", "Acme", "Red"),
    ("Globex Blue Gadget Max for cars", "Globex", "Blue"),
    ("Initech Green Gadget Lite, 4 pack", "Initech", "Green"),
]
NEW = [("n1", "Globex Red Gadget Mini with clip"), ("n2", "Initech Blue Gadget Max, gift box")]


def _write(path: Path, rows: list) -> Path:  # type: ignore[type-arg]
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("zorblax")
    skus = [SKU(sku_id=f"z{i}", title=t, category=CATEGORY) for i, (t, _b, _c) in enumerate(TRAIN)]
    gold = [
        GoldLabel(sku_id=f"z{i}", attribute=attr, value=value)
        for i, (_t, brand, colour) in enumerate(TRAIN)
        for attr, value in (("brand", brand), ("color", colour))
    ]
    _write(tmp / "skus.jsonl", skus)
    _write(tmp / "gold.jsonl", gold)
    model = tmp / "m.json"
    r = CliRunner().invoke(
        app,
        ["catalog", "train", "--skus", str(tmp / "skus.jsonl"), "--gold", str(tmp / "gold.jsonl"),
         "--out", str(model), "--folds", "2", "--target-precision", "0.8",
         "--policy-out", str(tmp / "policy.yaml")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return model, r.output


def test_train_stores_the_attribute_set_and_types_from_the_gold(trained: tuple[Path, str]) -> None:
    path, output = trained
    model = load_model(path)
    assert model.version == 4 and model.templates_from == "gold" and notes(model) == []
    templates = model.template_set()
    assert templates is not None and templates.categories() == [CATEGORY]
    specs = {a.slug: a for a in templates.get(CATEGORY).attributes}
    assert set(specs) == {"brand", "color"}
    assert specs["color"].type == "string" and sorted(specs["color"].recommended_values) == [
        "Blue",
        "Green",
        "Red",
    ]
    assert "templates stored in the model: 1 categories, 2 attributes (from the gold)" in output


def test_enrich_and_evaluate_with_the_model_need_no_templates(
    trained: tuple[Path, str], tmp_path: Path
) -> None:
    path, _ = trained
    runner = CliRunner()
    new = _write(tmp_path / "new.jsonl", [SKU(sku_id=s, title=t, category=CATEGORY) for s, t in NEW])
    out = tmp_path / "res.jsonl"
    r = runner.invoke(app, ["catalog", "enrich", str(new), "--out", str(out), "--model", str(path)])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(row["sku_id"], row["attribute"]) for row in rows} == {
        ("n1", "brand"),
        ("n1", "color"),
        ("n2", "brand"),
        ("n2", "color"),
    }  # the built-in templates know no "Zorblax Gadgets": without the model's, nothing is extracted
    values = {(row["sku_id"], row["attribute"]): row["candidate"]["value"] for row in rows}
    assert values[("n1", "brand")] == "Globex" and values[("n2", "color")] == "Blue"
    gold = _write(
        tmp_path / "gold.jsonl",
        [GoldLabel(sku_id="n1", attribute="brand", value="Globex"),
         GoldLabel(sku_id="n2", attribute="color", value="Blue")],
    )  # fmt: skip
    report = tmp_path / "report.json"
    r = runner.invoke(
        app,
        ["catalog", "evaluate", "--results", str(out), "--gold", str(gold), "--model", str(path),
         "--json", str(report)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    accuracy = json.loads(report.read_text())["overall"]["metrics"]["accuracy"]
    assert (accuracy["numerator"], accuracy["denominator"]) == (2, 2)


def test_train_prints_a_policy_snippet_enrich_can_take(trained: tuple[Path, str], tmp_path: Path) -> None:
    path, output = trained
    model = load_model(path)
    snippet = policy_snippet(model)
    assert snippet.rstrip("\n") in output
    policy_file = path.parent / "policy.yaml"
    assert policy_file.read_text() == snippet
    policy = load_policy(policy_file)
    expected = {s: math.floor(0.9 * model.threshold(s) * 1000 + 1e-9) / 1000 for s in model.attributes}
    expected = {s: t for s, t in expected.items() if model.threshold(s) <= 1.0}
    assert policy_thresholds(model) == expected
    assert {s: o.threshold for s, o in policy.attributes.items()} == expected and policy.threshold == 0.7
    # hand-computed: θ 0.8 → 0.72, θ 0.55 → 0.495; an attribute never reaching the target keeps the default
    fixed = model.model_copy(
        update={"attributes": ["a", "b", "c"], "thresholds": {"a": 0.8, "b": 0.55, "c": 1.01}}
    )
    assert policy_thresholds(fixed) == {"a": 0.72, "b": 0.495}


def test_a_version_3_model_file_still_loads_with_a_note(trained: tuple[Path, str], tmp_path: Path) -> None:
    path, _ = trained
    data = json.loads(path.read_text())
    for key in ("templates", "templates_from"):
        data.pop(key)
    old = tmp_path / "v3.json"
    old.write_text(json.dumps({**data, "version": 3}))
    model = load_model(old)
    assert model.template_set() is None
    expected = (
        f"{old}: model version 3 stores no templates (attribute set and value types): pass --templates, "
        "or retrain with `catalog train` to store them"
    )
    assert notes(model, old) == [expected]
    new = _write(tmp_path / "new.jsonl", [SKU(sku_id=s, title=t, category=CATEGORY) for s, t in NEW])
    r = CliRunner().invoke(
        app, ["catalog", "enrich", str(new), "--out", str(tmp_path / "r.jsonl"), "--model", str(old)]
    )
    assert r.exit_code == 0, r.output
    assert "note:" in r.output and "model version 3 stores no templates" in r.output
