"""Tests of ``mediabot/config``: the schema and its defaults, loading, and validation."""
