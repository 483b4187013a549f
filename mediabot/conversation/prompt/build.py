"""The prompt builder: stored history in, the messages the model reads out. Pure.

It takes plain dicts in the OpenAI message shape (``role``, ``content``, ``tool_calls``
as a list, ``tool_call_id``, ``name``; keys starting with ``_`` such as the store's ``_id``
are carried but never sent) and returns new dicts; it never mutates its input. Stored history
keeps what really happened; only the prompt is reshaped. A prompt is built in five steps
(docs/architecture.md, "The prompt's shape"):

1. prune orphans — in a run of user messages with no assistant between them, keep the last;
2. sanitise — drop tool results that do not directly follow their call, drop messages that
   cannot be sent (null content, unknown roles), and *close* an assistant ``tool_calls``
   message whose results were lost (a crash mid-loop) with a synthetic "interrupted" result
   per missing call: the model then knows it tried, and that the outcome is unknown, instead
   of silently forgetting the attempt. Tool-call ids are renumbered to short per-prompt ids;
3. shape — reshape, turn by turn (a user message and everything up to the next one), into
   the portable shape below;
4. window — in atomic units (a user message, a turn's reply, one stored call message with
   all its results), within ``max_messages`` prompt messages, the cold-read budget
   ``prompt_tokens`` and the hard token cap ``max_tokens``, evicted in blocks
   (``window.window_start``): once full, the oldest units go until about half is left, so
   most texts only append; the window starts at a user message and always holds the newest
   one. The start a turn's first request chose holds through that turn's tool rounds: its
   calls and results are appended, past ``max_messages`` and ``prompt_tokens`` if need be,
   and only ``max_tokens`` may move the start mid-turn (the others apply again once the
   turn has its reply). The model keeps the context it started the turn with, and each
   tool round only appends to the prompt the server just read. At each block eviction the
   results of every turn before the previous one are sent, from then on, as their call and
   a one-line digest (``shape.digest``: titles, years, ids, counts, or the error or
   message): the model answered from them already, and a later text may still name a
   title or need an id, but not the overviews, sizes and progress. Between evictions they
   stay as they were sent, so the prefix only grows; the stored rows keep them whole;
5. one system message, the system prompt alone (the same for the whole household), then
   the person's part as a bracketed user message and a short acknowledgement: who they
   are, then what fell out ("Earlier messages were pruned. Tool operations included: ..."
   or the caller's rolling ``summary``), then any stored system notes of the window, as
   its paragraphs (``with_person``). The pruned line names
   every tool operation evicted so far in the conversation: the evicted units' and, through
   ``earlier_tools`` (``conversation.history.tools_before``), those of stored rows older
   than the fetched history, since the last RESET; in the tool catalog's order
   (``tool_order``).

The layout is cache-stable by construction. A local server (llama.cpp, Ollama, vLLM) reuses
the longest common prefix of this prompt and the last one it read and evaluates the rest
again, so the order is: what never changes first (the system prompt, then the tool schemas,
which most templates render right after it, in the catalog's order: the same for every
member, so the household shares that prefix), what changes rarely next (the person's part,
with the pruned line or summary, and notes: they change only when a block is evicted; the
pruned line lists the tools in the catalog's order and forgets none, so after its first
appearance it changes only when a kind of tool first falls out), the conversation last.
Nothing that changes each text comes before it: the system prompt names no date or time;
each user message starts with the local time it was received (``shape.stamp_texts``),
rendered from its stored row: short ("[Sat 18:33]") after a text of the same day, full
("[Sat 2026-03-14 18:33 GMT]") on a day's first and on the window's first, whose full stamp
the cut counts (``Unit.lead_chars``), so each text is the same in every later prompt while
it and the text before it are kept (``stamps``). The window's start is replayed from
the fetched history (``recent_history``, whose first row moves only in steps), so it moves
only at a block eviction; a stored call keeps its prompt id (derived from its row) for as
long as it is in the window. bench/prompt_cache.py measures this on a real llama-server;
tests/conversation/prompt/test_window.py holds it on rendered templates.

The portable shape is what OpenAI *and* the chat templates of open-model servers accept, with
no per-provider switch (the rules are ``find_violation(..., portable=True)``): exactly one
system message, first; then a user message; then strictly user -> assistant -> user, where an
assistant turn is zero or more call/result pairs followed by one text reply. Whatever comes
before the oldest kept user message is evicted and named in the person's part, so the first
message after it is always a user message. How each stored shape is mended:

- parallel calls: one stored message with N calls is sent as N consecutive pairs, each an
  assistant message with exactly one call and ``content: ""`` followed by its result, in the
  stored order; the pairs stay one unit for the window (seed 001);
- every result carries ``name``, its call's function name; a call with no name is "unknown";
- arguments: a JSON object string passes as stored (an object stored as a dict is
  serialised); null, ``"null"``, empty or blank arguments become ``"{}"`` (the tools read
  them as no arguments too); anything else (invalid JSON, a list, a number, NaN) becomes
  ``{"invalid_arguments": "<the text as stored>"}``, so the model still sees what it sent
  next to the error its tool answered;
- text beside calls (or any assistant text of a turn) never goes out beside a call: all the
  assistant texts of a finished turn are joined, in order and separated by a blank line, into
  the one reply that closes it after its calls. This merges an expiry notice stored after a
  reply (assistant -> assistant) into that reply, and keeps what the model wrote beside a
  call. In the turn still in progress (the newest user message, then calls and results),
  such text waits: the prompt ends with the last result, and the text comes back, joined to
  the reply, once the turn has one. (A plain reply stored before further calls of that same
  open turn cannot be placed and is counted as dropped; the engine never stores one.)
- a turn that ended without a reply (the model failed after a tool round, a crash closed the
  call, or user -> user survived pruning) and is followed by a newer user message is closed
  by a short synthetic reply, ``shape.UNANSWERED_LINE`` (after any text the model wrote
  beside its calls), so the model knows no answer was sent and the newest user message stays;
- stored system (or developer) rows inside the window are merged into the person's part;
  outside it they fall out like anything else;
- content-part lists are sent as their joined text; tool results with null content as "".

Onboarding, Y/N exchanges and summaries are plain user -> assistant pairs and pass as they
are. The result always passes ``validate_messages`` (OpenAI's rules and the portable ones);
a failure there is a bug and raises.
"""

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from mediabot.conversation.prompt.message_rules import find_violation
from mediabot.conversation.prompt.shape import (
    PARAGRAPH,
    Unit,
    message_chars,
    sanitise,
    shape,
    with_turn_note,
)
from mediabot.conversation.prompt.window import (
    Evicted,
    Limits,
    Part,
    evicted_tools,
    part_lines,
    window_start,
)

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
PERSON_ACK = "OK."
WARN_FRACTION = 0.8
# The history a ``prompt_tokens`` budget leaves at least, whatever the system prompt and the
# tool schemas take: a text and the turn before it, with a search result (~800 characters
# since results are trimmed), fit in it. Measured on llama-server (bench/prompt_cache.py):
# the less history a budget leaves, the more often the window evicts and the server reads
# the kept part again; at ~300 a text's first request reused 83% of the prompt before it,
# at ~450 94%.
MIN_HISTORY_TOKENS = 400


@dataclass(frozen=True)
class Metrics:
    """What one prompt build did with the stored messages.

    Every stored message lands in one bucket: ``total == pruned + dropped + evicted + kept``
    (``kept`` counts the stored messages the prompt carries, merged ones included). ``sent``
    counts the prompt's conversation messages (after the system message and the person's
    part); it differs from ``kept`` by the
    reshaping: ``closed`` synthetic "interrupted" results and ``bridged`` synthetic replies
    (both counted over the whole history), parallel calls split, texts merged.
    ``estimated_tokens`` covers the whole prompt plus ``reserved_tokens`` (tool schemas).
    ``first_kept_id`` is the store ``_id`` of the oldest kept message, if it has one, so a
    caller can tell which rows a rolling summary must cover. ``digested`` counts the kept
    tool results sent as one-line digests.
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
    bridged: int = 0
    sent: int = 0
    digested: int = 0


@dataclass(frozen=True)
class Prompt:
    messages: list[dict]
    metrics: Metrics


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
    chars = sum(message_chars(m) for m in messages)
    return -(-chars // CHARS_PER_TOKEN)


def validate_messages(messages: list[dict]) -> None:
    """Raise ValueError naming the index and rule when the real API would answer HTTP 400,
    or when a common chat template would refuse the list (the portable rules)."""
    violation = find_violation(messages, portable=True)
    if violation is not None:
        where = "messages" if violation.index is None else f"message {violation.index}"
        raise ValueError(f"{where} breaks rule {violation.rule} "
                         f"({violation.param}): {violation.message}")


def build_llm_messages(system_prompt: str, history: list[dict], *, max_messages: int = 20,
                       max_tokens: int = 4000, summary: str | None = None,
                       zone: dt.tzinfo | None = None) -> list[dict]:
    """The OpenAI ``messages`` list for ``history``; see ``build_prompt``."""
    return build_prompt(system_prompt, history, max_messages=max_messages,
                        max_tokens=max_tokens, summary=summary, zone=zone).messages


def build_prompt(system_prompt: str, history: list[dict], *, max_messages: int = 20,
                 max_tokens: int = 4000, summary: str | None = None,
                 reserved_tokens: int = 0, zone: dt.tzinfo | None = None,
                 earlier_tools: Sequence[str] | None = None,
                 tool_order: Sequence[str] = (), turn_note: str = "",
                 prompt_tokens: int | None = None, person: str = "",
                 summary_through: int | None = None) -> Prompt:
    """Prune, sanitise, shape, window and prefix ``history``; return messages and metrics.

    ``max_messages`` caps the prompt messages after the system message; ``max_tokens`` caps
    the estimate of the whole prompt, counting the system and person messages and
    ``reserved_tokens`` (the tool schemas), on every request. ``prompt_tokens`` (None: none)
    is what a text's first request should cost, the same whole prompt counted: like
    ``max_messages`` it chooses the cut for a new text and lets that turn's tool rounds run
    past it, and it leaves the history at least ``MIN_HISTORY_TOKENS`` whatever the system
    prompt and schemas take. The newest user message and what follows it are kept even
    when they alone exceed every cap. With ``zone``, each stored user message
    starts with the local time it was received (``shape.stamp_texts``). Logs the metrics, a
    warning above 80% of the budget and a warning for consecutive same-role messages in the
    stored history. ``earlier_tools``: the tools used in stored messages older than
    ``history`` (``tools_before``; None when there are none): the pruned line names them
    with the evicted units' tools, in ``tool_order`` (the tool catalog's), so it changes only
    when a kind of tool first falls out. ``turn_note``: a note for this turn only, added to
    the newest user message (``with_turn_note``), never to the system message. ``person``:
    what belongs to this person (``person_note``), sent as a bracketed user message and a
    short acknowledgement right after the system message, so the system message and the
    tools the templates render after it are the same for the whole household
    (``with_person``). ``summary_through``: the newest stored ``_id`` the ``summary``
    covers; the window starts after it, so what the summary says is not sent again. Raises
    ValueError only on a bug (an invalid result).
    """
    pruned = prune_orphaned_user_messages(history)
    sane, dropped, closed = sanitise(pruned)
    clean = prune_orphaned_user_messages(sane)   # dropping a broken assistant can join users
    units, left_out, bridged = shape(clean, zone)
    fixed = (message_chars({"content": system_prompt}) + _turn_note_chars(turn_note)
             + (len(f"[{person}]{PERSON_ACK}") if person else 0)
             + reserved_tokens * CHARS_PER_TOKEN)
    soft = None if prompt_tokens is None else max(prompt_tokens * CHARS_PER_TOKEN - fixed,
                                                  MIN_HISTORY_TOKENS * CHARS_PER_TOKEN)
    part = Part(part_lines(units, earlier_tools, summary, tool_order), person=bool(person),
                frame=len(f"[]{PERSON_ACK}") - len(PARAGRAPH))
    cut = window_start(units, Limits(max_messages, max_tokens * CHARS_PER_TOKEN - fixed,
                                     part, soft),
                       _covered(units, summary_through if summary else None))
    start = cut.start
    evicted = Evicted(units[:start], earlier_tools)
    kept = [_opened(unit) if index == start else _briefed(unit) if index < cut.brief_before
            else unit for index, unit in enumerate(units) if index >= start]
    context = _context(kept, part.lines[start])
    said = PARAGRAPH.join(text for text in (person, context) if text)
    messages = with_person(with_turn_note(_assemble(system_prompt, kept), turn_note), said)
    validate_messages(messages)
    metrics = _metrics(history, units, start, messages,
                       pruned=len(history) - len(pruned) + len(sane) - len(clean),
                       dropped=dropped + left_out, closed=closed, bridged=bridged,
                       max_messages=max_messages, max_tokens=max_tokens,
                       reserved_tokens=reserved_tokens, prelude=2 if said else 0,
                       evicted_tools=tuple(evicted_tools(evicted, tool_order)),
                       digested=sum(len(unit.sources) - 1 for unit in units[start:cut.brief_before]
                                    if unit.brief is not None))
    _log_prompt(metrics, history)
    return Prompt(messages, metrics)


# ----------------------------------------------------------------- 4. window, 5. system

def _covered(units: list[Unit], through: int | None) -> int:
    """How many leading units a summary through ``through`` covers (their stored rows are all
    at or before it)."""
    if through is None:
        return 0
    return next((index for index, unit in enumerate(units)
                 if any(source.get("_id", through + 1) > through for source in unit.sources)),
                len(units))


def _turn_note_chars(note: str) -> int:
    """What ``with_turn_note`` adds to the newest user message: counted as it is sent."""
    return message_chars({"content": with_turn_note([{"role": "user", "content": ""}],
                                                    note)[0]["content"]})


def _briefed(unit: Unit) -> Unit:
    """A call unit with its results as digests (``shape.digest``); other units as they are."""
    return unit if unit.brief is None else replace(unit, messages=unit.brief)


def _opened(unit: Unit) -> Unit:
    """The window's first unit: a text with its full stamp (``Unit.opening``), which the
    cut counted (``Unit.lead_chars``); other units as they are."""
    return unit if unit.opening is None else replace(unit, messages=unit.opening)


def _assemble(system_prompt: str, kept: list[Unit]) -> list[dict]:
    """The system message (the shared prompt, the same for the whole household), then the
    kept units."""
    messages = [{"role": "system", "content": system_prompt}]
    for unit in kept:
        messages += unit.messages
    return messages


def _context(kept: list[Unit], line: str) -> str:
    """What this conversation's window says about itself: the context line when anything
    fell out, then the stored system notes of the kept units. It goes with the person's
    part, after the shared prefix: it changes only at a block eviction, but differently for
    each member, so in the system message it would split the household's prefix (measured:
    two members' prompts shared ~1,235 tokens until the first eviction, then ~370)."""
    return PARAGRAPH.join([line] * bool(line) + [unit.note for unit in kept if unit.note])


def with_person(messages: list[dict], person: str) -> list[dict]:
    """``messages`` with the person's part right after the system message, as a user message
    in brackets and ``PERSON_ACK``: after the shared system text and the tools (Qwen-style
    templates render the tools inside the system turn, so a second paragraph there would
    come before them) and before the conversation. A second system message would do the
    same, but Gemma's, Mistral's and other templates refuse one; a prefix on the first
    text would move with the window. The person's part carries the window's context too
    (``_context``). Nothing to say, the same list."""
    if not person:
        return messages
    return [messages[0], {"role": "user", "content": f"[{person}]"},
            {"role": "assistant", "content": PERSON_ACK}, *messages[1:]]


def _metrics(history: list[dict], units: list[Unit], start: int, messages: list[dict],
             **settings: Any) -> Metrics:
    kept = [source for unit in units[start:] for source in unit.sources]
    kept_ids = [source["_id"] for source in kept if "_id" in source]
    return Metrics(
        total=len(history),
        kept=len(kept),
        evicted=sum(len(unit.sources) for unit in units[:start]),
        pruned=settings["pruned"],
        dropped=settings["dropped"],
        closed=settings["closed"],
        bridged=settings["bridged"],
        sent=len(messages) - 1 - settings["prelude"],
        estimated_tokens=estimate_tokens(messages) + settings["reserved_tokens"],
        max_tokens=settings["max_tokens"],
        max_messages=settings["max_messages"],
        evicted_tools=settings["evicted_tools"],
        first_kept_id=min(kept_ids) if kept_ids else None,
        digested=settings["digested"],
    )


def _log_prompt(metrics: Metrics, history: list[dict]) -> None:
    log.info("prompt built: %d history messages, %d kept, %d evicted, %d pruned, %d dropped, "
             "%d closed, %d bridged, %d sent, %d results digested, ~%d/%d tokens", metrics.total,
             metrics.kept, metrics.evicted, metrics.pruned, metrics.dropped, metrics.closed,
             metrics.bridged, metrics.sent, metrics.digested, metrics.estimated_tokens,
             metrics.max_tokens)
    if metrics.estimated_tokens > WARN_FRACTION * metrics.max_tokens:
        log.warning("prompt is at ~%d of %d estimated tokens (over %d%% of the budget)",
                    metrics.estimated_tokens, metrics.max_tokens, WARN_FRACTION * 100)
    pairs = [index for index in range(1, len(history))
             if history[index].get("role") == history[index - 1].get("role") == "assistant"]
    if pairs:
        log.warning("stored history has %d pair(s) of consecutive assistant messages (first "
                    "at positions %d and %d); merged in the prompt", len(pairs),
                    pairs[0] - 1, pairs[0])
