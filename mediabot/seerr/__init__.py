"""Seerr, all of it: its API (``api/``: client, models, errors, the payload of its
webhook, a member's link), adds filed through it (``add``), what it knows beside a
search (``view``), what its notifications become (``notifications``) and its checks
(``setup_checks``)."""
