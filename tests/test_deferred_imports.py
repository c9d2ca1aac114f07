"""Issue 25 item 3: an import inside a function (outside ``cli/``, whose commands import their libraries
when they run) is there only to defer a heavy or optional dependency, and says so.

Every ``import`` / ``from ... import`` statement nested in a function body of ``src/groundtrace`` must
carry a comment on its first line, its last line, or the line just above the import block it belongs to
(``# deferred: scikit-learn is heavy ...``). Any other import belongs at the top of the module, where the
layering and no-cycles checks of ``tests/test_layering.py`` see it plainly.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "groundtrace"


def _is_import_line(line: str) -> bool:
    s = line.strip()
    return s.startswith(("from ", "import ", ")")) or (s.endswith(",") and not s.startswith("#"))


_PRAGMA = re.compile(r"^(?:type:|noqa|fmt:|pragma:|pyright:)", re.IGNORECASE)


def _reason(line: str) -> bool:
    """Whether ``line`` carries a comment that says something (not only a ``type: ignore`` / ``noqa``
    pragma)."""
    if "#" not in line:
        return False
    parts = [p.strip() for p in line.split("#")[1:]]
    return any(p and not _PRAGMA.match(p) for p in parts)


def unexplained_imports(root: Path) -> list[str]:
    """``"path:line: module"`` of each function-level import under ``root`` (outside ``cli/``) without a
    reason comment (module docstring)."""
    out: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] == "cli":
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                first, last = lines[node.lineno - 1], lines[(node.end_lineno or node.lineno) - 1]
                k = node.lineno - 2
                while k >= 0 and _is_import_line(lines[k]):
                    k -= 1  # the comment may head a block of imports
                above = lines[k].strip() if k >= 0 else ""
                if _reason(first) or _reason(last) or (above.startswith("#") and _reason(above)):
                    continue
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                out.add(f"{rel}:{node.lineno}: {'.' * getattr(node, 'level', 0)}{module or ''}")
    return sorted(out)


def test_function_level_imports_say_why_they_are_deferred() -> None:
    missing = unexplained_imports(SRC)
    assert not missing, (
        f"{len(missing)} import(s) inside functions without a reason comment: move each to the top of its "
        "module, or keep it deferred (a heavy or optional dependency) with a '# deferred: ...' comment:\n"
        + "\n".join(missing[:40])
    )


def test_the_check_sees_an_unexplained_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "a.py").write_text(
        "def f():\n"
        "    import json\n"
        "    return json\n\n"
        "def g():\n"
        "    # deferred: numpy is heavy\n"
        "    import numpy\n"
        "    from os import (\n"
        "        path,\n"
        "    )\n"
        "    return numpy, path\n\n"
        "def h():\n"
        "    import sklearn  # deferred: optional extra\n"
        "    import yaml  # type: ignore[import-untyped]\n"
        "    return sklearn, yaml\n",
        encoding="utf-8",
    )
    (pkg / "cli" / "cmd.py").write_text("def run():\n    import json\n    return json\n", encoding="utf-8")
    assert unexplained_imports(pkg) == ["a.py:15: yaml", "a.py:2: json"]
