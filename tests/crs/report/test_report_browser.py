"""report.html in a real browser at 1280×800: the main table fits (no horizontal scroll), details are folded.

Playwright drives Debian's chromium (``/usr/bin/chromium``, headless), as the review page's browser tests
do (``tests/catalog/web/test_browser.py``; scripts/test.sh installs it). The page is opened from disk
(``file://``: the report is self-contained). Screenshots go to ``test-artifacts/report-page/``
(gitignored). Without playwright or chromium the test skips with the reason, except in CI (``CI=true``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.report import build_report
from groundtrace.crs.systems import build_system
from tests.crs.report.demo_data import make_demo

pytestmark = pytest.mark.slow  # a browser and a built report

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "report-page"
LONG = "my-crs-v2 (HTTP endpoint, gpt-4o-mini, temperature 0.7, top-p 0.95, retrieval k=50, rerank on)"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in {"1", "true"}:
        pytest.fail(f"{reason}: CI runs the browser tests (scripts/test.sh installs chromium)")
    pytest.skip(reason)


def _copy(src: Path, dst: Path, **info: object) -> Path:
    """A copy of run folder ``src`` with ``run.json`` fields replaced (label, system, usage)."""
    shutil.copytree(src, dst)
    data = json.loads((dst / "run.json").read_text())
    data.update(info)
    (dst / "run.json").write_text(json.dumps(data))
    return dst


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report-browser")
    demo = make_demo(root / "demo", n_dialogues=12)
    base = {}
    for name in ("oracle", "random", "tfidf", "knowledge"):
        base[name] = run_system(
            build_system(name), demo.dialogues, demo.kb, root / "runs" / name, split="all"
        ).out
    llm_usage = {  # wide numbers in the cost column: an expensive LLM run
        "turns": 36,
        "latency_s": {"mean": 12.3456, "p50": 11.0, "p95": 31.4159, "max": 40.0, "total": 444.0},
        "prompt_tokens": 1234567,
        "completion_tokens": 98765,
        "cost_usd": 1234.5678,
        "cost_usd_per_turn": 34.29,
    }
    dirs = list(base.values())
    dirs.append(_copy(base["tfidf"], root / "runs" / "endpoint", system="http://10.1.2.3:8000/respond"))
    dirs.append(_copy(base["knowledge"], root / "runs" / "long", label=LONG, usage=llm_usage))
    for i in range(4):
        dirs.append(
            _copy(base["tfidf"], root / "runs" / f"variant-{i}", label=f"tfidf variant {i} (bm25 k1=1.{i})")
        )
    out = root / "report"
    build_report(dirs, out, resamples=20, knowledge_base=demo.kb, dialogues=demo.dialogues, html_turns=3)
    return out


def test_main_table_fits_1280_pixels_without_horizontal_scroll(report) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright; it is in [dev])")
    if not CHROMIUM.is_file():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto((report / "report.html").as_uri())
            shot = page.screenshot(path=str(ARTIFACTS / "report-1280x800.png"))
            assert shot[:8] == b"\x89PNG\r\n\x1a\n"
            sizes = page.evaluate(
                """() => {
                  const t = document.querySelector('#main-closed');
                  const heads = [...t.querySelectorAll('th')].map(th => th.getBoundingClientRect().right);
                  const root = document.documentElement;
                  return {page: root.scrollWidth, view: root.clientWidth,
                          table: t.scrollWidth, box: t.parentElement.clientWidth,
                          right: t.getBoundingClientRect().right, lastHead: Math.max(...heads),
                          rows: t.querySelectorAll('tbody tr').length};
                }"""
            )
            assert sizes["rows"] == 10  # every run in the main table
            assert sizes["page"] <= sizes["view"], sizes  # no horizontal scroll of the page
            assert sizes["table"] <= sizes["box"] and sizes["right"] <= sizes["view"], sizes
            assert sizes["lastHead"] <= sizes["view"], sizes  # the cost column is on screen
            text = page.inner_text("#main-closed")
            assert "latency (s)" in text and "cost (USD)" in text and "1234.5678" in text
            assert "upper bound" in text and "lower bound" in text and "http://" not in text
            assert "endpoint" in text  # an HTTP run without a label is named by its folder
            assert not page.is_visible("details table")  # the wide tables are folded
            page.click("text=Headline metrics, closed set")
            assert page.is_visible("details[open] table")
            page.goto((report / "report.html").as_uri())
            href = page.get_attribute(".turn .meta a", "href")
            assert href and href.startswith("dialogues/")
            page.goto((report / href.split("#")[0]).as_uri())
            page.screenshot(path=str(ARTIFACTS / "dialogue-1280x800.png"))
            assert page.evaluate("() => document.documentElement.scrollWidth") <= 1280
            assert page.is_visible("text=✓ gold")
        finally:
            browser.close()
