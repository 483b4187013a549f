# mediabot's image: small (the Python base and one venv), non-root, its database on /data.
#
#   docker/wheels.sh                  # ./wheels: mediabot's wheel and its dependencies'
#   docker build -t mediabot .        # no network needed: pip installs from ./wheels only
#
# BASE is any Debian-based image with Python 3.11 and its venv module (python:3.11-slim, the
# default, is what a household pulls; tests build on a debootstrapped Debian, see
# docker/debian-base.sh). The wheels must be built for the same Python and architecture.
#
# Configure with a config file mounted at /config/config.toml and MEDIABOT_* variables;
# secrets as files (MEDIABOT_LLM_API_KEY_FILE=/run/secrets/llm_api_key, ...). See README,
# "Running it in Docker", and docker/compose.example.yaml.
ARG BASE=python:3.11-slim

FROM ${BASE} AS install
ENV PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# The dependencies first, in their own layer: a change to mediabot alone reuses it.
COPY wheels/deps/ /wheels/deps/
RUN python3 -m venv /opt/mediabot \
 && /opt/mediabot/bin/pip install --quiet /wheels/deps/*.whl
COPY wheels/mediabot/ /wheels/mediabot/
RUN /opt/mediabot/bin/pip install --quiet --find-links /wheels/deps /wheels/mediabot/*.whl \
 && /opt/mediabot/bin/pip uninstall --yes --quiet pip

FROM ${BASE}
# uid 1000, as linuxserver.io's PUID/PGID default, so a bind-mounted /data is easy to own
RUN useradd --uid 1000 --user-group --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin mediabot \
 && install -d -o mediabot -g mediabot -m 0750 /data \
 && install -d -m 0755 /config
COPY --from=install /opt/mediabot /opt/mediabot
# Inside a container mediabot must listen on every interface: Sonarr/Radarr in their own
# containers (and the published port) cannot reach 127.0.0.1, the default outside one.
ENV PATH=/opt/mediabot/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    MEDIABOT_CONFIG=/config/config.toml \
    MEDIABOT_SERVER_HOST=0.0.0.0 \
    MEDIABOT_DATABASE_PATH=/data/mediabot.db
VOLUME /data
WORKDIR /data
USER mediabot
EXPOSE 8080
# SIGTERM drains: turns in flight get [server] drain_seconds (20) to finish. Docker kills
# after 10 s unless told otherwise: give it `stop_grace_period: 45s` (compose) or
# `docker stop -t 45`.
STOPSIGNAL SIGTERM
# /healthz: 200 while the database takes writes and the jobs run. The port is the one
# MEDIABOT_SERVER_PORT sets (change the port that way in a container, not in the file).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('MEDIABOT_SERVER_PORT', '8080'), timeout=4)"]
CMD ["mediabot", "serve"]
