"""What the model server last read for each person, and what one read-ahead did.

llama-server keeps the prompt it last read for a slot (and in host memory), so a text whose
prompt begins with it reads only its new tokens. Two things leave the next text's prompt
beginning elsewhere: a tool's own words sent as the reply (the server read up to the call,
never the result and the reply), and a window that slid (its first messages and the
person's part changed). After such a reply the daemon has the server read the next prompt
ahead, off the person's wait (``ChatModel.read_ahead``; docs/models.md, "Reading ahead"),
but only when the prompt does not already begin with what the server read: ``Reads`` holds
that, per person, in memory (a restart forgets it, and the first reply after reads ahead
once).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class ReadAhead:
    """What one read-ahead did: ``skipped`` says why nothing was sent, ``failed`` the
    reason (``ModelError.reason``) a request sent got no answer; else the server's figures."""

    skipped: str | None = None
    failed: str | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    duration_ms: int = 0

    @property
    def read(self) -> bool:
        return self.skipped is None and self.failed is None


class Reads:
    """Per person (their place in the household), the tools and messages the server has read
    (the last request's messages and the answer it wrote to them, or a read-ahead's prompt
    before its stand-in text), and who sent each slot's requests lately; thread-safe, as the
    workers answer people in parallel."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # None: the person's last request failed (a server that timed out or refused their
        # prompt is not given another long one off their wait)
        self._read: dict[int, tuple[list[dict], list[dict]] | None] = {}
        self._count = 0   # requests remembered, numbering them
        # per slot (None: the one the server picks), each person's latest request's number
        self._latest: dict[int | None, dict[int, int]] = {}
        self._decided: dict[int, int] = {}   # the number when a person's read-ahead was weighed

    def remember(self, person: int | None, tools: list[dict] | None,
                 messages: list[dict] | None, slot: int | None = None) -> None:
        """What the server read for ``person`` on ``slot``; ``messages`` None: their request
        failed."""
        if person is None:
            return
        with self._lock:
            self._read[person] = None if messages is None else (list(tools or []),
                                                                 list(messages))
            self._count += 1
            self._latest.setdefault(slot, {})[person] = self._count

    def shared(self, person: int, slot: int | None) -> bool:
        """Whether someone else's request went to ``slot`` since ``person``'s read-ahead was
        last weighed (ever, the first time), which counts as weighing it now. Where the server
        keeps one prompt per slot, that someone would likely take the slot again before the
        person's next text, and a prompt read ahead would be read for nothing."""
        with self._lock:
            since = self._decided.get(person, 0)
            self._decided[person] = self._count
            return any(other != person and number > since
                       for other, number in self._latest.get(slot, {}).items())

    def failed(self, person: int) -> bool:
        """Whether the person's last request got no answer."""
        with self._lock:
            return person in self._read and self._read[person] is None

    def holds(self, person: int, tools: list[dict] | None, messages: list[dict]) -> bool:
        """Whether the server read exactly ``messages`` with ``tools`` last for ``person``:
        then a prompt of these and one more text costs only that text."""
        with self._lock:
            read = self._read.get(person)
        return read is not None and read == (list(tools or []), list(messages))
