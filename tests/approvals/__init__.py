"""Tests of ``mediabot/approvals``."""
