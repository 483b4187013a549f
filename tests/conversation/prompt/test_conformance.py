"""Conformance: every prompt shape mediabot builds, through every vendored real chat template.

The shapes (tests/prompt_shapes.py) are stored histories passed through the real builder;
the templates (tests/templates, sources in SOURCES.md) are rendered as vLLM and
llama-cpp-python render them (tests/fakes/chat_templates.py); tests/conformance.py says what
a cell's verdict means. Run ``python -m tests.conformance`` to print the whole matrix.
"""

import copy
import json

import pytest
from mistral_common.exceptions import MistralCommonException
from mistral_common.protocol.instruct.request import ChatCompletionRequest
from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

from tests.conformance import check_cell, counts, failures, run_matrix, table
from tests.fakes.chat_templates import MODES, TEMPLATES, render
from tests.prompt_shapes import SHAPES, Shape, offered_tools, prompt, tool_schemas_for_admin

SYSTEM = {"role": "system", "content": "You are mediabot."}


@pytest.fixture(scope="module")
def matrix():
    return run_matrix()


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_every_prompt_shape_renders_whole_through(template, matrix):
    cells = [c for c in matrix if c.template == template]
    assert not failures(cells), "\n" + failures(cells)


def test_the_matrix_covers_every_template_shape_and_mode(matrix):
    print("\n" + table(matrix))
    total = counts(matrix)
    assert total["cells"] == len(TEMPLATES) * len(SHAPES) * len(MODES)
    assert total["raised"] == total["dropped"] == 0
    text_only = [s.name for s in SHAPES if not s.tools and s.request == "turn"]
    for template in TEMPLATES:   # "n/a" never hides a whole template
        ok = {c.shape for c in matrix if c.template == template and c.status == "ok"}
        assert set(text_only) <= ok, template
    for cell in (c for c in matrix if c.status == "n/a"):
        spec = TEMPLATES[cell.template]
        assert (not spec.tools or spec.tool_use
                or (spec.object_arguments and cell.mode == "passthrough")), cell


@pytest.fixture(scope="module")
def mistral_tokenizer():
    """Mistral-Nemo's tokenizer (tekken v3), shipped inside mistral-common: no download."""
    return MistralTokenizer.v3(is_tekken=True)


def mistral_request(messages: list[dict], tools: list[dict] | None) -> ChatCompletionRequest:
    """The request vLLM builds with ``--tokenizer-mode mistral``
    (make_mistral_chat_completion_request): content parts joined, a missing
    ``parameters`` filled, a final assistant message marked as a prefix."""
    messages, tools = copy.deepcopy(messages), copy.deepcopy(tools)
    if messages[-1]["role"] == "assistant":
        messages[-1]["prefix"] = True
    for message in messages:
        if message["role"] in ("assistant", "tool") and isinstance(message["content"], list):
            message["content"] = "\n".join(part.get("text") for part in message["content"])
    for tool in tools or ():
        tool["function"].setdefault("parameters", {})
    return ChatCompletionRequest(messages=messages, tools=tools)


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_mistral_commons_own_validator_accepts_every_shape(shape, mistral_tokenizer):
    request = mistral_request(prompt(shape), offered_tools(shape))
    tokens = mistral_tokenizer.encode_chat_completion(request).tokens
    assert len(tokens) > 3


# ------------------------------------------------ the suite bites: issue 10's failures, found

def _call(ident, name, arguments='{"query": "dune part two"}'):
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


OLD_SHAPES = {
    "a second system message": [
        SYSTEM, {"role": "system", "content": "Earlier messages were pruned."},
        {"role": "user", "content": "what about season 7?"}],
    "user after a tool round": [
        SYSTEM, {"role": "user", "content": "get dune"},
        {"role": "assistant", "content": "", "tool_calls": [_call("call00001", "search_media")]},
        {"role": "tool", "tool_call_id": "call00001", "name": "search_media", "content": "{}"},
        {"role": "user", "content": "hello?"}],
    "two calls in one message": [
        SYSTEM, {"role": "user", "content": "queue and upcoming?"},
        {"role": "assistant", "content": "", "tool_calls": [
            _call("call00001", "download_queue", "{}"), _call("call00002", "upcoming", "{}")]},
        {"role": "tool", "tool_call_id": "call00001", "name": "download_queue", "content": "{}"},
        {"role": "tool", "tool_call_id": "call00002", "name": "upcoming", "content": "{}"}],
    "content null beside calls": [
        SYSTEM, {"role": "user", "content": "get dune"},
        {"role": "assistant", "content": None, "tool_calls": [_call("call00001", "search_media")]},
        {"role": "tool", "tool_call_id": "call00001", "name": "search_media", "content": "{}"}],
    "text beside calls": [
        SYSTEM, {"role": "user", "content": "get dune"},
        {"role": "assistant", "content": "Looking that up in Radarr now.",
         "tool_calls": [_call("call00001", "search_media")]},
        {"role": "tool", "tool_call_id": "call00001", "name": "search_media", "content": "{}"}],
}


@pytest.mark.parametrize("old, template, mode, verdict, words", [
    ("a second system message", "mistral-nemo", "vllm", "raised", "must alternate"),
    ("a second system message", "deepseek-r1-distill-qwen", "vllm", "dropped",
     "You are mediabot"),
    ("user after a tool round", "mistral-small-3.2", "vllm", "raised", "must alternate"),
    ("user after a tool round", "vllm-mistral-parallel", "vllm", "raised", "must alternate"),
    ("two calls in one message", "llama-3.1", "vllm", "raised", "single tool-calls"),
    ("two calls in one message", "llama-3.3", "passthrough", "raised", "single tool-calls"),
    ("content null beside calls", "qwen3", "passthrough", "raised", "NoneType"),
    ("content null beside calls", "granite-3.3", "passthrough", "raised", "NoneType"),
    ("content null beside calls", "devstral-small", "passthrough", "raised", "None"),
    ("text beside calls", "llama-3.1", "vllm", "dropped", "Looking that up"),
])
def test_the_suite_finds_the_failures_issue_10_reported(old, template, mode, verdict, words):
    cell = check_cell(template, Shape(old, ()), mode, OLD_SHAPES[old], tool_schemas_for_admin())
    assert (cell.status, words in cell.detail) == (verdict, True), cell


def test_mistral_commons_validator_refuses_text_beside_calls(mistral_tokenizer):
    request = mistral_request(OLD_SHAPES["text beside calls"], tool_schemas_for_admin())
    with pytest.raises(MistralCommonException, match="either content or tool_calls"):
        mistral_tokenizer.encode_chat_completion(request)


def test_rendering_is_the_servers_not_a_toy():
    """The environment is transformers': no HTML escaping in tojson, loop controls on,
    raise_exception raising, strftime_now present (Mistral Small 3.2's default prompt)."""
    messages = [{"role": "user", "content": "Tom & Jerry <3"}]
    assert "Tom & Jerry <3" in render("qwen2.5", messages, tool_schemas_for_admin())
    assert "The current date is 20" in render("mistral-small-3.2", messages)
    with pytest.raises(Exception, match="must alternate"):
        render("gemma-3", messages + messages)


# ------------------------------------------------ Ollama's own request parsing

def ollama_refusal(messages: list[dict]) -> str | None:
    """Ollama's OpenAI layer (openai.go, FromCompletionToolCall) unmarshals every call's
    arguments into a map with Go's encoding/json (which takes ``null`` as an empty map) and
    answers 400 "invalid tool call arguments" when it cannot."""
    for message in messages:
        for call in message.get("tool_calls") or ():
            try:
                parsed = json.loads(call["function"]["arguments"])
            except (TypeError, ValueError):
                return "invalid tool call arguments"
            if parsed is not None and not isinstance(parsed, dict):
                return "invalid tool call arguments"
    return None


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_ollamas_request_parsing_accepts_every_shape(shape):
    assert ollama_refusal(prompt(shape)) is None


def test_ollamas_parsing_refuses_arguments_sent_verbatim():
    sent = [{"role": "assistant", "content": "", "tool_calls": [_call("c", "upcoming", raw)]}
            for raw in ("", '{"days": 7', "[7]", "null")]
    assert [ollama_refusal([m]) for m in sent] == ["invalid tool call arguments"] * 3 + [None]
