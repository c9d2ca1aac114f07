"""One word per meaning on the catalog CLI (issue 25 item 4): ``--runner local|ray`` runs the SKUs,
``--extractor NAME`` proposes the values; the old ``--engine`` still works with a deprecation message that
names the new spelling. The help's static registry names (cli/catalog_names.py) match the registries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import typer

from groundtrace.catalog.pipeline import EnrichConfig
from groundtrace.cli.catalog_enrich_cmd import _runner_and_extractor
from groundtrace.cli.catalog_names import BUILTIN


@pytest.mark.parametrize(
    ("runner", "engine", "extractor", "model", "expected", "message"),
    [
        (None, None, None, None, ("local", None), None),
        ("ray", None, None, None, ("ray", None), None),
        (None, None, "rule", None, ("local", "rule"), None),
        (None, None, None, Path("m.json"), ("local", "learned"), None),
        (None, "ray", None, None, ("ray", None), "--engine ray is now --runner ray"),
        (None, "local", "llm", None, ("local", "llm"), "--engine local is now --runner local"),
        (None, "learned", None, Path("m.json"), ("local", "learned"), "--engine learned is now --extractor"),
        ("ray", "learned", None, Path("m.json"), ("ray", "learned"), "--engine learned is now --extractor"),
    ],
)
def test_runner_and_extractor(runner, engine, extractor, model, expected, message, capsys) -> None:  # type: ignore[no-untyped-def]
    assert _runner_and_extractor(runner, engine, extractor, model) == expected
    err = capsys.readouterr().err
    assert (message in err) if message else err == ""


@pytest.mark.parametrize(
    ("runner", "engine", "extractor", "model"),
    [
        ("cluster", None, None, None),  # not a runner
        ("ray", "local", None, None),  # the old and new spelling disagree
        (None, "offline", None, None),  # --engine never took an extractor other than learned
        (None, None, "learned", None),  # the learned extractor needs its model
    ],
)
def test_runner_and_extractor_refuses(runner, engine, extractor, model) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(typer.BadParameter):
        _runner_and_extractor(runner, engine, extractor, model)


def test_config_extractor_and_the_old_engine_keyword() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert EnrichConfig(extractor="learned").extractor_name() == "learned"
        assert EnrichConfig(llm="openai:m").extractor_name() == "llm"
    with pytest.warns(DeprecationWarning, match="now 'extractor'"):
        old = EnrichConfig(engine="learned")
    assert old.extractor == "learned" and "engine" not in old.model_dump()
    with pytest.warns(DeprecationWarning):
        assert old.engine == "learned" and old.engine_name() == "learned"
    with pytest.raises(ValueError, match="disagree"), pytest.warns(DeprecationWarning):
        EnrichConfig(engine="learned", extractor="llm")


def test_rule_names_the_offline_extractor() -> None:
    from groundtrace.catalog.scout.engine import EXTRACTION_ENGINES

    assert EXTRACTION_ENGINES.canonical("rule") == "offline"


def _python(code: str, path: str = "") -> str:
    env = dict(os.environ, PYTHONPATH=path) if path else None
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return done.stdout


def test_static_help_names_are_the_registries_names() -> None:
    """A fresh interpreter (no plug-in loaded by another test) lists each registry's own names."""
    code = (
        "import importlib, json\n"
        f"paths = {sorted(BUILTIN)!r}\n"
        "out = {}\n"
        "for p in paths:\n"
        "    module, _, attr = p.partition(':')\n"
        "    out[p] = sorted(getattr(importlib.import_module(module), attr).in_order())\n"
        "print(json.dumps(out))\n"
    )
    real = json.loads(_python(code).strip().splitlines()[-1])
    assert real == {path: list(names) for path, names in BUILTIN.items()}


PLUGIN = """
    from groundtrace.catalog.sources.base import EVIDENCE_SOURCES, EvidenceSource


    class PartnerApi(EvidenceSource):
        name = "partner-api"

        def documents(self, sku):
            return []


    def register():
        EVIDENCE_SOURCES.add("partner-api", PartnerApi, description="Partner product API.")
"""


def test_help_lists_plugin_names_when_a_plugin_is_installed(tmp_path: Path) -> None:
    (tmp_path / "gt_help_plugin.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    dist = tmp_path / "gt_help_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: gt_help_plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(
        "[groundtrace.plugins]\ngt_help_plugin = gt_help_plugin:register\n", encoding="utf-8"
    )
    code = (
        "import os, sys\n"
        "os.environ['COLUMNS'] = '400'\n"
        "from groundtrace.cli import main\n"
        "try:\n"
        "    main(['catalog', 'enrich', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    assert "partner-api" in _python(code, str(tmp_path))


def test_store_run_options_runner_and_the_old_engine_keyword() -> None:
    from groundtrace.catalog.store.runner import StoreRunOptions

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert StoreRunOptions(runner="ray").runner == "ray" and StoreRunOptions().runner == "local"
    with pytest.warns(DeprecationWarning, match="now 'runner'"):
        assert StoreRunOptions(engine="ray").runner == "ray"
