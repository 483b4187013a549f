"""Tests of ``mediabot/webhooks``: the /sms webhook and the hooks of Sonarr/Radarr."""
