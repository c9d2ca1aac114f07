"""Price table and ledger arithmetic."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from groundtrace.core.llm.base import Usage
from groundtrace.core.llm.ledger import DEFAULT_PRICES_PATH, Ledger, PriceTable


def test_cost_formula_and_first_match_wins() -> None:
    table = PriceTable.from_rules(
        [
            {"pattern": "gpt-4o-mini*", "input": 0.15, "output": 0.60},
            {"pattern": "gpt-4o*", "input": 2.50, "output": 10.00},
        ]
    )
    # 2000 * 0.15 / 1e6 + 1000 * 0.60 / 1e6 = 0.0003 + 0.0006 = 0.0009
    assert table.cost("gpt-4o-mini-2024-07-18", 2000, 1000) == pytest.approx(0.0009)
    # 2000 * 2.5 / 1e6 + 1000 * 10 / 1e6 = 0.005 + 0.01 = 0.015
    assert table.cost("GPT-4o", 2000, 1000) == pytest.approx(0.015)
    assert table.cost("claude-x", 2000, 1000) is None


def test_bundled_table_loads_and_prices_the_local_model_at_zero() -> None:
    table = PriceTable.from_file(DEFAULT_PRICES_PATH)
    assert table.errors == ()
    assert table.cost("smollm2-135m-instruct", 10_000, 10_000) == 0.0
    assert table.lookup("gpt-4o-mini") is not None


def test_env_override(monkeypatch, tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("prices:\n  - pattern: 'x*'\n    input: 1\n    output: 1\n")
    monkeypatch.setenv("GROUNDTRACE_LLM_PRICES", str(path))
    assert PriceTable.default().source == str(path)


def test_bad_rules_are_skipped_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(
        "prices:\n"
        "  - pattern: good*\n"  # line 2
        "    input: 1\n"
        "    output: 2\n"
        "  - pattern: bad*\n"  # line 5
        "    input: -1\n"
        "    output: 2\n"
        "  - pattern: also-good*\n"  # line 8
        "    input: 0\n"
        "    output: 0\n"
    )
    with pytest.warns(
        UserWarning, match=r"prices\.yaml:6: prices\.1\.input: Input should be greater than or equal to 0"
    ):
        table = PriceTable.from_file(path)
    assert [r.pattern for r in table.rules] == ["good*", "also-good*"]
    assert len(table.errors) == 1


def test_not_a_price_file(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("- just a list\n")
    with pytest.raises(ValueError, match="p.yaml:1: expected a mapping"):
        PriceTable.from_file(path)


def test_ledger_totals_per_model_and_flags() -> None:
    ledger = Ledger()
    ledger.record("a", Usage(calls=1, prompt_tokens=10, completion_tokens=5, cost_usd=0.5))
    ledger.record("a", Usage(cache_hits=1))
    ledger.record("b", Usage(calls=2, prompt_tokens=1, retries=3, reasks=1), priced=False)
    total = ledger.total()
    assert (total.calls, total.prompt_tokens, total.completion_tokens) == (3, 11, 5)
    assert (total.cache_hits, total.retries, total.reasks, total.cost_usd) == (1, 3, 1, 0.5)
    assert ledger.by_model()["a"].calls == 1 and ledger.unpriced_models == {"b"}
    assert ledger.to_dict()["unpriced_models"] == ["b"]


def test_ledger_is_thread_safe() -> None:
    ledger = Ledger()

    def work() -> None:
        for _ in range(500):
            ledger.record("m", Usage(calls=1, prompt_tokens=2))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ledger.total().calls == 2000 and ledger.total().prompt_tokens == 4000
