"""Tests of ``mediabot/answering``: answering one person's texts, the worker, and the faults
it retries."""
