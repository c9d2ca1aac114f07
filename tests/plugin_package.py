"""A tiny third-party package, installed for one test: a module plus a ``*.dist-info`` folder whose
``entry_points.txt`` declares it in the ``groundtrace.plugins`` group, put on ``sys.path``.

That is all ``importlib.metadata`` needs to see an installed distribution, so the registries load the
plug-in exactly as they would load one installed with pip.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from groundtrace.core import registry as registry_module
from groundtrace.core.registry import Registry


@contextmanager
def plugin_package(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    source: str,
    registries: list[Registry],
) -> Iterator[Path]:
    """Install package ``name`` (module text ``source``, which must define ``register()``) under ``root``.

    Plug-ins are loaded again on the next registry lookup; on exit the ``registries`` get back the
    entries they had, the module is forgotten and ``sys.path`` is restored.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    dist = root / f"{name}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        f"[groundtrace.plugins]\n{name} = {name}:register\n", encoding="utf-8"
    )
    for reg in registries:
        monkeypatch.setattr(reg, "_entries", dict(reg._entries))
        monkeypatch.setattr(reg, "_alias_to_name", dict(reg._alias_to_name))
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(registry_module, "_PLUGINS_LOADED", False)
    try:
        yield root
    finally:
        sys.modules.pop(name, None)
