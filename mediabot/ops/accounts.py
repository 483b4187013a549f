"""The bodies of ``mediabot users ...`` and ``mediabot history ...``: what an operator does
to the household's members, in the operator's words (``lookup_member``, ``enrol``,
``dismiss``, ``change_role``, ``roster``, ``clear_member_history``). The rows themselves
belong to ``store/users.py``.

They need only the database: it is opened (and migrated) but the config's ``[[users]]`` are
NOT written into it here, so removing or re-roling a config user sticks until the daemon
next starts, which is exactly what the warnings say. User errors (a bad phone number, an
unknown user) raise ``OpsError`` or ``InvalidValue`` (``ops/errors.py``), which the command
line shows as a message and exit code, never a traceback.
"""

import datetime as dt
import json
import logging

from mediabot.config import Config, UserConfig
from mediabot.conversation import history
from mediabot.conversation.forget import forget_conversation
from mediabot.mailbox import inbox, outbox
from mediabot.ops.errors import InvalidValue, OpsError
from mediabot.store import db, migrations, users
from mediabot.text.localtime import as_local
from mediabot.text.phones import SMS, normalise_phone

log = logging.getLogger(__name__)

TOOL_RESULT_CHARS = 200
TEXT_CHARS = 70


def open_users_db(config: Config) -> None:
    """Open and migrate the database without applying ``[[users]]`` (see the module doc)."""
    migrations.open_database(config.database.path)


def parse_phone(text: str, region: str, param_hint: str = "PHONE") -> str:
    """E.164 (national forms read in ``region``) or ``InvalidValue`` saying why not."""
    try:
        return normalise_phone(text, region)
    except ValueError as exc:
        raise InvalidValue(str(exc), param_hint) from None


def lookup_member(phone: str, config: Config | None = None) -> db.User:
    """The stored user, or an OpsError that says why there is none."""
    user = users.find_by_phone(phone)
    if user is not None:
        return user
    if config is not None and _config_user(config, phone) is not None:
        raise OpsError(f"{phone} is in [[users]] of {config.source} but not in the "
                                   "database yet (mediabot adds it on next start); edit the "
                                   "file to change or remove it")
    raise OpsError(f"no user with phone {phone}; see `mediabot users list`")


def _config_user(config: Config, phone: str) -> UserConfig | None:
    return next((u for u in config.users if u.phone == phone), None)


def _label(user: db.User) -> str:
    return f"{user.phone} ({user.display_name})" if user.display_name else user.phone


# ------------------------------------------------------------------ users

def roster(config: Config) -> list[str]:
    """One line per user: phone, name, role, opted out, and where config users come from.

    Config users the daemon has not written yet are listed too, as "(config; added on next
    start)", so the list says what the daemon will see.
    """
    rows = users.list_users()
    known = {user.phone for user in rows}
    lines = [_user_line(user.phone, user.display_name, user.role, _channel(user),
                        _status(user.opted_out), _origin(config, user)) for user in rows]
    lines += [_user_line(u.phone, u.name, u.role, u.channel or SMS, _status(False),
                         "(config; added on next start)")
              for u in config.users if u.phone not in known]
    return [USERS_HEADER, *lines] if lines else []


def _origin(config: Config, user: db.User) -> str:
    entry = _config_user(config, user.phone)
    if entry is None:
        return "(config)" if user.from_config else ""
    if entry.role != user.role:
        return f"(config; role back to {entry.role} on next start)"
    return "(config)"


def _channel(user: db.User) -> str:
    """Where their notices go: the channel they chose, else the one they last wrote on
    ("whatsapp*": last used, not chosen), else SMS."""
    if user.channel:
        return user.channel
    last = inbox.last_channel(user.id)
    return f"{last}*" if last else SMS


def _status(opted_out: bool) -> str:
    return "opted out" if opted_out else "-"


def _user_line(phone: str, name: str | None, role: str, channel: str, status: str,
               origin: str) -> str:
    return (f"{phone:<16} {(name or '-'):<20} {role:<7} {channel:<9} {status:<9} "
            f"{origin}").rstrip()


USERS_HEADER = _user_line("PHONE", "NAME", "ROLE", "CHANNEL", "OPT-OUT", "SOURCE")


def enrol(phone: str, name: str, role: str, seerr_user: str = "") -> str:
    """Let ``phone`` text mediabot as ``role`` (linked to the Seerr user ``seerr_user``, when
    given); an OpsError when it already may."""
    if users.find_by_phone(phone) is not None:
        raise OpsError(f"{phone} is already a user; use `mediabot users role` to change the "
                       "role")
    link = seerr_user.strip()
    users.add_user(phone, name.strip() or None, role, link or None)
    log.debug("user %s added as %s", phone, role)
    return f"added {phone} ({name}) as {role}" + (f", Seerr user {link!r}" if link else "")


def dismiss(config: Config, phone: str) -> list[str]:
    """Delete the user and (by cascade) their messages, pending action and requests."""
    user = lookup_member(phone, config)
    messages = count_member_messages(user)
    users.remove_user(user)
    log.debug("user %s removed (%d messages)", phone, messages)
    lines = [f"removed {_label(user)} and {messages} stored messages"]
    entry = _config_user(config, phone)
    if entry is not None:
        lines.append(_config_warning(config, entry, "adds it back"))
    return lines


def change_role(config: Config, phone: str, role: str) -> list[str]:
    """Make the member ``role``; a warning line when [[users]] will set it back."""
    user = lookup_member(phone, config)
    users.set_role(user.id, role)
    log.debug("user %s role %s -> %s", phone, user.role, role)
    lines = [f"{_label(user)} is now {role} (was {user.role})"]
    entry = _config_user(config, phone)
    if entry is not None and entry.role != role:
        lines.append(_config_warning(config, entry, f"sets the role back to {entry.role}"))
    return lines


def _config_warning(config: Config, entry: UserConfig, what: str) -> str:
    return (f"warning: {entry.phone} is in [[users]] of {config.source}, which {what} when "
            "mediabot next starts; change the file too")


# ------------------------------------------------------------------ history

def show_history(config: Config, phone: str, limit: int) -> list[str]:
    """The user's newest ``limit`` messages, oldest first: time, role, content; then the
    newest ``limit`` texts sent to them, with what became of each (``_text_state``)."""
    user = lookup_member(phone, config)
    rows = history.newest_rows(user.id, limit)
    zone = config.server.zone
    lines = ([_message_line(row, zone) for row in reversed(rows)] if rows
             else [f"no messages stored for {_label(user)}"])
    texts = outbox.newest_texts(user.id, limit)
    if texts:
        lines += ["", f"texts to {_label(user)}:"]
        lines += [_text_line(text, zone) for text in reversed(texts)]
    return lines


def _text_line(text: db.Outbox, zone: dt.tzinfo) -> str:
    when = as_local(text.created_at, zone)
    body = text.body if len(text.body) <= TEXT_CHARS else text.body[:TEXT_CHARS - 3] + "..."
    return f"{when:%Y-%m-%d %H:%M}  {_text_state(text):<17}  {printable(body)}"


def _text_state(text: db.Outbox) -> str:
    """Twilio's last report (delivered, undelivered 30003, ...) once it accepted the text;
    before that, where it is in the outbox."""
    if text.status == db.OutboxStatus.PENDING:
        return f"outbox, {text.attempts} tries"
    if text.status != db.OutboxStatus.SENT:
        return "withdrawn" if text.status == db.OutboxStatus.CANCELLED else "not sent"
    code = f" {text.delivery_error}" if text.delivery_error else ""
    return (text.delivery or "sent") + code


def _message_line(row: db.Message, zone: dt.tzinfo) -> str:
    when = as_local(row.created_at, zone)
    return f"{when:%Y-%m-%d %H:%M}  {row.role:<9}  {printable(_message_text(row))}"


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """``text`` on one terminal line with nothing for the terminal to obey: newlines (a
    joined burst), escape sequences, other control characters and the invisible bidi
    marks that reorder what follows are written out as ``\\n``, ``\\x1b``, ``\\u202e``."""
    return "".join(ch if ch.isprintable() or ch == " " else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _message_text(row: db.Message) -> str:
    if row.role == "tool":
        text = row.content or ""
        if len(text) > TOOL_RESULT_CHARS:
            text = text[:TOOL_RESULT_CHARS] + "..."
        return f"({row.name}) {text}" if row.name else text
    parts = [row.content] if row.content else []
    parts += [_call_text(call) for call in _calls(row)]
    return " ".join(parts)


def _calls(row: db.Message) -> list[dict]:
    try:
        calls = json.loads(row.tool_calls) if row.tool_calls else []
    except ValueError:
        return [{"function": {"name": "?", "arguments": "(unreadable)"}}]
    return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []


def _call_text(call: dict) -> str:
    function = call.get("function")
    if not isinstance(function, dict):
        function = {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return f"[called {function.get('name') or '?'} {arguments}]"


def count_member_messages(user: db.User) -> int:
    return history.count_messages(user.id)


def clear_member_history(user: db.User) -> int:
    """What RESET does (``conversation.forget_conversation``), for the operator."""
    removed = forget_conversation(user.id)
    log.debug("history of user %s cleared by the operator (%d messages)", user.id, removed)
    return removed
