#!/bin/sh
# /usr/local/bin/mediabot in the image: `docker exec mediabot mediabot users add ...` runs as
# root, the exec default; through the entrypoint the command runs as PUID:PGID, the user who
# owns the database, as the daemon does.
exec docker-entrypoint mediabot "$@"
