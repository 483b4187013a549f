"""A person as the layers above read them: one immutable value, read once per turn or notice.

A ``Person`` is what the users table knows of someone at the moment it was read: who they
are (id, phone, name, role), the language they read and are read in (resolved here, once:
their ``[[users]] language``, else the household's ``[sms] language``), and the facts their
channel is chosen by (their ``[[users]] channel``, STOP, Twilio's SMS opt-out). The worker
reads it when a turn begins and hands it down; a notice or an approval request reads its
recipient when it is queued; the sender reads it again just before a text goes, since a STOP
may have come in between. Nobody below looks the person up again.

It is a snapshot: what changes the row (a name given, STOP, a 21610) goes through
``store/users.py`` and, where the rest of the turn must see it, ``dataclasses.replace``.
"""

import datetime as dt
from dataclasses import dataclass

import peewee as pw

from mediabot.store import users
from mediabot.store.db import Role, User
from mediabot.text.language import Language, speaking


@dataclass(frozen=True)
class Person:
    """Someone of the household, as read once. ``place`` is how many people were added
    before them (the model client's slot for them)."""

    id: int
    phone: str
    name: str | None
    role: str
    language: Language
    channel: str | None = None       # [[users]] channel for notices; None: the last used
    opted_out: bool = False
    sms_blocked_since: dt.datetime | None = None
    seerr_user: str | None = None
    seerr_id: int | None = None
    summary: str | None = None
    summary_through: int | None = None
    place: int = 0

    @property
    def admin(self) -> bool:
        return self.role == Role.ADMIN

    @property
    def shown_name(self) -> str:
        """How a text to someone else names them: their name, else their number."""
        return self.name or self.phone


def language_of(tag: str | None, household: str) -> Language:
    """The language a person reads and is read in: their own ``[[users]]`` language (``tag``),
    else the household's ``[sms] language`` (``household``); the household's for no one.
    The one place this is decided."""
    return speaking(tag, household)


def person_of(user: User, household: str, place: int = 0) -> Person:
    """The value of a user row already read (a row another table's query brought along)."""
    return Person(id=user.id, phone=user.phone, name=user.display_name, role=user.role,
                  language=language_of(user.language, household), channel=user.channel,
                  opted_out=bool(user.opted_out), sms_blocked_since=user.sms_blocked_since,
                  seerr_user=user.seerr_user, seerr_id=user.seerr_id, summary=user.summary,
                  summary_through=user.summary_through, place=place)


def read_person(user_id: int, household: str) -> Person | None:
    """The person with this id, read in one statement (their place with them), or None when
    there is no such user."""
    found = users.find_with_place(user_id)
    return person_of(found[0], household, found[1]) if found is not None else None


def get_person(user_id: int, household: str) -> Person:
    """``read_person`` for a caller holding an id it was given (a queued text's, the
    terminal's): raises peewee's ``DoesNotExist`` when the user is gone."""
    person = read_person(user_id, household)
    if person is None:
        raise pw.DoesNotExist(f"user {user_id} is gone")
    return person


def read_person_by_phone(phone: str, household: str) -> Person | None:
    """Whoever has this E.164 number now, or None."""
    row = users.find_by_phone(phone)
    return person_of(row, household) if row is not None else None


@dataclass(frozen=True)
class Stranger:
    """A number that is no user (the one reply an unknown sender may get): only its phone
    and the household's language are known."""

    phone: str
    language: Language
    id: None = None
    channel: None = None
    opted_out: bool = False
    sms_blocked_since: None = None


# Whom the sender texts: a person of the household, or a number that is none.
Recipient = Person | Stranger


def stranger(phone: str, household: str) -> Stranger:
    return Stranger(phone, language_of(None, household))
