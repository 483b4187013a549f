"""Pending destructive actions: create, check an answer, let lapse, expire.

A destructive tool call is never run on the model's word. It becomes the user's one pending
action (a newer one replaces it), asked with a fixed question mediabot writes itself, and it
waits for the person's very next text. That text resolves it only when it is a lone Y/N
(a message of its own, never joined with other texts of a burst) sent after the question
was asked (``answers``); any other text lets it lapse (``lapse_notice`` says so in one
line), so a "yes" meant for something else, such as a question the model asked itself,
can never remove anything. An expired action is never executed, whether or not the sweep
has removed it yet. Which message is an answer is decided by the engine; the Y/N
vocabulary is in ``mediabot.keywords``.
"""

import datetime as dt
import json
import logging
import re

import peewee as pw

from . import db

log = logging.getLogger(__name__)


def confirmation_text(question: str, ttl_seconds: int) -> str:
    """The deterministic prompt mediabot (not the model) sends for a destructive action."""
    minutes = max(1, round(ttl_seconds / 60))
    return f"{question} Reply Y to confirm or N to keep it (expires in {minutes} min)."


def create_pending(user_id: int, function_name: str, arguments: dict, prompt_text: str, *,
                   ttl_seconds: int, now: dt.datetime) -> db.PendingAction:
    """Store the user's one pending action, replacing any older one.

    It remembers the user's newest inbox row, so texts that were already on their way
    (sent while the turn that asks was running) are never taken as its answer.
    """
    with db.database.atomic():
        db.PendingAction.delete().where(db.PendingAction.user == user_id).execute()
        latest = (db.Inbox.select(pw.fn.MAX(db.Inbox.id))
                  .where(db.Inbox.user == user_id).scalar())
        return db.PendingAction.create(
            user=user_id, function_name=function_name, arguments=json.dumps(arguments),
            prompt_text=prompt_text, created_at=now, asked_after_inbox=latest,
            expires_at=now + dt.timedelta(seconds=ttl_seconds))


def answers(action: db.PendingAction, inbox_id: int | None) -> bool:
    """True when the text in inbox row ``inbox_id`` was sent after ``action`` was asked.

    ``None`` is a message with no inbox row (the terminal chat, where nothing can be sent
    while a turn runs) and counts as after. Whether the text is a lone Y/N is the caller's
    part of the rule.
    """
    asked_after = action.asked_after_inbox
    return inbox_id is None or asked_after is None or inbox_id > asked_after


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


def _subject(action: db.PendingAction) -> str | None:
    """"The Office (2005)" from the stored question "Remove The Office (2005) and ..."."""
    match = re.match(r"Remove (.+?)(?: and delete| from the library|\?)", action.prompt_text)
    return match.group(1) if match else None


def expiry_notice(action: db.PendingAction) -> str:
    """'Your request to remove X expired' from the stored question text."""
    return f"Your request to remove {_subject(action) or 'that'} expired, so nothing was removed."


def lapse_notice(action: db.PendingAction) -> str:
    """The one line that tells the person their next text did not answer the question."""
    what = _subject(action)
    return (f"I've dropped the question about removing {what}." if what
            else "I've dropped the removal question.")
