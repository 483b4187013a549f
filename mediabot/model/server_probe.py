"""Which model server answers at ``[llm] base_url``, from what it answers besides the OpenAI
API: the one detection the model client (slot pinning) and ``check`` both use.

- Ollama: ``GET /api/version``; its ``GET /api/ps`` gives each loaded model's ``expires_at``;
- llama.cpp's llama-server: ``GET /props`` (``default_generation_settings.n_ctx`` per slot,
  ``total_slots``, ``build_info``), ``GET /slots`` and, for ``check`` with several slots,
  three short ``POST /completion`` (``keeps_idle_slots``);
- vLLM: ``GET /version``; OpenAI: by its host, without a request.

Every request goes to the server's root (not ``/v1``), bounded by ``[llm]
timeout_seconds`` and at most ``PROBE_TIMEOUT`` (``READ_TIMEOUT`` for the short prompts),
never retried, never redirected; the key
goes only to ``base_url``'s own server, as the API's requests send it. A server that is down
or answers none of these is "other" (down: at its first unanswered question): detection
never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mediabot.config import LLMConfig

PROBE_TIMEOUT = 5.0
# the short prompts asking how the server keeps prompts are model work: as slow as the model
# reads ~12 tokens, behind whatever it is reading already
READ_TIMEOUT = 30.0


@dataclass(frozen=True)
class Server:
    """What the server said about itself: its kind and the facts ``check`` reports."""

    kind: str                     # "llama.cpp", "Ollama", "vLLM", "OpenAI" or "other"
    version: str = ""
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def slots(self) -> int:
        """llama-server's slot count (``total_slots``); 1 for any other server or when it
        does not say: one prompt cache, nothing to choose between."""
        props = self.facts.get("props") if self.kind == "llama.cpp" else None
        count = props.get("total_slots") if isinstance(props, dict) else None
        return count if isinstance(count, int) and count > 1 else 1


def root_of(base_url: str) -> str:
    """The server's root: ``base_url`` without its OpenAI path (``/v1``)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def identify(config: LLMConfig, *, timeout: float = PROBE_TIMEOUT,
             details: bool = True, cache: bool = False) -> Server:
    """Ask the server what it is; "other" when none of the known answers comes.

    ``details`` False skips what only ``check`` reports (Ollama's ``/api/ps``, llama-server's
    ``/slots``), for the model client's one look at the server. Whether a llama-server with
    several slots keeps an idle slot's prompt (``keeps_idle_slots``) is asked with
    ``details`` (``check``) or ``cache`` (the model client, before it names slots); whether
    one with a single slot gives a prompt back after another used the slot
    (``restores_prompts``), with ``cache`` only.
    """
    import requests

    if (urlsplit(config.base_url).hostname or "").endswith("openai.com"):
        return Server("OpenAI")
    root = root_of(config.base_url)
    read_timeout = min(config.timeout_seconds, max(timeout, READ_TIMEOUT))
    timeout = min(config.timeout_seconds, timeout)
    with requests.Session() as http:
        if config.api_key:
            http.headers["Authorization"] = f"Bearer {config.api_key}"

        def answer(method: str, path: str, body: dict | None = None) -> Any:
            """The JSON answer; None for another status or no JSON; raises RequestException
            when the server does not answer at all (no point asking it the next question)."""
            response = http.request(method, root + path, json=body, allow_redirects=False,
                                    timeout=read_timeout if method == "POST" else timeout)
            try:
                return response.json() if response.status_code == 200 else None
            except ValueError:
                return None

        def get(path: str) -> Any:
            return answer("GET", path)

        def post(path: str, body: dict) -> Any:
            return answer("POST", path, body)

        try:
            server = _ask(get, details)
        except requests.RequestException:
            return Server("other")
        if (details or cache) and server.slots > 1:
            server.facts["keeps_idle_slots"] = keeps_idle_slots(post)
        elif cache and server.kind == "llama.cpp":
            server.facts["restores_prompts"] = restores_prompts(post)
        return server


def _ask(get: Callable[[str], Any], details: bool) -> Server:
    found = get("/api/version")
    if isinstance(found, dict) and "version" in found:
        return Server("Ollama", str(found["version"]), {"ps": _maybe(get, "/api/ps", details)})
    props = get("/props")
    if isinstance(props, dict) and "default_generation_settings" in props:
        return Server("llama.cpp", str(props.get("build_info") or ""),
                      {"props": props, "slots": _maybe(get, "/slots", details)})
    found = get("/version")
    if isinstance(found, dict) and "version" in found:
        return Server("vLLM", str(found["version"]))
    return Server("other")


def _maybe(get: Callable[[str], Any], path: str, wanted: bool) -> Any:
    """``get(path)`` when ``wanted``; a failure here loses only this fact, not the kind."""
    import requests

    if not wanted:
        return None
    try:
        return get(path)
    except requests.RequestException:
        return None


PROBE_PROMPTS = ("mediabot check: does slot 0 keep this prompt?",
                 "mediabot check: and slot 1 this one?")
RESTORE_PROMPTS = ("mediabot check: is this prompt given back after another one?",
                   "Another prompt takes the only slot in between.")


def keeps_idle_slots(post: Callable[[str, dict], Any]) -> bool | None:
    """Whether llama-server keeps the prompt of a slot that sat idle while another slot
    worked: a short prompt in slot 0, another in slot 1, the first in slot 0 again, whose
    ``timings.cache_n`` says (its default, one KV buffer with the host-memory cache, empties
    idle slots: then nothing is reused, and a person pinned to a slot reads everything).
    None when the server does not answer so. Three prompts of ~10 tokens; slots 0 and 1 hold
    them afterwards, so the two people pinned there read their next prompt whole."""
    cached, _ = _third_prompt(post, [{"prompt": PROBE_PROMPTS[slot], "id_slot": slot}
                                     for slot in (0, 1, 0)])
    return cached > 0 if cached is not None else None


def restores_prompts(post: Callable[[str, dict], Any]) -> bool | None:
    """Whether llama-server gives a prompt back after another took its slot: a short prompt,
    another, the first again, naming no slot, whose ``timings`` say whether most of the
    third was reused (the host-memory cache, ``--cache-ram``, on by default, saves a slot's
    prompt when another replaces it and restores it when it comes again; ``--cache-ram 0``
    keeps one prompt per slot). None when the server does not answer so."""
    cached, read = _third_prompt(post, [{"prompt": RESTORE_PROMPTS[turn]} for turn in (0, 1, 0)])
    return cached > read if cached is not None and read is not None else None


def _third_prompt(post: Callable[[str, dict], Any],
                  bodies: list[dict]) -> tuple[int | None, int | None]:
    """Each of ``bodies`` sent in turn for one token; the last one's ``timings``: the prompt
    tokens reused (``cache_n``) and read (``prompt_n``), None for any not answered."""
    import requests

    try:
        answers = [post("/completion", {**body, "n_predict": 1, "cache_prompt": True})
                   for body in bodies]
    except requests.RequestException:
        return None, None
    timings = answers[-1].get("timings") if isinstance(answers[-1], dict) else None
    found = [timings.get(key) if isinstance(timings, dict) else None
             for key in ("cache_n", "prompt_n")]
    cached, read = (value if isinstance(value, int) else None for value in found)
    return cached, read
