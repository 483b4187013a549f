"""Adversarial engine tests: odd model replies, multi-turn validity, confirmations, onboarding."""

import json

import pytest

from mediabot.conversation import history
from mediabot.conversation.engine import ONBOARDING_QUESTION
from mediabot.conversation.prompt.build import estimate_tokens, validate_messages
from mediabot.store import db
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import DUNE_1984_TMDB, DUNE_TMDB, OFFICE_TVDB
from tests.conftest import ADMIN, MEMBER
from tests.fakes.openai import Reply
from tests.support import answered, conversation, person_part, stamped, unstamped


@pytest.fixture
def engine(engine_for):
    return engine_for(arr=True)


def raw_call(name, arguments, call_id="call_x1"):
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def call(name="download_queue", arguments="{}", **fields):
    return {"type": "function", "function": {"name": name, "arguments": arguments}, **fields}


@pytest.mark.parametrize("calls, seen", [
    ([call(None, id="call_a")], "there is no tool called"),
    ([call(id=None)], '"downloads"'),
    ([call()], '"downloads"'),
    ([call(id=""), call("upcoming", id="")], '"downloads"'),
    ([call("", "", id="call_a")], "there is no tool called"),
    ([call(None, None, id="call_a")], "there is no tool called"),
    ([call(arguments="[]", id="call_a")], "must be a JSON object"),
    ([call(arguments={}, id="call_a")], '"downloads"'),
])
def test_odd_tool_calls_are_answered_and_the_next_turn_is_valid(engine, alex, fake_llm, calls,
                                                                 seen):
    """Local servers omit ids or send null names: the model still gets each real result."""
    fake_llm.enqueue(Reply(content=None, tool_calls=calls))
    fake_llm.enqueue_text("Here you go.")
    assert engine.handle(alex, "what's downloading") == "Here you go."
    fake_llm.enqueue_text("Still here.")
    assert engine.handle(alex, "thanks") == "Still here."
    results = [m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert len(results) == len(calls) and seen in results[0]
    assert not any("interrupted" in r for r in results)
    assert [m["role"] for m in fake_llm.requests[2]["messages"]][-2:] == ["assistant", "user"]


def office_in_library(stack):
    return any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)


def dune_in_library(stack):
    return any(m["tmdbId"] == DUNE_TMDB for m in stack.radarr.library)


def test_two_removals_in_one_message_ask_about_the_first_only(engine, alex, fake_llm, stack):
    """The user sees one question; the other removal is refused, not silently dropped."""
    fake_llm.enqueue_tool_calls([
        ("remove_media", {"kind": "series", "id": OFFICE_TVDB, "delete_files": True}),
        ("remove_media", {"kind": "movie", "id": DUNE_TMDB, "delete_files": True}),
        ("download_queue", {})], content="Sure, removing both.")
    reply = engine.handle(alex, "delete the office and dune")
    assert reply.startswith("Remove The Office (2005) and delete its 62 GB of files?")
    assert "one thing at a time" in reply
    results = [json.loads(m["content"]) for m in history.get_history(alex, 20)
               if m["role"] == "tool"]
    assert "The Office" in results[0]["asked"]
    assert "nothing was removed" in results[1]["error"] and "asked" not in results[1]
    assert "downloads" in results[2]
    assert engine.handle(alex, "Y") == "Removed The Office (2005) and deleted its files."
    assert not office_in_library(stack) and dune_in_library(stack)
    assert len(fake_llm.requests) == 1


class TestOnboardingEdges:
    @pytest.fixture
    def nameless(self, engine):
        return db.User.create(phone="+15559990000", role="member").id

    @pytest.mark.parametrize("answer", ["Y", "n", "nope", "no thanks", "sure", "yes please",
                                        "thanks", "what", "ok thanks"])
    def test_a_yes_no_or_filler_answer_is_not_taken_as_a_name(self, engine, nameless,
                                                               fake_llm, answer):
        assert engine.handle(nameless, "Y") == ONBOARDING_QUESTION
        fake_llm.enqueue_text("No problem. What can I find for you?")
        assert engine.handle(nameless, answer) == "No problem. What can I find for you?"
        assert db.User.get_by_id(nameless).display_name is None
        assert "You are talking with" not in fake_llm.requests[0]["messages"][0]["content"]
        assert "You are talking with" not in person_part(fake_llm.requests[0])

    def test_help_and_reset_before_a_name(self, engine, nameless, fake_llm):
        assert engine.handle(nameless, "RESET") != ONBOARDING_QUESTION
        assert engine.handle(nameless, "hello") == ONBOARDING_QUESTION
        assert engine.handle(nameless, "HELP") != ONBOARDING_QUESTION
        fake_llm.enqueue_text("Hi Robin!")
        assert engine.handle(nameless, "Robin") == "Hi Robin!"
        assert db.User.get_by_id(nameless).display_name == "Robin"


def system_of(request) -> str:
    return request["messages"][0]["content"]


def offered(request) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


def test_without_sonarr_the_model_is_told_and_a_series_call_says_why(engine_for, fake_llm,
                                                                     stack):
    engine = engine_for(arr=False, radarr={"url": stack.servers["radarr"].url,
                                           "api_key": API_KEY, "timeout_seconds": 2})
    sam = db.User.get(phone=MEMBER).id
    fake_llm.enqueue_tool_calls([("add_series", {"tvdb_id": OFFICE_TVDB}),
                                 ("remove_media", {"kind": "movie", "id": DUNE_TMDB})])
    fake_llm.enqueue_text("Sonarr isn't set up here, so I can't add shows.")
    engine.handle(sam, "get The Office")
    first = fake_llm.requests[0]
    assert "add_media" in offered(first) and "add_series" not in offered(first)
    assert "Sonarr is not set up" in system_of(first)
    assert "add_series" not in system_of(first)
    assert "remove_media, admins only" in system_of(first), "one system text for everyone"
    assert "member, not an admin" in person_part(first)
    errors = [json.loads(m["content"])["error"] for m in fake_llm.requests[1]["messages"]
              if m["role"] == "tool"]
    assert "Sonarr" in errors[0] and "not set up" in errors[0]
    assert "only for admins" in errors[1]


def test_with_neither_service_the_model_knows_it_has_no_tools(engine_for, fake_llm):
    engine = engine_for(arr=False)
    fake_llm.enqueue_text("Nothing is set up yet.")
    engine.handle(db.User.get(phone=ADMIN).id, "get Dune")
    request = fake_llm.requests[0]
    assert "tools" not in request
    assert "no tools" in system_of(request) and "search_media" not in system_of(request)


def test_summary_covers_what_the_turn_evicted_with_tool_schemas_counted(engine_for, fake_llm):
    """The rolling summary keeps up with the real window (system prompt and schemas count)."""
    engine = engine_for(arr=True, history={"max_messages": 40, "max_context_tokens": 1600,
                                 "summaries": True})
    alex = db.User.get(phone=ADMIN).id

    def respond(body):
        if len(body["messages"]) == 2 and "summary" in body["messages"][0]["content"].lower():
            return "Alex asked many padded questions."
        return "answer " * 20
    fake_llm.set_responder(respond)
    for i in range(40):
        engine.after_turn(answered(engine, alex, f"question {i} " + "pad " * 20))
    fake_llm.enqueue_text("ok")
    engine.handle(alex, "one more")
    seen = [m["content"] for m in conversation(fake_llm.requests[-1]) if m["role"] == "user"]
    first_seen = db.Message.get(db.Message.content == unstamped(seen[0])).id
    unseen = first_seen - 1 - db.User.get_by_id(alex).summary_through
    assert 0 <= unseen < 10, "at most one summary interval is neither summarised nor sent"


def test_a_failing_summary_is_not_retried_on_every_turn(engine_for, fake_llm):
    engine = engine_for(arr=False, history={"max_messages": 4, "summaries": True})
    alex = db.User.get(phone=ADMIN).id
    summary_calls = []

    def respond(body):
        if "summary" in body["messages"][0]["content"].lower():
            summary_calls.append(body)
            return Reply(status=400, error={"error": {"message": "Unsupported parameter: "
                                                      "'max_tokens'", "type": "x"}})
        return "ok"
    fake_llm.set_responder(respond)
    for i in range(30):
        engine.after_turn(answered(engine, alex, f"message {i}"))
    assert 1 <= len(summary_calls) <= 6, "one try per ten newly evicted messages, not 24"
    assert db.User.get_by_id(alex).summary is None


def roles(request) -> list[str]:
    """The roles of the system message and the conversation (the person's part left out)."""
    return [request["messages"][0]["role"]] + [m["role"] for m in conversation(request)]


def tool_results(request) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_a_long_household_conversation(engine, alex, fake_llm, stack):
    """search -> pick -> add -> queue -> upcoming -> remove -> Y -> follow-up, each prompt
    checked."""
    fake_llm.enqueue_tool_calls([("search_media", {"query": "dune", "kind": "movie"})],
                                content="Let me look.")
    fake_llm.enqueue_text("Dune (2021) is here already; Dune (1984) is not. Want that one?")
    engine.handle(alex, "do we have dune?")
    second = fake_llm.requests[1]
    assert roles(second) == ["system", "user", "assistant", "tool"]
    hits = tool_results(second)[0]["results"]
    assert {(h["year"], h["in_library"]) for h in hits} >= {(2021, True), (1984, False)}

    fake_llm.enqueue_tool_calls([("add_movie", {"tmdb_id": DUNE_1984_TMDB})])
    fake_llm.enqueue_text("Added Dune (1984). I'll text you when it's ready.")
    engine.handle(alex, "yes the 1984 one")
    fourth = fake_llm.requests[3]
    assert "Dune (1984)" in tool_results(fourth)[-1]["message"]
    assert "the 1984 one" in fourth["messages"][-3]["content"]
    assert len(tool_results(fourth)) == 2, "turn 1's search result is still in the window"

    fake_llm.enqueue_tool_calls([("download_queue", {})], ids="ollama")
    fake_llm.enqueue_text("Severance and Dune: Part Two are downloading.")
    engine.handle(alex, "what's downloading?")
    assert tool_results(fake_llm.requests[5])[-1]["total"] >= 1

    fake_llm.enqueue_tool_calls([("upcoming", {"days": 7})], ids="ollama")
    fake_llm.enqueue_text("Slow Horses has an episode in two days.")
    engine.handle(alex, "anything new this week?")
    week = tool_results(fake_llm.requests[7])[-1]
    assert week["days"] == 7 and week.get("episodes")

    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": OFFICE_TVDB,
                                                   "delete_files": True})], ids="vllm")
    question = engine.handle(alex, "delete The Office")
    assert question.startswith("Remove The Office (2005) and delete its 62 GB")
    assert len(fake_llm.requests) == 9 and office_in_library(stack)
    assert engine.handle(alex, "Y") == "Removed The Office (2005) and deleted its files."
    assert len(fake_llm.requests) == 9 and not office_in_library(stack)

    fake_llm.enqueue_text("You added Dune (1984) and removed The Office.")
    engine.handle(alex, "what did we change today?")
    last = fake_llm.requests[-1]
    said = [m.get("content") or "" for m in last["messages"]]
    assert "Removed The Office (2005) and deleted its files." in said
    assert said[-2:] == ["Removed The Office (2005) and deleted its files.",
                         stamped("what did we change today?")]
    assert "Waiting for this person's answer" not in said[0]
    assert all(len(m.get("tool_call_id", "")) <= 40 for m in last["messages"])
    assert estimate_tokens(last["messages"]) <= 4000
    for request in fake_llm.requests:
        validate_messages(request["messages"])
        assert "Alex" in person_part(request)


def test_cancel_that_cancels_so_a_later_yes_to_the_model_removes_nothing(engine, alex, fake_llm,
                                                                        stack):
    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": OFFICE_TVDB,
                                                   "delete_files": True})])
    engine.handle(alex, "delete The Office")
    assert engine.handle(alex, "Cancel that") == "OK, I kept it. Nothing was removed."
    fake_llm.enqueue_text("Dune (1984) is not in the library. Want me to add it?")
    engine.handle(alex, "do we have the old dune?")
    assert "Waiting for this person's answer" not in system_of(fake_llm.requests[-1])
    fake_llm.enqueue_text("OK.")
    engine.handle(alex, "yes")
    assert office_in_library(stack), "a yes meant for the model never runs an old removal"


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


@pytest.mark.parametrize("seed", range(3))
def test_random_household_sessions_never_send_an_invalid_prompt(engine_for, fake_llm, stack,
                                                                seed):
    """Tool rounds, failures mid-loop, removals, Y/N, RESET and HELP in random order, under
    tight windows and three id styles: the fake (the real API's rules) never answers 400."""
    import random

    from mediabot.conversation.prompt.message_rules import find_violation
    rng = random.Random(seed)
    engine = engine_for(arr=True, history={"max_messages": rng.choice([4, 6]),
                                 "max_context_tokens": rng.choice([1200, 4000])},
                        llm={"max_tool_rounds": 3})
    alex = db.User.get(phone=ADMIN).id
    calls = {"queue": [("download_queue", {}), ("search_media", {"query": "dune"})],
             "remove": [("remove_media", {"kind": "movie", "id": DUNE_TMDB})],
             "broken": [("upcoming", "{oops")]}
    for step in range(30):
        action = rng.choice(["text", "queue", "remove", "broken", "fail", "Y", "N", "RESET",
                             "HELP"])
        ids = rng.choice([None, "ollama", "vllm"])
        if action in calls:
            fake_llm.enqueue_tool_calls(calls[action], ids=ids, content=rng.choice([None, "hm"]))
        if action == "fail":
            fake_llm.enqueue_tool_calls(calls["queue"], ids=ids)
            fake_llm.enqueue_error(500, "boom")
        fake_llm.enqueue_text(f"reply {step}")
        engine.handle(alex, action if action in ("Y", "N", "RESET", "HELP") else f"ask {step}")
    assert fake_llm.requests
    for request in fake_llm.requests:
        assert find_violation(request["messages"]) is None
        assert next(m for m in request["messages"] if m["role"] != "system")["role"] == "user"
