"""Architecture rule: core imports neither crs nor catalog; crs and catalog never import each other.

Each package's modules are imported in a fresh interpreter and ``sys.modules`` is inspected.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest

import groundtrace

RULES = {
    "groundtrace.core": ("groundtrace.crs", "groundtrace.catalog"),
    "groundtrace.crs": ("groundtrace.catalog",),
    "groundtrace.catalog": ("groundtrace.crs",),
}


def _modules(package: str) -> list[str]:
    pkg = __import__(package, fromlist=["__path__"])
    return [package] + [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=package + ".")]


@pytest.mark.parametrize("package", sorted(RULES))
def test_package_does_not_import_forbidden(package: str) -> None:
    code = (
        "import importlib, json, sys\n"
        f"mods = {json.dumps(_modules(package))}\n"
        "failed = {}\n"
        "for m in mods:\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except ImportError as exc:\n"
        "        failed[m] = str(exc)\n"
        "print(json.dumps({'loaded': sorted(sys.modules), 'failed': failed}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    leaked = [m for m in report["loaded"] for bad in RULES[package] if m == bad or m.startswith(bad + ".")]
    assert not leaked, f"{package} pulled in {sorted(set(leaked))}"


def test_rules_cover_the_three_packages() -> None:
    subpackages = {m.name for m in pkgutil.iter_modules(groundtrace.__path__) if m.ispkg}
    assert {"core", "crs", "catalog"} <= subpackages
