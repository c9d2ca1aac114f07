"""Issue 9 item 7 (catalog parts): hostile input gives a one-line ``file:line`` error, never a traceback,
never a hang and never a silently changed value. Each case failed before (traceback, "nan", a lost
leading zero, a swallowed row, a silently accepted unit, a spec without a model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.catalog.model import MAX_TEXT_CHARS
from groundtrace.catalog.pipeline import read_skus
from groundtrace.catalog.templates import TemplateError, builtin_template_dir, load_templates
from groundtrace.cli import app

GOOD = {"sku_id": "A", "title": "Acme Granola 16 oz", "category": "grocery", "brand": "Acme"}


def _enrich(tmp_path: Path, skus: Path, *extra: str) -> tuple[int, str]:
    res = CliRunner().invoke(
        app, ["catalog", "enrich", str(skus), "--out", str(tmp_path / "out.jsonl"), "--no-progress", *extra]
    )
    return res.exit_code, res.output


def _one_error_line(output: str) -> str:
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    return errors[0]


def test_huge_description_is_refused_with_a_line_error_and_the_rest_processed(tmp_path: Path) -> None:
    huge = {**GOOD, "sku_id": "HUGE", "description": "oats " * (MAX_TEXT_CHARS // 5 + 10)}
    skus = tmp_path / "skus.jsonl"
    skus.write_text(json.dumps(huge) + "\n" + json.dumps(GOOD) + "\n", encoding="utf-8")
    found, issues = read_skus(skus)
    assert [s.sku_id for s in found] == ["A"]
    assert len(issues) == 1 and issues[0].startswith(f"{skus}:1: ") and "\n" not in issues[0]
    code, output = _enrich(tmp_path, skus)
    assert code == 0 and "1 processed" in output


def test_corrupt_parquet_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "skus.parquet"
    bad.write_bytes(b"PAR1" + b"\x00garbage" * 50 + b"PAR1")
    code, output = _enrich(tmp_path, bad)
    assert code == 2 and "not a readable Parquet file" in _one_error_line(output)


def test_parquet_nulls_nan_and_integer_gtin(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "sku_id": ["A", "B"],
            "title": ["Acme Granola 16 oz", "Acme Bar"],
            "category": ["grocery", "grocery"],
            "brand": [None, float("nan")],
            "gtin": [12345678905, 12345678906],  # UPC-A 012345678905 stored as an integer; B: bad check digit
        }
    )
    path = tmp_path / "skus.parquet"
    pq.write_table(table, path)
    skus, issues = read_skus(path)
    assert [s.brand for s in skus] == [None, None]  # never the string "nan"
    assert skus[0].gtin == "00012345678905"  # the leading zeros are back (GTIN-14 of the UPC-A)
    assert len(issues) == 1 and f"{path}:2: gtin '00012345678906' is not a valid GTIN" in issues[0]


def test_csv_unclosed_quote_swallowing_rows_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "skus.csv"
    path.write_text(
        "sku_id,title,category,description\n"
        'A,Acme Granola 16 oz,grocery,"Crunchy oats\n'
        "B,Acme Bar 2 oz,grocery,Chewy bar\n"
        "C,Acme Tea 20 ct,grocery,Green tea\n",
        encoding="utf-8",
    )
    skus, issues = read_skus(path)
    assert skus == [] and len(issues) == 1
    assert issues[0].startswith(f"{path}:2: ") and "unclosed quote" in issues[0]
    ok = tmp_path / "ok.csv"  # a real multi-line description stays one record
    ok.write_text(
        'sku_id,title,category,description\nA,Acme,grocery,"line one\nline two"\n', encoding="utf-8"
    )
    assert [s.description for s in read_skus(ok)[0]] == ["line one\nline two"]


def _template_copy(tmp_path: Path, old: str, new: str) -> Path:
    folder = tmp_path / "tpl"
    folder.mkdir(exist_ok=True)
    text = (builtin_template_dir() / "grocery.yaml").read_text(encoding="utf-8")
    assert old in text
    (folder / "grocery.yaml").write_text(text.replace(old, new, 1), encoding="utf-8")
    return folder


def test_unknown_unit_and_misspelt_key_are_errors_with_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match=r"unknown unit 'ouncez' \(did you mean 'ounces?'\?\)"):
        load_templates(_template_copy(tmp_path, "unit: null", "unit: ouncez"))
    with pytest.raises(
        TemplateError, match=r"safety_critcal: unknown key \(did you mean 'safety_critical'\?\)"
    ):
        load_templates(_template_copy(tmp_path, "safety_critical: true", "safety_critcal: true"))


def test_duplicate_policy_key_is_refused_not_last_wins(tmp_path: Path) -> None:
    skus = tmp_path / "skus.jsonl"
    skus.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    policy = tmp_path / "policy.yaml"
    policy.write_text("name: p\nthreshold: 0.9\nthreshold: 0.0\n", encoding="utf-8")
    code, output = _enrich(tmp_path, skus, "--policy", str(policy))
    assert code == 2 and f"{policy}:3: duplicate key 'threshold'" in _one_error_line(output)


def test_billion_laughs_templates_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "bomb"
    folder.mkdir()
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    (folder / "grocery.yaml").write_text("\n".join(lines) + "\ncategory: grocery\n", encoding="utf-8")
    with pytest.raises(TemplateError) as info:
        load_templates(folder)
    assert "grocery.yaml" in str(info.value) and "\n" not in str(info.value).strip()


def test_llm_url_without_model_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROUNDTRACE_LLM_MODEL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))  # no config file names a model
    monkeypatch.delenv("GROUNDTRACE_LLM_CONFIG", raising=False)
    skus = tmp_path / "skus.jsonl"
    skus.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    code, output = _enrich(tmp_path, skus, "--llm", "http://127.0.0.1:9/v1")
    assert code == 2 and "names no model: add '#MODEL'" in _one_error_line(output)
