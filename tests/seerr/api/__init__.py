"""Tests of ``mediabot/seerr/api``: Seerr's API."""
