"""Hugging Face ``datasets`` loads our files at its oldest and newest releases usable on Python 3.11.

Each release of scripts/hf_datasets_versions.txt is installed by scripts/install_hf_datasets.sh into its own
folder (``pip --target``: the venv is untouched); the loading runs in a subprocess on that folder alone
(``python -I -S``: no site-packages). A release not installed is skipped with the command to install it —
and fails under ``CI=true``. What is loaded: a built dataset and its public-release export, through
``load_dataset("json", data_files=...)`` and, from 2.14 on (the first release reading a card's
``configs:``), through the card's configs. The v1 fixture is loaded too, as the control the format change
exists for.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO_ROOT

VERSIONS_FILE = REPO_ROOT / "scripts" / "hf_datasets_versions.txt"
ROOT = Path(
    os.environ.get("GROUNDTRACE_HF_DATASETS_DIR")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "groundtrace" / "hf-datasets"
)
V1 = FIXTURES / "crs_io" / "v1"


def versions() -> list[tuple[str, str]]:
    """``(version, pins)`` of scripts/hf_datasets_versions.txt."""
    out = []
    for line in VERSIONS_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            version, _, pins = line.partition(" ")
            out.append((version, pins.strip()))
    return out


PROBE = r"""
import json, os, sys, tempfile
os.environ.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=tempfile.mkdtemp())
import datasets
from datasets import load_dataset
built, release, v1, with_configs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
cache = tempfile.mkdtemp()
out = {"version": datasets.__version__}

def rows(d):
    return {k: v.num_rows for k, v in d.items()}

def split_files(folder, pattern):
    files = {s: os.path.join(folder, pattern.format(s)) for s in ("train", "validation", "test")}
    return {s: p for s, p in files.items() if os.path.exists(p)}

ds = load_dataset("json", data_files=split_files(built, "{}.jsonl"), cache_dir=cache)
first = ds["train"][0]
out["json"] = rows(ds)
values = [c["value"] for t in first["turns"] for c in t["constraints_added"]]
out["constraint_values"] = sorted({type(v).__name__ for v in values})
out["first_ref"] = first["review_refs"][0]
out["columns"] = sorted(ds["train"].column_names)
rel = load_dataset("json", data_files=split_files(release, "data/{}.jsonl.gz"), cache_dir=cache)
out["release_json"] = rows(rel)
out["release_placeholder"] = any("[Q:" in t["text"] for t in rel["train"][0]["turns"])
try:
    old = load_dataset("json", data_files={"train": os.path.join(v1, "train.jsonl")}, cache_dir=cache)
    refs = old["train"].features["review_refs"]
    out["v1"] = "review_refs has one field per tag: " + ",".join(sorted(refs)[:3])
except Exception as exc:
    out["v1"] = "error: " + type(exc).__name__
if with_configs:
    out["card"] = rows(load_dataset(built, cache_dir=cache))
    kb = load_dataset(built, "knowledge_base", cache_dir=cache)
    out["card_kb"] = rows(kb)
    out["card_kb_attribute"] = kb["pois"][0]["attributes"][0]
    out["card_reviews"] = rows(load_dataset(built, "reviews", cache_dir=cache))
    out["release_card"] = rows(load_dataset(release, cache_dir=cache))
    out["release_kb"] = rows(load_dataset(release, "knowledge_base", cache_dir=cache))
    index = load_dataset(release, "review_index", cache_dir=cache)
    out["release_index"] = rows(index)
    out["release_index_columns"] = sorted(index["review_index"].column_names)
print("RESULT " + json.dumps(out))
"""


def _installed(version: str) -> Path:
    folder = ROOT / version
    if not (folder / ".installed").is_file():
        message = (
            f"datasets {version} is not installed in {folder}: run `bash scripts/install_hf_datasets.sh`"
        )
        if os.environ.get("CI", "").lower() in {"1", "true"}:
            pytest.fail(message)
        pytest.skip(message)
    return folder


def _counts(folder: Path, names: list[str]) -> dict[str, int]:
    out = {}
    for name in names:
        path = folder / name
        if path.is_file():
            with path.open("rb") as handle:
                out[name.split("/")[-1].split(".")[0]] = sum(1 for line in handle if line.strip())
    return out


@pytest.mark.slow
@pytest.mark.parametrize("version", [v for v, _ in versions()])
def test_datasets_loads_the_built_dataset_and_the_release(
    version: str, demo_release: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    folder = _installed(version)
    # copies: old releases leave *.lock files next to the data files they read
    built = Path(shutil.copytree(demo_release[0], tmp_path / "built"))
    release = Path(shutil.copytree(demo_release[1], tmp_path / "release"))
    with_configs = tuple(int(x) for x in version.split(".")[:2]) >= (2, 14)
    code = f"import sys; sys.path.insert(0, {str(folder)!r}); exec({PROBE!r})"
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(built), str(release), str(V1), str(int(with_configs))],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    got = json.loads(lines[-1].removeprefix("RESULT "))
    print(version, got["v1"])  # shown with -s: what format v1 gave at this release
    assert got["version"] == version
    splits = _counts(built, ["train.jsonl", "validation.jsonl", "test.jsonl"])
    assert got["json"] == splits and sum(splits.values()) == 40
    assert got["constraint_values"] == ["str"]  # every constraint value is text (+ value_type)
    assert set(got["first_ref"]) == {"tag", "review_id", "poi_id"} and got["first_ref"]["tag"] == "R1"
    assert "review_refs" in got["columns"] and "legs" in got["columns"]
    assert got["release_json"] == splits and got["release_placeholder"] is True
    # the control: format v1 had a type change (3.x/4.x fail) or a column per tag (others)
    assert got["v1"].startswith("error:") or got["v1"].startswith("review_refs has one field per tag: R1")
    if with_configs:
        assert got["card"] == splits and got["release_card"] == splits
        assert got["card_kb"] == got["release_kb"] == {"pois": 48}
        assert set(got["card_kb_attribute"]) == {"key", "value", "value_type"}
        assert got["card_reviews"] == {"reviews": 240} and got["release_index"] == {"review_index": 240}
        assert "text" not in got["release_index_columns"]


def test_the_versions_file_names_the_oldest_and_newest_releases() -> None:
    """Kept in sync with the registry by hand: 1.16.1 is the oldest release that imports on Python 3.11
    (1.16.0 and older fail in datasets.table on 3.11), 2.14.0 the first that reads the card's configs."""
    names = [v for v, _ in versions()]
    assert names[0] == "1.16.1" and "2.14.0" in names
    assert all("numpy<2" in pins for v, pins in versions() if v.startswith(("1.", "2.")))
