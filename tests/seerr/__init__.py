"""Tests of ``mediabot/seerr``: its checks, and (``api/``) the Seerr client and the links
from members to Seerr users; the fake Seerr the suite runs against (held to Seerr's own
OpenAPI spec)."""
