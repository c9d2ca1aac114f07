"""Untrusted strings (Yelp names and cities, review quotes, dialogue ids, paths, KB names) are printed as
data: rich markup inside them is shown literally, never styles the console nor breaks it (a stray
``[/]`` would raise ``MarkupError`` if it reached the markup parser)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.build.builder import build_dataset
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.store import save_kb
from groundtrace.crs.kb.yelp import BUSINESS_FILE, REVIEW_FILE

EVIL = "[bold]Evil[/]"


def _flat(output: str) -> str:
    return output.replace("\n", "")


def _business(bid: str, city: str) -> dict:
    return {
        "business_id": bid,
        "name": f"{EVIL} Diner {bid}",
        "city": city,
        "state": "AZ",
        "latitude": 32.2,
        "longitude": -110.9,
        "stars": 4.0,
        "review_count": 10,
        "attributes": None,
        "categories": "Diners, Restaurants",
        "hours": None,
    }


def test_kb_build_prints_city_names_and_problem_paths_literally(tmp_path: Path) -> None:
    yelp = tmp_path / "y[red]x"  # the folder name appears in every file:line problem
    yelp.mkdir()
    lines = [json.dumps(_business(f"b{i}", EVIL)) for i in range(3)]
    lines.insert(1, '{"business_id": "broken", [/]')  # a malformed line
    (yelp / BUSINESS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    reviews = [
        {"review_id": f"r{i}", "business_id": f"b{i % 3}", "stars": 5, "text": f"[/] [bold]great[/bold] {i}"}
        for i in range(6)
    ]
    (yelp / REVIEW_FILE).write_text("\n".join(json.dumps(r) for r in reviews), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["crs", "kb", "build", "--yelp-dir", str(yelp), "--out", str(tmp_path / "kb.sqlite"),
         "--per-type", "restaurant=3", "--min-reviews", "1", "--min-review-chars", "0", "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    flat = _flat(result.output)
    assert EVIL in flat  # the city column of the summary table
    assert f"y[red]x/{BUSINESS_FILE}:2: invalid JSON" in flat
    assert "POIs: 3" in flat


def test_validate_prints_dialogue_ids_and_quotes_literally(tmp_path: Path) -> None:
    kb = generate_demo_kb(9, n_per_type=25, reviews_per_poi=4)
    kb_path = save_kb(kb, tmp_path / "kb.sqlite")
    build_dataset(kb, 12, 1, tmp_path / "ds")
    line = (tmp_path / "ds" / "train.jsonl").read_text(encoding="utf-8").splitlines()[0]
    d = json.loads(line)
    d["dialogue_id"] = EVIL
    turn = next(t for t in d["turns"] if t["cited_tags"])
    tag = turn["cited_tags"][0]
    turn["text"] += f' Also "[/] [bold]nothing like the review[/bold] at all" [{tag}].'
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(d) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["crs", "validate", str(bad), "--kb", str(kb_path)])
    assert result.exit_code == 1, result.output
    flat = _flat(result.output)
    assert f"[{EVIL}] turn {turn['index']}" in flat
    assert "quote '[/] [bold]nothing like the review[/bold] at all'" in flat


def test_build_summary_and_errors_print_kb_names_literally(tmp_path: Path) -> None:
    demo = generate_demo_kb(9, n_per_type=25, reviews_per_poi=4)
    kb = KnowledgeBase(list(demo.pois.values()), list(demo.reviews.values()), name="[b]x[/]")
    path = save_kb(kb, tmp_path / "kb.sqlite")
    result = CliRunner().invoke(
        app, ["crs", "build", "--kb", str(path), "--dialogues", "4", "--out", str(tmp_path / "o[i]")]
    )
    assert result.exit_code == 0, result.output
    flat = _flat(result.output)
    assert "[b]x[/] (" in flat and "o[i]/{train,validation,test}.jsonl" in flat

    tiny_dir = tmp_path / "t[bold]"
    tiny_dir.mkdir()
    tiny = save_kb(generate_demo_kb(0, n_per_type=5, reviews_per_poi=1), tiny_dir / "tiny.sqlite")
    result = CliRunner().invoke(
        app, ["crs", "build", "--kb", str(tiny), "--dialogues", "2", "--out", str(tmp_path / "p")]
    )
    assert result.exit_code == 1
    assert "t[bold]/tiny.sqlite" in _flat(result.output)
