#!/bin/sh
# The image's ENTRYPOINT, and through /usr/local/bin/mediabot the start of every
# `docker exec ... mediabot ...`: the command runs as the household's user, never as root.
#
# Started as root (the default), the command runs as PUID:PGID (1000:1000 unless set, as with
# linuxserver.io's images); started with `docker run --user UID:GID`, as that user. Before
# `mediabot serve`, /data (the database's folder) must be writable by that user: otherwise
# one line names the fix and it exits 2, before mediabot starts. A restart policy (compose's
# `restart: unless-stopped`) starts it again, with Docker's growing delay, and each start
# prints the same line: `docker logs mediabot` shows it.
set -eu

PUID=${PUID:-1000}
PGID=${PGID:-1000}
IMAGE_UID=1000     # the image's user, who owns the image's /data
database=${MEDIABOT_DATABASE_PATH:-/data/mediabot.db}
data=$(dirname "$database")

fail() {
    echo "mediabot: $*" >&2
    exit 2
}

# The database's folder and files, writable by the user the command runs as.
check_data() {
    me="$(id -u):$(id -g)"
    [ -d "$data" ] || fail "$data does not exist; mount a folder there (-v \"\$PWD/data:$data\")"
    for file in "$data" "$database" "$database-wal" "$database-shm"; do
        if [ ! -e "$file" ] || { [ -w "$file" ] && { [ -f "$file" ] || [ -x "$file" ]; }; }; then
            continue
        fi
        owner=$(stat -c %u:%g "$file")
        if [ "${owner%%:*}" = "$(id -u)" ]; then
            fail "cannot write $file (mediabot runs as its owner, $me): mount $data" \
                 "read-write (no :ro) and let its owner write it (chmod u+rwX)"
        fi
        fail "cannot write $file (owned by $owner; mediabot runs as $me). Fix on the host:" \
             "sudo chown -R $me ./data (the folder mounted at $data)"
    done
}

case "$PUID:$PGID" in
    *[!0-9:]* | :* | *:) fail "PUID=$PUID and PGID=$PGID must be numbers (on the host: id -u; id -g)" ;;
esac

if [ "$(id -u)" = 0 ]; then
    [ "$PUID" != 0 ] || fail "PUID=0 would run mediabot as root; give the uid that owns ./data"
    # A volume Docker has just made from the image's /data is empty and owned by the image's
    # user: it becomes PUID's. A folder of the host's is never chowned here.
    if [ -d "$data" ] && [ -z "$(ls -A "$data")" ] \
            && [ "$(stat -c %u "$data")" = "$IMAGE_UID" ] && [ "$PUID" != "$IMAGE_UID" ]; then
        chown "$PUID:$PGID" "$data"
    fi
    export HOME="$data"
    exec setpriv --reuid="$PUID" --regid="$PGID" --clear-groups -- "$0" "$@"
fi

if [ "${1:-}" = mediabot ]; then
    shift
    set -- /opt/mediabot/app/bin/mediabot "$@"
    case " $* " in
        *" serve "*) check_data ;;
    esac
fi
exec "$@"
