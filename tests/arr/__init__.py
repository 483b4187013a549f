"""Tests of ``mediabot/arr``: Sonarr/Radarr's webhooks (edge, events, notices), the search
limit, and (``tools/``) the tools the model calls."""
