"""The portable prompt shape: stored messages cleaned, then reshaped into atomic units.

The pure steps 2 (sanitise) and 3 (shape) of
``mediabot.conversation.prompt.build.build_prompt``; that module's docstring (and
docs/architecture.md, "The prompt's shape") says how each stored shape is mended. Here: a
list of stored OpenAI-shaped dicts becomes a list of ``Unit`` (the prompt messages that are
kept or evicted together, and the stored messages they stand for), never mutating its input.
"""

import datetime as dt
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, NoReturn

from mediabot.conversation.prompt.stamps import stamps

INTERRUPTED_RESULT = json.dumps(
    {"error": "interrupted: no result was recorded for this call, its outcome is unknown"})
UNANSWERED_LINE = "(No answer was sent: this turn ended before I replied.)"
DIGEST_LEAD = "(answered earlier; shortened)"
DIGEST_CHARS = 200
PARAGRAPH = "\n\n"
_TEXT_ROLES = ("user", "assistant", "system", "developer")


UnitKind = Literal["user", "calls", "reply", "note"]


@dataclass
class Unit:
    """Prompt messages kept or evicted together, and the stored messages they stand for.

    A "note" unit has no prompt message: its text joins the system message when kept. A
    "user" unit whose stamp is short has ``opening``, the message with its full stamp, sent
    when it is the window's first, which costs ``lead_chars`` more (``stamps``).
    """

    kind: UnitKind
    messages: list[dict]
    sources: list[dict] = field(default_factory=list)
    note: str = ""
    tools: tuple[str, ...] = ()
    chars: int = 0
    brief: list[dict] | None = None   # "calls": the same pairs with each result a digest
    brief_chars: int = 0
    opening: list[dict] | None = None
    lead_chars: int = 0


def message_chars(message: dict) -> int:
    """Characters of content and serialised tool_calls: what ``estimate_tokens`` counts."""
    content = message.get("content")
    if content is None:
        count = 0
    elif isinstance(content, str):
        count = len(content)
    else:
        count = len(json.dumps(content, separators=(",", ":")))
    calls = message.get("tool_calls")
    return count + (len(json.dumps(calls, separators=(",", ":"))) if calls else 0)


# ------------------------------------------------------------------------ 2. sanitise

def sanitise(history: list[dict]) -> tuple[list[dict], int, int]:
    """Clean copies that can be sent, with fresh ids; also how many dropped and closed.

    A stored call (one with an ``_id``) gets an id derived from its row; others are numbered
    in order ("call00001"), never clashing with the stored ones."""
    out, dropped, closed, index = [], 0, 0, 0
    ids = (f"call{n:05d}" for n in itertools.count(1))   # 9 alphanumerics: Mistral's rule too
    while index < len(history):
        message = history[index]
        calls = _parse_calls(message) if message.get("role") == "assistant" else []
        if calls:
            results, index = _take_results(history, index + 1)
            group, lost, missing = _close_group(message, calls, results, ids)
            out += group
            dropped, closed = dropped + lost, closed + missing
            continue
        simple = _simple_message(message)
        if simple is None:
            dropped += 1
        else:
            out.append(simple)
        index += 1
    return out, dropped, closed


def _parse_calls(message: dict) -> list[dict]:
    """The message's tool calls in a canonical shape; [] when absent or unreadable."""
    calls = message.get("tool_calls")
    if isinstance(calls, str):
        try:
            calls = json.loads(calls)
        except ValueError:
            return []
    if not isinstance(calls, list):
        return []
    return [_canonical_call(c) for c in calls if isinstance(c, dict)]


def _canonical_call(call: dict) -> dict:
    function = call.get("function")
    if not isinstance(function, dict):
        function = {}
    return {"id": str(call.get("id") or ""), "type": "function",
            "function": {"name": str(function.get("name") or "unknown"),
                         "arguments": portable_arguments(function.get("arguments"))}}


def portable_arguments(arguments: object) -> str:
    """Tool-call arguments as a JSON object string, whatever was stored (module docstring)."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return "{}"
    if isinstance(arguments, dict):
        return json.dumps(arguments)
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    try:
        parsed = json.loads(text, parse_constant=_not_json)
    except ValueError:
        return json.dumps({"invalid_arguments": text})
    if parsed is None:          # "null": how some servers say "no arguments", as the tools read it
        return "{}"
    return text if isinstance(parsed, dict) else json.dumps({"invalid_arguments": text})


def _not_json(constant: str) -> NoReturn:
    raise ValueError(f"{constant} is not JSON")


def _take_results(history: list[dict], index: int) -> tuple[list[dict], int]:
    """The tool messages directly after a call message, and the index after them."""
    start = index
    while index < len(history) and history[index].get("role") == "tool":
        index += 1
    return history[start:index], index


def _close_group(message: dict, calls: list[dict], results: list[dict],
                 ids: Iterator[str]) -> tuple[list[dict], int, int]:
    """Pair results with calls by original id, in order; close calls that have none.

    Pairing is positional within this one group, so ids repeated across turns (Ollama's
    ``call_0``) or even inside one message still pair correctly. Results that match no call
    are dropped. Returns (the call message then one result per call in order, dropped count,
    closed count); a synthetic result carries ``_closed``.
    """
    answers: list[dict | None] = [None] * len(calls)
    for result in results:
        slot = next((i for i, c in enumerate(calls)
                     if answers[i] is None and c["id"] == str(result.get("tool_call_id"))), None)
        if slot is not None:
            answers[slot] = result
    row = message.get("_id")
    fresh = [dict(call, id=stored_call_id(row, n) if isinstance(row, int) else next(ids))
             for n, call in enumerate(calls)]
    group = [{"role": "assistant", "content": _text(message.get("content")) or "",
              "tool_calls": fresh, **_private(message)}]
    for call, answer in zip(fresh, answers, strict=True):
        content = INTERRUPTED_RESULT if answer is None else _text(answer.get("content")) or ""
        group.append({"role": "tool", "tool_call_id": call["id"],
                      "name": call["function"]["name"], "content": content,
                      **(_private(answer) if answer else {"_closed": True})})
    lost = len(results) - sum(a is not None for a in answers)
    return group, lost, answers.count(None)


def stored_call_id(row_id: int, index: int) -> str:
    """The prompt id of a stored message's ``index``-th call: the same in every prompt while
    the call is in the window (a template that renders ids keeps its cached prefix), and 9
    alphanumerics, as Mistral's templates demand. Row ids up to 36**7 fit."""
    return (_base36(row_id).rjust(7, "0") + _base36(index).rjust(2, "0"))[-9:]


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if number == 0:
            return digits


def _simple_message(message: dict) -> dict | None:
    """A user/assistant/system message with text content; None when it cannot be sent."""
    role, content = message.get("role"), _text(message.get("content"))
    if role not in _TEXT_ROLES or content is None:
        return None
    return {"role": role, "content": content, **_private(message)}


def _text(content: object) -> str | None:
    """Content as text: content parts are joined, other values serialised; None stays."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") if isinstance(part, dict) else str(part)
                       for part in content)
    return json.dumps(content) if isinstance(content, dict) else str(content)


def _private(message: dict) -> dict:
    return {k: v for k, v in message.items() if k.startswith("_")}


def with_turn_note(messages: list[dict], note: str) -> list[dict]:
    """``messages`` with ``note`` added, as its own paragraph in brackets, to the newest user
    message: a note for this turn only, after everything earlier turns already sent, so a
    server's cached prefix still holds (and the next text's prompt, which no longer carries
    it, differs only from this turn on). Returns new dicts; no note, the same list."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
    if not note or last is None or not isinstance(messages[last].get("content"), str):
        return messages
    noted = {**messages[last], "content": f"{messages[last]['content']}\n\n[{note}]"}
    return [*messages[:last], noted, *messages[last + 1:]]


# --------------------------------------------------------------------------- 3. shape

def shape(messages: list[dict], zone: dt.tzinfo | None = None) -> tuple[list[Unit], int, int]:
    """Portable units, turn by turn; also how many texts were left out and turns bridged.

    With ``zone``, each user message that carries the time it was received (``_at``, as
    stored) starts with it in ``zone`` (``stamp_texts``)."""
    turns: list[list[dict]] = []
    for message in messages:
        if message["role"] == "user" or not turns:
            turns.append([])
        turns[-1].append(message)
    units, left_out, bridged = [], 0, 0
    for number, turn in enumerate(turns):
        shaped, lost, bridge = _shape_turn(turn, last=number == len(turns) - 1)
        units += shaped
        left_out, bridged = left_out + lost, bridged + bridge
    if zone is not None:
        stamp_texts(units, zone)
    for unit in units:
        unit.chars = sum(message_chars(m) for m in unit.messages) + (
            len(PARAGRAPH + unit.note) if unit.note else 0)
        if unit.kind == "calls":
            unit.brief = [{**m, "content": digest(m["content"])} if m["role"] == "tool" else m
                          for m in unit.messages]
        unit.brief_chars = sum(message_chars(m) for m in unit.brief or unit.messages) + (
            len(PARAGRAPH + unit.note) if unit.note else 0)
        if unit.opening is not None:
            unit.lead_chars = sum(map(message_chars, unit.opening)) - unit.chars
    return units, left_out, bridged


def stamp_texts(units: list[Unit], zone: dt.tzinfo) -> None:
    """Start each user unit's text with the local time it was received, in ``zone``, as
    tools give times: short after a text of the same day ("[Sat 18:33] hi"), else full
    ("[Sat 2026-03-14 18:33 GMT] hi"), with the full form kept as ``opening`` for when it
    is the window's first (``stamps``). Rendered from the stored row, a stamp is the same
    in every later prompt while the text before it is kept too."""
    users = [unit for unit in units if unit.kind == "user"]
    for unit, stamp in zip(users, stamps([unit.sources[0].get("_at") or None
                                          for unit in users], zone), strict=True):
        if stamp is None:
            continue
        text = unit.messages[0]["content"]
        unit.messages = [{"role": "user", "content": stamp.after + text}]
        if stamp.opening != stamp.after:
            unit.opening = [{"role": "user", "content": stamp.opening + text}]


def digest(result: str) -> str:
    """One line that stands for a tool result the model already answered from: its error or
    message, else the titles (with year and ids) of its lists and its counts, after
    ``DIGEST_LEAD``, at most ``DIGEST_CHARS``; the result itself when that is shorter.

    Generic over the tools' compact JSON (``arr.tools``): what a later text may still refer
    to (a title, the id an add or a removal takes) stays; overviews, sizes, progress go.
    """
    try:
        data = json.loads(result)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        line = " ".join(result.split())
    elif isinstance(data.get("error") or data.get("message") or data.get("asked"), str):
        key = next(k for k in ("error", "message", "asked") if isinstance(data.get(k), str))
        line = f"{key}: {' '.join(data[key].split())}"
    else:
        line = "; ".join(filter(None, (_digest_value(key, value)
                                       for key, value in data.items())))
    line = f"{DIGEST_LEAD} {line}"
    if len(line) > DIGEST_CHARS:
        line = line[:DIGEST_CHARS - 3].rsplit(" ", 1)[0] + "..."
    return line if len(line) < len(result) else result


def _digest_value(key: str, value: object) -> str:
    if isinstance(value, list):
        return f"{key}: {', '.join(_digest_item(item) for item in value) or 'none'}"
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        return f"{key} {value}"
    return ""


def _digest_item(item: object) -> str:
    """ "The Office (2005) id tv73244", "Slow Horses S05E04": the name and the ids."""
    if not isinstance(item, dict):
        return str(item)
    name = " ".join(str(item[k]) for k in ("series", "episode", "title")
                    if isinstance(item.get(k), str | int))
    year = item.get("year")
    if isinstance(year, int) and str(year) not in name:
        name += f" ({year})"
    ids = [f"{k} {v}" for k, v in item.items() if k.endswith("_id") or k == "id"]
    return " ".join([name, *ids]).strip()


def _shape_turn(turn: list[dict], last: bool) -> tuple[list[Unit], int, int]:
    """A user message, its call units, and one closing reply (module docstring).

    Returns (units, replies left out of an open turn, 1 when a synthetic reply was added).
    The first turn of a history may lack its user message; the window never starts there.
    """
    head = turn[0]["role"] == "user"
    units = [Unit("user", [{"role": "user", "content": turn[0]["content"]}], [turn[0]])
             ] if head else []
    texts, replies, in_calls, index = [], [], False, int(head)
    while index < len(turn):
        message = turn[index]
        if message.get("tool_calls"):
            results, index = _take_results(turn, index + 1)
            units.append(_calls_unit(message, results))
            texts.append(message["content"])
            in_calls = True
            continue
        if message["role"] == "assistant":
            texts.append(message["content"])
            replies.append(message)
            in_calls = False
        else:
            units.append(Unit("note", [], [message], note=message["content"]))
        index += 1
    if last and in_calls:
        return units, len(replies), 0          # open turn: its texts wait for its reply
    bridge = head and not replies and not last
    lines = [text for text in texts if text] + ([UNANSWERED_LINE] if bridge else [])
    if lines or replies:
        units.append(Unit("reply", [{"role": "assistant", "content": PARAGRAPH.join(lines)}],
                           replies))
    return units, 0, int(bridge)


def _calls_unit(message: dict, results: list[dict]) -> Unit:
    """One stored call message as consecutive single-call pairs, one atomic unit."""
    pairs = []
    for call, result in zip(message["tool_calls"], results, strict=True):
        pairs += [{"role": "assistant", "content": "", "tool_calls": [call]},
                  {"role": "tool", "tool_call_id": call["id"], "name": result["name"],
                   "content": result["content"]}]
    sources = [message] + [r for r in results if not r.get("_closed")]
    return Unit("calls", pairs, sources,
                 tools=tuple(c["function"]["name"] for c in message["tool_calls"]))
