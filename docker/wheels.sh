#!/usr/bin/env bash
# Fill the folder the image installs from, so `docker build` needs no network: mediabot's
# wheel built from this checkout and a wheel of every dependency, for this machine's Python,
# which must be the image's (3.11) on the image's architecture. The dependencies go to
# DIR/deps and mediabot's own to DIR/mediabot, so a rebuild after a code change reuses the
# image's layer of installed dependencies.
# Usage: docker/wheels.sh [DIR]     (default: ./wheels, the folder the Dockerfile copies)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-wheels}
python=${PYTHON:-python3}
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ "$version" != "3.11" ]; then
    echo "docker/wheels.sh: $python is Python $version; the image runs 3.11 and needs wheels" \
         "built for it: PYTHON=python3.11 docker/wheels.sh, or build them in the base image:" \
         "docker run --rm -v \"\$PWD:/src\" -w /src python:3.11-slim pip wheel -w wheels ." >&2
    exit 2
fi
rm -rf "$dir/mediabot"
mkdir -p "$dir/deps" "$dir/mediabot"
PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONWARNINGS=ignore \
    "$python" -m pip wheel --quiet --wheel-dir "$dir/deps" .
mv "$dir/deps/"mediabot-*.whl "$dir/mediabot/"
