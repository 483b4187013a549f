"""Tests of ``mediabot/trial``: the demo, the chat in a terminal and the evaluation."""
