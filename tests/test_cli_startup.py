"""The CLI imports what a command line needs (issue 25 item 5): ``--version`` loads no command module and
no library stage; ``catalog ...`` loads no CRS module; ``from groundtrace.cli import app`` loads them all.
Checked by the modules a fresh interpreter has imported (never by timing)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = (
    "import io, contextlib, json, sys\n"
    "from groundtrace.cli import main\n"
    "out = io.StringIO()\n"
    "try:\n"
    "    with contextlib.redirect_stdout(out):\n"
    "        main(json.loads(sys.argv[1]))\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(json.dumps({'out': out.getvalue(), 'modules': sorted(sys.modules)}))\n"
)


def _run(args: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_version_loads_no_command_and_no_library_stage() -> None:
    got = _run(["--version"])
    assert got["out"].startswith("groundtrace ")
    loaded = [m for m in got["modules"] if m.startswith("groundtrace.")]
    assert not [m for m in loaded if m.endswith("_cmd")], loaded
    assert not [m for m in loaded if m.split(".")[1] in ("crs", "catalog")], loaded


def test_a_catalog_command_loads_no_crs_module() -> None:
    got = _run(["catalog", "enrich", "--help"])
    assert "--runner" in got["out"]
    assert "groundtrace.cli.catalog_enrich_cmd" in got["modules"]
    assert not [m for m in got["modules"] if m.startswith(("groundtrace.crs", "groundtrace.cli.crs_"))]


def test_the_app_attribute_has_every_command() -> None:
    code = (
        "import json, sys\n"
        "from groundtrace.cli import app\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.endswith('_cmd'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "groundtrace.cli.crs_eval_cmd" in loaded and "groundtrace.cli.catalog_enrich_cmd" in loaded


HEAVY = ("pint", "numpy", "scipy", "sklearn", "sqlalchemy", "rapidfuzz")


def test_catalog_enrich_help_imports_no_library_stage() -> None:
    """Issue 25 item 5: the help lists registry names from a static table (cli/catalog_names.py), so it
    imports no catalog module and none of the heavy libraries the stages need."""
    got = _run(["catalog", "enrich", "--help"])
    assert "--runner" in got["out"] and "--extractor" in got["out"] and "learned, llm, offline" in got["out"]
    loaded = got["modules"]
    assert not [m for m in loaded if m.startswith("groundtrace.catalog")], loaded
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]


def test_catalog_import_help_imports_no_importer() -> None:
    got = _run(["catalog", "import", "--help"])
    assert "wdc-pave" in got["out"]
    assert not [m for m in got["modules"] if m.startswith("groundtrace.catalog")]
