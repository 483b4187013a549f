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
from .sms import KEYWORDS

log = logging.getLogger(__name__)

YES_WORDS = frozenset({"y", "yes", "yep", "yeah", "yup", "ya", "sure", "ok", "okay", "confirm",
                       "confirmed", "do it", "go ahead", "go for it", "yes please", "please do",
                       "delete it", "remove it", "affirmative", "absolutely", "correct"})
NO_WORDS = frozenset({"n", "no", "nope", "nah", "no thanks", "no thank you", "keep it",
                      "keep", "don't", "dont", "do not", "don't do it", "never mind",
                      "nevermind", "abort", "no way", "negative", "cancel that", "cancel it",
                      "forget it", "forget that", "leave it", "don't delete it",
                      "don't remove it", "do not delete it", "do not remove it"})
MAX_ANSWER_WORDS = 8
# Twilio's opt-out words: they unsubscribe the person, so they are never read as "no".
OPT_OUT_WORDS = frozenset(word.lower() for word, kind in KEYWORDS.items() if kind == "opt_out")


def parse_answer(text: str) -> str | None:
    """'yes', 'no' or None for anything else (which leaves the action pending).

    A message made only of yes-like phrases ("yes, do it", "ok go ahead") is a yes, one
    made only of no-like phrases ("no, keep it", "cancel that") a no; a mix or any other
    word ("yes but keep the files") is not an answer.
    """
    words = re.sub(r"[^\w' ]+", " ", text.lower().replace("\u2019", "'")).split()
    phrase = " ".join(words)
    if not phrase or phrase in OPT_OUT_WORDS or len(words) > MAX_ANSWER_WORDS:
        return None
    if _made_of(words, YES_WORDS):
        return "yes"
    if _made_of(words, NO_WORDS):
        return "no"
    return None


def _made_of(words: list[str], phrases: frozenset[str]) -> bool:
    """True when ``words`` split into phrases from ``phrases`` (longest first)."""
    if not words:
        return True
    return any(" ".join(words[:size]) in phrases and _made_of(words[size:], phrases)
               for size in range(min(len(words), 4), 0, -1))


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
