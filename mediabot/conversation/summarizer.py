"""Rolling summaries of what fell out of the window (opt-in: ``[history] summaries``).

Run after the reply has gone, never on its critical path. Rate-limited: one model call only
once ``EVERY`` more messages have been evicted since the last summary (or the last failed
try). Stored messages are never rewritten; the summary lives on the user row with the id of
the last message it covers. A failed call keeps the old summary (plain eviction goes on
working).
"""

import datetime as dt
import logging
from collections.abc import Sequence
from typing import Any

from mediabot.config import HistoryConfig
from mediabot.conversation import history
from mediabot.conversation.prompt.build import build_llm_messages, build_prompt
from mediabot.conversation.prompt.system_prompt import SUMMARY_PROMPT
from mediabot.model.chat import ChatModel, ModelError
from mediabot.store import users
from mediabot.store.people import Person

log = logging.getLogger(__name__)
EVERY = 10
MAX_SUMMARY_CHARS = 800


class Summarizer:
    def __init__(self, model: ChatModel, config: HistoryConfig, every: int = EVERY):
        self.model = model
        self.config = config
        self.every = every
        self._failed_through: dict[int, int] = {}   # user -> newest message a failed try saw

    def update(self, user: Person, *, system_prompt: str = "", reserved_tokens: int = 0,
               zone: dt.tzinfo | None = None, max_tokens: int | None = None,
               prompt_tokens: int | None = None, person: str = "",
               tool_order: Sequence[str] = ()) -> bool:
        """Summarise newly evicted messages if there are enough; True when it did.

        ``system_prompt``, ``reserved_tokens`` (the tool schemas) and ``zone`` (the time
        stamps on user messages) are what the turn's prompt counts against the budget, and
        ``max_tokens`` and ``prompt_tokens`` the budgets (the calibrated ones; ``[history]
        max_context_tokens`` and ``max_prompt_tokens`` when not given), with ``person`` (the
        person's part) and ``tool_order`` as the turn gave them, so "evicted" means what the
        model no longer sees.
        """
        user_id = user.id
        budget = (self.config.max_context_tokens if max_tokens is None else max_tokens,
                  self.config.max_prompt_tokens if prompt_tokens is None else prompt_tokens)
        fresh = self._newly_evicted(user, budget, system_prompt=system_prompt,
                                    reserved_tokens=reserved_tokens, zone=zone, person=person,
                                    tool_order=tool_order)
        failed_through = self._failed_through.get(user_id, 0)
        if len(fresh) < self.every or sum(m["_id"] > failed_through for m in fresh) < self.every:
            return False
        try:
            summary = self._summarise(user.summary, fresh)
        except ModelError as exc:
            self._failed_through[user_id] = fresh[-1]["_id"]
            log.warning("summary for user %s failed (%s); keeping the old one and trying "
                        "again after %d more messages", user_id, exc.reason, self.every)
            return False
        self._failed_through.pop(user_id, None)
        users.set_summary(user_id, summary, fresh[-1]["_id"])
        log.info("summary for user %s now covers messages through %s", user_id,
                 fresh[-1]["_id"])
        return True

    def _newly_evicted(self, user: Person, budget: tuple[int, int], *, system_prompt: str,
                       **prompt: Any) -> list[dict]:
        rows = history.recent_history(user.id, self.config.fetch_limit)
        earlier = history.tools_before(user.id, rows)
        built = build_prompt(system_prompt, rows, max_messages=self.config.max_messages,
                             max_tokens=budget[0], prompt_tokens=budget[1],
                             summary=user.summary, summary_through=user.summary_through,
                             earlier_tools=earlier, **prompt)
        first_kept = built.metrics.first_kept_id
        through = user.summary_through or 0
        return [m for m in rows
                if through < m["_id"] and (first_kept is None or m["_id"] < first_kept)]

    def _summarise(self, previous: str | None, messages: list[dict]) -> str:
        transcript = "\n".join(line for line in map(_line, messages) if line)
        content = (f"Previous summary: {previous}\n\n" if previous else "") + transcript
        messages = build_llm_messages(SUMMARY_PROMPT,    # the one portable shape
                                      [{"role": "user", "content": content}])
        # Not pinned to the person's slot (``ChatModel.complete``'s ``person``): llama-server
        # then gives this unrelated prompt its least recently used slot (a spare one when the
        # household is smaller than the slots), not the slot of the person who just texted
        # and is the likeliest to text next.
        completion = self.model.complete(messages, max_tokens=200)
        text = (completion.message.get("content") or "").strip()
        if not text:
            raise ModelError("error", "empty summary")
        return text[:MAX_SUMMARY_CHARS]


def _line(message: dict) -> str:
    role, content = message["role"], message.get("content")
    if role == "tool":
        return ""
    if role == "assistant" and message.get("tool_calls"):
        names = ", ".join(c["function"]["name"] for c in message["tool_calls"])
        return f"assistant used: {names}"
    return f"{role}: {content}" if content else ""
