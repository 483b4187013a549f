"""Tests of ``mediabot/arr/tools``: the tools the model calls, against the fake Sonarr and
Radarr, one file per module."""
