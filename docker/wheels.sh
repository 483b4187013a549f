#!/usr/bin/env bash
# Fill a folder of wheels for `docker build --build-arg WHEELS=wheels .` on a machine that
# cannot reach the package index: every dependency pyproject.toml lists, and setuptools to
# build mediabot itself (whose code is always the checkout's, never a wheel from here). Run
# it where the index answers and Docker runs, then carry the folder over. The wheels must
# suit the image's Python (3.11) and architecture, so they are built in the base image.
# Usage: docker/wheels.sh [DIR]     (default: ./wheels; BASE=... for another base image)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-wheels}
mkdir -p "$dir"
docker run --rm --network host --user "$(id -u):$(id -g)" -e HOME=/tmp -w /tmp \
    -v "$PWD/pyproject.toml:/tmp/pyproject.toml:ro" -v "$(realpath "$dir"):/wheels" \
    "${BASE:-python:3.11-slim}" sh -euc '
        python3 -c "import tomllib; print(*tomllib.load(open(\"pyproject.toml\", \"rb\"))[\"project\"][\"dependencies\"], sep=\"\n\")" > requirements.txt
        python3 -m venv pip
        pip/bin/pip wheel --quiet --disable-pip-version-check --wheel-dir /wheels \
            --requirement requirements.txt "setuptools>=77"'
echo "$dir: $(ls "$dir" | wc -l) wheels"
