#!/usr/bin/env bash
# Set up (a venv in .venv with mediabot and its test extra; skipped when nothing changed)
# and run the whole test suite.
# Extra arguments go to pytest, e.g. scripts/test.sh -k history
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
ensure_venv "[test]"
exec .venv/bin/python -m pytest "$@"
