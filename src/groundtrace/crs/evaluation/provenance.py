"""What a run was made with: ``run.json["provenance"]`` (groundtrace, Python, key packages, git, machine).

:func:`provenance` returns, computed once per process:

* ``groundtrace``: the installed version (``importlib.metadata``; ``0.0.0+local`` from a bare source tree);
* ``python``: version, implementation;
* ``packages``: the installed version of each of :data:`KEY_PACKAGES` that is installed (read from the
  package metadata, nothing is imported);
* ``git``: ``{"commit": <40 hex>, "dirty": bool}`` of the checkout the running ``groundtrace`` source
  lives in (``git rev-parse HEAD`` and ``git status --porcelain --untracked-files=no`` in the package's
  folder, 5 s time-out each), ``None`` when it is not a git checkout or git is absent — or when the
  package's folder holds no file tracked by that checkout (a ``pip install`` into a git-ignored
  ``.venv`` inside the user's own repository, where ``rev-parse`` would give the user's commit);
* ``machine``: ``platform.platform()``, ``platform.machine()``, ``os.cpu_count()``.

The command line is not recorded (an HTTP system's URL or a ``--system-arg`` may carry a secret); the host
name is not recorded either.
"""

from __future__ import annotations

import copy
import os
import platform
import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from groundtrace import __version__

#: packages whose versions change numbers or speed (scoring, statistics, models, clients)
KEY_PACKAGES = (
    "numpy",
    "scipy",
    "pydantic",
    "rapidfuzz",
    "scikit-learn",
    "vaderSentiment",
    "jinja2",
    "torch",
    "transformers",
    "sentence-transformers",
    "onnxruntime",
    "openai",
    "httpx",
    "mlflow-skinny",
    "mlflow",
)


def package_versions(names: tuple[str, ...] = KEY_PACKAGES) -> dict[str, str]:
    """``{name: version}`` of the installed ones among ``names`` (absent packages are left out)."""
    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(folder: Path | None = None) -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` of the git checkout holding ``folder`` (default: this package's source);
    ``None`` outside a checkout or without git."""
    folder = folder or Path(__file__).resolve().parent
    commit = _git(folder, "rev-parse", "HEAD")
    if commit is None or len(commit.strip()) != 40:
        return None
    if not (_git(folder, "ls-files", "--", ".") or "").strip():
        return None  # an installed copy inside someone else's checkout (a git-ignored .venv): not its commit
    status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "dirty": None if status is None else bool(status.strip())}


@cache
def _provenance() -> dict[str, Any]:
    return {
        "groundtrace": __version__,
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation()},
        "packages": package_versions(),
        "git": git_state(),
        "machine": {
            "platform": platform.platform(),
            "machine": platform.machine(),
            "cpu_count": os.cpu_count(),
        },
    }


def provenance() -> dict[str, Any]:
    """The provenance record (module docstring); a fresh copy of the once-computed value."""
    return copy.deepcopy(_provenance())
