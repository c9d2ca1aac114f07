"""Reports: every artefact written, CIs and tests sensible, breakdowns, and untrusted text escaped."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.core.evidence.citations import find_tags
from groundtrace.crs.evaluation.run_files import PREDICTIONS_FILE
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.report import build_report
from groundtrace.crs.report.html import evidence_view, highlighted
from groundtrace.crs.report.leaderboard import axis_value
from groundtrace.crs.report.render import latex_escape
from groundtrace.crs.schema import POI, Review, ReviewRef
from groundtrace.crs.systems import build_system
from groundtrace.crs.systems.predictions import Prediction
from tests.crs.report.demo_data import make_demo


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    demo = make_demo(root, n_dialogues=30)
    dirs = []
    for name in ("oracle", "random"):
        for setting in ("closed", "open"):
            out = root / f"{name}-{setting}"
            run_system(
                build_system(name),
                demo.dialogues,
                demo.kb,
                out,
                setting=setting,
                split="all",
                dataset=str(demo.dataset),
            )
            dirs.append(out)
    return demo, dirs


@pytest.fixture(scope="module")
def report_dir(runs, tmp_path_factory):
    demo, dirs = runs
    out = tmp_path_factory.mktemp("report-out")
    build_report(dirs, out, resamples=200, seed=1, kb=str(demo.kb_path), test_bounds=True)
    return out


@pytest.mark.slow
def test_all_artefacts_written(report_dir) -> None:
    for name in (
        "leaderboard.md",
        "leaderboard.csv",
        "leaderboard.tex",
        "leaderboard.json",
        "axes_radar.png",
        "axes_radar.svg",
        "axes_bar.png",
        "axes_bar.svg",
        "report.html",
    ):
        assert (report_dir / name).stat().st_size > 0, name
    assert (report_dir / "axes_radar.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_leaderboard_values_cis_and_tests(report_dir, runs) -> None:
    data = json.loads((report_dir / "leaderboard.json").read_text())
    rows = {(r["label"], r["setting"]): r for r in data["leaderboard"]}
    assert set(rows) == {("oracle", "closed"), ("oracle", "open"), ("random", "closed"), ("random", "open")}
    oracle = rows[("oracle", "closed")]["cells"]["recall@1"]
    assert oracle["value"] == oracle["ci_low"] == oracle["ci_high"] == 1.0
    rnd = rows[("random", "closed")]["cells"]["recall@1"]
    assert rnd["ci_low"] <= rnd["value"] <= rnd["ci_high"] and rnd["ci_low"] < rnd["ci_high"]
    scores = json.loads((runs[1][2] / "scores.json").read_text())
    assert rnd["value"] == scores["aggregate"]["recall@1"]  # the run aggregate, not a resample mean
    tests = {(t["setting"], t["metric"]): t for t in data["tests"]}
    r1 = tests[("closed", "recall@1")]
    assert r1["a"] == "oracle" and r1["b"] == "random" and r1["mean_diff"] > 0.5
    assert r1["p_permutation"] < 0.01 and r1["p_wilcoxon"] < 0.01 and r1["p_holm"] >= r1["p_permutation"]
    assert tests[("closed", "cgs")]["p_permutation"] == 1.0  # both quote verbatim: no difference
    assert ("closed", "gs") not in tests  # only the main-table metrics are tested
    assert ("closed", "open_recall@1") not in tests  # open metrics are not compared in closed runs
    assert any("Holm" in n for n in data["notes"])
    assert data["closed_vs_open"][0]["system"] in {"oracle", "random"}
    # radar axes: oracle accuracy maps every accuracy metric to 1
    assert rows[("oracle", "closed")]["axes"]["accuracy"] == 1.0
    # latency and LLM cost per system come from run.json (reference systems spend no tokens)
    info = json.loads((runs[1][2] / "run.json").read_text())
    usage = rows[("random", "closed")]["usage"]
    assert usage["latency_mean_s"] == info["usage"]["latency_s"]["mean"] > 0
    assert usage["latency_p95_s"] == info["usage"]["latency_s"]["p95"]
    assert usage["cost_usd"] == 0.0 and usage["prompt_tokens"] == 0.0
    # NLI ran without a scorer: unavailable with its reason, the open metrics of a closed run are not listed
    assert "nli_entailment" in rows[("random", "closed")]["unavailable"]
    assert "open_recall@1" not in rows[("random", "closed")]["unavailable"]


def test_breakdowns_partition_the_dialogues(report_dir, runs) -> None:
    data = json.loads((report_dir / "leaderboard.json").read_text())
    tiers = data["breakdown"]["difficulty"]
    assert list(tiers) == [t for t in ("Easy", "Medium", "Hard", "Expert") if t in tiers]
    total = sum(group["random · closed"]["dialogues"] for group in tiers.values())
    assert total == len(runs[0].dialogues)
    assert set(data["breakdown"]["city"]) == {"Lumen Bay"}
    assert data["breakdown"]["city"]["Lumen Bay"]["oracle · closed"]["recall@1"] == 1.0


def test_markdown_csv_latex(report_dir) -> None:
    md = (report_dir / "leaderboard.md").read_text()
    assert "## Closed set" in md and "## Open set" in md and "| oracle | 1.000 [1.000, 1.000]" in md
    assert "Breakdown by difficulty" in md and "Holm" in md
    assert "latency mean / p95 (s) | LLM cost (USD) |" in md and "0.0000 (0 tokens)" in md
    assert "### All metrics, closed set" in md and "| nli_entailment | grounding | ↑ | unavailable |" in md
    assert "| hallucinated_attribute_rate | grounding | ↓ |" in md
    assert md.count("\n| recall@5 | accuracy |") == 1  # every metric once per setting
    rows = list(csv.DictReader(io.StringIO((report_dir / "leaderboard.csv").read_text())))
    r1 = [r for r in rows if r["label"] == "oracle" and r["metric"] == "recall@1"]
    assert len(r1) == 1 and float(r1[0]["value"]) == 1.0
    tex = (report_dir / "leaderboard.tex").read_text()
    assert r"\begin{tabular}" in tex and r"recall@1" in tex and r"\textbf{1.000}" in tex
    assert r"open\_recall@1" in tex  # underscores escaped
    assert latex_escape("a_b & 50% #1 $x$ {y} ~ ^ \\") == (
        r"a\_b \& 50\% \#1 \$x\$ \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )


def test_html_is_self_contained_and_links_tags(report_dir) -> None:
    page = (report_dir / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page and "<svg" in page
    assert 'src="http' not in page and 'href="http' not in page and "<link" not in page
    assert 'class="tag" href="#r0-' in page and '<mark class="ok">' in page
    assert '<span class="ci">p95 ' in page and " tokens</span>" in page  # latency and cost per run
    assert "<summary>All metrics, closed set</summary>" in page and 'title="no entailment scorer' in page


def test_dialogue_pages_show_the_transcript_rankings_and_cited_reviews(report_dir, runs) -> None:
    import html
    import re

    from groundtrace.crs.report.dialogue_page import page_name

    demo, _ = runs
    page = (report_dir / "report.html").read_text()
    links = set(re.findall(r'href="(dialogues/[^"#]+)#turn-\d+"', page))
    pages = sorted((report_dir / "dialogues").iterdir())
    assert links and {f"dialogues/{p.name}" for p in pages} == links  # every page linked, every link a page
    dialogue = next(d for d in demo.dialogues if (report_dir / page_name(d.dialogue_id)).is_file())
    text = (report_dir / page_name(dialogue.dialogue_id)).read_text()
    for turn in dialogue.turns:  # the full transcript, escaped (the evidence view splits cited turns)
        if not turn.cited_tags:
            assert html.escape(turn.text, quote=True) in text
        assert f'id="turn-{turn.index}"' in text
    gold = demo.kb.pois[dialogue.recommendation_turns()[0].gold.gold_poi].name
    assert f"<b>Gold:</b> {html.escape(gold, quote=True)}" in text
    assert "✓ gold</li>" in text and "gold at rank 1 of 8" in text  # the oracle's ranking
    assert "oracle · closed" in text and "random · open" in text  # every run that answered the dialogue
    assert '<mark class="ok">' in text and 'href="../report.html"' in text
    _assert_inert(text)


def _tiny_kb(text: str) -> KnowledgeBase:
    poi = POI(
        poi_id="p1",
        name="<b>Evil</b> Diner",
        city="X",
        poi_type="restaurant",
        lat=0,
        lon=0,
        stars=4,
        review_count=1,
    )
    return KnowledgeBase([poi], [Review(review_id="rv1", poi_id="p1", stars=4, text=text)])


def test_untrusted_review_and_response_text_is_escaped() -> None:
    review = 'Nice place. <script>alert("pwned")</script> The pasta was superb & cheap.'
    kb = _tiny_kb(review)
    response = 'Try it: "The pasta was superb & cheap." [R1] <img src=x onerror=alert(1)> [R7]'
    view = evidence_view(response, {"R1": ReviewRef(review_id="rv1", poi_id="p1")}, kb, "t0")
    assert "<script>" not in view and "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in view
    assert "<img" not in view and "&lt;img src=x onerror=alert(1)&gt;" in view
    assert "<b>Evil</b>" not in view and "&lt;b&gt;Evil&lt;/b&gt;" in view
    assert '<a class="tag" href="#t0-R1">R1</a>' in view and 'id="t0-R1"' in view
    # the span is located on normalised text: the final "." is punctuation outside the match
    assert '<mark class="ok">The pasta was superb &amp; cheap</mark>.' in view
    assert '<span class="bad" title="does not resolve">R7</span>' in view


class _Elements(HTMLParser):
    """Every start tag of a page with its attributes (what a browser would build)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append((tag, attrs))


def _elements(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Elements()
    parser.feed(page)
    return parser.tags


def _assert_inert(page: str) -> None:
    """No script element and no event-handler attribute anywhere in the parsed page."""
    tags = _elements(page)
    assert not [t for t, _ in tags if t in ("script", "img", "iframe")]
    assert not [(t, a) for t, attrs in tags for a, _ in attrs if a.lower().startswith("on")]


def test_attribute_injection_in_a_review_stays_text() -> None:
    review = 'Great "view" here." onmouseover="alert(1)" x=" and <script>alert(2)</script> the best tacos.'
    base = _tiny_kb(review)
    poi = base.pois["p1"].model_copy(update={"name": '" onmouseover="alert(3)'})
    evil_id = 'rv1" onclick="x'
    kb = KnowledgeBase([poi], [base.reviews["rv1"].model_copy(update={"review_id": evil_id})])
    response = 'It has "the best tacos" [R1] and "view" here." onmouseover="alert(4) [R1]'
    view = evidence_view(response, {"R1": ReviewRef(review_id=evil_id, poi_id="p1")}, kb, 'd" x="1')
    assert '<mark class="ok">the best tacos</mark>' in view  # resolved, located and highlighted
    _assert_inert(view)
    assert "&quot; onmouseover=&quot;alert(1)&quot;" in view and "&quot; onmouseover=&quot;alert(4)" in view
    # every attribute value is one of ours: tag links and anchors are sanitised ids
    for tag, attrs in _elements(view):
        for name, value in attrs:
            assert name in ("class", "href", "id", "title"), (tag, name)
            if name in ("href", "id"):
                assert value is not None and all(ch.isalnum() or ch in "#-_" for ch in value), value


def test_highlight_merges_overlaps_and_escapes() -> None:
    assert highlighted("a<b>c", [(1, 3, True), (2, 4, False)]) == 'a<mark class="weak">&lt;b&gt;</mark>c'
    assert highlighted("x", []) == "x"


def test_script_in_a_run_is_escaped_in_the_full_report(runs, tmp_path) -> None:
    demo, dirs = runs
    src = dirs[0]
    out = tmp_path / "evil"
    out.mkdir()
    for name in ("run.json", "scores.json", "dialogues.json"):
        (out / name).write_text((src / name).read_text())
    first = Prediction.model_validate_json((src / PREDICTIONS_FILE).read_text().splitlines()[0])
    first.response = "</div><script>alert(1)</script>" + first.response
    (out / PREDICTIONS_FILE).write_text(first.model_dump_json() + "\n")
    # the first cited review of that response carries a script and an attribute injection
    tag = find_tags(first.response)[0].label
    dialogue = next(d for d in demo.dialogues if d.dialogue_id == first.dialogue_id)
    review_id = dialogue.review_refs[tag].review_id
    evil = '<script>alert(2)</script> "><b onmouseover="alert(3)">x</b> '
    reviews = [
        r.model_copy(update={"text": evil + r.text}) if r.review_id == review_id else r
        for r in demo.kb.reviews.values()
    ]
    kb = KnowledgeBase(list(demo.kb.pois.values()), reviews, name="evil")
    dialogues = [  # the dataset is untrusted too: a user turn and the persona carry markup
        d.model_copy(
            update={
                "persona": '<img src=x onerror="alert(5)">',
                "turns": [d.turns[0].model_copy(update={"text": "<script>alert(6)</script>"}), *d.turns[1:]],
            }
        )
        if d.dialogue_id == first.dialogue_id
        else d
        for d in demo.dialogues
    ]
    build_report([out], tmp_path / "rep", resamples=20, knowledge_base=kb, dialogues=dialogues)
    from groundtrace.crs.report.dialogue_page import page_name

    dialogue_page = (tmp_path / "rep" / page_name(first.dialogue_id)).read_text()
    assert (
        "&lt;script&gt;alert(6)&lt;/script&gt;" in dialogue_page and "onerror=&quot;alert(5)" in dialogue_page
    )
    assert "&lt;/div&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in dialogue_page  # the run's response
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in dialogue_page and '<mark class="ok">' in dialogue_page
    _assert_inert(dialogue_page)
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "<script>" not in page and "&lt;/div&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert (
        "&lt;script&gt;alert(2)&lt;/script&gt; &quot;&gt;&lt;b onmouseover=&quot;alert(3)&quot;&gt;" in page
    )
    _assert_inert(page)
    assert '<mark class="ok">' in page  # the quote is still located in the (prefixed) review


def _relabelled(src, dst, **info):
    """A copy of run folder ``src`` with ``run.json`` fields replaced."""
    dst.mkdir()
    for name in ("run.json", "scores.json", "dialogues.json", PREDICTIONS_FILE):
        (dst / name).write_text((src / name).read_text())
    data = json.loads((dst / "run.json").read_text())
    data.update(info)
    (dst / "run.json").write_text(json.dumps(data))
    return dst


@pytest.mark.slow
def test_markdown_and_latex_escape_html_in_labels(runs, tmp_path) -> None:
    """leaderboard.md is read in Markdown viewers, which render raw HTML: a label (or a city, a note) is
    written with entities; LaTeX gets \\textless{}/\\textgreater{} (OT1 fonts print < > as ¡ ¿)."""
    demo, dirs = runs
    evil = "<img src=x onerror=alert(1)> & co"
    closed = [d for d in dirs if json.loads((d / "run.json").read_text())["setting"] == "closed"]
    copy = _relabelled(closed[1], tmp_path / "evil", label=evil)
    build_report(
        [closed[0], copy], tmp_path / "rep", resamples=20, knowledge_base=demo.kb, dialogues=demo.dialogues,
        html_turns=0, dialogue_pages=0,
    )  # fmt: skip
    md = (tmp_path / "rep" / "leaderboard.md").read_text()
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt; &amp; co (lower bound)" in md
    assert "<details><summary>" in md  # our own markup stays
    tex = (tmp_path / "rep" / "leaderboard.tex").read_text()
    assert r"\textless{}img src=x onerror=alert(1)\textgreater{} \& co" in tex and "<img" not in tex


def test_runs_on_different_dialogues_are_flagged(runs, tmp_path) -> None:
    """Two runs of one setting that answer different datasets (or splits, or limits) share a table only
    with a warning above it and a note naming each set."""
    demo, dirs = runs
    closed = [d for d in dirs if json.loads((d / "run.json").read_text())["setting"] == "closed"]
    other = _relabelled(closed[0], tmp_path / "other", label="oracle on another split", dataset_hash="f" * 64)
    kwargs = {"resamples": 20, "knowledge_base": demo.kb, "dialogues": demo.dialogues, "html_turns": 0}
    build_report([closed[0], closed[1]], tmp_path / "same", dialogue_pages=0, **kwargs)
    same = json.loads((tmp_path / "same" / "leaderboard.json").read_text())
    assert same["datasets"] == {"closed": 1} and not any("sets of dialogues" in n for n in same["notes"])
    build_report([closed[0], closed[1], other], tmp_path / "mixed", dialogue_pages=0, **kwargs)
    mixed = json.loads((tmp_path / "mixed" / "leaderboard.json").read_text())
    assert mixed["datasets"] == {"closed": 2}
    note = next(n for n in mixed["notes"] if "sets of dialogues" in n)
    assert "closed set: the runs answer 2 different sets of dialogues" in note and "ffffffffffff" in note
    md = (tmp_path / "mixed" / "leaderboard.md").read_text()
    assert "Warning: these runs answer 2 different sets of dialogues" in md.split("| # |")[0]
    assert "Warning: these runs answer" in (tmp_path / "mixed" / "report.html").read_text()


def test_axis_value_mapping() -> None:
    assert axis_value("recall@1", 0.25) == 0.25
    assert axis_value("har", 0.25) == 0.75  # lower is better → 1 − v
    assert axis_value("t2r", 4.0) == 0.25  # 1 / T2R
    assert axis_value("gs", None) is None


@pytest.mark.slow
def test_cli_report_systems_metrics(runs, tmp_path) -> None:
    demo, dirs = runs
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "crs",
            "report",
            str(dirs[0]),
            str(dirs[2]),
            "--out",
            str(tmp_path / "r"),
            "--resamples",
            "50",
            "--kb",
            str(demo.kb_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r" / "report.html").is_file()
    base = ["crs", "report", str(dirs[0]), str(dirs[2]), "--resamples", "20", "--kb", str(demo.kb_path)]
    pairs = runner.invoke(app, [*base, "--out", str(tmp_path / "p"), "--all-pairs", "--test-bounds"])
    assert pairs.exit_code == 0, pairs.output
    board = json.loads((tmp_path / "p" / "leaderboard.json").read_text())
    assert board["all_pairs"] and board["baseline"] == {"closed": None} and board["tests"]
    assert not (tmp_path / "p" / "dialogues").exists() or list((tmp_path / "p" / "dialogues").iterdir())
    none = runner.invoke(app, [*base, "--out", str(tmp_path / "n"), "--dialogue-pages", "0"])
    assert none.exit_code == 0 and not (tmp_path / "n" / "dialogues").exists()
    for flags, message in (
        (["--sort-by", "recal@1"], "Did you mean 'recall'?"),
        (["--baseline", "nope"], "baseline 'nope' is not a run of the closed set (oracle, random)"),
        (["--dialogue-pages", "some"], "a number or 'all'"),
    ):
        bad = runner.invoke(app, [*base, "--out", str(tmp_path / "bad"), *flags])
        flat = " ".join(bad.output.replace("│", " ").split())
        assert bad.exit_code == 2 and message in flat, (flags, flat)
    listed = runner.invoke(app, ["crs", "systems", "--json"])
    assert {"oracle", "random"} <= {row["name"] for row in json.loads(listed.output)}
    metrics = runner.invoke(app, ["crs", "metrics", "--json"])
    assert len(json.loads(metrics.output)) == 27
    missing = runner.invoke(app, ["crs", "report", str(tmp_path / "nope"), "--out", str(tmp_path / "x")])
    flat = " ".join(missing.output.replace("│", " ").split())
    assert missing.exit_code == 2 and "not a run folder" in flat


def test_select_turns_shows_what_explains_a_loss() -> None:
    from groundtrace.crs.report.html import select_turns

    preds = [
        Prediction(
            dialogue_id="d", turn_index=i, ranking=["p"], response="", error="boom" if i == 7 else None
        )
        for i in (1, 3, 5, 7, 9)
    ]
    values = {
        ("d", 1): {"recall@1": 1.0, "cgs": 0.2},  # hit, poorly grounded
        ("d", 3): {"recall@1": 0.0, "cgs": 0.9},  # miss
        ("d", 5): {"recall@1": 1.0, "cgs": 1.0},  # perfect
        ("d", 7): {"recall@1": 0.0, "cgs": 0.0},  # unscorable (error)
        ("d", 9): {"recall@1": 0.0, "cgs": 0.5},  # miss, less grounded than turn 3
    }
    # priority: error (7), then misses by CGS (9: 0.5, 3: 0.9), then hits by CGS (1: 0.2, 5: 1.0);
    # the chosen turns are shown in file order
    assert [p.turn_index for p in select_turns(preds, values, 3)] == [3, 7, 9]
    assert [p.turn_index for p in select_turns(preds, values, 4)] == [1, 3, 7, 9]
    assert [p.turn_index for p in select_turns(preds, None, 2)] == [1, 3]  # no values: the first turns
