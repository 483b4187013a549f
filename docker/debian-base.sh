#!/usr/bin/env bash
# Make a base image with Python 3.11 from Debian's packages alone, for machines that cannot
# pull python:3.11-slim from a registry (the container test's): debootstrap a minimal
# bookworm with python3 and python3-venv, then `docker import` it. Needs root, debootstrap
# and a Debian mirror; about a minute.
# Usage: docker/debian-base.sh [TAG]   (default: mediabot-base:bookworm)
set -euo pipefail
tag=${1:-mediabot-base:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$root" "$mirror" >/dev/null
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import --change 'CMD ["python3"]' - "$tag" >/dev/null
echo "$tag"
