#!/usr/bin/env bash
# Set up (a venv in .venv with mediabot and its test extra) and run the whole test suite.
# Extra arguments go to pytest, e.g. scripts/test.sh -k history
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
exec .venv/bin/python -m pytest "$@"
