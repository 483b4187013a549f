"""Approvals: the household's own rules (``house_rules``: quotas, an admin's APPROVE n
for a member's add) and Seerr's pending requests (``seerr_requests``; which member a
Seerr user is: ``seerr_members``), one number space for both, asked, decided, swept
and judged still waiting here."""
