"""Fuzz suite for the catalog input formats (issue 9 item 8).

Hypothesis generates SKU JSONL and CSV files (good records mixed with junk), write-policy and template YAML,
syndicated feeds and importer input; fixed mutation classes (the hostile inputs of the issue) go through
``catalog enrich``. Every case asserts: no exception other than the documented one-line error, every
problem is one line naming ``file:line``, every good record is read, and read unchanged.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.catalog.model import SKU
from groundtrace.catalog.pipeline import read_skus
from groundtrace.catalog.policy import PolicyError, load_policy
from groundtrace.catalog.sources import SyndicatedFeedSource
from groundtrace.catalog.sources.base import SourceError
from groundtrace.catalog.templates import TemplateError, load_templates
from groundtrace.cli import app

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"), max_size=40)
_word = st.text("abcdefghijklmnopqrstuvwxyz0123456789 -", min_size=1, max_size=20).filter(str.strip)
skus_st = st.builds(
    SKU,
    sku_id=_word,
    title=_word,
    category=st.sampled_from(["grocery", "electronics", "Home & Kitchen", "unknown"]),
    description=_text,
    brand=st.none() | _word,
    specs=st.dictionaries(_word, _text, max_size=3),
)
junk_st = st.one_of(
    _text.filter(lambda t: "\n" not in t),
    st.just("{"),
    st.just('{"sku_id": 5}'),
    st.just('{"sku_id": "X", "title": ["list"], "category": "grocery"}'),
    st.just("[" * 5000 + "]" * 5000),  # deep nesting
    st.just('{"sku_id": "Y", "title": "' + "x" * 3000 + '", "category": "grocery"}'),  # title over its limit
)


def _single_line(issue: str, path: Path) -> None:
    assert "\n" not in issue and issue.startswith(f"{path}:"), issue


@FUZZ
@given(st.lists(st.one_of(skus_st.map(lambda s: ("sku", s)), junk_st.map(lambda j: ("junk", j))), max_size=8))
def test_sku_jsonl_good_lines_read_unchanged_bad_lines_reported(tmp_path: Path, rows: list[Any]) -> None:
    path = tmp_path / "skus.jsonl"
    lines = [item.model_dump_json() if kind == "sku" else item for kind, item in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    skus, issues = read_skus(path)
    expected: dict[str, SKU] = {}
    for kind, item in rows:
        if kind == "sku" and item.sku_id not in expected:
            expected[item.sku_id] = item
    assert {s.sku_id: s for s in skus} == expected  # every good record, unchanged (first of a repeated id)
    # blank = ASCII whitespace only, as the reader says (a line of "\x1f" is reported, str.strip() drops it)
    n_junk = sum(kind == "junk" and item.encode().strip() != b"" for kind, item in rows)
    n_repeats = sum(kind == "sku" for kind, _ in rows) - len(expected)
    assert len(issues) == n_junk + n_repeats
    for issue in issues:
        _single_line(issue, path)


@FUZZ
@given(
    st.lists(
        st.tuples(_word, _word, _text.filter(lambda t: "," not in t), st.none() | _word),
        min_size=1,
        max_size=6,
        unique_by=lambda r: r[0],
    )
)
def test_sku_csv_round_trips(tmp_path: Path, rows: list[tuple[str, str, str, str | None]]) -> None:
    path = tmp_path / "skus.csv"
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["sku_id", "title", "category", "description", "brand"])
    for sku_id, title, description, brand in rows:
        writer.writerow([sku_id, title, "grocery", description, brand or ""])
    path.write_text(buf.getvalue(), encoding="utf-8")
    skus, issues = read_skus(path)
    assert issues == []
    assert [(s.sku_id, s.title, s.description, s.brand) for s in skus] == [
        (i.strip(), t.strip(), d.strip(), (b or "").strip() or None) for i, t, d, b in rows
    ]


@FUZZ
@given(_text.map(lambda t: t.replace("\n", " ")), st.integers(min_value=1, max_value=6))
def test_sku_csv_with_junk_never_crashes(tmp_path: Path, junk: str, at: int) -> None:
    path = tmp_path / "skus.csv"
    lines = ["sku_id,title,category", *(f"S{i},Title {i},grocery" for i in range(6))]
    lines.insert(at, junk)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    skus, issues = read_skus(path)
    for issue in issues:
        _single_line(issue, path)
    assert len(skus) + len(issues) >= 1


yaml_text = st.one_of(
    _text,
    st.just("threshold: 0.9\nthreshold: 0.0\n"),
    st.just("a: &x [1]\nb: *x\n"),
    st.just("name: p\nthreshold: 2\n"),
    st.just("name: p\nthresold: 0.5\n"),
    st.just("name: p\nverdicts: {PASS: PUBLISH}\n"),
    st.just(":\n  - ]\n"),
    st.just("- " * 2000 + "x\n"),
)


@FUZZ
@given(yaml_text)
def test_policy_yaml_is_loaded_or_refused_in_one_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_policy(path)
    except PolicyError as exc:
        message = str(exc).strip()
        assert str(path) in message and "Traceback" not in message


@FUZZ
@given(yaml_text)
def test_template_yaml_is_loaded_or_refused(tmp_path: Path, text: str) -> None:
    folder = tmp_path / "tpl"
    folder.mkdir(exist_ok=True)
    (folder / "x.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(TemplateError) as info:  # none of these texts is a valid template
        load_templates(folder)
    assert "x.yaml" in str(info.value)


@FUZZ
@given(
    st.lists(
        st.one_of(_text.map(lambda t: t.replace("\n", " ")), st.just("012345678905,Acme,granola")), max_size=6
    )
)
def test_feed_rows_never_crash(tmp_path: Path, rows: list[str]) -> None:
    path = tmp_path / "feed.csv"
    path.write_text("gtin,title,description\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
    try:
        feed = SyndicatedFeedSource(path)
    except SourceError as exc:
        assert str(path) in str(exc)
        return
    for error in feed.errors:
        _single_line(error, path)


@FUZZ
@given(
    st.lists(st.one_of(_text.map(lambda t: t.replace("\n", " ")), st.just('{"title": "Acme"}')), max_size=6)
)
def test_importer_lines_never_crash(tmp_path: Path, lines: list[str]) -> None:
    from groundtrace.catalog.importers import IMPORTERS
    from groundtrace.catalog.importers.base import run_import

    path = tmp_path / "in.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    for name in ("wdc-pave", "oa-mine", "ae-110k"):
        report, _records = run_import(IMPORTERS.get(name)(), path, None)
        assert all("\n" not in issue for issue in report.issues)


# -- the mutation classes of the issue through `catalog enrich` ----------------------------------------------
GOOD_LINE = json.dumps(
    {"sku_id": "OK", "title": "Acme Granola 16 oz", "category": "grocery", "brand": "Acme"}
)
MUTATIONS: dict[str, bytes] = {
    "truncated": b'{"sku_id": "T", "title": "Acme',
    "not-utf8": b'{"sku_id": "U", "title": "Acme \xff\xfe", "category": "grocery"}',
    "deep-json": b"[" * 100_000 + b"]" * 100_000,
    "huge-description": json.dumps(
        {"sku_id": "H", "title": "t", "category": "grocery", "description": "x" * 60_000}
    ).encode(),
    "wrong-type": b'{"sku_id": "W", "title": 5, "category": "grocery"}',
    "integer-gtin": b'{"sku_id": "G", "title": "t", "category": "grocery", "gtin": 12345678905}',
    "nul-bytes": b'{"sku_id": "N\x00", "title": "t", "category": "grocery"',
    "duplicate-id": GOOD_LINE.encode(),
    "bom-and-crlf": b"\xef\xbb\xbf" + b"\r\n",
}


@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_mutated_sku_file_through_enrich(tmp_path: Path, mutation: str) -> None:
    path = tmp_path / "skus.jsonl"
    path.write_bytes(GOOD_LINE.encode() + b"\n" + MUTATIONS[mutation] + b"\n")
    res = CliRunner().invoke(
        app, ["catalog", "enrich", str(path), "--out", str(tmp_path / "o.jsonl"), "--no-progress", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    summary = json.loads(res.stdout[res.stdout.index("{") :])
    assert summary["skus_read"] == 1 and summary["skus_processed"] == 1  # the good line, unchanged
    line_issues = [i for i in summary["issues"] if i.startswith(f"{path}:")]
    if mutation != "bom-and-crlf":
        assert len(line_issues) == 1 and line_issues[0].startswith(f"{path}:2: "), summary["issues"]
    assert all("\n" not in i for i in summary["issues"])
