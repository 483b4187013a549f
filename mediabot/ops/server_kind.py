"""Which model server answers at ``[llm] base_url``, and whether it keeps what makes a text
fast: the model loaded between texts and the prompt it read (for ``check``).

A text on a home server is fast when the server still holds the model and the prompt it
read last time; it is slow (the whole prompt read again, ~2,000 tokens: 40-110 s for a 7-8B
model on a CPU) after the model was unloaded or the prompt evicted. The server is told
apart by ``model.server_probe.identify``; what to look at depends on it:

- Ollama: each loaded model's ``expires_at`` in ``/api/ps``: when it will be unloaded (its
  keep-alive after the last request, 5 minutes by default; ``OLLAMA_KEEP_ALIVE=-1`` keeps it
  loaded, shown as a date in the year 2318);
- llama.cpp's llama-server: its slots (``total_slots``; the model client pins each person to
  one when there are several, ``[llm] pin_slots``), whether it caches prompts, and, with
  several slots, whether it keeps an idle slot's prompt (``server_probe.keeps_idle_slots``:
  three ~10-token prompts), with one, whether it gives a prompt back after another took the
  slot (``server_probe.restores_prompts``, the same; both as the model client asks them to
  place each person in the prompt, ``model.slots.SlotPins.person_first``). Its host-memory
  prompt cache (``--cache-ram``, on by default in recent builds), ``--slot-prompt-similarity``
  and ``--slot-save-path`` are not reported by the server, so the line names them;
- vLLM and OpenAI: their prefix caching, on by default.

The key is never shown.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from mediabot.config import LLMConfig
from mediabot.model.server_probe import identify
from mediabot.text.check_report import OK, WARN, Line

KEPT_LOADED = dt.timedelta(days=365)   # an expires_at further away: kept loaded for good
# llama-server keeps each idle slot's prompt (so a person's slot still holds it at their next
# text) only with these; its default empties idle slots (tools/server/server-context.cpp)
KEEP_SLOTS_FIX = "--no-cache-idle-slots (or --cache-ram 0)"


def keep_alive_fix(model: str) -> str:
    """How to keep an Ollama model loaded: a keep-alive in a /v1 request is ignored (its
    OpenAI API has no such field), so only the server's setting, or a native call, sets it."""
    body = json.dumps({"model": model, "keep_alive": -1})
    return ("its OpenAI API, which mediabot uses, ignores a keep-alive sent with a request, so "
            "set it on the Ollama server: OLLAMA_KEEP_ALIVE=-1 (or a long time, e.g. 24h) in "
            "Ollama's environment, then restart Ollama; or, until Ollama restarts, load it for "
            f"good once with POST /api/generate {body} and run mediabot check again to see it "
            "hold")


def check_server_kind(config: LLMConfig, now: dt.datetime | None = None, *,
                      household: int = 0) -> Line:
    """The server's kind, and for Ollama and llama.cpp what keeps a text fast; ``household``
    is how many people text (``[[users]]``; 0 when not known), for llama-server's slots."""
    server = identify(config, cache=True)
    name = f"{server.kind} {server.version}".strip()
    if server.kind == "Ollama":
        return _ollama(name, config.model, server.facts["ps"], now or dt.datetime.now(dt.UTC))
    if server.kind == "llama.cpp":
        return _llama_cpp(name, server.facts["props"], server.facts["slots"],
                          config.pin_slots, household, server.facts.get("keeps_idle_slots"),
                          server.facts.get("restores_prompts"))
    if server.kind == "OpenAI":
        return Line(OK, "model server", "OpenAI: it caches repeated prompt prefixes by itself")
    if server.kind == "vLLM":
        return Line(OK, "model server", f"{name}: keep --enable-prefix-caching on (the default in "
                                  "recent versions) so each text reads only what is new")
    return Line(OK, "model server", "not llama.cpp, Ollama or vLLM by what it answers; keep its "
                              "prompt cache on so each text reads only what is new")


def _ollama(name: str, model: str, ps: Any, now: dt.datetime) -> Line:
    names = (model, f"{model}:latest")
    loaded = [entry for entry in (ps or {}).get("models") or []
              if entry.get("name") in names or entry.get("model") in names]
    expires = _instant(loaded[0].get("expires_at")) if loaded else None
    if expires is None:
        return Line(WARN, "model server", f"{name}: {model} is not loaded right now, so the next "
                    "text loads it and reads its whole prompt; Ollama unloads a model 5 idle "
                    f"minutes after its last request by default — "
                    f"{keep_alive_fix(model)}")
    left = expires - now
    if left >= KEPT_LOADED:
        return Line(OK, "model server", f"{name}: {model} stays loaded between texts "
                                        "(keep-alive: for good)")
    minutes = max(round(left.total_seconds() / 60), 0)
    return Line(WARN, "model server", f"{name}: {model} is unloaded {minutes} min after its "
                "last request (its keep-alive; Ollama's default is 5 min), so a text after a "
                f"longer pause loads it again and reads its whole prompt — "
                f"{keep_alive_fix(model)}")


def _llama_cpp(name: str, props: dict, slots: Any, pinned: bool, household: int,
               keeps_idle: bool | None = None, restores: bool | None = None) -> Line:
    settings = props.get("default_generation_settings") or {}
    count = int(props.get("total_slots") or 1)
    n_ctx = settings.get("n_ctx")
    size = f" of {n_ctx:,} tokens" if isinstance(n_ctx, int) else ""
    text = f"{name}: {count} slot{'s' if count != 1 else ''}{size}"
    listed = slots if isinstance(slots, list) else []
    caching = [(slot.get("params") or {}).get("cache_prompt") for slot in listed
               if isinstance(slot, dict)]
    if False in caching or (settings.get("params") or {}).get("cache_prompt") is False:
        return Line(WARN, "model server", f"{text}; the prompt cache is off, so every text "
                    "reads its whole prompt — start llama-server without --no-cache-prompt")
    if count > 1 and keeps_idle is False and household != 1:
        return Line(OK, "model server", f"{text}; it empties a slot while another works and "
                    "restores each saved prompt itself (its default with the host-memory "
                    "cache, --cache-idle-slots), so mediabot leaves the slots to it and puts "
                    "each person's name before the tools, where it gives each person their own "
                    "prompt back. With a model using sliding-window attention (Gemma), start "
                    f"llama-server with {KEEP_SLOTS_FIX}: a restored prompt is read again from "
                    "~512 tokens back, a slot kept for each person is not")
    if count > 1 and pinned:
        shared = (f"; with {household} people some share a slot, where the host-memory cache "
                  "(--cache-ram) keeps their prompts" if household > count else "")
        if keeps_idle:
            return Line(OK, "model server", f"{text}; mediabot keeps each person to a slot of "
                        f"their own ([llm] pin_slots) and the server keeps each slot's prompt "
                        f"between texts{shared}; --slot-save-path is not needed")
        return Line(OK, "model server", f"{text}; mediabot keeps each person to a slot of "
                    f"their own ([llm] pin_slots){shared}. Start llama-server with "
                    f"{KEEP_SLOTS_FIX}: by default it empties idle slots into host memory and "
                    "restores them by its own choice (mediabot then leaves the slot to it), "
                    "and a text after another person's reads about a third of its prompt "
                    "again; --slot-save-path is not needed")
    if household > 1 and count == 1 and restores:
        return Line(OK, "model server", f"{text}; it saves each person's prompt in host memory "
                    "and gives it back at their next text (its host-memory cache, --cache-ram), "
                    "so mediabot puts each person's name before the tools, where the household's "
                    "prompts share little and it does; --slot-save-path is not needed")
    if household > 1:
        why = ("mediabot does not keep people to slots ([llm] pin_slots = false)" if count > 1
               else f"the household's {household} people share one slot")
        return Line(WARN, "model server", f"{text}; {why}, so a text after another person's "
                    "reads the person's history again (the host-memory cache, --cache-ram, "
                    "brings it back only when most of the slot would be lost) — start "
                    f"llama-server with --parallel {household} (-np {household}) "
                    f"--kv-unified {KEEP_SLOTS_FIX} and keep [llm] pin_slots = true, or with "
                    "--slot-prompt-similarity 0.8")
    return Line(OK, "model server", f"{text}; each slot keeps the prompt it read, and the "
                "host-memory cache (--cache-ram, on unless started with --cache-ram 0) keeps "
                "each person's prompt when the household shares a slot; --slot-save-path is "
                "not needed")


def _instant(text: object) -> dt.datetime | None:
    """An RFC 3339 time as Go writes it (nanoseconds, an offset or Z); None if not one."""
    if not isinstance(text, str):
        return None
    trimmed = re.sub(r"(\.\d{6})\d+", r"\1", text).replace("Z", "+00:00")
    try:
        instant = dt.datetime.fromisoformat(trimmed)
    except ValueError:
        return None
    return instant if instant.tzinfo else instant.replace(tzinfo=dt.UTC)
