"""The message-sequence rules the real OpenAI API enforces with HTTP 400, in one place.

``mediabot.conversation.prompt.build.validate_messages`` and the fake OpenAI server in the
tests both use ``find_violation``, so a prompt the builder produces is judged by exactly the rules
the fake server answers 400 for. The wording, ``param`` and ``code`` follow the real API's error
bodies (including its spelling "preceeding"), so tests can assert what a user of the real API sees.

Two passes, as the real API does: first each message's own shape (role, content, ids), then
the sequence. Tool results are paired with their call by adjacency — a ``tool`` message
answers the assistant ``tool_calls`` message directly before it (other tool messages may sit
between) — never by a global set of ids, because Ollama reuses ``call_0`` on every turn.
Consecutive user messages are legal under OpenAI's rules.

``find_violation(messages)`` checks OpenAI's rules only (the fake server's 400s).
``find_violation(messages, portable=True)`` also checks the portable rules
(docs/architecture.md, "The prompt's shape"): what the chat templates of open-model servers
(vLLM, llama.cpp, Ollama, LM Studio) accept, which is stricter than OpenAI. They run after
OpenAI's, on a list OpenAI would accept:

- at most one system (or developer) message, and only as the first message;
- the first message after it is a user message;
- strict alternation: a user message is followed by an assistant message; an assistant text
  reply by a user message; an assistant call by its one tool result; a tool result by an
  assistant message (the conversation may end after a user message, a reply or a result);
- every tool result carries ``name``, the name of the call it answers;
- an assistant message carries text or tool calls, never both: ``content`` is ``""`` beside
  calls (never null, never text), and it holds at most one call;
- a call's ``arguments`` is a JSON object serialised as a string;
- every ``content`` is a string (no content-part lists: many templates only take text).
"""

import json
from dataclasses import dataclass
from typing import NoReturn

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


def find_violation(messages: object, *, portable: bool = False) -> Violation | None:
    """Return the first rule ``messages`` breaks, or None when the real API would accept it.

    With ``portable``, the portable rules (module docstring) are checked too, after OpenAI's.
    """
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
    violation = _check_sequence(messages)
    if violation is None and portable:
        violation = _check_portable(messages)
    return violation


def _check_shape(index: int, message: object) -> Violation | None:
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
    parent: int | None = None   # index of the assistant message the current tool run answers
    unanswered: list[str] = []
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            violation = _check_tool_result(index, message, messages, parent)
            if violation:
                return violation
            if message["tool_call_id"] in unanswered:
                unanswered.remove(message["tool_call_id"])
            continue
        if unanswered and parent is not None:
            return _missing_results(parent, unanswered)
        parent = index if message.get("tool_calls") else None
        unanswered = [call["id"] for call in message.get("tool_calls") or ()]
    return _missing_results(parent, unanswered) if unanswered and parent is not None else None


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


# ---------------------------------------------------------------- the portable rules

_NEXT = {   # what may follow each kind of message, and what the rule calls it
    "user": ("reply", "call"),
    "reply": ("user",),
    "call": ("result",),
    "result": ("reply", "call"),
}
_SYSTEM_ROLES = ("system", "developer")


def _check_portable(messages: list[dict]) -> Violation | None:
    """The portable rules, on a list that already passes OpenAI's."""
    return (_check_system(messages) or _check_portable_shapes(messages)
            or _check_alternation(messages))


def _portable(index: int, rule: str, param: str, message: str) -> Violation:
    return Violation(index, rule, param, message, "portable_shape")


def _check_system(messages: list[dict]) -> Violation | None:
    for index, message in enumerate(messages):
        if message["role"] in _SYSTEM_ROLES and index > 0:
            rule = "second-system" if messages[0]["role"] in _SYSTEM_ROLES else "system-not-first"
            return _portable(index, rule, f"messages.[{index}].role",
                             "A system message may only come first, and only once; merge "
                             "other system notes into it.")
    return None


def _check_portable_shapes(messages: list[dict]) -> Violation | None:
    for index, message in enumerate(messages):
        calls = message.get("tool_calls")
        violation = (_check_call_message(index, message, calls) if calls
                     else _check_text(index, message))
        if violation:
            return violation
    return None


def _check_text(index: int, message: dict) -> Violation | None:
    if isinstance(message.get("content"), str):
        return None
    return _portable(index, "content-not-text", f"messages.[{index}].content",
                     "Content must be a string: many chat templates cannot read null or "
                     "content-part lists.")


def _check_call_message(index: int, message: dict, calls: list) -> Violation | None:
    if message["content"] != "":
        return _portable(index, "content-beside-calls", f"messages.[{index}].content",
                         "An assistant message carries either text or tool calls, not both; "
                         "content must be \"\" beside tool calls.")
    if len(calls) > 1:
        return _portable(index, "parallel-calls", f"messages.[{index}].tool_calls",
                         "At most one tool call per assistant message; send parallel calls as "
                         "consecutive call/result pairs.")
    function = calls[0].get("function") if isinstance(calls[0].get("function"), dict) else {}
    if not isinstance(function.get("name"), str) or not function["name"]:
        return _portable(index, "call-name-missing",
                         f"messages.[{index}].tool_calls[0].function.name",
                         "A tool call must name its function.")
    if not _is_json_object(function.get("arguments")):
        return _portable(index, "arguments-not-object",
                         f"messages.[{index}].tool_calls[0].function.arguments",
                         "Tool call arguments must be a JSON object serialised as a string.")
    return None


def _is_json_object(arguments: object) -> bool:
    if not isinstance(arguments, str):
        return False
    try:
        return isinstance(json.loads(arguments, parse_constant=_refuse), dict)
    except ValueError:
        return False


def _refuse(constant: str) -> NoReturn:
    raise ValueError(f"{constant} is not JSON")


def _kind(message: dict) -> str:
    if message["role"] == "assistant":
        return "call" if message.get("tool_calls") else "reply"
    return "result" if message["role"] == "tool" else message["role"]


def _check_alternation(messages: list[dict]) -> Violation | None:
    body = 1 if messages[0]["role"] in _SYSTEM_ROLES else 0
    previous = None
    for index in range(body, len(messages)):
        message, kind = messages[index], _kind(messages[index])
        if previous is None and kind != "user":
            return _portable(index, "first-not-user", f"messages.[{index}].role",
                             "After the system message, the conversation must start with a "
                             "user message.")
        if previous is not None and kind not in _NEXT[_kind(messages[previous])]:
            return _portable(index, "not-alternating", f"messages.[{index}].role",
                             f"Roles must alternate: a {_kind(messages[previous])} message "
                             f"cannot be followed by a {kind} message.")
        if kind == "result" and previous is not None:
            violation = _check_result_name(index, message, messages[previous])
            if violation:
                return violation
        previous = index
    return None


def _check_result_name(index: int, message: dict, call_message: dict) -> Violation | None:
    name = call_message["tool_calls"][0]["function"]["name"]
    if message.get("name") != name:
        return _portable(index, "result-name", f"messages.[{index}].name",
                         f"A tool result must carry the name of its call ('{name}').")
    return None
