"""The model client: the SDK (0.7 s of import, 30 MB) loads on the first model call, not
at start, so the daemon answers /healthz first; every call is bounded, tools go with
``tool_choice``, and a failure says what the server said; a server that is no chat API, or
answers in content parts, is read without a crash."""

import subprocess
import sys

import pytest

from mediabot.model.chat import ChatModel, ModelError
from mediabot.store import db
from tests.fakes.openai import Reply
from tests.support.config_files import make_config
from tests.support.household import ADMIN


@pytest.mark.e2e   # a Python process of its own
def test_starting_the_daemon_code_does_not_import_the_model_sdk():
    code = ("import sys; import mediabot.cli, mediabot.daemon, mediabot.app, mediabot.ops.checks; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'openai'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_lazy_model_builds_its_client_once_on_the_first_call(fake_llm):
    config = make_config(llm_url=fake_llm.url)
    model = ChatModel.lazy(config.llm)
    assert model._client is None
    reply = model.complete([{"role": "user", "content": "hi"}])
    assert reply.message["role"] == "assistant" and len(fake_llm.requests) == 1
    client = model.client
    assert model.complete([{"role": "user", "content": "again"}]).message["content"] is not None
    assert model.client is client and str(client.base_url).startswith(fake_llm.url)


HELLO = [{"role": "user", "content": "hi"}]
TOOL = {"type": "function", "function": {"name": "download_queue", "description": "d",
                                         "parameters": {"type": "object", "properties": {}}}}


def model_for(fake_llm, **llm):
    return ChatModel.lazy(make_config(llm_url=fake_llm.url, llm=llm).llm)


def test_every_call_is_bounded_and_tools_go_with_tool_choice_auto(fake_llm):
    model = model_for(fake_llm, max_reply_tokens=150)
    model.complete(HELLO, [TOOL])
    model.complete(HELLO)
    model.complete(HELLO, max_tokens=20)
    with_tools, plain, summary = fake_llm.requests
    assert (with_tools["max_tokens"], with_tools["tool_choice"]) == (150, "auto")
    assert plain["max_tokens"] == 150 and "tool_choice" not in plain and "tools" not in plain
    assert summary["max_tokens"] == 20


def test_a_server_that_refuses_tool_choice_is_asked_again_without_it(fake_llm):
    fake_llm.enqueue_error(400, "Unrecognized request argument supplied: 'tool_choice'",
                           param="tool_choice")
    model = model_for(fake_llm)
    assert model.complete(HELLO, [TOOL]).message["content"] == "OK."
    model.complete(HELLO, [TOOL])
    first, second, third = fake_llm.requests
    assert "tool_choice" in first and "tool_choice" not in second and "tool_choice" not in third


@pytest.mark.parametrize("status, reason, refused", [
    (400, "rejected", True), (422, "rejected", True), (500, "error", True),
    (408, "busy", False), (429, "busy", False), (503, "busy", False), (504, "busy", False),
    (401, "misconfigured", False), (404, "misconfigured", False),
])
def test_a_failed_call_carries_the_status_and_the_servers_words(fake_llm, status, reason,
                                                                refused):
    fake_llm.enqueue_error(status, "Input should be a valid string [sk-test-llm-key-0001]")
    model = model_for(fake_llm, api_key="sk-test-llm-key-0001", max_retries=0)
    with pytest.raises(ModelError) as caught:
        model.complete(HELLO)
    error = caught.value
    assert (error.status, error.reason, error.refused) == (status, reason, refused)
    assert f"HTTP {status}: Input should be a valid string [***]" in str(error)


def test_parallel_tool_calls_are_turned_off_deliberately_when_tools_go(fake_llm):
    model = model_for(fake_llm)
    model.complete(HELLO, [TOOL])
    model.complete(HELLO)
    with_tools, plain = fake_llm.requests
    assert with_tools["parallel_tool_calls"] is False and "parallel_tool_calls" not in plain


def test_a_sampling_failure_is_asked_again_as_the_same_request(fake_llm):
    fake_llm.enqueue_error(500, "The model produced output that does not match the expected "
                                "tool call format")
    model = model_for(fake_llm)
    assert model.complete(HELLO, [TOOL]).message["content"] == "OK."
    first, second = fake_llm.requests
    assert first == second


def test_a_second_sampling_failure_is_an_error_not_a_refused_prompt(fake_llm):
    for _ in range(2):
        fake_llm.enqueue_error(500, "The model produced output that does not match the "
                                    "expected format")
    with pytest.raises(ModelError) as caught:
        model_for(fake_llm).complete(HELLO, [TOOL])
    assert caught.value.status == 500 and len(fake_llm.requests) == 2
    assert caught.value.refused is False, "not a prompt to shrink"


@pytest.mark.parametrize("said", [
    "Dune is downloading.<|im_end|>\n<|im_start|>user\nthanks",
    "Dune is downloading.<end_of_turn>\n<start_of_turn>user\nok",
    "Dune is downloading. <|eot_id|>",
    "Dune is downloading.</s>",
])
def test_chat_template_markers_are_cut_from_a_reply(fake_llm, said):
    fake_llm.enqueue_text(said)
    assert model_for(fake_llm).complete(HELLO).message["content"] == "Dune is downloading."


def test_no_answer_is_not_a_refusal(fake_llm):
    model = model_for(fake_llm, base_url="http://127.0.0.1:9/v1", max_retries=0)
    with pytest.raises(ModelError) as caught:
        model.complete(HELLO)
    assert (caught.value.reason, caught.value.status, caught.value.refused) == (
        "unreachable", None, False)


def test_an_empty_answer_while_tools_are_offered_is_asked_again_without_tools(engine_for,
                                                                             fake_llm):
    """llama-cpp-python's chatml-function-calling can only answer "" in words while tools are
    offered (its grammar allows nothing else): the person still gets the model's words."""
    engine = engine_for(arr=True)
    alex = db.User.get(phone=ADMIN).id
    fake_llm.enqueue_text("")
    fake_llm.enqueue_text("Hi Alex, what shall we watch?")
    assert engine.handle(alex, "hi!") == "Hi Alex, what shall we watch?"
    offered, plain = fake_llm.requests
    assert offered["tool_choice"] == "auto" and "tools" not in plain and "tool_choice" not in plain
    assert plain["messages"] == offered["messages"]
    fake_llm.enqueue_text("")
    fake_llm.enqueue_text("")
    assert engine.handle(alex, "hmm") == "Sorry, I have no answer to that. Could you rephrase it?"
    assert len(fake_llm.requests) == 4, "asked again once, not in a loop"


@pytest.fixture
def engine(engine_for):
    return engine_for(arr=True)


@pytest.mark.parametrize("content_type, body", [
    ("text/html", "<html><body>Open WebUI</body></html>"),
    ("application/json", '{"choices": [{"index": 0, "message": null, "finish_reason": "length"}]}'),
    ("application/json", "[]"),
])
def test_a_server_that_is_not_a_chat_api_gets_an_apology_not_a_crash(engine_for, content_type,
                                                                     body):
    from werkzeug.wrappers import Response

    from mediabot.conversation.model_turn import APOLOGY
    from mediabot.trial.sim.loopback import LoopbackServer

    def app(environ, start_response):
        return Response(body, mimetype=content_type)(environ, start_response)
    with LoopbackServer(app) as server:
        engine = engine_for(arr=False, llm={"base_url": server.url + "/v1"})
        assert engine.handle(db.User.get(phone=ADMIN).id, "hello") == APOLOGY


def test_content_parts_are_read_as_text(engine, alex, fake_llm):
    fake_llm.enqueue(Reply(content=[{"type": "text", "text": "Dune is "},
                                    {"type": "text", "text": "downloading."}]))
    assert engine.handle(alex, "dune?") == "Dune is downloading."
