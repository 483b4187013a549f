"""The model: an OpenAI-compatible client and the bounded tool-call loop.

Works unchanged with OpenAI, Ollama, vLLM and llama.cpp: the loop branches on
``message.tool_calls``, never on ``finish_reason`` (local servers report "stop" with tool
calls), and every SDK failure becomes one ``ModelError`` (``errors.py``) with a short
reason. The answer is read by ``completion.py``; what the server last read for each person,
and a read-ahead of their next prompt, by ``read_ahead.py``.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mediabot.config import LLMConfig
from mediabot.model.completion import Completion, completion_of
from mediabot.model.errors import BUSY_STATUSES, SAMPLING_FAILURE, SETUP_STATUSES, ModelError
from mediabot.model.read_ahead import ReadAhead, Reads
from mediabot.model.slots import SlotPins

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion

log = logging.getLogger(__name__)


# dropped when refused
OPTIONAL_PARAMETERS = ("temperature", "max_tokens", "tool_choice", "parallel_tool_calls")


def build_client(config: LLMConfig) -> openai.OpenAI:
    """The SDK client with our timeout and retries (its own are 600 s and 2 retries).

    ``openai`` is imported here, not with this module: it takes 0.7 s, half of the
    daemon's start, and nothing before the first model call needs it. Every client of the
    process shares one HTTP connection pool (``_http_client``); the timeout goes with each
    request, so sharing changes nothing else.
    """
    import openai

    return openai.OpenAI(base_url=config.base_url, api_key=config.api_key or "not-needed",
                         timeout=config.timeout_seconds, max_retries=config.max_retries,
                         http_client=_http_client())


@functools.cache
def _http_client() -> openai.DefaultHttpxClient:
    """The SDK's own HTTP client, with its defaults, built once: building one reads the
    system's CA certificates for its TLS context (~25 ms of CPU), which `mediabot check`
    and each Daemon built in one process would otherwise pay again. Thread-safe, as the
    SDK's client is."""
    import openai

    return openai.DefaultHttpxClient()


class ChatModel:
    """One chat-completions call at a time, answers as plain OpenAI-shaped dicts."""

    def __init__(self, client: openai.OpenAI | None, config: LLMConfig):
        self._client = client
        self._building = threading.Lock()
        self.config = config
        self.unsupported: set[str] = set()  # parameters this model refused; not sent again
        self.pins = SlotPins(config)
        self.reads = Reads()   # what the server last read for each person

    @classmethod
    def lazy(cls, config: LLMConfig) -> ChatModel:
        """A model whose SDK client (and the ``openai`` import) is built on first use, so
        the daemon answers /healthz before the SDK has loaded."""
        return cls(None, config)

    @property
    def client(self) -> openai.OpenAI:
        with self._building:
            if self._client is None:
                self._client = build_client(self.config)
            return self._client

    def complete(self, messages: list[dict], tools: list[dict] | None = None, *,
                 max_tokens: int | None = None, person: int | None = None) -> Completion:
        """One call, bounded by ``max_tokens`` (default ``[llm] max_reply_tokens``).

        ``person`` (their place in the household) keeps a person's calls to one slot of
        llama-server (``SlotPins``; other servers get nothing extra); None leaves the choice
        to the server.

        ``tool_choice: "auto"`` goes with the tools: some servers (llama-cpp-python's
        chatml-function-calling) ignore ``tools`` without it; ``parallel_tool_calls: false``
        too, deliberately (small models mangle parallel calls; servers that refuse it get the
        request again without it).
        """
        kwargs = self._request(messages, tools, max_tokens or self.config.max_reply_tokens,
                               person)
        import openai

        slot = self.pins.slot_for(person)
        try:
            completion = completion_of(self._create_resampled(kwargs))
        except openai.OpenAIError as exc:
            self.reads.remember(person, tools, None, slot)
            raise self._failure(exc) from exc
        except ModelError:
            self.reads.remember(person, tools, None, slot)
            raise
        self.reads.remember(person, tools, [*messages, completion.message], slot)
        return completion

    def reads_ahead(self) -> bool:
        """Whether reading a person's next prompt ahead pays here: ``[llm] read_ahead`` on and
        a llama.cpp server (as ``SlotPins`` saw it, asked once). Any other server may bill
        the request or keep no prompt to build on."""
        return self.config.read_ahead and self.pins.server_kind() == "llama.cpp"

    def read_ahead(self, messages: list[dict], tools: list[dict] | None, *, person: int,
                   waiting: Callable[[], bool]) -> ReadAhead:
        """Have the server read ``messages`` (the person's next prompt, a stand-in for their
        next text last) now, one token asked and thrown away, on the person's slot, so their
        real next text reads only its own tokens.

        Skipped where it does not pay (``reads_ahead``), when the server read the prompt
        before the stand-in already (``Reads``: a reply the model wrote, no slide), when the
        person's last request failed (a busy server gets no more), when ``waiting()``
        says another text waits (its turn goes first), and where the server keeps one prompt
        per slot and does not restore saved ones (not ``SlotPins.person_first``) while
        someone else's texts shared the person's slot since their last turn (``Reads.shared``:
        the next to text would likely be another, and the prompt read for nothing). One try,
        bounded by ``[llm] timeout_seconds``, never retried; a failure is returned, never
        raised.
        """
        known = messages[:-1]
        if not self.reads_ahead():
            return ReadAhead(skipped="off" if not self.config.read_ahead else "not llama.cpp")
        slot = self.pins.slot_for(person)
        shared = self.reads.shared(person, slot)
        if self.reads.holds(person, tools, known):
            return ReadAhead(skipped="already read")
        if self.reads.failed(person):
            return ReadAhead(skipped="their last request failed")
        if shared and not self.pins.person_first():
            return ReadAhead(skipped="another person's texts share the slot")
        if waiting():
            return ReadAhead(skipped="a text waits")
        started = time.monotonic()
        kwargs = self._request(messages, tools, 1, person)
        import openai

        try:
            client = self.client.with_options(max_retries=0)
            completion = completion_of(client.chat.completions.create(
                **{k: v for k, v in kwargs.items() if k not in self.unsupported}))
        except openai.OpenAIError as exc:
            return ReadAhead(failed=self._failure(exc).reason)
        except ModelError as exc:
            return ReadAhead(failed=exc.reason)
        self.reads.remember(person, tools, known, slot)
        return ReadAhead(prompt_tokens=completion.prompt_tokens,
                         cached_tokens=completion.cached_tokens,
                         duration_ms=int((time.monotonic() - started) * 1000))

    def _request(self, messages: list[dict], tools: list[dict] | None, max_tokens: int,
                 person: int | None) -> dict:
        """The request's arguments, the same for a turn's calls and a read-ahead."""
        kwargs = {"model": self.config.model, "messages": messages,
                  "temperature": self.config.temperature, "max_tokens": max_tokens}
        if tools:
            kwargs["tools"] = tools
            kwargs["tool_choice"] = "auto"
            kwargs["parallel_tool_calls"] = False   # one call a round: every server takes it
        slot = self.pins.slot_for(person)
        if slot is not None:
            kwargs["extra_body"] = {"id_slot": slot}
        return kwargs

    def _failure(self, exc: openai.OpenAIError) -> ModelError:
        """The SDK's exception as our ``ModelError``."""
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return ModelError("timeout", f"no answer within {self.config.timeout_seconds:g} s")
        if isinstance(exc, openai.APIConnectionError):
            self.pins.forget()   # it may come back as another server, or with other slots
            return ModelError("unreachable", f"cannot connect to {self.config.base_url}")
        if isinstance(exc, openai.APIStatusError):
            return ModelError(_status_reason(exc.status_code), f"HTTP {exc.status_code}: "
                              f"{self._server_words(exc)}", exc.status_code)
        return ModelError("error", type(exc).__name__)

    def _server_words(self, exc: openai.APIStatusError) -> str:
        """The server's own error message for the log, with the API key blanked."""
        words = api_error_message(exc)
        key = self.config.api_key
        return words.replace(key, "***") if key and len(key) >= 4 else words

    def _create_resampled(self, kwargs: dict) -> ChatCompletion:
        """``_create``, and once more with the same request when the server failed to sample
        a well-formed answer (``SAMPLING_FAILURE``): a new draw usually works."""
        import openai

        try:
            return self._create(kwargs)
        except openai.InternalServerError as exc:
            if not SAMPLING_FAILURE.search(api_error_message(exc, 1000)):
                raise
            log.warning("the model's answer did not match the tool-call format; asking again")
            return self._create(kwargs)

    def _create(self, kwargs: dict) -> ChatCompletion:
        """Send the request; a parameter the model refuses (reasoning models take no
        ``temperature`` or ``max_tokens``) is dropped, remembered, and the call made again."""
        import openai

        for _ in range(len(OPTIONAL_PARAMETERS) + 1):
            sent = {k: v for k, v in kwargs.items() if k not in self.unsupported}
            try:
                return self.client.chat.completions.create(**sent)
            except openai.BadRequestError as exc:
                refused = _refused_parameter(exc, sent)
                if refused is None:
                    raise
                log.warning("the model refuses %s; sending requests without it", refused)
                self.unsupported.add(refused)
        raise ModelError("rejected", "the model refused every optional parameter")


def _status_reason(status: int) -> str:
    if status in SETUP_STATUSES:
        return "misconfigured"
    if status in BUSY_STATUSES:
        return "busy"
    return "rejected" if status < 500 else "error"


def _refused_parameter(exc: openai.BadRequestError, sent: dict) -> str | None:
    error = _error_fields(exc)
    param = str(error.get("param") or "")
    message = str(error.get("message") or "")
    for name in OPTIONAL_PARAMETERS:
        if name in sent and (param == name or f"'{name}'" in message):
            return name
    return None


def _error_fields(exc: openai.APIStatusError) -> dict:
    """The body's ``error`` object (or the body itself); {} when the server sent neither."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)
    return error if isinstance(error, dict) else {}


def api_error_message(exc: openai.APIStatusError, limit: int = 200) -> str:
    """The server's own words for an HTTP error, cut to ``limit`` characters."""
    return str(_error_fields(exc).get("message") or exc.message)[:limit]


@dataclass
class LoopResult:
    """What the loop did: the final text (None when a tool ended the turn), counters."""

    text: str | None
    model_calls: int = 0
    tools_called: list[str] = field(default_factory=list)
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    estimated_tokens: int = 0
    evicted: int = 0
    stopped_by_tool: bool = False
    hit_round_limit: bool = False
    answered_by: str | None = None   # the tool whose own words are the reply


@dataclass
class ToolOutcome:
    """What the model is told a tool call gave (``ToolResult.for_model``, or the engine's
    own sentence), and whether the turn must end after it (a confirmation asked);
    ``reply``: the person's answer in the tool's own words, when its result is the whole
    answer (``Tool.direct``)."""

    content: str
    end_turn: bool = False
    reply: str | None = None


def _answer_in_words(model: ChatModel, messages: list[dict], result: LoopResult,
                     person: int | None) -> dict:
    """Ask once more without tools after an empty answer to a call that offered them.

    Some servers cannot answer in words while tools are offered: llama-cpp-python's
    ``chatml-function-calling`` grammar lets a text reply hold nothing at all. Tool calls in
    this answer are not taken (no tools were offered); its text is the reply.
    """
    completion = model.complete(messages, person=person)
    result.model_calls += 1
    result.prompt_tokens = completion.prompt_tokens
    return {"role": "assistant", "content": completion.message.get("content") or ""}


def run_tool_loop(model: ChatModel, build: Callable[[], tuple[list[dict], dict]],
                  tools: list[dict], execute: Callable[[dict], ToolOutcome],
                  record: Callable[[dict, int | None], None], max_rounds: int, *,
                  person: int | None = None) -> LoopResult:
    """Call the model until it answers in text, a tool ends the turn, a tool answers the
    text itself, or ``max_rounds``.

    ``build`` returns the prompt (messages, metrics) from the history as it is now, so each
    round sees the tool results just recorded; ``record`` persists every assistant and tool
    message as it happens, so a crash mid-turn leaves a history the sanitiser can repair.
    Every call of the turn names ``person`` (``ChatModel.complete``): one slot for all its
    rounds. A tool's own ``reply`` ends the turn as its answer only when it is the one call
    of the turn's first answer: a text that needed another tool first, or several at once,
    asked for more than that tool's result, and the model words it.
    Raises ModelError when a model call fails.
    """
    result = LoopResult(text=None)
    while result.model_calls < max_rounds:
        messages, metrics = build()
        result.estimated_tokens, result.evicted = metrics["estimated_tokens"], metrics["evicted"]
        completion = model.complete(messages, tools, person=person)
        result.model_calls += 1
        result.prompt_tokens, result.cached_tokens = (completion.prompt_tokens,
                                                      completion.cached_tokens)
        message = completion.message
        if not message.get("tool_calls") and tools and not (message.get("content") or "").strip():
            message = _answer_in_words(model, messages, result, person)
        if not message.get("tool_calls"):
            result.text = message.get("content") or ""
            return result
        record(message, completion.prompt_tokens)
        only = len(message["tool_calls"]) == 1 and result.model_calls == 1
        for call in message["tool_calls"]:
            result.tools_called.append(call["function"]["name"])
            outcome = execute(call)
            record({"role": "tool", "tool_call_id": call["id"],
                    "name": call["function"]["name"], "content": outcome.content}, None)
            result.stopped_by_tool |= outcome.end_turn
            if only and outcome.reply:
                result.text, result.answered_by = outcome.reply, call["function"]["name"]
                return result
        if result.stopped_by_tool:
            return result
    result.hit_round_limit = True
    return result
