"""What reached people: the messages the fake Twilio accepted or refused, and the outbox's last
text to a number."""

from mediabot.store import db
from tests.support.household import MEMBER


def delivered(fake_twilio) -> list[tuple[str, str]]:
    """(To, Body) of every message Twilio accepted, in order: "whatsapp:+1..." or "+1..."."""
    return [(m["to"], m["body"]) for m in fake_twilio.sent]


def refused(fake_twilio) -> int:
    """How many sends Twilio refused."""
    posts = [r for r in fake_twilio.requests if r["path"].endswith("/Messages.json")]
    return len(posts) - len(fake_twilio.sent)


def last_sent(fake_twilio) -> dict:
    return fake_twilio.sent[-1]


def never_refused(fake_twilio) -> None:
    """Every message the daemon asked Twilio to send was accepted (no 63016, no 21910)."""
    posts = [r for r in fake_twilio.requests if r["path"].endswith("/Messages.json")]
    assert len(posts) == len(fake_twilio.sent), [r["form"] for r in posts]


def sent_to(fake_twilio, phone):
    return [m["body"] for m in fake_twilio.sent if m["to"] == phone]


def sent_to_last(daemon, phone):
    return db.Outbox.select().where(db.Outbox.to_number == phone).order_by(
        db.Outbox.id.desc()).first().body


def only_message_to_sam(fake_twilio):
    [message] = [m for m in fake_twilio.sent if m["to"] == MEMBER]
    return message
