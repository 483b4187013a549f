"""Tests of ``mediabot/arr``: the download webhooks' events and notices, the search
limit, and (``tools/``) the tools the model calls."""
