"""How the model server keeps prompts between texts, asked once: which of llama-server's slots
each person's requests name (``id_slot``), so each person's prompt stays in a slot of its own
between texts, whether a person's own part may go before the tools (``person_first``), and
which server it is (``server_kind``: reading the next prompt ahead pays on llama-server only).

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

Where to put the person (``person_first``): every member's prompt starts with the same
rules. A server that keeps one prompt per slot and no more (llama-server with
``--cache-ram 0``, or with several slots, each person pinned to theirs) does best with the
tools shared too, the person after them: a change of member then reads only what follows the
tools. A server that saves prompts in host memory and restores them (llama-server's
defaults) does best with the person first, before the tools: its ``get_available_slot``
restores a saved prompt only when the slot's own would mostly be lost (it keeps less than
half), and members sharing the rules and the tools (~780 of ~1,240 tokens) keep more than
half of each other's, so nothing is restored and the next member reads all after the shared
part; sharing only the rules (~190 tokens), each member's own prompt is saved and restored.
So the person goes first where the server is seen to restore prompts: a single-slot
llama-server that gives a prompt back after another took its slot
(``server_probe.restores_prompts``), or one with several slots that empties idle ones into
host memory. Anywhere else (other servers, a server that did not answer) the shared part
goes first, as a server keeping one prompt needs.

The server is asked what it is once, at the first pinned call or prompt (never at import,
at most ``DETECT_TIMEOUT`` a question, ``server_probe.READ_TIMEOUT`` a short prompt: they
are model work); anything but a llama-server reporting more than one slot
and keeping idle slots means no pinning: OpenAI and others refuse arguments they do not
know. ``forget`` starts over (the server was down: it may come back as something else,
started otherwise).
"""

from __future__ import annotations

import logging
import threading
from typing import NamedTuple

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
        self._kept: Kept | None = None

    def slot_for(self, person: int | None) -> int | None:
        """The slot ``person`` (a small stable number: their place in the household) names,
        or None: no person, pinning off, not llama-server, one slot, or a server that
        empties idle slots."""
        if person is None or not self._config.pin_slots:
            return None
        count = self._known().slots
        return person % count if count > 1 else None

    def person_first(self) -> bool:
        """Whether a person's name, role and language go before the tools (the server
        restores each member's saved prompt) rather than after them."""
        return self._known().person_first

    def server_kind(self) -> str:
        """Which server answers (``server_probe.Server.kind``), as the one look at it saw."""
        return self._known().kind

    def _known(self) -> Kept:
        with self._lock:
            if self._kept is None:
                self._kept = _detect(self._config)
            return self._kept

    def forget(self) -> None:
        with self._lock:
            self._start()


class Kept(NamedTuple):
    """What the server was seen to do with prompts."""

    slots: int = 1               # slots to pin people to; 1: none
    person_first: bool = False   # it restores each member's saved prompt
    kind: str = "other"          # server_probe.Server.kind


def _detect(config: LLMConfig) -> Kept:
    try:
        server = identify(config, timeout=DETECT_TIMEOUT, details=False, cache=True)
    except Exception as exc:  # noqa: BLE001 - an optimisation, never the person's problem
        log.warning("could not tell which model server this is (%s); not pinning people to "
                    "slots", type(exc).__name__)
        return Kept()
    if server.slots > 1 and server.facts.get("keeps_idle_slots") is not True:
        log.info("%s has %d slots and empties idle ones (one KV buffer with the host-memory "
                 "cache: it restores each prompt itself); leaving the slots to it, each "
                 "person's part before the tools", server.kind, server.slots)
        return Kept(1, person_first=server.facts.get("keeps_idle_slots") is False,
                    kind=server.kind)
    if server.slots > 1:
        log.info("%s has %d slots: each person's requests keep to one", server.kind,
                 server.slots)
        return Kept(server.slots, kind=server.kind)
    return Kept(1, person_first=server.facts.get("restores_prompts") is True, kind=server.kind)
