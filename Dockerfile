# mediabot's image: one venv on a Python 3.11 Debian base, the database on the volume /data,
# run as the household's user (PUID/PGID, 1000:1000 by default, as linuxserver.io's images).
#
#   docker build -t mediabot .                            # pip installs from the package index
#   docker build -t mediabot --build-arg WHEELS=wheels .  # offline: ./wheels, docker/wheels.sh
#
#   docker run -d --name mediabot --restart unless-stopped -e PUID=1000 -e PGID=1000 -e TZ=America/New_York -v "$PWD/mediabot/config:/config:ro" -v "$PWD/mediabot/data:/data" -p 127.0.0.1:8080:8080 mediabot
#
# Configure with MEDIABOT_* variables, a config file at /config/config.toml (optional: with
# none there the variables alone are the config; the image's example is
# /usr/share/mediabot/config.example.toml) and secrets as files (MEDIABOT_LLM_API_KEY_FILE=
# /config/secrets/llm_api_key, ...). See docker/compose.example.yaml.
#
# BASE is any Debian-based image with Python 3.11, its venv module and util-linux's setpriv:
# python:3.11-slim (the default) or, where no registry answers, the one docker/debian-base.sh
# makes under that name. No step depends on the architecture: the same file builds
# linux/amd64 and linux/arm64 (.github/workflows/image.yml).
ARG BASE=python:3.11-slim

# mediabot's dependencies as pyproject.toml lists them, and nothing else: the layer that
# installs them is reused while this list is unchanged, whatever else changes.
FROM ${BASE} AS requirements
COPY pyproject.toml /src/
RUN python3 -c 'import tomllib; print(*tomllib.load(open("/src/pyproject.toml", "rb"))["project"]["dependencies"], sep="\n")' > /requirements.txt

FROM ${BASE} AS dependencies
# A folder of wheels in the build context (docker/wheels.sh) for a machine that cannot reach
# the package index; empty, the default: pip installs from the index.
ARG WHEELS=
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \
    PIP_PYTHON=/opt/mediabot/bin/python
# pip runs from its own venv and installs into mediabot's, which never holds pip or
# setuptools.
RUN python3 -m venv /opt/pip \
 && python3 -m venv --without-pip /opt/mediabot
# COPY needs a source that exists: without WHEELS it copies this small script, unused.
COPY ${WHEELS:-docker/wheels.sh} /wheels/
COPY --from=requirements /requirements.txt /wheels/requirements.txt
# The dependencies, in their own layer. phonenumbers' geocoding, carrier and time-zone data
# (mediabot only parses and formats numbers) and type stubs are left out. mediabot itself
# goes to /opt/mediabot/app (below), which the venv's Python finds through a .pth file.
RUN if [ -n "$WHEELS" ]; then export PIP_NO_INDEX=1 PIP_FIND_LINKS=/wheels; fi \
 && /opt/pip/bin/pip install --quiet --requirement /wheels/requirements.txt \
 && site=$(/opt/mediabot/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))') \
 && rm -rf "$site"/phonenumbers/geodata "$site"/phonenumbers/carrierdata \
           "$site"/phonenumbers/tzdata \
 && find /opt/mediabot -name '*.pyi' -delete \
 && echo /opt/mediabot/app > "$site"/mediabot-app.pth

# mediabot itself: the only layer, here and in the image, that a change to its code rebuilds.
FROM dependencies AS app
ARG WHEELS=
COPY pyproject.toml README.md LICENSE /src/
COPY mediabot/ /src/mediabot/
RUN if [ -n "$WHEELS" ]; then export PIP_NO_INDEX=1 PIP_FIND_LINKS=/wheels; fi \
 && /opt/pip/bin/pip install --quiet --no-deps --target /opt/mediabot/app /src \
 && /opt/mediabot/bin/python -c 'import mediabot.cli, mediabot.daemon'

FROM ${BASE}
# uid 1000, as linuxserver.io's PUID/PGID default, so a bind-mounted /data is easy to own.
# The base's own pip and setuptools go too: nothing is installed into this image later.
RUN command -v setpriv >/dev/null \
 || { echo "the base image has no setpriv (util-linux)" >&2; exit 1; } \
 && useradd --uid 1000 --user-group --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin mediabot \
 && install -d -o mediabot -g mediabot -m 0750 /data \
 && install -d -m 0755 /config \
 && { python3 -m pip uninstall --quiet --yes --root-user-action=ignore pip setuptools wheel \
        2>/dev/null || true; } \
 && rm -rf /usr/share/python-wheels
# In the order they change, least often first: a change to mediabot's code copies 3 MB.
COPY --from=dependencies /opt/mediabot /opt/mediabot
COPY docker/entrypoint.sh /usr/local/bin/docker-entrypoint
COPY docker/mediabot.sh /usr/local/bin/mediabot
COPY config.example.toml /usr/share/mediabot/
COPY --from=app /opt/mediabot/app /opt/mediabot/app
# Inside a container mediabot must listen on every interface: Sonarr/Radarr in their own
# containers (and the published port) cannot reach 127.0.0.1, the default outside one.
# The drain on SIGTERM fits in `docker stop`'s 10 s (7 s for the turns, up to 2 more for the
# download notices); a longer one needs MEDIABOT_SERVER_DRAIN_SECONDS and a longer
# `stop_grace_period` (compose) or `docker stop -t`.
ENV PYTHONUNBUFFERED=1 \
    MEDIABOT_CONFIG=/config/config.toml \
    MEDIABOT_SERVER_HOST=0.0.0.0 \
    MEDIABOT_DATABASE_PATH=/data/mediabot.db \
    MEDIABOT_SERVER_DRAIN_SECONDS=7
VOLUME /data
WORKDIR /data
EXPOSE 8080
STOPSIGNAL SIGTERM
# /healthz: 200 while the database takes writes and the jobs run. The port is the one
# MEDIABOT_SERVER_PORT sets (change the port that way in a container, not in the file).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('MEDIABOT_SERVER_PORT', '8080'), timeout=4)"]
# Starts as root only to run the command as PUID:PGID (or as `docker run --user`), after
# checking that /data is writable (docker/entrypoint.sh).
ENTRYPOINT ["docker-entrypoint"]
CMD ["mediabot", "serve"]
