"""Pending destructive actions: create, resolve with Y/N, expire.

A destructive tool call is never run on the model's word. It becomes the user's one pending
action (a newer one replaces it) and waits for a yes-like answer before ``expires_at``. An
expired action is never executed, whether or not the sweep has removed it yet.
"""

import datetime as dt
import json
import logging
import re

from . import db

log = logging.getLogger(__name__)


def confirmation_text(question: str, ttl_seconds: int) -> str:
    """The deterministic prompt mediabot (not the model) sends for a destructive action."""
    minutes = max(1, round(ttl_seconds / 60))
    return f"{question} Reply Y to confirm or N to keep it (expires in {minutes} min)."


def create_pending(user_id: int, function_name: str, arguments: dict, prompt_text: str, *,
                   ttl_seconds: int, now: dt.datetime) -> db.PendingAction:
    """Store the user's one pending action, replacing any older one."""
    with db.database.atomic():
        db.PendingAction.delete().where(db.PendingAction.user == user_id).execute()
        return db.PendingAction.create(
            user=user_id, function_name=function_name, arguments=json.dumps(arguments),
            prompt_text=prompt_text, created_at=now,
            expires_at=now + dt.timedelta(seconds=ttl_seconds))


def active_pending(user_id: int, now: dt.datetime) -> db.PendingAction | None:
    """The user's pending action if it has not expired; an expired one is treated as gone."""
    action = db.PendingAction.get_or_none(db.PendingAction.user == user_id)
    if action is None or action.expires_at <= now:
        return None
    return action


def take_pending(action: db.PendingAction) -> bool:
    """Remove the action; False when someone else (the sweep, a retry) already did."""
    return db.PendingAction.delete().where(db.PendingAction.id == action.id).execute() == 1


def clear_pending(user_id: int) -> None:
    db.PendingAction.delete().where(db.PendingAction.user == user_id).execute()


def expire_due(now: dt.datetime) -> list[db.PendingAction]:
    """Delete every expired action and return them, so their users can be told."""
    expired = list(db.PendingAction.select().where(db.PendingAction.expires_at <= now))
    taken = [action for action in expired if take_pending(action)]
    if taken:
        log.info("expired %d pending action(s)", len(taken))
    return taken


def expiry_notice(action: db.PendingAction) -> str:
    """'Your request to remove X expired' from the stored question text."""
    match = re.match(r"Remove (.+?)(?: and delete| from the library|\?)", action.prompt_text)
    what = match.group(1) if match else "that"
    return f"Your request to remove {what} expired, so nothing was removed."
