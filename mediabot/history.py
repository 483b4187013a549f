"""Conversation history: a pure prompt builder, and thin store functions around it.

The core takes plain dicts in the OpenAI message shape (``role``, ``content``, ``tool_calls``
as a list, ``tool_call_id``, ``name``; keys starting with ``_`` such as the store's ``_id``
are carried but never sent) and returns new dicts; it never mutates its input. A prompt is
built in four steps (DESIGN section 4):

1. prune orphans — in a run of user messages with no assistant between them, keep the last;
2. sanitise — drop tool results that do not directly follow their call, drop messages the API
   would refuse (null content, unknown roles), and *close* an assistant ``tool_calls`` message
   whose results were lost (a crash mid-loop) with a synthetic "interrupted" result per
   missing call: the model then knows it tried, and that the outcome is unknown, instead of
   silently forgetting the attempt. Tool-call ids are renumbered to short, per-prompt ids;
3. window — walk back in atomic units (a user message, a plain assistant reply, a tool_calls
   message with all its results) until ``max_messages`` or the token budget is reached; the
   window starts at a user message and always holds the newest one;
4. one system line says what fell out (or the caller's rolling ``summary`` stands in its
   place), and the system prompt goes first.

The result always passes ``validate_messages``; a failure there is a bug and raises.
"""

import itertools
import json
import logging
from dataclasses import dataclass

from mediabot import confirm, db
from mediabot.validation import find_violation

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
WARN_FRACTION = 0.8
PRUNED_LINE = "Earlier messages were pruned."
INTERRUPTED_RESULT = json.dumps(
    {"error": "interrupted: no result was recorded for this call, its outcome is unknown"})
_SIMPLE_ROLES = ("user", "assistant", "system", "developer")


@dataclass(frozen=True)
class Metrics:
    """What one prompt build did; ``total == pruned + dropped + evicted + kept - closed``.

    ``kept`` counts history messages in the prompt (synthetic closing results included);
    ``estimated_tokens`` covers the whole prompt plus ``reserved_tokens`` (tool schemas).
    ``first_kept_id`` is the store ``_id`` of the oldest kept message, if it has one, so a
    caller can tell which rows a rolling summary must cover.
    """

    total: int
    kept: int
    evicted: int
    pruned: int
    dropped: int
    closed: int
    estimated_tokens: int
    max_tokens: int
    max_messages: int
    evicted_tools: tuple[str, ...] = ()
    first_kept_id: int | None = None


@dataclass(frozen=True)
class Prompt:
    messages: list[dict]
    metrics: Metrics


@dataclass
class _Unit:
    """Messages that are kept or evicted together; ``chars`` as ``estimate_tokens`` counts."""

    kind: str                       # "user", "assistant", "calls" or "system"
    messages: list[dict]
    tools: tuple[str, ...] = ()
    chars: int = 0


# ---------------------------------------------------------------------------- pure core

def prune_orphaned_user_messages(history: list[dict]) -> list[dict]:
    """Keep only the last user message of each run not broken by an assistant message.

    Rapid sends or a failed turn leave user messages nobody answered; the model answers
    them confusingly, so only the newest of a run is kept. Tool (and system) messages do not
    break a run; assistant messages do. Returns a new list; the input is untouched.
    """
    dropped, run_user = set(), None
    for index, message in enumerate(history):
        role = message.get("role")
        if role == "user":
            if run_user is not None:
                dropped.add(run_user)
            run_user = index
        elif role == "assistant":
            run_user = None
    return [m for i, m in enumerate(history) if i not in dropped]


def estimate_tokens(messages: list[dict]) -> int:
    """About one token per four characters of content and serialised tool_calls (rounded up).

    A rough figure for budget decisions and metrics, not billing; the server's
    ``usage.prompt_tokens`` stored on assistant rows is the truth to compare with.
    """
    chars = sum(_chars(m) for m in messages)
    return -(-chars // CHARS_PER_TOKEN)


def validate_messages(messages: list[dict]) -> None:
    """Raise ValueError naming the index and rule when the real API would answer HTTP 400."""
    violation = find_violation(messages)
    if violation is not None:
        where = "messages" if violation.index is None else f"message {violation.index}"
        raise ValueError(f"{where} breaks rule {violation.rule} "
                         f"({violation.param}): {violation.message}")


def build_llm_messages(system_prompt: str, history: list[dict], *, max_messages: int = 20,
                       max_tokens: int = 4000, summary: str | None = None) -> list[dict]:
    """The OpenAI ``messages`` list for ``history``; see ``build_prompt``."""
    return build_prompt(system_prompt, history, max_messages=max_messages,
                        max_tokens=max_tokens, summary=summary).messages


def build_prompt(system_prompt: str, history: list[dict], *, max_messages: int = 20,
                 max_tokens: int = 4000, summary: str | None = None,
                 reserved_tokens: int = 0) -> Prompt:
    """Prune, sanitise, window and prefix ``history``; return the messages and metrics.

    ``max_messages`` caps the history messages sent; ``max_tokens`` caps the estimate of the
    whole prompt, counting the system prompt, the pruned line and ``reserved_tokens`` (the
    tool schemas). The newest user message and what follows it are kept even when they alone
    exceed both caps. Logs the metrics, a warning above 80% of the budget and a warning for
    consecutive same-role messages. Raises ValueError only on a bug (an invalid result).
    """
    pruned = prune_orphaned_user_messages(history)
    sane, dropped, closed = _sanitise(pruned)
    clean = prune_orphaned_user_messages(sane)   # dropping a broken assistant can join users
    units = _group(clean)
    fixed = _chars({"content": system_prompt}) + reserved_tokens * CHARS_PER_TOKEN
    line_chars = _chars({"content": summary or _pruned_line(_tools(units))})
    start = _window_start(units, max_messages, max_tokens * CHARS_PER_TOKEN - fixed,
                          line_chars)
    messages = _assemble(system_prompt, units[:start], units[start:], summary)
    validate_messages(messages)
    metrics = _metrics(history, pruned, sane, clean, units, start, messages,
                       dropped=dropped, closed=closed, max_messages=max_messages,
                       max_tokens=max_tokens, reserved_tokens=reserved_tokens)
    _log_prompt(metrics, messages)
    return Prompt(messages, metrics)


def _chars(message: dict) -> int:
    content = message.get("content")
    if content is None:
        count = 0
    elif isinstance(content, str):
        count = len(content)
    else:
        count = len(json.dumps(content, separators=(",", ":")))
    calls = message.get("tool_calls")
    return count + (len(json.dumps(calls, separators=(",", ":"))) if calls else 0)


def _sanitise(history: list[dict]) -> tuple[list[dict], int, int]:
    """Clean copies the API accepts, with fresh ids; also how many dropped and closed."""
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
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return {"id": str(call.get("id") or ""), "type": "function",
            "function": {"name": str(function.get("name") or "unknown"),
                         "arguments": arguments}}


def _take_results(history: list[dict], index: int) -> tuple[list[dict], int]:
    """The tool messages directly after a call message, and the index after them."""
    start = index
    while index < len(history) and history[index].get("role") == "tool":
        index += 1
    return history[start:index], index


def _close_group(message: dict, calls: list[dict], results: list[dict], ids) -> tuple:
    """Pair results with calls by original id, in order; close calls that have none.

    Pairing is positional within this one group, so ids repeated across turns (Ollama's
    ``call_0``) or even inside one message still pair correctly. Results that match no call
    are dropped. Returns (messages, dropped count, closed count).
    """
    answers: list[dict | None] = [None] * len(calls)
    for result in results:
        slot = next((i for i, c in enumerate(calls)
                     if answers[i] is None and c["id"] == str(result.get("tool_call_id"))), None)
        if slot is not None:
            answers[slot] = result
    fresh = [dict(call, id=next(ids)) for call in calls]
    group = [{"role": "assistant", "content": _text(message.get("content")),
              "tool_calls": fresh}]
    for call, answer in zip(fresh, answers):
        content = INTERRUPTED_RESULT if answer is None else _text(answer.get("content")) or ""
        group.append({"role": "tool", "tool_call_id": call["id"], "content": content,
                      **_private(answer or {})})
    lost = len(results) - sum(a is not None for a in answers)
    group[0].update(_private(message))
    return group, lost, answers.count(None)


def _simple_message(message: dict) -> dict | None:
    """A user/assistant/system message as the API wants it; None when it cannot be sent."""
    role, content = message.get("role"), _text(message.get("content"))
    if role not in _SIMPLE_ROLES or content is None:
        return None
    return {"role": role, "content": content, **_private(message)}


def _text(content):
    """Content as sent: strings and content-part lists pass; anything else is stringified."""
    if content is None or isinstance(content, (str, list)):
        return content
    return json.dumps(content) if isinstance(content, dict) else str(content)


def _private(message: dict) -> dict:
    return {k: v for k, v in message.items() if k.startswith("_")}


def _group(messages: list[dict]) -> list[_Unit]:
    """Split a sanitised list into units; a tool_calls message takes its results with it."""
    units: list[_Unit] = []
    for message in messages:
        if message["role"] == "tool":
            units[-1].messages.append(message)
        else:
            units.append(_Unit(_kind(message), [message]))
    for unit in units:
        unit.chars = sum(_chars(m) for m in unit.messages)
        unit.tools = tuple(c["function"]["name"] for c in unit.messages[0].get("tool_calls", ()))
    return units


def _kind(message: dict) -> str:
    if message["role"] == "assistant" and message.get("tool_calls"):
        return "calls"
    return message["role"] if message["role"] in ("user", "assistant") else "system"


def _tools(units: list[_Unit]) -> list[str]:
    """Distinct tool names in first-use order."""
    return list(dict.fromkeys(name for unit in units for name in unit.tools))


def _pruned_line(tools: list[str]) -> str:
    if not tools:
        return PRUNED_LINE
    return f"{PRUNED_LINE} Tool operations included: {', '.join(tools)}."


def _window_start(units: list[_Unit], max_messages: int, budget_chars: int,
                  line_chars: int) -> int:
    """Index of the first kept unit: the oldest user unit from which everything fits.

    Walks back once. Keeping everything needs no pruned line; any eviction reserves room for
    the longest line this history could need (the line can only shrink as more is kept).
    The newest user unit is the fallback start, whatever it costs.
    """
    user_starts = [i for i, unit in enumerate(units) if unit.kind == "user"]
    if not user_starts:
        return len(units)
    best, count, chars = user_starts[-1], 0, 0
    for index in range(len(units) - 1, -1, -1):
        count += len(units[index].messages)
        chars += units[index].chars
        if count > max_messages or chars > budget_chars:
            break
        if units[index].kind == "user" and (index == 0 or chars + line_chars <= budget_chars):
            best = index
    return best


def _assemble(system_prompt: str, evicted: list[_Unit], kept: list[_Unit],
              summary: str | None) -> list[dict]:
    messages = [{"role": "system", "content": system_prompt}]
    if evicted:
        messages.append({"role": "system", "content": summary or _pruned_line(_tools(evicted))})
    for unit in kept:
        messages += [{k: v for k, v in m.items() if not k.startswith("_")}
                     for m in unit.messages]
    return messages


def _metrics(history, pruned, sane, clean, units, start, messages, **settings) -> Metrics:
    kept_units = units[start:]
    kept_ids = [m["_id"] for unit in kept_units for m in unit.messages if "_id" in m]
    return Metrics(
        total=len(history),
        kept=sum(len(u.messages) for u in kept_units),
        evicted=sum(len(u.messages) for u in units[:start]),
        pruned=len(history) - len(pruned) + len(sane) - len(clean),
        dropped=settings["dropped"],
        closed=settings["closed"],
        estimated_tokens=estimate_tokens(messages) + settings["reserved_tokens"],
        max_tokens=settings["max_tokens"],
        max_messages=settings["max_messages"],
        evicted_tools=tuple(_tools(units[:start])),
        first_kept_id=kept_ids[0] if kept_ids else None,
    )


def _log_prompt(metrics: Metrics, messages: list[dict]) -> None:
    log.info("prompt built: %d history messages, %d kept, %d evicted, %d pruned, %d dropped, "
             "%d closed, ~%d/%d tokens", metrics.total, metrics.kept, metrics.evicted,
             metrics.pruned, metrics.dropped, metrics.closed, metrics.estimated_tokens,
             metrics.max_tokens)
    if metrics.estimated_tokens > WARN_FRACTION * metrics.max_tokens:
        log.warning("prompt is at ~%d of %d estimated tokens (over %d%% of the budget)",
                    metrics.estimated_tokens, metrics.max_tokens, WARN_FRACTION * 100)
    for index in range(1, len(messages)):
        role = messages[index]["role"]
        if role in ("user", "assistant") and messages[index - 1]["role"] == role:
            log.warning("consecutive %s messages at prompt positions %d and %d",
                        role, index - 1, index)


# ---------------------------------------------------------------------------- thin store

def save_message(user_id, message: dict, *, prompt_tokens: int | None = None) -> int:
    """Store one OpenAI-shaped message for a user; return its row id.

    ``tool_calls`` is stored as JSON text (an empty list as NULL). Raises peewee errors when
    the user does not exist or the database is not open.
    """
    calls = message.get("tool_calls")
    row = db.Message.create(
        user=user_id, role=message["role"], content=message.get("content"),
        tool_calls=json.dumps(calls) if calls else None,
        tool_call_id=message.get("tool_call_id"), name=message.get("name"),
        prompt_tokens=prompt_tokens)
    return row.id


def get_history(user_id, limit: int) -> list[dict]:
    """The user's newest ``limit`` messages, oldest first, each with its row id as ``_id``.

    Reads ``ORDER BY id DESC LIMIT n`` on the (user, id) index, so the cost does not grow
    with the number of stored rows. Unreadable tool_calls JSON is logged and left out (the
    prompt builder then drops or keeps the message by its content).
    """
    query = (db.Message
             .select(db.Message.id, db.Message.role, db.Message.content,
                     db.Message.tool_calls, db.Message.tool_call_id, db.Message.name)
             .where(db.Message.user == user_id)
             .order_by(db.Message.id.desc())
             .limit(limit)
             .tuples())
    return [_row_to_message(*row) for row in reversed(list(query))]


def _row_to_message(row_id, role, content, tool_calls, tool_call_id, name) -> dict:
    message = {"role": role, "content": content, "_id": row_id}
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


def clear_history(user_id) -> int:
    """Delete every stored message of one user; return how many were deleted."""
    return db.Message.delete().where(db.Message.user == user_id).execute()


def forget_conversation(user_id) -> int:
    """What RESET (and ``mediabot history clear``) does: the messages, the pending
    confirmation and the rolling summary go together; returns the messages deleted."""
    with db.database.atomic():
        removed = clear_history(user_id)
        confirm.clear_pending(user_id)
        db.User.update(summary=None, summary_through=None).where(db.User.id == user_id).execute()
    return removed
