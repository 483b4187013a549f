"""The one rule for held texts (``mailbox/held.py``): pure, so a table says it all."""

import datetime as dt

import pytest

from mediabot.mailbox import outbox
from mediabot.mailbox.held import DROPPED, GAVE_UP, SEND, WITHDRAWN, HeldText, held_text, judge
from mediabot.store.db import TextKind

HOUR, WEEK = dt.timedelta(hours=1), dt.timedelta(days=7)


@pytest.mark.parametrize(("text", "verdict"), [
    (HeldText("ready", HOUR, written_since=False, stands=True), SEND),
    (HeldText("ready", 2 * HOUR, written_since=True, stands=True), SEND),   # only replies
    (HeldText("ready", HOUR, written_since=False, stands=False), WITHDRAWN["ready"]),
    (HeldText("approval", HOUR, written_since=False, stands=True), SEND),
    (HeldText("approval", HOUR, written_since=False, stands=False), WITHDRAWN["approval"]),
    (HeldText("reply", HOUR, written_since=False, stands=True), SEND),
    (HeldText("reply", HOUR, written_since=True, stands=True), DROPPED),
    (HeldText("other", HOUR, written_since=True, stands=True), SEND),   # a note, not an answer
    (HeldText("other", HOUR, written_since=False, stands=False), SEND),
    (HeldText("ready", WEEK - dt.timedelta(seconds=1), written_since=False, stands=True), SEND),
    (HeldText("ready", WEEK, written_since=False, stands=True), GAVE_UP),
    (HeldText("reply", WEEK, written_since=True, stands=False), GAVE_UP),
])
def test_a_held_text_goes_unless_it_can_no_longer_be_acted_on(text, verdict):
    assert judge(text) == verdict


def test_what_is_not_sent_says_why_and_ends_as_cancelled_or_failed():
    assert (DROPPED.status, DROPPED.reason) == (
        "cancelled", "dropped: they wrote again before it could go, and that text was "
                     "answered instead")
    assert (GAVE_UP.status, GAVE_UP.reason) == (
        "failed", "gave up: the person did not write within a week")
    assert {v.status for v in WITHDRAWN.values()} == {"cancelled"}
    assert not any(v.send for v in (DROPPED, GAVE_UP, *WITHDRAWN.values()))


@pytest.mark.parametrize(("kind", "subject", "asked"), [
    (TextKind.READY, 7, [(TextKind.READY, 7)]),
    (TextKind.APPROVAL, 5, [(TextKind.APPROVAL, 5)]),
    (TextKind.SEERR_APPROVAL, 12, [(TextKind.SEERR_APPROVAL, 12)]),
    (TextKind.APPROVAL, None, []),      # about no number: nothing to ask, it stands
    (TextKind.OTHER, 3, []),            # never withdrawn
    (TextKind.REPLY, None, []),
])
def test_whether_a_held_text_stands_is_asked_of_its_kind_and_subject(database, kind, subject,
                                                                      asked):
    """The row says what it is and what it is about; its dedupe key is never read."""
    now = dt.datetime(2026, 1, 1)
    row = outbox.add(to_number="+15551230001", body="x", channel="whatsapp", now=now,
                     dedupe_key="not:what:it:is:0", kind=kind, subject=subject)
    questions = []

    def stands(kind, subject, when):
        questions.append((kind, subject))
        return False

    text = held_text(outbox.get(row.id), now + HOUR, stands)
    assert (text.kind, text.age, questions) == (kind, HOUR, asked)
    assert text.stands is not bool(asked), "withdrawn only when its subject no longer stands"
