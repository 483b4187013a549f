"""Tests of ``mediabot/conversation``: the engine, the model turn and its services,
confirmations, history, summaries and posters."""
