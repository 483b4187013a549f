#!/usr/bin/env bash
# Make a base image with Python 3.11 from Debian's packages alone, for machines that cannot
# pull python:3.11-slim from a registry (the container test's): debootstrap a minimal
# bookworm with python3 and python3-venv, then `docker import` it, by default under the
# name the Dockerfile's default base has, so a plain `docker build .` uses it. Needs root,
# debootstrap and a Debian mirror; about two minutes.
# A network whose proxy re-signs TLS: the CAs this host trusts in
# /usr/local/share/ca-certificates are trusted inside too, so pip in `docker build` reaches
# the package index as it does here.
# Usage: docker/debian-base.sh [TAG]   (default: python:3.11-slim)
set -euo pipefail
tag=${1:-python:3.11-slim}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$root" "$mirror" >/dev/null
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null 2>&1
fi
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import --change 'CMD ["python3"]' - "$tag" >/dev/null
echo "$tag"
