"""Tests of ``mediabot/conversation``: the engine, the model turn and its services, the
model client, confirmations, the household's rules, history, summaries and posters."""
