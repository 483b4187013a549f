"""The message-sequence rules the real OpenAI API enforces with HTTP 400, in one place.

``mediabot.history.validate_messages`` and the fake OpenAI server in the tests both use
``find_violation``, so a prompt the builder produces is judged by exactly the rules the fake
server answers 400 for. The wording, ``param`` and ``code`` follow the real API's error bodies
(including its spelling "preceeding"), so tests can assert what a user of the real API sees.

Two passes, as the real API does: first each message's own shape (role, content, ids), then
the sequence. Tool results are paired with their call by adjacency — a ``tool`` message
answers the assistant ``tool_calls`` message directly before it (other tool messages may sit
between) — never by a global set of ids, because Ollama reuses ``call_0`` on every turn.
Consecutive user messages are legal.
"""

from dataclasses import dataclass

ROLES = ("system", "developer", "user", "assistant", "tool")
MAX_ID_LENGTH = 40


@dataclass(frozen=True)
class Violation:
    """One broken rule: where (``index``, ``param``), which (``rule``), and the API's words."""

    index: int | None
    rule: str
    param: str
    message: str
    code: str | None = None


def find_violation(messages) -> Violation | None:
    """Return the first rule ``messages`` breaks, or None when the real API would accept it."""
    if not isinstance(messages, list):
        return Violation(None, "messages-not-a-list", "messages",
                         "Invalid type for 'messages': expected an array, but got "
                         f"{type(messages).__name__} instead.", "invalid_type")
    if not messages:
        return Violation(None, "messages-empty", "messages",
                         "Invalid 'messages': empty array. Expected an array with minimum "
                         "length 1, but got an empty array instead.", "empty_array")
    for index, message in enumerate(messages):
        violation = _check_shape(index, message)
        if violation:
            return violation
    return _check_sequence(messages)


def _check_shape(index: int, message) -> Violation | None:
    if not isinstance(message, dict):
        return Violation(index, "message-not-an-object", f"messages[{index}]",
                         f"Invalid type for 'messages[{index}]': expected an object, but got "
                         f"{type(message).__name__} instead.", "invalid_type")
    role = message.get("role")
    if role not in ROLES:
        supported = ", ".join(f"'{r}'" for r in ROLES[:-1]) + f", and '{ROLES[-1]}'"
        return Violation(index, "unknown-role", f"messages[{index}].role",
                         f"Invalid value: '{role}'. Supported values are: {supported}.",
                         "invalid_value")
    return (_check_tool_calls(index, message) or _check_content(index, message)
            or _check_tool_call_id(index, message))


def _check_tool_calls(index: int, message: dict) -> Violation | None:
    calls = message.get("tool_calls")
    if calls is None:
        return None
    if message["role"] != "assistant":
        return Violation(index, "tool-calls-not-on-assistant", f"messages[{index}].tool_calls",
                         f"Invalid parameter: 'tool_calls' is only allowed on messages with "
                         f"role 'assistant', not '{message['role']}'.")
    if not isinstance(calls, list) or not calls:
        return Violation(index, "tool-calls-empty", f"messages[{index}].tool_calls",
                         f"Invalid 'messages[{index}].tool_calls': empty array. Expected an "
                         "array with minimum length 1, but got an empty array instead.",
                         "empty_array")
    for position, call in enumerate(calls):
        call_id = call.get("id") if isinstance(call, dict) else None
        param = f"messages[{index}].tool_calls[{position}].id"
        if not isinstance(call_id, str) or not call_id:
            return Violation(index, "tool-call-id-missing", param,
                             f"Missing required parameter: '{param}'.",
                             "missing_required_parameter")
        if len(call_id) > MAX_ID_LENGTH:
            return _too_long(index, param, call_id)
    return None


def _check_content(index: int, message: dict) -> Violation | None:
    if message.get("content") is not None:
        return None
    if message["role"] == "assistant" and message.get("tool_calls"):
        return None
    return Violation(index, "content-null", f"messages.[{index}].content",
                     "Invalid value for 'content': expected a string, got null.")


def _check_tool_call_id(index: int, message: dict) -> Violation | None:
    if message["role"] != "tool":
        return None
    call_id = message.get("tool_call_id")
    param = f"messages[{index}].tool_call_id"
    if not isinstance(call_id, str) or not call_id:
        return Violation(index, "tool-call-id-missing", param,
                         f"Missing required parameter: '{param}'.", "missing_required_parameter")
    if len(call_id) > MAX_ID_LENGTH:
        return _too_long(index, param, call_id)
    return None


def _too_long(index: int, param: str, value: str) -> Violation:
    return Violation(index, "id-too-long", param,
                     f"Invalid '{param}': string too long. Expected a string with maximum "
                     f"length {MAX_ID_LENGTH}, but got a string with length {len(value)} "
                     "instead.", "string_above_max_length")


def _check_sequence(messages: list[dict]) -> Violation | None:
    """Walk once, remembering the open assistant ``tool_calls`` message and its unanswered ids."""
    parent = None          # index of the assistant message the current tool run answers
    unanswered: list[str] = []
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            violation = _check_tool_result(index, message, messages, parent)
            if violation:
                return violation
            if message["tool_call_id"] in unanswered:
                unanswered.remove(message["tool_call_id"])
            continue
        if unanswered:
            return _missing_results(parent, unanswered)
        parent = index if message.get("tool_calls") else None
        unanswered = [call["id"] for call in message.get("tool_calls") or ()]
    return _missing_results(parent, unanswered) if unanswered else None


def _check_tool_result(index: int, message: dict, messages: list[dict],
                       parent: int | None) -> Violation | None:
    if parent is None:
        return Violation(index, "tool-without-call", f"messages.[{index}].role",
                         "Invalid parameter: messages with role 'tool' must be a response to a "
                         "preceeding message with 'tool_calls'.")
    ids = [call["id"] for call in messages[parent]["tool_calls"]]
    if message["tool_call_id"] not in ids:
        return Violation(index, "unknown-tool-call-id", f"messages.[{index}].tool_call_id",
                         f"Invalid parameter: 'tool_call_id' of '{message['tool_call_id']}' "
                         "not found in 'tool_calls' of previous message.")
    return None


def _missing_results(parent: int, unanswered: list[str]) -> Violation:
    return Violation(parent, "tool-calls-unanswered", f"messages.[{parent}].role",
                     "An assistant message with 'tool_calls' must be followed by tool messages "
                     "responding to each 'tool_call_id'. The following tool_call_ids did not "
                     f"have response messages: {', '.join(unanswered)}")
