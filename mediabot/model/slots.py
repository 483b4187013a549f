"""Which of llama-server's slots each person's requests name (``id_slot``), so each person's
prompt stays in a slot of its own between texts.

llama-server (``--parallel N``; 4 slots by default) otherwise gives a request the slot whose
prompt shares the most with it. With the household's shared system text and tools in front,
that is often the slot of whoever texted last, and the person's own history is read again.
A request naming its slot keeps it (the number wraps round the slot count, so a household
bigger than the slots shares some).

Except where the server empties idle slots itself: with one KV buffer for all slots
(``--kv-unified``, on with the default slot count) and the host-memory cache (``--cache-ram``,
on by default), each new request saves every idle slot's prompt to host memory and empties
the slot (``--cache-idle-slots``, the default), then restores the best-matching saved
prompt into the slot it picks. A request that names an emptied slot gets nothing restored
(llama-server's ``get_available_slot`` only restores when it chose the slot itself), so
there pinning would make every change of member read its whole prompt. The server does not
say how it was started, so before the first slot is named it is asked, with three prompts
of ~10 tokens (``server_probe.keeps_idle_slots``): only a server that keeps an idle slot's
prompt is pinned to; one that empties them, or does not answer, chooses the slots itself.

The server is asked what it is once, at the first pinned call (never at import, at most
``DETECT_TIMEOUT`` a question); anything but a llama-server reporting more than one slot
and keeping idle slots means no pinning: OpenAI and others refuse arguments they do not
know. ``forget`` starts over (the server was down: it may come back as something else,
started otherwise).
"""

from __future__ import annotations

import logging
import threading

from mediabot.config import LLMConfig
from mediabot.model.server_probe import identify

log = logging.getLogger(__name__)

DETECT_TIMEOUT = 2.0


class SlotPins:
    """The slot for each person's requests while pinning pays; thread-safe (the workers
    answer people in parallel)."""

    def __init__(self, config: LLMConfig):
        self._config = config
        self._lock = threading.Lock()
        self._start()

    def _start(self) -> None:
        self._count: int | None = None   # slots to pin to; 1: none

    def slot_for(self, person: int | None) -> int | None:
        """The slot ``person`` (a small stable number: their place in the household) names,
        or None: no person, pinning off, not llama-server, one slot, or a server that
        empties idle slots."""
        if person is None or not self._config.pin_slots:
            return None
        with self._lock:
            if self._count is None:
                self._count = _detect(self._config)
            return person % self._count if self._count > 1 else None

    def forget(self) -> None:
        with self._lock:
            self._start()


def _detect(config: LLMConfig) -> int:
    """The slots to pin people to: llama-server's count when it keeps idle slots, else 1."""
    try:
        server = identify(config, timeout=DETECT_TIMEOUT, details=False, cache=True)
    except Exception as exc:  # noqa: BLE001 - an optimisation, never the person's problem
        log.warning("could not tell which model server this is (%s); not pinning people to "
                    "slots", type(exc).__name__)
        return 1
    if server.slots > 1 and server.facts.get("keeps_idle_slots") is not True:
        log.info("%s has %d slots and empties idle ones (one KV buffer with the host-memory "
                 "cache: it restores each prompt itself); leaving the slots to it",
                 server.kind, server.slots)
        return 1
    if server.slots > 1:
        log.info("%s has %d slots: each person's requests keep to one", server.kind,
                 server.slots)
    return server.slots
