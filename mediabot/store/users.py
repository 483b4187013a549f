"""The users table's owner: the household's members, as the config file and the commands
keep them (what the layers above read of a person is ``people.Person``)."""

import datetime as dt
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import peewee as pw

from mediabot.store.db import Role, User, database


class ConfigUser(Protocol):
    """A ``[[users]]`` entry as the sync reads it (``config.UserConfig``)."""

    @property
    def phone(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def channel(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def seerr_user(self) -> str: ...


def nobody_can_text(config_users: Sequence[object], stored_users: int) -> bool:
    """No ``[[users]]`` and no user stored (added by command, or kept from an earlier config:
    a config user's row outlives its entry), so every text would be refused. ``serve``
    refuses to start then and ``check`` warns; both ask here, so they cannot disagree."""
    return not config_users and stored_users == 0


def count_users() -> int:
    return User.select().count()


def count_users_in(path: str) -> int | None:
    """The users stored in the database file at ``path``, read without creating, migrating
    or writing it (``check`` changes nothing): 0 when there is no file or no users table
    yet, None when it cannot be read (check's database line says why)."""
    if path == ":memory:" or not Path(path).exists():
        return 0
    try:
        connection = sqlite3.connect(Path(path).absolute().as_uri() + "?mode=ro", uri=True,
                                     timeout=5)
        try:
            table = User._meta.table_name
            if not connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                      "name = ?", (table,)).fetchone():
                return 0
            return connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.Error:
        return None


def seerr_links_in(path: str) -> list[tuple[str, str | None, str, str | None]]:
    """(phone, name, role, seerr_user) of every user stored in the database file at
    ``path``, read without creating, migrating or writing it (``check`` changes nothing);
    [] when there is none yet, or the file predates the link."""
    if path == ":memory:" or not Path(path).exists():
        return []
    try:
        connection = sqlite3.connect(Path(path).absolute().as_uri() + "?mode=ro", uri=True,
                                     timeout=5)
        try:
            rows = connection.execute(f"SELECT phone, display_name, role, seerr_user FROM "
                                      f"{User._meta.table_name} ORDER BY role, phone")
            return [tuple(row) for row in rows.fetchall()]
        finally:
            connection.close()
    except sqlite3.Error:
        return []


def ensure_config_users(users: Sequence[ConfigUser]) -> None:
    """Write ``[[users]]`` into the users table: new ones added, name/role/channel/language
    and Seerr link changes applied (a link given only by ``users add --seerr-user`` stays
    until the entry names one).

    Users added by command are left alone; a config user later removed from the file keeps
    its row and history (it is only no longer marked as from the config).
    """
    phones = {u.phone for u in users}
    with database.atomic():
        for entry in users:
            user, created = User.get_or_create(
                phone=entry.phone,
                defaults={"display_name": entry.name or None, "role": entry.role,
                          "from_config": True, "channel": entry.channel or None,
                          "language": entry.language or None,
                          "seerr_user": entry.seerr_user or None})
            if created:
                continue
            changes = {"role": entry.role, "from_config": True, "channel": entry.channel or None,
                       "language": entry.language or None}
            if entry.name:
                changes["display_name"] = entry.name
            if entry.seerr_user and entry.seerr_user != user.seerr_user:
                changes.update(seerr_user=entry.seerr_user, seerr_id=None)
            User.update(changes).where(User.id == user.id).execute()
        stale = User.update(from_config=False).where(User.from_config == True)  # noqa: E712
        if phones:
            stale = stale.where(User.phone.not_in(list(phones)))
        stale.execute()


def household_place(user_id: int) -> int:
    """How many people were added before this one: 0, 1, 2... a small number that stays the
    person's while nobody added before them is removed (the model client's slot for them)."""
    return User.select().where(User.id < user_id).count()


def find_with_place(user_id: int) -> tuple[User, int] | None:
    """The user with this id and their ``household_place``, read in one statement; None when
    there is none."""
    before = User.alias()
    place = before.select(pw.fn.COUNT(before.id)).where(before.id < User.id)
    row = User.select(User, place.alias("place")).where(User.id == user_id).first()
    return (row, int(row.place)) if row is not None else None


def get_user(user_id: int) -> User:
    """The user with this id; raises ``User.DoesNotExist`` when there is none (a caller
    holding an id it was given expects the row)."""
    return User.get_by_id(user_id)


def find_user(user_id: int) -> User | None:
    return User.get_or_none(User.id == user_id)


def find_by_phone(phone: str) -> User | None:
    """The user with this E.164 number, or None: a number without a row may not text us."""
    return User.get_or_none(User.phone == phone)


def list_users() -> list[User]:
    """Everyone, admins first, then by phone."""
    return list(User.select().order_by(User.role, User.phone))


def active_admins() -> list[User]:
    """The admins who can be texted (not opted out)."""
    return list(User.select().where(User.role == Role.ADMIN,
                                    User.opted_out == False))  # noqa: E712


def first_admin_or_operator() -> User:
    """The first admin, else the first user, else a stand-in admin "Operator" created on
    +10000000000, so the terminal chat always has someone to chat as."""
    return (User.select().order_by((User.role != Role.ADMIN), User.id).first()
            or User.get_or_create(phone="+10000000000",
                                  defaults={"display_name": "Operator", "role": Role.ADMIN})[0])


def add_user(phone: str, name: str | None, role: str, seerr_user: str | None = None) -> User:
    """A new user (``seerr_user``: their Seerr link, or None); raises
    ``peewee.IntegrityError`` when the phone already has one."""
    return User.create(phone=phone, display_name=name, role=role, seerr_user=seerr_user or None)


def remove_user(user: User) -> None:
    """Delete the user; their messages, pending action and requests go by cascade."""
    user.delete_instance()


def set_role(user_id: int, role: str) -> None:
    User.update(role=role).where(User.id == user_id).execute()


def set_display_name(user_id: int, name: str) -> None:
    """Store the name the person gave."""
    User.update(display_name=name).where(User.id == user_id).execute()


# The intake's batched writer records a STOP in the same raw transaction as its inbox row
# (one commit for a burst of webhooks), so it runs this statement on its own connection;
# the statement lives here, with the table's other writes.
OPT_OUT_BY_ID = "UPDATE users SET opted_out = 1 WHERE id = ?"


def opt_out_in(connection: sqlite3.Connection, user_id: int) -> None:
    """Record a STOP for ``user_id`` inside the caller's open transaction on ``connection``."""
    connection.execute(OPT_OUT_BY_ID, (user_id,))


def set_opted_out(user_id: int, opted_out: bool) -> bool:
    """Record STOP (True) or START (False). False when the row is gone."""
    return User.update(opted_out=opted_out).where(User.id == user_id).execute() == 1


def set_sms_blocked(user_id: int, since: dt.datetime | None) -> bool:
    """Record that Twilio refuses SMS to ``user_id`` since ``since`` (None: lifted). True
    when this changed the row: blocking an already blocked user keeps the first time, so
    whoever blocks first is the one that says so."""
    differs = User.sms_blocked_since.is_null(since is not None)
    return User.update(sms_blocked_since=since).where(User.id == user_id,
                                                      differs).execute() == 1


def set_summary(user_id: int, summary: str | None, through: int | None) -> None:
    """The rolling summary and the last message id it covers (None, None forgets it)."""
    User.update(summary=summary, summary_through=through).where(User.id == user_id).execute()


def seerr_member(seerr_id: int) -> User | None:
    """The user whose link was resolved to this Seerr user id (the oldest, should two be)."""
    return User.select().where(User.seerr_id == seerr_id).order_by(User.id).first()


def keep_seerr_id(user_id: int, seerr_id: int) -> None:
    """Keep the Seerr user id this user's link resolved to."""
    User.update(seerr_id=seerr_id).where(User.id == user_id).execute()


def seerr_linked() -> list[User]:
    """The users linked to a Seerr user (``seerr_user`` set), oldest first."""
    return list(User.select().where(User.seerr_user.is_null(False), User.seerr_user != "")
                .order_by(User.id))
