"""Tests of ``mediabot/trial/sim``: the simulated Sonarr, Radarr and Twilio answer as the
real ones do where mediabot depends on it."""
