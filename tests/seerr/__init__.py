"""Tests of ``mediabot/seerr``: the Seerr client, the links from members to Seerr users, and
the fake Seerr the suite runs against (held to Seerr's own OpenAPI spec)."""
