"""Architecture rules.

1. core imports neither crs nor catalog; crs and catalog never import each other: each package's modules
   are imported in a fresh interpreter and ``sys.modules`` is inspected.
2. Stage order (:data:`STAGES`): a module in a stage folder imports only its own folder, folders of earlier
   stages and its package's foundations; a foundation imports only foundations. Checked statically: every
   ``import`` of every module is parsed with :mod:`ast` — function-level and ``TYPE_CHECKING`` imports
   included — so an import hidden inside a function cannot break the order unseen. docs/architecture.md
   explains the order.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

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


# -- 2. stage order ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layers:
    """The stage folders of one package in flow order (folders in one tuple share a rank and may not import
    each other), its foundations (top-level modules/folders any module may import) and its orchestration
    modules and folders (they may import anything in the package; stages and foundations may not import
    them, nor the package's public API ``__init__``)."""

    stages: tuple[tuple[str, ...], ...]
    foundations: frozenset[str]
    orchestration: frozenset[str] = frozenset()


STAGES: dict[str, Layers] = {
    "groundtrace.core": Layers(
        stages=(("files",), ("evidence",), ("nli",), ("llm",)),
        foundations=frozenset({"registry", "data"}),
    ),
    "groundtrace.crs": Layers(
        stages=(
            ("kb",),
            ("dataset",),
            ("build",),
            ("systems",),
            ("metrics",),
            ("evaluation",),
            ("report",),
            ("simulate",),
        ),
        foundations=frozenset({"schema", "data"}),
    ),
    "groundtrace.catalog": Layers(
        stages=(("importers", "sources"), ("scout",), ("judge",), ("evaluation",)),
        foundations=frozenset({"model", "templates", "identity", "data"}),
        orchestration=frozenset(
            {"policy", "pipeline", "enrichment", "run_meta", "demo_catalog", "store", "web"}
        ),
    ),
}
SRC = Path(groundtrace.__file__).resolve().parents[1]


def _module_name(root: Path, file: Path) -> str:
    parts = list(file.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exists(root: Path, module: str) -> bool:
    path = root.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(root: Path, file: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in ``file`` (anywhere in it), relative imports resolved;
    ``from pkg import name`` counts as ``pkg.name`` when that is a module."""
    module = _module_name(root, file)
    package = module if file.name == "__init__.py" else module.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"), str(file))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append((node.lineno, sub if _exists(root, sub) else base))
    return list(dict.fromkeys(out))


def _place(layers: Layers, package: str, module: str) -> tuple[str, int | None] | None:
    """``(part, stage rank or None)`` of ``module`` inside ``package``: the top-level part it sits in;
    None when the module is outside the package."""
    if module != package and not module.startswith(package + "."):
        return None
    part = module[len(package) + 1 :].split(".")[0] if module != package else ""
    rank = next((i for i, folders in enumerate(layers.stages) if part in folders), None)
    return part, rank


def stage_violations(root: Path, stages: dict[str, Layers] = STAGES) -> list[str]:
    """Every import that breaks the stage order, as ``file:line: module imports target (why)``."""
    problems: list[str] = []
    for package, layers in stages.items():
        folder = root.joinpath(*package.split("."))
        for file in sorted(folder.rglob("*.py")):
            module = _module_name(root, file)
            here = _place(layers, package, module)
            assert here is not None
            part, rank = here
            if rank is None and part not in layers.foundations:
                continue  # orchestration (or the package's public API): may import anything
            for line, target in imported_modules(root, file):
                there = _place(layers, package, target)
                if there is None or there[0] == part or there[0] in layers.foundations:
                    continue
                t_part, t_rank = there
                if rank is None:
                    why = "a foundation imports only foundations"
                elif t_rank is None:
                    why = f"{t_part or package + ' (public API)'} is not a stage or foundation"
                elif t_rank >= rank:
                    why = "a stage imports only earlier stages" if t_rank > rank else "same-rank stages"
                else:
                    continue
                where = file.relative_to(root)
                problems.append(f"{where}:{line}: {module} imports {target} ({why})")
    return problems


def test_stage_folders_import_only_earlier_stages_and_foundations() -> None:
    assert stage_violations(SRC) == []


def test_every_module_and_folder_has_a_place() -> None:
    """A new top-level module or folder must be placed in :data:`STAGES` to be checked at all."""
    for package, layers in STAGES.items():
        folder = SRC.joinpath(*package.split("."))
        placed = {f for stage in layers.stages for f in stage} | layers.foundations | layers.orchestration
        parts = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
        parts |= {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"}
        assert parts - placed == set(), f"{package}: place {sorted(parts - placed)} in STAGES"


def _write(root: Path, module: str, text: str = "") -> None:
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    for parent in [path.parent, *path.parent.parents]:
        if parent == root:
            break
        (parent / "__init__.py").touch()
    path.write_text(text, encoding="utf-8")


def test_the_checker_catches_hidden_and_relative_violations(tmp_path: Path) -> None:
    layers = {"pkg": Layers(stages=(("kb",), ("dataset",), ("build",)), foundations=frozenset({"schema"}))}
    _write(tmp_path, "pkg.schema")
    _write(tmp_path, "pkg.pipeline")  # orchestration
    _write(tmp_path, "pkg.kb.load", "from pkg import schema\n")
    _write(tmp_path, "pkg.build.qc", "from pkg.dataset import rules\nfrom ..kb import load\n")
    _write(tmp_path, "pkg.dataset.rules", "import pkg.kb.load\n")
    _write(tmp_path, "pkg.pipeline2", "import pkg.build.qc\n")
    assert stage_violations(tmp_path, layers) == []
    # a later stage imported inside a function, a relative import of a later stage, orchestration from a
    # stage, and a foundation importing a stage
    _write(tmp_path, "pkg.dataset.validate", "def f():\n    from pkg.build.qc import check\n")
    _write(tmp_path, "pkg.kb.select", "from ..dataset import rules\nfrom pkg import pipeline\n")
    _write(tmp_path, "pkg.schema", "import pkg.kb.load\n")
    found = stage_violations(tmp_path, layers)
    assert found == [
        (
            "pkg/dataset/validate.py:2: pkg.dataset.validate imports pkg.build.qc "
            "(a stage imports only earlier stages)"
        ),
        "pkg/kb/select.py:1: pkg.kb.select imports pkg.dataset.rules (a stage imports only earlier stages)",
        "pkg/kb/select.py:2: pkg.kb.select imports pkg.pipeline (pipeline is not a stage or foundation)",
        "pkg/schema.py:1: pkg.schema imports pkg.kb.load (a foundation imports only foundations)",
    ]


@pytest.mark.parametrize("name", ["core", "crs", "catalog"])
def test_subpackages_are_reachable_as_attributes_of_a_plain_import(name: str) -> None:
    """``import groundtrace; groundtrace.crs`` works (lazily: a plain import loads none of them)."""
    code = (
        "import sys, groundtrace\n"
        f"assert 'groundtrace.{name}' not in sys.modules, 'imported eagerly'\n"
        f"mod = groundtrace.{name}\n"
        f"assert mod is sys.modules['groundtrace.{name}']\n"
        f"assert '{name}' in dir(groundtrace)\n"
        "try:\n"
        "    groundtrace.no_such_thing\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- 3. systems know only the inputs contract, the KB and what they learn from a train split ---------------

#: What no module under ``crs/systems`` may import: the dataset builder (its persona archetypes, planner,
#: realisers, phrase banks and evidence lexicon), the simulator, the metrics and the evaluation harness.
SYSTEMS_FORBIDDEN = (
    "groundtrace.crs.build",
    "groundtrace.crs.simulate",
    "groundtrace.crs.metrics",
    "groundtrace.crs.evaluation",
)
#: The one exemption: the ``oracle`` (systems/reference.py) replays gold by definition and may quote by the
#: builder's evidence lexicon — only that, and only inside ``OracleSystem.respond``.
SYSTEMS_EXEMPT = {"groundtrace/crs/systems/reference.py": {"groundtrace.crs.build.evidence"}}
#: Builder data a system must not read by name.
SYSTEMS_FORBIDDEN_TEXT = ("personas.yaml", "bundled_personas", "phrase_bank", "phrasings.yaml")


def systems_violations(root: Path) -> list[str]:
    """Every forbidden import (static, anywhere in the file) or builder-data mention under
    ``groundtrace/crs/systems``, as ``file:line: what``."""
    problems: list[str] = []
    for file in sorted((root / "groundtrace" / "crs" / "systems").rglob("*.py")):
        where = file.relative_to(root).as_posix()
        allowed = SYSTEMS_EXEMPT.get(where, set())
        for line, target in imported_modules(root, file):
            bad = any(target == f or target.startswith(f + ".") for f in SYSTEMS_FORBIDDEN)
            if bad and target not in allowed:
                problems.append(f"{where}:{line}: imports {target}")
        for n, text in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            problems.extend(f"{where}:{n}: mentions {w}" for w in SYSTEMS_FORBIDDEN_TEXT if w in text)
    return problems


def test_systems_do_not_read_the_builder() -> None:
    assert systems_violations(SRC) == []


def test_the_systems_checker_catches_hidden_imports_and_data_names(tmp_path: Path) -> None:
    _write(tmp_path, "groundtrace.crs.systems.toolkit.ok", "from groundtrace.crs.schema import Constraint\n")
    _write(tmp_path, "groundtrace.crs.build.personas")
    _write(tmp_path, "groundtrace.crs.metrics.core")
    assert systems_violations(tmp_path) == []
    _write(
        tmp_path,
        "groundtrace.crs.systems.toolkit.state",
        "def f():\n    from groundtrace.crs.build.personas import bundled_personas\n",
    )
    _write(
        tmp_path,
        "groundtrace.crs.systems.llm.x",
        "from ...metrics import core\nPATH = 'crs/data/personas.yaml'\n",
    )
    _write(tmp_path, "groundtrace.crs.systems.reference", "from groundtrace.crs.build import personas\n")
    assert systems_violations(tmp_path) == [
        "groundtrace/crs/systems/llm/x.py:1: imports groundtrace.crs.metrics.core",
        "groundtrace/crs/systems/llm/x.py:2: mentions personas.yaml",
        "groundtrace/crs/systems/reference.py:1: imports groundtrace.crs.build.personas",
        "groundtrace/crs/systems/toolkit/state.py:2: imports groundtrace.crs.build.personas",
        "groundtrace/crs/systems/toolkit/state.py:2: mentions bundled_personas",
    ]


# -- 3. no import cycles, and the import contracts -------------------------------------------------


def import_cycles(package: str) -> list[list[str]]:
    """Every import cycle among the modules of ``package``: the strongly connected components with more
    than one module of its import graph (grimp, the graph library of import-linter; imports inside functions
    included, ``TYPE_CHECKING`` imports excluded as they never run), sorted."""
    import grimp
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    graph = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    modules = sorted(graph.modules)
    index = {m: i for i, m in enumerate(modules)}
    edges = [
        (index[m], index[t])
        for m in modules
        for t in graph.find_modules_directly_imported_by(m)
        if t in index
    ]
    rows, cols = zip(*edges, strict=True) if edges else ((), ())
    adjacency = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(modules), len(modules)))
    _n, labels = connected_components(adjacency, directed=True, connection="strong")
    groups: dict[int, list[str]] = {}
    for module, label in zip(modules, labels, strict=True):
        groups.setdefault(int(label), []).append(module)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def test_groundtrace_has_no_import_cycles() -> None:
    assert import_cycles("groundtrace") == []


def test_the_cycle_check_sees_a_cycle_hidden_in_a_function(tmp_path: Path, monkeypatch) -> None:
    _write(tmp_path, "cyclepkg.a", "from cyclepkg import b\n")
    _write(tmp_path, "cyclepkg.b", "def f():\n    from cyclepkg import c\n    return c\n")
    _write(tmp_path, "cyclepkg.c", "import cyclepkg.a\n")
    type_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import cyclepkg.e\n"
    _write(tmp_path, "cyclepkg.d", type_only)  # d -> e only for type checkers: no cycle
    _write(tmp_path, "cyclepkg.e", "import cyclepkg.d\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("cyclepkg") == [["cyclepkg.a", "cyclepkg.b", "cyclepkg.c"]]


def test_import_contracts_hold() -> None:
    """pyproject.toml's import-linter contracts (``lint-imports``, also run by scripts/test.sh)."""
    root = SRC.parent
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command as c; c()",
         str(root / "pyproject.toml")],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout
