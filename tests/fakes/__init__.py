"""Fake servers that speak real HTTP on loopback, for the real client libraries to talk to
(``test_openai.py`` holds the fake OpenAI to the real API's behaviour)."""
