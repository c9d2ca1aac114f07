#!/usr/bin/env bash
# Install each Hugging Face `datasets` release of scripts/hf_datasets_versions.txt into its own folder
# (pip --target, never into the venv) for tests/crs/dataset/test_hf_datasets.py. A folder already installed
# with the same pins is kept, so only the first run on a machine downloads (about 330 MB per release).
# Folder: $GROUNDTRACE_HF_DATASETS_DIR, default ~/.cache/groundtrace/hf-datasets/<version>.
set -euo pipefail
cd "$(dirname "$0")/.."
root="${GROUNDTRACE_HF_DATASETS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/groundtrace/hf-datasets}"
while read -r version pins; do
  case "$version" in '' | '#'*) continue ;; esac
  dir="$root/$version"
  spec="datasets==$version $pins"
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$spec" ]; then
    continue
  fi
  rm -rf "$dir"
  # shellcheck disable=SC2086  # the pins are separate words
  if python -m pip install -q --disable-pip-version-check --target "$dir" --only-binary=:all: \
    "datasets==$version" $pins >/dev/null 2>&1; then
    echo "$spec" >"$dir/.installed"
  else
    echo "warning: could not install $spec into $dir; tests/crs/dataset/test_hf_datasets.py fails in CI" >&2
  fi
done <scripts/hf_datasets_versions.txt
