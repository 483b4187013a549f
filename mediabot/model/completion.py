"""A chat completion read into what the loop needs, whatever the server sent: the first
choice as an OpenAI-shaped assistant message dict (content parts joined, a chat template's
control markers cut off, tool calls given an id and a name) and the usage figures.
``ModelError`` when the answer is no chat completion at all.
"""

import re
from dataclasses import dataclass

from mediabot.model.errors import ModelError

# What a chat template wraps turns in; a small model sometimes writes them into its reply,
# and everything from one on is the model playing the next turn itself.
CONTROL_MARKERS = re.compile(
    r"<\|im_end\|>|<\|im_start\|>|<end_of_turn>|<start_of_turn>|<\|eot_id\|>"
    r"|<\|start_header_id\|>|<\|end\|>|<\|endoftext\|>|<\|user\|>|<\|assistant\|>|</s>")

@dataclass
class Completion:
    message: dict
    prompt_tokens: int | None = None
    cached_tokens: int | None = None   # of prompt_tokens, reused from the server's cache


def completion_of(response: object) -> Completion:
    """The first choice as an assistant message dict; ModelError when there is none.

    A base_url that serves a web page answers 200 with HTML, which the SDK hands back as a
    str; some servers send a null message or content parts: none of that may crash a turn.
    """
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        raise ModelError("error", "the answer was not a chat completion; check that [llm] "
                                  "base_url is the API address (it usually ends in /v1)")
    if not choices:
        raise ModelError("error", "the answer had no choices")
    raw = getattr(choices[0], "message", None)
    if raw is None:
        raise ModelError("error", "the answer had no message")
    message: dict = {"role": "assistant",
                     "content": without_markers(_text(getattr(raw, "content", None)))}
    calls = getattr(raw, "tool_calls", None)
    if calls and isinstance(calls, list):
        message["tool_calls"] = [_tool_call(call, index) for index, call in enumerate(calls)]
    elif not message["content"]:
        message["content"] = ""
    usage = getattr(response, "usage", None)
    details = getattr(usage, "prompt_tokens_details", None)
    return Completion(message, getattr(usage, "prompt_tokens", None),
                      getattr(details, "cached_tokens", None))


def without_markers(text: str | None) -> str | None:
    """The reply up to the first chat-template control marker (``CONTROL_MARKERS``)."""
    if text is None:
        return None
    match = CONTROL_MARKERS.search(text)
    return text if match is None else text[:match.start()].rstrip()


def _text(content: object) -> str | None:
    """Content as text: content parts (``[{"type": "text", "text": ...}]``) are joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text") or "" for part in content if isinstance(part, dict))
    return str(content)


def _tool_call(call: object, index: int) -> dict:
    """One tool call as a dict with a string id, name and arguments, whatever the server sent.

    Some local servers leave out the id or send a null name; a missing id would leave the
    tool's result unpaired (the model would be told its outcome is unknown), a null name
    would break the turn, so both get a stand-in here.
    """
    function = getattr(call, "function", None)
    name = getattr(function, "name", None)
    arguments = getattr(function, "arguments", None)
    return {"id": getattr(call, "id", None) or f"call_{index}", "type": "function",
            "function": {"name": name if isinstance(name, str) else "",
                         "arguments": arguments if arguments is not None else ""}}
