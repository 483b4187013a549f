#!/usr/bin/env bash
# Set up (a venv in .venv with mediabot and its test extra; skipped when nothing changed),
# lint and type-check (ruff, mypy: a few seconds, configured in pyproject.toml; any finding
# fails the run before a test starts), then run the whole test suite.
# Extra arguments go to pytest, e.g. scripts/test.sh -k history
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
ensure_venv "[test]"
.venv/bin/python -m ruff check --quiet .
.venv/bin/python -m mypy
exec .venv/bin/python -m pytest "$@"
