# Sourced by demo.sh / test.sh: use the active virtualenv, or create and activate ./.venv.
set -euo pipefail
if [ -z "${VIRTUAL_ENV:-}" ]; then
  PY="${PYTHON:-python3.11}"
  command -v "$PY" >/dev/null 2>&1 || PY=python3
  [ -d .venv ] || "$PY" -m venv .venv
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi
python -m pip install -q --upgrade pip >/dev/null
