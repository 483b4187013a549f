"""Tests of ``mediabot/ops``: ``mediabot check`` and the health probe."""
