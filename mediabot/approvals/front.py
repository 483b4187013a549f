"""The approvals as the conversation sees them: one front for the household's own rules
(``house_rules``) and Seerr's pending requests (``seerr_requests``), so the engine never asks
which table a number is in.

Both tables share one number space: a new request of either takes ``next_number``, above
every number in use in both, so an admin's APPROVE n names one request whichever table
holds it. An answer is tried on Seerr's table first (a number it does not hold is not
Seerr's), then on the household's.
"""

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from mediabot.approvals import house_rules, seerr_requests
from mediabot.approvals.house_rules import HouseRules
from mediabot.approvals.seerr_requests import SeerrApprovals
from mediabot.store import db
from mediabot.store.db import TextKind
from mediabot.store.people import Person
from mediabot.text.keywords import Verdict


def next_number() -> int:
    """The number a new request takes, in either table: one above the highest in use in
    both. Taken inside the caller's IMMEDIATE transaction, so two never draw the same."""
    return max(house_rules.highest_number(), seerr_requests.highest_number()) + 1


@dataclass
class Approvals:
    """Who answers requests by text, an admin's APPROVE n / DENY n, and what waits."""

    rules: HouseRules | None = None
    seerr: SeerrApprovals | None = None   # with [seerr]: its pending requests

    def answered_by(self, person: Person) -> bool:
        """Does this admin answer requests (APPROVE 12 / DENY 12)? The household's when
        ``approval = "members"``, and with Seerr its pending requests."""
        return person.admin and (
            self.seerr is not None
            or (self.rules is not None and self.rules.config.approval == "members"))

    def decide(self, admin: Person, verdict: Verdict, number: int, now: dt.datetime,
               run_add: Callable[[db.Approval], None], *,
               inbox_id: int | None = None) -> str | None:
        """An admin's answer about request ``number``, by whichever table holds it: the
        reply to the admin, or None when they answer no requests (the text is read as any
        other). ``run_add`` runs an approved household request's add (``HouseRules.decide``)."""
        if self.seerr is not None and admin.admin:
            decided = self.seerr.decide(admin, verdict, number, now, inbox_id=inbox_id)
            if decided is not None:
                return decided
        if self.rules is not None and self.answered_by(admin):
            return self.rules.decide(admin, verdict, number, now, run_add, inbox_id=inbox_id)
        return None

    def waiting_note(self) -> str | None:
        """For an admin's system prompt: what waits for an answer, in both tables."""
        notes = [self.rules.waiting_note() if self.rules is not None else None,
                 self.seerr.waiting_note() if self.seerr is not None else None]
        return "\n\n".join(note for note in notes if note) or None


def still_waiting(kind: TextKind, number: int, now: dt.datetime) -> bool:
    """Does request ``number``, which an approval text of ``kind`` asks about, still wait?
    False once decided, expired or gone: then the text, if held, is withdrawn."""
    if kind == TextKind.SEERR_APPROVAL:
        return seerr_requests.still_waiting(number)
    return house_rules.still_waiting(number, now)
