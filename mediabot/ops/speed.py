"""How fast the model reads a prompt and writes a reply, from one timed request (for ``check``).

A text's time is mostly the prompt the server has to read (a CPU model reads some hundreds of
tokens a second) plus the reply it writes (a few to tens of tokens a second). One request
with a prompt of some hundred tokens, a nonce first so no prompt cache shortens it, and a
short reply is timed. llama.cpp's server reports both speeds in its ``timings`` object; any
other server gives only ``usage`` and the elapsed time, from which the prompt speed is
measured (a lower bound: the elapsed time includes the short reply) and the reply speed is
unknown. Raises the SDK's ``openai.OpenAIError`` when the request fails.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mediabot.config import LLMConfig

TYPICAL_PROMPT, TYPICAL_REPLY = 2000, 100     # tokens of a typical text with its history
PROBE_REPLY = 16
FILLER = ("Sonarr watches for new episodes of the shows the household follows and Radarr "
          "does the same for films; both report what is downloading and what is due. ")


@dataclass(frozen=True)
class Speed:
    prompt_per_second: float
    reply_per_second: float | None   # None: the server does not report it (no timings)
    prompt_tokens: int               # what the probe made the server read

    def typical_seconds(self) -> float:
        """A typical text's time: its prompt read, plus its reply written when known."""
        seconds = TYPICAL_PROMPT / self.prompt_per_second
        if self.reply_per_second:
            seconds += TYPICAL_REPLY / self.reply_per_second
        return seconds


def probe_messages(nonce: str) -> list[Any]:   # the SDK's message TypedDicts
    return [{"role": "user", "content": f"Check {nonce}. " + FILLER * 12
             + "Answer with one word: OK."}]


def measure(config: LLMConfig, clock: Callable[[], float] = time.monotonic) -> Speed:
    """One timed completion on the configured model (no retries, ``timeout_seconds``)."""
    from mediabot.model.chat import build_client

    client = build_client(dataclasses.replace(config, max_retries=0))
    started = clock()
    response = client.chat.completions.create(
        model=config.model, max_tokens=PROBE_REPLY, messages=probe_messages(f"{time.time():.6f}"))
    elapsed = max(clock() - started, 1e-3)
    return speed_from(response, elapsed)


def speed_from(response: object, elapsed: float) -> Speed:
    """The speeds from llama.cpp's ``timings`` when present, else from usage and time."""
    timings = (getattr(response, "model_extra", None) or {}).get("timings") or {}
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    read = prompt - (getattr(details, "cached_tokens", None) or 0)
    if timings.get("prompt_per_second"):
        return Speed(float(timings["prompt_per_second"]),
                     float(timings.get("predicted_per_second") or 0) or None,
                     int(timings.get("prompt_n") or read))
    return Speed(max(read, 1) / elapsed, None, read)
