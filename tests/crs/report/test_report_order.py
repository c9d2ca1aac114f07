"""The report's order, bounds and significance marks on hand-made runs whose tests are known in advance.

Five closed-set runs on 30 one-turn dialogues, R@1 = 1 on the first k dialogues: oracle k = 30 (upper
bound), strong 25, mid 15, weak 3, random 4 (lower bound). Paired differences per dialogue are 0/1, so the
sign-flip p-values are known: mid − weak has 12 non-zero differences, all +1 → exact p = 2/2¹² ≈ 0.0005;
strong − weak 22 → Hoeffding bound 2·e^(−11) ≈ 3e-5; strong − mid 10 → exact 2/2¹⁰ ≈ 0.002. CGS is 1.0
for every run (p = 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from groundtrace.crs.report.leaderboard import build
from groundtrace.crs.report.load import RunData, label_runs
from groundtrace.crs.report.render import latex, markdown, superscript

N = 30


def _run(system: str, hits: int, *, label: str | None = None, setting: str = "closed", folder: str = ""):
    r1 = "recall@1" if setting == "closed" else "open_recall@1"
    turns = [
        {
            "dialogue_id": f"d{i:02d}",
            "turn_index": 1,
            "scorable": True,
            "error": None,
            "values": {r1: float(i < hits), "cgs": 1.0},
        }
        for i in range(N)
    ]
    scores = {
        "setting": setting,
        "metrics": [r1, "cgs"],
        "aggregate": {r1: hits / N, "cgs": 1.0},
        "counts": {r1: {"unit": "turn"}, "cgs": {"unit": "turn"}},
        "turns": turns,
        "dialogues": [{"dialogue_id": f"d{i:02d}", "values": {}} for i in range(N)],
        "n_dialogues": N,
        "n_turns": N,
    }
    info = {"system": system, "setting": setting, "dataset_hash": "h", "needs_gold": system == "oracle"}
    if label:
        info["label"] = label
    return RunData(Path(folder or system), info, scores, {})


def _runs(setting: str = "closed") -> list[RunData]:
    runs = [
        _run("random", 4, setting=setting),
        _run("weak", 3, setting=setting),
        _run("oracle", 30, setting=setting),
        _run("mid", 15, setting=setting),
        _run("strong", 25, setting=setting),
    ]
    label_runs(runs)
    return runs


def _rows(report):
    return {r.label: r for r in report.rows}


def test_rows_are_sorted_with_the_bounds_at_the_ends_and_tested_against_the_weakest() -> None:
    report = build(_runs(), resamples=200)
    assert [r.label for r in report.rows] == ["oracle", "strong", "mid", "weak", "random"]
    rows = _rows(report)
    assert (rows["oracle"].bound, rows["random"].bound, rows["mid"].bound) == ("upper", "lower", None)
    assert [rows[x].letter for x in ("oracle", "strong", "mid", "weak", "random")] == ["", "a", "b", "c", ""]
    assert report.baseline == {"closed": "weak"} and rows["weak"].baseline
    assert {(t.a, t.b) for t in report.tests} == {("strong", "weak"), ("mid", "weak")}
    assert {t.metric for t in report.tests} == {"recall@1", "cgs"}  # main-table metrics both runs have
    assert rows["strong"].beats == {"recall@1": ["c"]} and rows["mid"].beats == {"recall@1": ["c"]}
    assert rows["weak"].beats == {} and rows["oracle"].beats == {}
    mid_weak = next(t for t in report.tests if t.a == "mid" and t.metric == "recall@1")
    assert mid_weak.p_permutation == pytest.approx(2 / 2**12)
    assert mid_weak.p_holm == pytest.approx(3 * 2 / 2**12)  # Holm: the second smallest of 4 p-values × 3
    assert report.sort_by == {"closed": "recall@1"}


@pytest.mark.slow  # scipy's Wilcoxon with tied differences (n <= 13) permutes: ~0.5 s a test
def test_all_pairs_named_baseline_and_tested_bounds() -> None:
    rows = _rows(build(_runs(), resamples=50, all_pairs=True))
    assert rows["strong"].beats["recall@1"] == ["b", "c"] and rows["mid"].beats["recall@1"] == ["c"]
    named = build(_runs(), resamples=50, baseline="strong")
    assert {(t.a, t.b) for t in named.tests} == {("strong", "mid"), ("strong", "weak")}
    assert _rows(named)["strong"].beats["recall@1"] == ["b", "c"]  # the baseline's own wins are marked
    bounds = build(_runs(), resamples=50, test_bounds=True)
    assert [r.letter for r in bounds.rows] == ["a", "b", "c", "d", "e"] and bounds.baseline == {
        "closed": "random"
    }
    assert _rows(bounds)["oracle"].beats["recall@1"] == ["e"]  # each run against random (e)
    assert _rows(bounds)["weak"].beats == {} and _rows(bounds)["random"].beats == {}
    with pytest.raises(ValueError, match="baseline 'nope' is not a run of the closed set"):
        build(_runs(), resamples=50, baseline="nope")
    mixed_runs = [*_runs(), _run("mid", 15, setting="open"), _run("weak", 3, setting="open")]
    label_runs(mixed_runs)
    mixed = build(mixed_runs, resamples=50, baseline="strong")
    assert mixed.baseline == {"closed": "strong", "open": "weak"}  # strong ran closed only: a note, no error
    assert any("open set: no run 'strong'" in n for n in mixed.notes)


@pytest.mark.slow  # scipy's Wilcoxon with tied differences (n <= 13) permutes: ~0.5 s a test
def test_sort_by_another_metric_and_its_open_twin() -> None:
    report = build(_runs("open"), resamples=50, sort_by="recall@1")
    assert report.sort_by == {"open": "open_recall@1"}  # the closed-set name maps to its open twin
    assert [r.label for r in report.rows] == ["oracle", "strong", "mid", "weak", "random"]
    ties = build(_runs(), resamples=50, sort_by="cgs")  # all 1.0: ties by label, bounds still outside
    assert [r.label for r in ties.rows] == ["oracle", "mid", "strong", "weak", "random"]


@pytest.mark.slow  # scipy's Wilcoxon with tied differences (n <= 13) permutes: ~0.5 s a test
def test_markdown_and_latex_carry_ranx_superscripts_and_roles() -> None:
    report = build(_runs(), resamples=200)
    md = markdown(report)
    assert "| a | strong | 0.833ᶜ [" in md and "| c | weak (baseline) | 0.100 [" in md
    assert "|  | oracle (upper bound) | 1.000 [" in md and "|  | random (lower bound) | 0.133 [" in md
    assert "tested: each lettered run against the baseline weak (c)" in md
    assert md.index("oracle (upper bound)") < md.index("| a | strong") < md.index("random (lower bound)")
    assert superscript(["a", "q", "z"]) == "ᵃ۹ᶻ" and superscript(["z1"]) == "^(z1)"
    tex = latex(report)
    assert tex.startswith("% TRACE-CRS leaderboard") and r"\usepackage{booktabs}" in tex.splitlines()[1]
    assert r"a & strong & \textbf{0.833}$^{c}$\hphantom{$^{ab}$}" in tex
    assert r"-- & \textit{oracle (upper bound)} & 1.000\hphantom{$^{abc}$}" in tex
    assert r"\textit{random (lower bound)} & 0.133\hphantom{$^{abc}$}{\scriptsize$\pm$0.117} & 1.000" in tex
    assert r"\toprule" in tex and r"\bottomrule" in tex and "against weak; bounds not tested" in tex


def test_http_runs_are_named_by_label_or_folder_never_by_url() -> None:
    runs = [
        _run("http://10.0.0.7:8000/respond", 10, folder="runs/my-crs"),
        _run("http://10.0.0.7:8000/respond", 12, label="release-2", folder="runs/x"),
    ]
    label_runs(runs)
    assert [r.label for r in runs] == ["my-crs", "release-2"]
    assert "http://" not in markdown(build(runs, resamples=20))
