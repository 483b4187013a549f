"""The checks that ask the model server (``ops/model_checks.py``), through ``mediabot check``
against the fake OpenAI: the model and its key, a server that cannot list its models, a
model that calls no tools (and why, per server), and whether it is fast enough for a text."""

import dataclasses
import datetime as dt

import pytest

from mediabot.trial.sim.arr import FakeRadarr
from mediabot.trial.sim.loopback import LoopbackServer
from tests.fakes.openai import error_reply, text_reply
from tests.support.check import calls_a_tool_when_offered, check_line, run_check


def test_unknown_model_is_named_with_some_available(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog, **{"llm.model": '"gpt-9-imaginary"'})
    assert result.exit_code == 1
    text = check_line(result, "llm", "FAIL")
    assert "'gpt-9-imaginary' is not on the server" in text
    assert "gpt-4o, gpt-4o-mini" in text and "[llm] model" in text


def test_a_server_that_answers_to_any_model_name_passes(tmp_path, servers):
    llm, listed = servers["llm"], servers["llm"].models
    llm.models, llm.serves_any_model = ["/models/gemma-3-270m-q4_k_m.gguf"], True
    try:
        result = run_check(tmp_path, servers)
    finally:
        llm.models, llm.serves_any_model = listed, False
    text = check_line(result, "llm", "ok")
    assert "model gpt-4o-mini answered at" in text
    assert "lists '/models/gemma-3-270m-q4_k_m.gguf' and answers to any name" in text
    assert result.exit_code == 0


def test_rejected_model_key(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog, **{"llm.api_key": '"sk-wrong-key-9999"'})
    assert result.exit_code == 1
    assert "the model server rejected [llm] api_key" in check_line(result, "llm", "FAIL")
    assert "sk-wrong-key-9999" not in result.output


def test_model_server_down(tmp_path, servers):
    stopped = LoopbackServer(FakeRadarr()).start()
    stopped.stop()
    result = run_check(tmp_path, servers, **{"llm.base_url": f'"{stopped.url}/v1"'})
    assert result.exit_code == 1
    assert "not answering at" in check_line(result, "llm", "FAIL")


@pytest.mark.parametrize("model, status, expected", [
    ('"gpt-4o"', "ok", "answered at"),
    ('"llama-none"', "FAIL", "model 'llama-none' was not found"),
])
def test_server_without_model_list_gets_a_one_token_completion(tmp_path, servers, model,
                                                               status, expected):
    result = run_check(tmp_path, servers, **{"llm.base_url": f'"{servers["urls"]["unlisted_llm"]}"',
                                             "llm.model": model})
    assert expected in check_line(result, "llm", status)


@pytest.mark.parametrize("answer, expected", [
    ("Nothing is downloading.", "asked to call a tool, the model answered without one"),
    (error_reply(400, "tools are not supported by this template"),
     "refused a request with tools (rejected: HTTP 400: tools are not supported"),
])
def test_a_model_that_returns_no_tool_calls_is_a_warning_with_the_fix(tmp_path, servers,
                                                                      answer, expected):
    servers["llm"].set_responder(lambda body: answer if body.get("tools") else "OK.")
    try:
        result = run_check(tmp_path, servers)
    finally:
        servers["llm"].set_responder(calls_a_tool_when_offered)
    text = check_line(result, "tools", "warn")
    assert expected in text and "start llama-server with --jinja" in text
    assert "ok   llm: model gpt-4o-mini" in result.output
    assert result.exit_code == 0 and result.output.splitlines()[-1].endswith("(1 warning)")


def test_a_model_that_drops_tools_names_the_chat_template_and_each_servers_fix(tmp_path,
                                                                               servers):
    servers["llm"].set_responder(lambda body: "Nothing is downloading.")
    try:
        text = check_line(run_check(tmp_path, servers), "tools", "warn")
    finally:
        servers["llm"].set_responder(calls_a_tool_when_offered)
    assert "the usual cause is the server's chat template, which drops the tool schemas" in text
    assert "start llama-server with --jinja and --chat-template-file <a template that renders " \
           "tools" in text
    assert "Ollama: a model whose Modelfile TEMPLATE handles .Tools" in text


def test_a_fast_model_is_timed_and_passes(tmp_path, servers):
    result = run_check(tmp_path, servers)
    text = check_line(result, "speed", "ok")
    assert "a typical text (2,000 prompt tokens + 100 reply tokens) takes ~" in text
    assert "within [llm] timeout_seconds = 5" in text
    probe = [body for body in servers["llm"].requests if "Check " in str(body["messages"])][-1]
    assert probe["max_tokens"] == 16 and "tools" not in probe


def test_a_model_too_slow_for_the_timeout_is_a_warning_naming_the_key(tmp_path, servers):
    """llama-server's timings: 50 prompt tokens/s and 4 reply tokens/s make a typical text
    2000/50 + 100/4 = 65 s, over a 5 s timeout."""
    servers["llm"].timings = {"prompt_n": 400, "prompt_per_second": 50.0,
                              "predicted_n": 16, "predicted_per_second": 4.0}
    try:
        result = run_check(tmp_path, servers)
    finally:
        servers["llm"].timings = None
    assert check_line(result, "speed", "warn") == (
        "warn speed: reads ~50 prompt tokens/s, writes ~4.0 reply tokens/s; a typical text "
        "(2,000 prompt tokens + 100 reply tokens) would take ~65 s, over [llm] timeout_seconds "
        "= 5 — raise [llm] timeout_seconds to at least 98, or use a smaller or faster model "
        "(a GPU), and keep the server's prompt cache on so most texts read only what is new")
    assert result.exit_code == 0, "a warning, not a failure"


def test_without_timings_the_prompt_speed_comes_from_usage_and_time(tmp_path, servers):
    slow = dataclasses.replace(text_reply("OK"), delay=1.0)
    servers["llm"].set_responder(
        lambda body: slow if "Check " in str(body["messages"]) else calls_a_tool_when_offered(body))
    try:
        result = run_check(tmp_path, servers, **{"llm.timeout_seconds": "3"})
    finally:
        servers["llm"].set_responder(calls_a_tool_when_offered)
    text = check_line(result, "speed", "warn")
    assert "reply speed not reported (llama.cpp's timings give it)" in text
    assert "over [llm] timeout_seconds = 3 — raise [llm] timeout_seconds" in text


def test_no_tool_probe_when_the_model_check_failed(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"llm.model": '"gpt-9-imaginary"'})
    assert "tools:" not in result.output and "speed:" not in result.output


def test_ollama_as_households_run_it_is_told_when_it_unloads_the_model(tmp_path, servers):
    """The whole check against a server answering as Ollama does: its OpenAI API under /v1
    (chat, tools), /api/version, and /api/ps with the model loaded until five minutes after
    the last request (Ollama's default keep-alive), in Go's RFC 3339 with nanoseconds."""
    llm = servers["llm"]
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5, seconds=20)
    llm.serve_root("/api/version", {"version": "0.12.3"})
    llm.serve_root("/api/ps", {"models": [{
        "name": "gpt-4o-mini", "model": "gpt-4o-mini", "size": 5_400_000_000,
        "digest": "845dbda0ea48", "details": {"format": "gguf", "family": "qwen2"},
        "expires_at": soon.strftime("%Y-%m-%dT%H:%M:%S.%f") + "127+00:00", "size_vram": 0,
        "context_length": 4096}]})
    asked = len(llm.root_asked)
    try:
        result = run_check(tmp_path, servers)
    finally:
        llm.serve_root("/api/version", None)
        llm.serve_root("/api/ps", None)
    assert "model gpt-4o-mini is served at" in check_line(result, "llm", "ok")
    text = check_line(result, "model server", "warn")
    assert text.startswith("warn model server: Ollama 0.12.3: gpt-4o-mini is unloaded 5 min "
                           "after its last request")
    assert "ignores a keep-alive sent with a request" in text
    assert "OLLAMA_KEEP_ALIVE=-1" in text
    assert 'POST /api/generate {"model": "gpt-4o-mini", "keep_alive": -1}' in text
    assert llm.root_asked[asked:] == ["/api/version", "/api/ps"]
