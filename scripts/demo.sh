#!/usr/bin/env bash
# Install groundtrace (core, offline) and run the whole main job end to end on the embedded demo data.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
python -m pip install -q -e .
groundtrace demo --out "${1:-groundtrace-demo}"
