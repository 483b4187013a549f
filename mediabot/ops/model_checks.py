"""The checks of ``mediabot check`` that ask the model server: does it answer, accept the
key and serve the model; does the model call tools; is it fast enough for a text.

The SDK is imported inside each check, so importing this (as ``serve`` does, through the
command line) costs nothing until a check runs. Every request is bounded by ``[llm]
timeout_seconds`` and never retried; a failure is one line with the fix.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from mediabot.config import LLMConfig
from mediabot.ops.errors import Refusal
from mediabot.text.check_report import FAIL, OK, WARN, Line
from mediabot.text.masking import mask_url_secrets, scrub

if TYPE_CHECKING:
    import openai

MODELS_SHOWN = 5

PROBE_TOOL = {"type": "function", "function": {
    "name": "download_queue", "description": "What is downloading now.",
    "parameters": {"type": "object", "properties": {}}}}
PROBE_MESSAGES = [{"role": "user", "content": "What is downloading? Call download_queue."}]
NO_TOOL_CALLS_FIX = ("the usual cause is the server's chat template, which drops the tool "
                     "schemas (the model never sees them; mediabot's prompt budget stops "
                     "counting them once the server's token counts show it): "
                     "llama.cpp: start llama-server with --jinja and --chat-template-file "
                     "<a template that renders tools, e.g. the model's own from its "
                     "Hugging Face repo>; llama-cpp-python: --chat_format "
                     "chatml-function-calling; vLLM: --enable-auto-tool-choice "
                     "--tool-call-parser; Ollama: a model whose Modelfile TEMPLATE handles "
                     ".Tools (one tagged 'tools')")


def check_model(config: LLMConfig, household: int = 0) -> list[Line]:
    """The model line, then (when the model answers) whether it calls tools, how fast, and
    which server it is with what keeps a text fast there (asked last: the probes before it
    have just loaded the model, so an Ollama model's unload time is its keep-alive);
    ``household``: how many people text, for llama-server's slots (0: not known)."""
    from mediabot.ops.server_kind import check_server_kind

    line = check_llm(config)
    if line.status == FAIL:
        return [line]
    return [line, check_tool_calls(config), check_speed(config),
            check_server_kind(config, household=household)]


def check_speed(config: LLMConfig) -> Line:
    """Would a typical text (``speed.TYPICAL_PROMPT`` + ``TYPICAL_REPLY`` tokens) finish within
    ``[llm] timeout_seconds``? One timed request; a warning, with the key and the fix, when
    not (every such text would end in an apology instead of an answer)."""
    import openai

    from mediabot.ops import speed

    typical = (f"a typical text ({speed.TYPICAL_PROMPT:,} prompt tokens + "
               f"{speed.TYPICAL_REPLY} reply tokens)")
    timeout = config.timeout_seconds
    try:
        measured = speed.measure(config)
    except openai.OpenAIError as exc:
        return Line(WARN, "speed", f"could not time the model ({type(exc).__name__}): "
                                   f"{typical} may not finish within [llm] timeout_seconds = "
                                   f"{timeout:g}")
    rates = f"reads ~{measured.prompt_per_second:,.0f} prompt tokens/s, " + (
        f"writes ~{measured.reply_per_second:,.1f} reply tokens/s" if measured.reply_per_second
        else "reply speed not reported (llama.cpp's timings give it)")
    seconds = measured.typical_seconds()
    if seconds <= timeout:
        return Line(OK, "speed", f"{rates}; {typical} takes ~{seconds:,.1f} s, within [llm] "
                                 f"timeout_seconds = {timeout:g}")
    return Line(WARN, "speed", f"{rates}; {typical} would take ~{seconds:,.0f} s, over [llm] "
                               f"timeout_seconds = {timeout:g} — raise [llm] timeout_seconds "
                               f"to at least {seconds * 1.5:,.0f}, or use a smaller or faster "
                               "model (a GPU), and keep the server's prompt cache on so most "
                               "texts read only what is new")


def check_tool_calls(config: LLMConfig) -> Line:
    """One tiny tool-call probe, sent the way a turn sends tools (``tool_choice`` auto).

    A server can answer chat requests and still never return a tool call (llama-server
    without ``--jinja``, a model without tool support): mediabot would then talk but never
    search or add anything, so say so with the fix. A warning, not a failure: the probe
    asks once, and a model may answer in words this time.
    """
    from mediabot.model.chat import ChatModel, ModelError, build_client

    model = ChatModel(build_client(dataclasses.replace(config, max_retries=0)), config)
    try:
        message = model.complete(PROBE_MESSAGES, [PROBE_TOOL], max_tokens=64).message
    except ModelError as exc:
        return Line(WARN, "tools", f"the model server refused a request with tools ({exc}) "
                                   f"— {NO_TOOL_CALLS_FIX}")
    if message.get("tool_calls"):
        return Line(OK, "tools", "the model called a tool when asked (tool_choice auto)")
    return Line(WARN, "tools", "asked to call a tool, the model answered without one, so it may "
                               f"never search or add anything — {NO_TOOL_CALLS_FIX}")


def check_llm(config: LLMConfig) -> Line:
    """The endpoint answers, accepts the key and serves ``model``.

    Lists ``GET /models`` first (free, no tokens); servers that do not list models (404,
    405, 501) get a one-token completion instead.
    """
    import openai

    from mediabot.model.chat import build_client

    client = build_client(dataclasses.replace(config, max_retries=0))
    try:
        available = [model.id for model in client.models.list()]
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            return _llm_failure(config, exc)
        available = []
    except openai.OpenAIError as exc:
        return _llm_failure(config, exc)
    if not available:
        return _llm_by_completion(client, config)
    if config.model in available:
        return Line(OK, "llm", f"model {config.model} is served at {config.base_url}")
    if _completion_error(client, config) is None:   # llama-server lists its file path and
                                                    # serves any name
        return Line(OK, "llm", f"model {config.model} answered at {config.base_url} (the "
                               f"server lists {available[0]!r} and answers to any name)")
    return _model_missing(config, available)


def require_model(command: str, config: LLMConfig) -> None:
    """A ``Refusal`` (exit 1) naming the URL (its credentials masked, never the key) and why,
    when ``check_llm`` fails: ``command`` talks to the model and must not start without it."""
    line = check_llm(config)
    if line.status == FAIL:
        url = mask_url_secrets(config.base_url)
        text = scrub(line.text, [config.api_key])
        raise Refusal(f"mediabot {command}: {text if url in text else f'{url}: {text}'}", 1)


def _completion_error(client: openai.OpenAI, config: LLMConfig) -> openai.OpenAIError | None:
    """What a one-token completion with ``model`` failed with; None when it answered."""
    import openai

    try:
        client.chat.completions.create(model=config.model, max_tokens=1,
                                       messages=[{"role": "user", "content": "Say OK."}])
    except openai.OpenAIError as exc:
        return exc
    return None


def _llm_by_completion(client: openai.OpenAI, config: LLMConfig) -> Line:
    error = _completion_error(client, config)
    if error is not None:
        return _llm_failure(config, error)
    return Line(OK, "llm", f"model {config.model} answered at {config.base_url} (the server "
                           "does not list its models)")


def _model_missing(config: LLMConfig, available: list[str]) -> Line:
    shown = ", ".join(sorted(available)[:MODELS_SHOWN])
    more = len(available) - MODELS_SHOWN
    if more > 0:
        shown += f" and {more} more"
    return Line(FAIL, "llm", f"model {config.model!r} is not on the server at "
                             f"{config.base_url}; it has {shown} — fix [llm] model")


def _llm_failure(config: LLMConfig, exc: openai.OpenAIError) -> Line:
    """One line with the fix for each way the model server can fail."""
    import openai

    from mediabot.model.chat import api_error_message

    where = config.base_url
    if isinstance(exc, openai.APITimeoutError):
        text = (f"no answer within {config.timeout_seconds:g} s from {where} — is it running? "
                "check [llm] base_url or raise [llm] timeout_seconds")
    elif isinstance(exc, openai.APIConnectionError):
        text = f"not answering at {where} — is it running? check [llm] base_url"
    elif isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        text = (f"the model server rejected [llm] api_key (HTTP {exc.status_code}) — set it, or "
                "MEDIABOT_LLM_API_KEY, to a valid key")
    elif isinstance(exc, openai.NotFoundError):
        text = (f"model {config.model!r} was not found at {where} (or base_url is wrong; it "
                "usually ends in /v1) — fix [llm] model or [llm] base_url")
    elif isinstance(exc, openai.APIStatusError):
        text = (f"{where} answered HTTP {exc.status_code}: {api_error_message(exc, 160)} — "
                "check [llm] base_url and model")
    else:
        text = f"{type(exc).__name__} talking to {where} — check [llm] base_url"
    return Line(FAIL, "llm", text)
