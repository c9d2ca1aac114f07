"""Shared fixtures: the real sample data under ../shared/data and a seeded RNG."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest
from hypothesis import settings

# No per-example time limit anywhere (a deadline is a timing threshold, and CI machines are loaded);
# in CI (CI=true, set by .ci/run's callers) examples are derandomized so a run is reproducible.
settings.register_profile("groundtrace", deadline=None)
settings.register_profile("groundtrace-ci", deadline=None, derandomize=True)
settings.load_profile(
    "groundtrace-ci" if os.environ.get("CI", "").lower() in {"1", "true"} else "groundtrace"
)

# The systems' constraint parser learns TF-IDF features in the suite unless a test asks for the real default
# (MiniLM clause embeddings with the [dense] extra; fixture ``minilm_parser``): the MiniLM features cost
# ~2.7x the CPU of a first training (21.4 vs 7.8 s for tests/crs/systems/test_train_parser_cli.py's first
# test), paid again by every `crs run` of a learning system on a new dataset or in a child process. The
# MiniLM parser itself is tested in tests/crs/systems/test_understanding_embed.py (features="embed" given
# explicitly) and end to end by tests/test_demo.py::test_demo_cli_end_to_end. Set before any test and
# inherited by the child processes tests start; an outer GROUNDTRACE_PARSER_FEATURES=embed runs the whole
# suite with MiniLM.
os.environ.setdefault("GROUNDTRACE_PARSER_FEATURES", "tfidf")

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The real sample data: ``../shared/data`` beside the checkout, or ``$GROUNDTRACE_SHARED_DATA`` (the
#: fresh-clone guard test points it at a missing folder to see the suite without the data).
SHARED_DATA = Path(
    os.environ.get("GROUNDTRACE_SHARED_DATA") or (REPO_ROOT / ".." / "shared" / "data")
).resolve()
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def shared_path(*parts: str) -> Path:
    """Path of a real sample file under ../shared/data.

    When it is missing the test is skipped with a message naming the path — or, when
    ``GROUNDTRACE_REQUIRE_SHARED=1`` (set by CI, which always has shared/), it fails.
    """
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        message = f"real sample data missing: {path} (expected ../shared/data relative to the repo root)"
        if os.environ.get("GROUNDTRACE_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def rng() -> random.Random:
    return random.Random(1234)


@pytest.fixture
def minilm_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """The constraint parser's real default options in this test: MiniLM clause features when the
    ``[dense]`` extra is installed (``default_parser_options``), not the suite's TF-IDF setting."""
    monkeypatch.delenv("GROUNDTRACE_PARSER_FEATURES", raising=False)


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Render rich/typer output (tables, error panels) 1000 columns wide in every test.

    Without it rich wraps at 80 columns, and whether a phrase a test looks for is split across lines
    depends on how long the checkout and temporary paths happen to be on that machine.
    """
    monkeypatch.setenv("COLUMNS", "1000")
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def isolated_llm_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test gets its own empty LLM response cache: no test reads an answer cached by another test
    or run, and none writes to the user's default cache. A test may still set its own directory."""
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path_factory.mktemp("llm-cache")))


_SLOW_MODULE = re.compile(r"^pytestmark = pytest\.mark\.slow\b", re.MULTILINE)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The fast tier (``-m "not slow"``, exactly) does not import a test module whose every test is slow —
    one with a top-level ``pytestmark = pytest.mark.slow`` line: such modules load torch, transformers or
    Ray at import time, seconds of collection for tests that run would deselect anyway. Every other run
    (CI's full suite, ``-m slow``, a module named on the command line) collects them as usual."""
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    if (config.getoption("markexpr", "") or "").replace(" ", "") != "notslow":
        return None
    if any(Path(arg.split("::")[0]).resolve() == collection_path.resolve() for arg in config.args):
        return None  # named explicitly: collected (its tests are then deselected as slow)
    try:
        text = collection_path.read_text(encoding="utf-8")
    except OSError:
        return None
    return True if _SLOW_MODULE.search(text) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``cpu_dependent`` (numbers that vary with the CPU's int8/float kernels) run only when
    the ``-m`` expression names that marker, e.g. ``pytest -m cpu_dependent``; otherwise they are skipped
    with that hint, so the default suite passes on any machine."""
    if "cpu_dependent" in (config.getoption("markexpr", "") or ""):
        return
    skip = pytest.mark.skip(reason="CPU-dependent numerics; opt in with: pytest -m cpu_dependent")
    for item in items:
        if item.get_closest_marker("cpu_dependent") is not None:
            item.add_marker(skip)
