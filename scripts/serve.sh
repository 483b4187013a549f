#!/usr/bin/env bash
# Set up (a venv in .venv with mediabot installed; skipped when nothing changed) and start
# the daemon.
# With no config file yet, writes one from config.example.toml and says what to fill in.
# Usage: scripts/serve.sh [CONFIG]   (default: $MEDIABOT_CONFIG, else ./config.toml)
set -euo pipefail
cd "$(dirname "$0")/.."
CONFIG=${1:-${MEDIABOT_CONFIG:-config.toml}}
. scripts/venv.sh
ensure_venv ""
if [ ! -f "$CONFIG" ]; then
    cp config.example.toml "$CONFIG"
    cat >&2 <<MSG
Wrote $CONFIG from config.example.toml. Fill in, then run this command again:
  [server] public_url         the https URL Twilio will call (its webhook is public_url + /sms)
  [twilio] account_sid, auth_token, from_number
  [llm]    base_url, api_key, model
  [sonarr] / [radarr] url and api_key (or delete a section to turn it off)
  [[users]] one entry per person: phone (E.164), name, role
Secrets can come from the environment instead: MEDIABOT_TWILIO_AUTH_TOKEN, MEDIABOT_LLM_API_KEY, ...
To try it first with only [llm] filled in (no Twilio, Sonarr or Radarr): .venv/bin/mediabot demo
MSG
    exit 1
fi
exec .venv/bin/mediabot serve --config "$CONFIG"
