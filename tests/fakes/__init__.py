"""Fake servers that speak real HTTP on loopback, for the real client libraries to talk to."""
