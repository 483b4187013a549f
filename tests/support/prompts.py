"""Reading a prompt the model received: its conversation, the person's part, the tools it was
offered and their results."""

import json

from tests.support.clock import STAMP


def tool_results(request):
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def offered(request):
    return {t["function"]["name"] for t in request.get("tools", [])}


def system_of(request) -> str:
    return request["messages"][0]["content"]


def body(messages):
    """The conversation after the one system message (which must be first and alone) and
    the person's part, if the prompt has one (``prelude``)."""
    assert messages[0]["role"] == "system"
    assert all(m["role"] != "system" for m in messages[1:])
    return messages[3:] if prelude(messages) else messages[1:]


def prelude(messages):
    """The text of the bracketed user message and its acknowledgement right after the system
    message (the person's part and the window's context: what fell out, stored notes), or
    "" when the prompt has none."""
    from mediabot.conversation.prompt.build import PERSON_ACK

    first = messages[1]["content"] if len(messages) > 2 else ""
    if (messages[2:3] != [{"role": "assistant", "content": PERSON_ACK}]
            or not (isinstance(first, str) and first.startswith("[") and first.endswith("]"))):
        return ""
    return first[1:-1]


def person_part(request: dict) -> str:
    """The person's part of a prompt the model received (their name, role, language, what
    waits for an admin: a bracketed user message and its acknowledgement right after the
    system message, issue 31), or "" when it has none."""
    from mediabot.conversation.prompt.build import PERSON_ACK

    rest = [m for m in request["messages"] if m["role"] != "system"]
    if rest[1:2] != [{"role": "assistant", "content": PERSON_ACK}]:
        return ""
    text = rest[0].get("content") or ""
    return "" if STAMP.match(text) else text


def conversation(request: dict) -> list[dict]:
    """The messages after the system message and the person's part."""
    rest = [m for m in request["messages"] if m["role"] != "system"]
    return rest[2:] if person_part(request) else rest
