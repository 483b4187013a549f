"""The fake OpenAI server, exercised through the real openai SDK over loopback HTTP."""

import json
import re
import threading

import openai
import pytest
from openai import OpenAI

from mediabot.conversation.prompt.build import build_llm_messages
from tests.fakes.openai import FakeOpenAI, error_reply

MODEL = "gpt-4o-mini"
HELLO = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as running:    # one server for the module: stopping one takes ~0.5 s
        yield running


@pytest.fixture
def fake(server):
    server.reset()
    return server


def client_for(fake, *, api_key="test", timeout=5.0):
    return OpenAI(base_url=fake.url + "/v1", api_key=api_key, max_retries=0, timeout=timeout)


@pytest.fixture
def client(fake):
    return client_for(fake)


def ask(client, messages=HELLO, **kwargs):
    return client.chat.completions.create(model=MODEL, messages=messages, **kwargs)


def test_a_scripted_text_reply_has_the_real_shape(fake, client):
    fake.enqueue_text("Dune is downloading.")
    completion = ask(client)
    choice = completion.choices[0]
    assert (choice.message.content, choice.finish_reason) == ("Dune is downloading.", "stop")
    assert choice.message.tool_calls is None
    assert completion.model == MODEL and completion.id.startswith("chatcmpl-")
    usage = completion.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > 0
    assert fake.requests[-1]["messages"] == HELLO


def test_tool_calls_round_trip_and_the_fake_sees_the_results(fake, client):
    fake.enqueue_tool_calls([("search_media", {"query": "dune"}),
                             ("library_status", {"query": "dune", "kind": "movie"})])
    fake.enqueue_text("Found it.")
    tools = [{"type": "function", "function": {"name": "search_media", "parameters": {}}}]
    first = ask(client, tools=tools).choices[0]
    assert first.finish_reason == "tool_calls"
    calls = first.message.tool_calls
    assert [c.function.name for c in calls] == ["search_media", "library_status"]
    assert json.loads(calls[0].function.arguments) == {"query": "dune"}
    assert len({c.id for c in calls}) == 2 and all(len(c.id) <= 40 for c in calls)
    messages = HELLO + [first.message.model_dump(exclude_none=True)] + [
        {"role": "tool", "tool_call_id": c.id, "content": "[]"} for c in calls]
    assert ask(client, messages, tools=tools).choices[0].message.content == "Found it."
    assert fake.requests[-1]["messages"][-1]["tool_call_id"] == calls[1].id
    assert fake.requests[0]["tools"] == tools


def test_invalid_json_arguments_are_delivered_as_sent(fake, client):
    fake.enqueue_tool_calls([("add_movie", '{"tmdb_id": 438631')])
    call = ask(client).choices[0].message.tool_calls[0]
    assert call.function.arguments == '{"tmdb_id": 438631'


def test_forced_ids_imitate_ollama_and_vllm(fake, client):
    """Ollama makes ``call_`` + 8 random [a-z0-9] per call (server/routes.go toolCallId)."""
    fake.enqueue_tool_calls([("upcoming", {}), ("download_queue", {})], ids="ollama")
    fake.enqueue_tool_calls([("upcoming", {})], ids="ollama")
    fake.enqueue_tool_calls([("upcoming", {})], ids="vllm")
    fake.enqueue_tool_calls([("upcoming", {})], ids=["call_0"])
    ollama = [c.id for _ in range(2) for c in ask(client).choices[0].message.tool_calls]
    assert all(re.fullmatch(r"call_[a-z0-9]{8}", i) for i in ollama), ollama
    assert len(set(ollama)) == 3, "a fresh id for every call, across turns too"
    assert len(ask(client).choices[0].message.tool_calls[0].id) == 46
    assert ask(client).choices[0].message.tool_calls[0].id == "call_0"


def test_template_mode_answers_400_with_the_templates_words_as_vllm_does(fake, client):
    fake.use_template("llama-3.1")
    two_calls = HELLO + [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"call_{n}", "type": "function",
             "function": {"name": "upcoming", "arguments": "{}"}} for n in (1, 2)]},
        {"role": "tool", "tool_call_id": "call_1", "name": "upcoming", "content": "{}"},
        {"role": "tool", "tool_call_id": "call_2", "name": "upcoming", "content": "{}"}]
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, two_calls)
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "message": "This model only supports single tool-calls at once! None",
        "type": "BadRequestError", "param": None, "code": 400}
    assert fake.rendered == []


def test_template_mode_renders_what_it_accepts_and_reset_turns_it_off(fake, client):
    fake.use_template("mistral-nemo")
    fake.enqueue_text("Hi Alex.")
    messages = [{"role": "system", "content": "You are mediabot."}] + HELLO
    assert ask(client, messages).choices[0].message.content == "Hi Alex."
    assert fake.rendered == ["<s>[INST]You are mediabot.\n\nhello[/INST]"]
    with pytest.raises(openai.BadRequestError, match="must alternate"):
        ask(client, messages + HELLO)
    fake.reset()
    assert ask(client, messages + HELLO).choices[0].message.content == "OK."
    with pytest.raises(ValueError, match="no vendored template"):
        fake.use_template("gpt-17")


def test_an_orphan_tool_message_gets_the_real_400(fake, client):
    messages = HELLO + [{"role": "assistant", "content": "hi"},
                        {"role": "tool", "tool_call_id": "call_1", "content": "{}"}]
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, messages)
    error = caught.value
    assert error.status_code == 400
    assert error.body == {
        "message": "Invalid parameter: messages with role 'tool' must be a response to a "
                   "preceeding message with 'tool_calls'.",
        "type": "invalid_request_error", "param": "messages.[2].role", "code": None}


def test_unanswered_tool_calls_get_the_real_400_naming_the_ids(fake, client):
    messages = HELLO + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_x", "type": "function",
         "function": {"name": "search_media", "arguments": "{}"}}]}, {"role": "user",
                                                                      "content": "?"}]
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, messages)
    assert caught.value.body["message"].endswith(
        "The following tool_call_ids did not have response messages: call_x")
    assert caught.value.body["param"] == "messages.[1].role"
    assert len(fake.requests) == 1      # rejected requests are recorded too


def test_a_vllm_history_is_refused_raw_but_accepted_once_built(fake, client):
    long_id = "chatcmpl-tool-" + "a" * 32
    history = HELLO + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": long_id, "type": "function",
         "function": {"name": "upcoming", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": long_id, "content": "[]"},
        {"role": "tool", "tool_call_id": "ghost", "content": "orphan"},
        {"role": "user", "content": "and movies?"}]
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, history)
    assert caught.value.code == "string_above_max_length"
    fake.enqueue_text("Nothing this week.")
    reply = ask(client, build_llm_messages("You are mediabot.", history))
    assert reply.choices[0].message.content == "Nothing this week."


def test_scripted_errors_become_the_sdks_exceptions_and_the_script_goes_on(fake, client):
    fake.enqueue_error(500, "The server had an error while processing your request.")
    fake.enqueue_error(429, "Rate limit reached", code="rate_limit_exceeded", type="requests")
    fake.enqueue_text("recovered")
    with pytest.raises(openai.InternalServerError):
        ask(client)
    with pytest.raises(openai.RateLimitError) as caught:
        ask(client)
    assert caught.value.code == "rate_limit_exceeded"
    assert ask(client).choices[0].message.content == "recovered"


def test_a_delay_longer_than_the_sdk_timeout_times_out_and_a_short_one_does_not(fake):
    client = client_for(fake, timeout=0.3)
    fake.enqueue_delay(1.0)
    fake.enqueue_text("too late")
    with pytest.raises(openai.APITimeoutError):
        ask(client)
    fake.enqueue_delay(0.05)
    assert ask(client).choices[0].message.content == "OK."   # the delay precedes the default


def test_the_responder_answers_when_the_queue_is_empty(fake, client):
    seen = []

    def responder(body):
        seen.append(len(body["messages"]))
        if len(body["messages"]) == 1:
            return [("search_media", {"query": body["messages"][0]["content"]})]
        return error_reply(503, "overloaded") if len(seen) == 3 else "from the responder"

    fake.set_responder(responder)
    fake.enqueue_text("scripted first")
    assert ask(client).choices[0].message.content == "scripted first"
    call = ask(client).choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == {"query": "hello"}
    assert ask(client, HELLO * 2).choices[0].message.content == "from the responder"
    with pytest.raises(openai.InternalServerError):
        ask(client, HELLO * 2)
    assert seen == [1, 2, 2]


def test_nothing_scripted_answers_the_default_text(client):
    assert ask(client).choices[0].message.content == "OK."


def test_models_are_listed_and_an_unknown_model_is_404(fake, client):
    assert [m.id for m in client.models.list()] == ["gpt-4o-mini", "gpt-4o"]
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-9", messages=HELLO)
    assert caught.value.code == "model_not_found"


def test_a_wrong_api_key_is_401_with_the_real_code():
    with FakeOpenAI(api_key="sk-right", models=["llama3.1"]) as fake:
        with pytest.raises(openai.AuthenticationError) as caught:
            client_for(fake, api_key="sk-wrong").models.list()
        assert caught.value.code == "invalid_api_key"
        assert caught.value.body["message"].startswith("Incorrect API key provided")
        right = client_for(fake, api_key="sk-right")
        assert right.chat.completions.create(model="llama3.1", messages=HELLO).choices


def test_requests_from_many_threads_are_all_recorded(fake, client):
    def send(n):
        ask(client, [{"role": "user", "content": f"message {n}"}])

    threads = [threading.Thread(target=send, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    contents = sorted(r["messages"][0]["content"] for r in fake.requests)
    assert contents == sorted(f"message {n}" for n in range(12))
