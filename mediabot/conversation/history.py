"""The stored conversation: owner of the ``messages`` table.

Each message is stored as it really happened, in the OpenAI shape (``role``, ``content``,
``tool_calls``, ``tool_call_id``, ``name``); only the prompt is reshaped, by the pure builder
in ``conversation.prompt.build``. Reads hand back plain dicts with the row id as ``_id`` and
the time it was stored as ``_at``, which the builder carries but never sends. Every read is
bounded (a ``limit``, or one indexed statement), so its cost does not grow with the table.

How it fails: peewee's errors, when the database is not open or a user does not exist.
"""

import datetime as dt
import json
import logging
from typing import cast

import peewee as pw

from mediabot.store import db

log = logging.getLogger(__name__)


def save_message(user_id: int, message: dict, *, prompt_tokens: int | None = None,
                 at: dt.datetime | None = None) -> int:
    """Store one OpenAI-shaped message for a user; return its row id.

    ``tool_calls`` is stored as JSON text (an empty list as NULL). ``at``: when it was
    received (naive UTC, from the caller's clock), else now; the prompt shows it on user
    messages. Raises peewee errors when the user does not exist or the database is not open.
    """
    calls = message.get("tool_calls")
    row = db.Message.create(
        user=user_id, role=message["role"], content=message.get("content"),
        tool_calls=json.dumps(calls) if calls else None,
        tool_call_id=message.get("tool_call_id"), name=message.get("name"),
        prompt_tokens=prompt_tokens, created_at=at or db.utcnow())
    return row.id


def get_history(user_id: int, limit: int) -> list[dict]:
    """The user's newest ``limit`` messages, oldest first, each with its row id as ``_id``
    and the time it was stored (naive UTC) as ``_at``.

    Reads ``ORDER BY id DESC LIMIT n`` on the (user, id) index, so the cost does not grow
    with the number of stored rows. Unreadable tool_calls JSON is logged and left out (the
    prompt builder then drops or keeps the message by its content).
    """
    query = (db.Message
             .select(db.Message.id, db.Message.role, db.Message.content,
                     db.Message.tool_calls, db.Message.tool_call_id, db.Message.name,
                     db.Message.created_at)
             .where(db.Message.user == user_id)
             .order_by(db.Message.id.desc())
             .limit(limit)
             .tuples())
    rows = cast(list[tuple], list(query))   # .tuples(): peewee's stubs still say models
    return [_row_to_message(*row) for row in reversed(rows)]


def recent_history(user_id: int, limit: int, coming: int = 0) -> list[dict]:
    """The user's recent messages for a prompt: at most ``limit``, from a first row that moves
    on only in steps of half of it (and after a RESET or the retention job).

    ``get_history``'s newest ``limit`` would start one row later at every message, and the
    window (replayed from the first row) and the pruned line (naming the evicted tools) would
    change with it: a server's prompt cache would then lose the prompt at every text.
    ``coming``: messages not stored yet that the prompt will end with (a read-ahead's stand-in
    for the next text), so the first row is the one the prompt with them stored will have.
    """
    step = max(1, limit // 2)
    total = count_messages(user_id) + coming
    skip = max(0, -(-(total - limit) // step) * step)
    return get_history(user_id, max(0, total - skip - coming))


def tools_before(user_id: int, rows: list[dict]) -> list[str] | None:
    """The tools used in the user's stored messages older than ``rows`` (``recent_history``'s),
    in first-use order (the names on their results); None when there are no such messages.

    What the pruned line names besides the evicted rows fetched: every tool operation since
    the last RESET (which deletes the rows), so the line does not change when the fetched
    rows move on. Results at the start of ``rows`` whose call was not fetched (the prompt
    drops them) count as older. One indexed read of the older rows' names.
    """
    if not rows:
        return None
    first = next((m["_id"] for m in rows if m["role"] != "tool"), rows[-1]["_id"] + 1)
    if not db.Message.select().where((db.Message.user == user_id)
                                     & (db.Message.id < rows[0]["_id"])).exists():
        return None
    older = (db.Message.user == user_id) & (db.Message.id < first)
    oldest = pw.fn.MIN(db.Message.id)
    query = (db.Message.select(db.Message.name, oldest)
             .where(older & (db.Message.role == "tool") & db.Message.name.is_null(False))
             .group_by(db.Message.name).order_by(oldest).tuples())
    return [row[0] for row in cast(list[tuple], list(query))]


def _row_to_message(row_id: int, role: str, content: str | None, tool_calls: str | None,
                    tool_call_id: str | None, name: str | None, at: dt.datetime) -> dict:
    message: dict = {"role": role, "content": content, "_id": row_id, "_at": at}
    if tool_calls:
        try:
            message["tool_calls"] = json.loads(tool_calls)
        except ValueError:
            log.warning("message %d has unreadable tool_calls JSON; ignoring them", row_id)
    if tool_call_id is not None:
        message["tool_call_id"] = tool_call_id
    if name is not None:
        message["name"] = name
    return message


def clear_history(user_id: int) -> int:
    """Delete every stored message of one user; return how many were deleted."""
    return db.Message.delete().where(db.Message.user == user_id).execute()


def count_messages(user_id: int) -> int:
    return db.Message.select().where(db.Message.user == user_id).count()


def last_message_id(user_id: int) -> int:
    """The id of the user's newest stored message, 0 when there is none: messages stored
    later have larger ids, so it marks where a turn starts."""
    return (db.Message.select(pw.fn.MAX(db.Message.id))
            .where(db.Message.user == user_id).scalar() or 0)


def newest_rows(user_id: int, limit: int) -> list[db.Message]:
    """The user's newest ``limit`` stored rows as they are, newest first (for the operator's
    view and crash recovery, which read timestamps and raw fields the prompt never sees)."""
    return list(db.Message.select().where(db.Message.user == user_id)
                .order_by(db.Message.id.desc()).limit(limit))


def delete_messages_after(user_id: int, message_id: int) -> int:
    """Delete the user's messages newer than ``message_id`` (a failed turn's partial work)."""
    return (db.Message.delete().where(db.Message.user == user_id, db.Message.id > message_id)
            .execute())


def prune_before(cutoff: dt.datetime, limit: int) -> int:
    """Delete at most ``limit`` messages (of anyone) stored before ``cutoff``, found through
    the ``created_at`` index in one short statement; returns how many went."""
    old = db.Message.select(db.Message.id).where(db.Message.created_at < cutoff).limit(limit)
    return db.Message.delete().where(db.Message.id.in_(old)).execute()
