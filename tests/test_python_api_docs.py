"""Every ```python block of docs/python-api.md runs, each in a fresh namespace and a temporary cwd."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _blocks() -> list[tuple[str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    out = []
    for match in _BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        out.append((f"python-api.md:{line}", match.group(1)))
    return out


def test_page_has_examples() -> None:
    assert len(_blocks()) >= 1


@pytest.mark.parametrize(("where", "code"), _blocks(), ids=[w for w, _ in _blocks()])
@pytest.mark.slow
def test_example_runs(where: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # An example may register a metric or system: give the registries back their entries afterwards.
    from groundtrace.catalog import EVIDENCE_SOURCES, JUDGES
    from groundtrace.crs.metrics import METRICS
    from groundtrace.crs.systems import SYSTEMS

    for registry in (METRICS, SYSTEMS, EVIDENCE_SOURCES, JUDGES):
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))
        monkeypatch.setattr(registry, "_alias_to_name", dict(registry._alias_to_name))
    namespace: dict[str, object] = {"__name__": "__python_api_example__"}
    exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the page's own examples
