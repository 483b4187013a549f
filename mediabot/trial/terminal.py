"""A conversation typed in the terminal: ``mediabot chat`` with the real engine and the demo
on the simulated library, with no Twilio between.

Lines come from whatever the caller reads (stdin) and replies go out through its ``echo``,
so nothing here knows about the command line.
"""

from collections.abc import Callable, Iterable, Iterator
from typing import TextIO

from mediabot.conversation.engine import Engine
from mediabot.conversation.history import last_message_id
from mediabot.conversation.incoming import read_text
from mediabot.ops.accounts import parse_phone
from mediabot.ops.errors import OpsError
from mediabot.store import db
from mediabot.store.people import get_person
from mediabot.store.users import find_by_phone, first_admin_or_operator
from mediabot.trial.demo import Echo, tool_activity


def converse(engine: Engine, user: db.User, lines: Iterable[str], echo: Echo,
             show_tools: bool = False) -> None:
    """Answer each non-empty line through the engine, as ``user``, as it would be a text;
    with ``show_tools``, what the tools did is echoed before the reply."""
    for line in lines:
        text = line.strip()
        if not text:
            continue
        before = last_message_id(user.id) if show_tools else 0
        person = get_person(user.id, engine.config.sms.language)   # this line's turn
        answer = engine.respond(read_text(person, text))
        for activity in tool_activity(user.id, before) if show_tools else ():
            echo(activity)
        if answer.reply.text:
            echo(f"bot> {answer.reply.text}")
        engine.after_turn(answer)


def typed_lines(stream: TextIO, write: Callable[[str], None]) -> Iterator[str]:
    """Each line read from ``stream`` until it ends; when a person types them (a terminal),
    a "you> " prompt is written before each."""
    interactive = stream.isatty()
    while True:
        if interactive:
            write("you> ")
        line = stream.readline()
        if not line:
            return
        yield line


def chat_member(phone: str | None, region: str) -> db.User:
    """``--as PHONE`` (an existing user), else the first admin, else a stand-in.

    An unknown ``--as`` number is refused (``OpsError``) rather than added: a user row is
    what lets a number text the daemon, so trying the chat must never grant that silently.
    A number that is no phone number is an ``InvalidValue`` of ``--as``.
    """
    if phone:
        number = parse_phone(phone, region, param_hint="--as")
        user = find_by_phone(number)
        if user is None:
            raise OpsError(
                f"{number} is not a user, so there is nobody to chat as; add them first with "
                f"`mediabot users add {number} --name NAME`, or leave out --as to chat as "
                "the first admin")
        return user
    return first_admin_or_operator()
