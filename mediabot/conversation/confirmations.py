"""Pending destructive actions: create, check an answer, let lapse, expire.

A destructive tool call is never run on the model's word. It becomes the user's one pending
action (a newer one replaces it), asked with a fixed question mediabot writes itself, and it
waits for the person's very next text. That text resolves it only when it is a lone Y/N
(a message of its own, never joined with other texts of a burst, of answer words only: a
"delete it?" or "Y?" asks back) sent after the question was asked (``answers``); any other
text lets it lapse (``lapse_notice`` says so in one
line), so a "yes" meant for something else, such as a question the model asked itself,
can never remove anything. An expired action is never executed, whether or not the sweep
has removed it yet. Which message is an answer is decided by the engine; the Y/N
vocabulary is in ``mediabot.text.keywords``.

A question is asked when Twilio accepted it (its API answered 201), not when it was stored:
while its text still waits in the outbox (Twilio answered 429, or was down), a Y cannot be
its answer and lets it lapse like any other text, and the unsent question is withdrawn, so
it never arrives after the fact (``outbox.seen_before``). A question Twilio later reports
undelivered or failed lapses too (``drop_undelivered``): nothing is texted about it (a text
to that phone would most likely fail the same way), but a line in the history says so, for
the model and for ``mediabot history show``. Approvals follow the same rule
(``household.decide``).

The question and the notices are in the person's language (a ``Language`` the caller
passes; English when none is): the question names the words that language answers with
("Responde SÍ ... o NO"), and Y/N work in every language (``text.keywords``).
"""

import datetime as dt
import json
import logging
import re

from mediabot.conversation import history
from mediabot.mailbox import inbox, outbox
from mediabot.store import db
from mediabot.text.language import Language, load

log = logging.getLogger(__name__)
WITHDRAWN = "withdrawn: the question lapsed before Twilio accepted it"


def confirmation_text(question: str, ttl_seconds: int, lang: Language | None = None) -> str:
    """The deterministic prompt mediabot (not the model) sends for a destructive action,
    in ``lang`` (English when None), naming the words that language accepts."""
    minutes = max(1, round(ttl_seconds / 60))
    return (lang or load("en")).gettext(
        "{question} Reply Y to confirm or N to keep it (expires in {minutes} min).",
        question=question, minutes=minutes)


def create_pending(user_id: int, function_name: str, arguments: dict, prompt_text: str, *,
                   ttl_seconds: int, now: dt.datetime,
                   asked_in: int | None = None) -> db.PendingAction:
    """Store the user's one pending action, replacing any older one.

    It remembers the user's newest inbox row, so texts that were already on their way
    (sent while the turn that asks was running) are never taken as its answer, and
    ``asked_in``, the inbox row whose reply (outbox row) is the question.
    """
    with db.database.atomic():
        db.PendingAction.delete().where(db.PendingAction.user == user_id).execute()
        latest = inbox.newest_inbox_id_of(user_id)
        return db.PendingAction.create(
            user=user_id, function_name=function_name, arguments=json.dumps(arguments),
            prompt_text=prompt_text, created_at=now, asked_after_inbox=latest,
            asked_in_inbox=asked_in, expires_at=now + dt.timedelta(seconds=ttl_seconds))


def answers(action: db.PendingAction, inbox_id: int | None) -> bool:
    """True when the text in inbox row ``inbox_id`` was sent after ``action`` was asked,
    that is after Twilio accepted the question's text (``outbox.seen_before``).

    ``None`` is a message with no inbox row (the terminal chat, where nothing can be sent
    while a turn runs and the question is on screen) and counts as after. An action stored
    before questions knew their text keeps the older rule (after the turn that asked).
    Whether the text is a lone Y/N is the caller's part of the rule.
    """
    asked_after = action.asked_after_inbox
    if inbox_id is None:
        return True
    if asked_after is not None and inbox_id <= asked_after:
        return False
    return action.asked_in_inbox is None or outbox.seen_before(question_of(action), inbox_id)


def question_of(action: db.PendingAction) -> db.Outbox | None:
    """The outbox row that carries the question (None in the chat, or not queued yet)."""
    if action.asked_in_inbox is None:
        return None
    return outbox.reply_to(action.asked_in_inbox)


def find_pending(user_id: int) -> db.PendingAction | None:
    """The user's pending action, expired or not (the sweep may not have taken it yet)."""
    return db.PendingAction.get_or_none(db.PendingAction.user == user_id)


def active_pending(user_id: int, now: dt.datetime) -> db.PendingAction | None:
    """The user's pending action if it has not expired; an expired one is treated as gone."""
    action = find_pending(user_id)
    if action is None or action.expires_at <= now:
        return None
    return action


def take_pending(action: db.PendingAction) -> bool:
    """Remove the action; False when someone else (the sweep, a retry) already did.

    Its question, when Twilio has not yet accepted it, is withdrawn from the outbox: a
    question that arrived after it lapsed or expired would ask for a Y that does nothing.
    """
    if db.PendingAction.delete().where(db.PendingAction.id == action.id).execute() != 1:
        return False
    if action.asked_in_inbox is not None:
        withdrawn = outbox.withdraw_reply(action.asked_in_inbox, WITHDRAWN)
        if withdrawn:
            log.info("the unsent question of user %s was withdrawn", action.user_id)
    return True


def clear_pending(user_id: int) -> None:
    db.PendingAction.delete().where(db.PendingAction.user == user_id).execute()


def expire_due(now: dt.datetime) -> list[db.PendingAction]:
    """Delete every expired action and return them, so their users can be told."""
    expired = list(db.PendingAction.select().where(db.PendingAction.expires_at <= now))
    taken = [action for action in expired if take_pending(action)]
    if taken:
        log.info("expired %d pending action(s)", len(taken))
    return taken


# The questions ``arr.tools`` asks (their catalog ids), read back for the title they name;
# then the English rule every question stored before translations matches.
QUESTIONS = ("Remove {title} and delete its {size} of files?",
             "Remove {title} from the library, keeping its files?",
             "Remove {title}? It has no files on disk.")
ENGLISH_SUBJECT = re.compile(r"Remove (?P<title>.+?)(?: and delete| from the library|\?)")


def _subject(action: db.PendingAction, lang: Language) -> str | None:
    """"The Office (2005)" from the stored question "Remove The Office (2005) and ...", as
    ``lang``'s catalog or English writes it; None when none fits."""
    for pattern in [*(_pattern(lang.catalog.gettext(q)) for q in QUESTIONS), ENGLISH_SUBJECT]:
        if match := pattern.match(action.prompt_text):
            return match.group("title")
    return None


def _pattern(template: str) -> re.Pattern:
    """A question template as a regex: ``{title}`` captured, other fields anything."""
    return re.compile(re.sub(r"\\\{(\w+)\\\}", lambda m: "(?P<title>.+?)"
                             if m.group(1) == "title" else ".+?", re.escape(template)))


def expiry_notice(action: db.PendingAction, lang: Language | None = None) -> str:
    """'Your request to remove X expired', X from the stored question text."""
    lang = lang or load("en")
    what = _subject(action, lang)
    if what is None:
        return lang.gettext("Your request to remove that expired, so nothing was removed.")
    return lang.gettext("Your request to remove {title} expired, so nothing was removed.",
                        title=what)


def lapse_notice(action: db.PendingAction, lang: Language | None = None) -> str:
    """The one line that tells the person their next text did not answer the question."""
    lang = lang or load("en")
    what = _subject(action, lang)
    if what is None:
        return lang.gettext("I've dropped the removal question.")
    return lang.gettext("I've dropped the question about removing {title}.", title=what)


def drop_undelivered(text: db.Outbox) -> db.PendingAction | None:
    """Twilio reports ``text`` undelivered or failed: the question it carried (if any) lapses,
    and the history says so, so the model knows the person never had it. Nothing is texted:
    a text to that phone would most likely fail the same way. The action, or None."""
    if text.inbox_id is None:
        return None
    action = db.PendingAction.get_or_none(db.PendingAction.asked_in_inbox == text.inbox_id)
    if action is None or not take_pending(action):
        return None
    log.info("user %s: the question about %s lapsed (Twilio reported it %s, error %s)",
             action.user_id, action.function_name, text.delivery, text.delivery_error)
    history.save_message(action.user_id, {"role": "assistant",
                                          "content": undelivered_note(action)})
    return action


def undelivered_note(action: db.PendingAction) -> str:
    """The history line (never texted) for a question that did not reach the phone."""
    what = _subject(action, load("en")) or "that"
    return (f"(Not received: my question about removing {what} did not reach this phone, so "
            "I dropped it and nothing was removed. If they still want it removed, I ask again.)")
