"""Tests of ``mediabot/model``: the model client."""
