"""The model turn with its hands (``conversation/model_turn.py``): tools through arrapi
against the fake Sonarr/Radarr, odd tool calls from local servers, and a long household
conversation whose every prompt is checked."""

import json

import pytest

from mediabot.conversation import history
from mediabot.conversation.prompt.build import estimate_tokens, validate_messages
from mediabot.store import db
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import DUNE_1984_TMDB, OFFICE_TVDB
from tests.fakes.openai import Reply
from tests.support.asking import office_in_library
from tests.support.clock import short_stamped
from tests.support.household import ADMIN
from tests.support.prompts import conversation, offered, person_part, tool_results


@pytest.fixture
def engine(engine_for):
    return engine_for(arr=True)


def test_search_then_add_records_the_request(engine, alex, fake_llm, stack):
    fake_llm.enqueue_tool_calls([("search_media", {"query": "dune", "kind": "movie"})])
    fake_llm.enqueue_text("I found Dune (2021), Dune (1984) and more. Which one?")
    engine.handle(alex, "can you get dune?")
    results = tool_results(fake_llm.requests[1])[0]
    assert any(r.get("year") == 1984 for r in results["results"])
    fake_llm.enqueue_tool_calls([("add_movie", {"tmdb_id": DUNE_1984_TMDB})])
    fake_llm.enqueue_text("Added Dune (1984). I'll text you when it's ready.")
    assert engine.handle(alex, "the 1984 one") == ("Added Dune (1984). "
                                                   "I'll text you when it's ready.")
    assert "error" not in tool_results(fake_llm.requests[-1])[-1]
    assert stack.radarr.requests_to("movie", "POST"), "the add reached Radarr"
    request = db.Request.get()
    assert (request.user_id, request.service,
            request.external_id) == (alex, "radarr", DUNE_1984_TMDB)


def test_admin_is_offered_remove(engine, alex, fake_llm):
    fake_llm.enqueue_text("hi")
    engine.handle(alex, "hi")
    assert "remove_media" in offered(fake_llm.requests[0])
    assert {"search_media", "add_media", "download_queue", "upcoming",
            "search_again"} <= offered(fake_llm.requests[0])


def test_sonarr_down_becomes_a_tool_error_the_model_explains(engine, alex, fake_llm, stack):
    stack.down("sonarr")
    fake_llm.enqueue_tool_calls([("search_media", {"query": "severance", "kind": "series"})])
    fake_llm.enqueue_text("Sonarr isn't answering right now.")
    assert engine.handle(alex, "do we have severance?") == "Sonarr isn't answering right now."
    error = tool_results(fake_llm.requests[1])[0]["error"]
    assert "not answering" in error and API_KEY not in error


def test_tools_run_on_the_engines_clock(engine_for, fake_llm, clock):
    """'upcoming' asks Sonarr/Radarr about the week from the injected now, not the wall clock."""
    import datetime as dt

    clock.now = dt.datetime(2030, 3, 1, 18, 0, 0)
    engine = engine_for(arr=True)  # the fake servers are seeded around the same now
    fake_llm.enqueue_tool_calls([("upcoming", {"days": 7})])
    reply = engine.handle(db.User.get(phone=ADMIN).id, "what's coming up?")
    assert reply.startswith("Coming in the next 7 days: ") and "2030-03" in reply, reply
    fake_llm.enqueue_text("You're welcome.")
    engine.handle(db.User.get(phone=ADMIN).id, "thanks")
    result = tool_results(fake_llm.requests[1])[0]
    assert "error" not in result
    assert "2030-03" in json.dumps(result), result


def call(name="download_queue", arguments="{}", **fields):
    return {"type": "function", "function": {"name": name, "arguments": arguments}, **fields}


@pytest.mark.parametrize("calls, seen, own", [
    ([call(None, id="call_a")], "there is no tool called", False),
    ([call(id=None)], '"downloads"', True),
    ([call()], '"downloads"', True),
    ([call(id=""), call("upcoming", id="")], '"downloads"', False),
    ([call("", "", id="call_a")], "there is no tool called", False),
    ([call(None, None, id="call_a")], "there is no tool called", False),
    ([call(arguments="[]", id="call_a")], "must be a JSON object", False),
    ([call(arguments={}, id="call_a")], '"downloads"', True),
])
def test_odd_tool_calls_are_answered_and_the_next_turn_is_valid(engine, alex, fake_llm, calls,
                                                                 seen, own):
    """Local servers omit ids or send null names: the model still gets each real result, and
    a lone queue call, however odd its id, is answered by the queue's own words (``own``)."""
    fake_llm.enqueue(Reply(content=None, tool_calls=calls))
    if not own:
        fake_llm.enqueue_text("Here you go.")
    reply = engine.handle(alex, "what's downloading")
    assert reply.startswith("4 downloads: Severance") if own else reply == "Here you go."
    fake_llm.enqueue_text("Still here.")
    assert engine.handle(alex, "thanks") == "Still here."
    last = fake_llm.requests[-1]["messages"]
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert len(results) == len(calls) and seen in results[0]
    assert not any("interrupted" in r for r in results)
    assert [m["role"] for m in last][-2:] == ["assistant", "user"]
    assert len(fake_llm.requests) == (2 if own else 3)


def roles(request) -> list[str]:
    """The roles of the system message and the conversation (the person's part left out)."""
    return [request["messages"][0]["role"]] + [m["role"] for m in conversation(request)]


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
    assert "Severance" in engine.handle(alex, "what's downloading?"), "the queue's own words"
    assert len(fake_llm.requests) == 5

    fake_llm.enqueue_tool_calls([("upcoming", {"days": 7})], ids="ollama")
    assert "Slow Horses" in engine.handle(alex, "anything new this week?")
    assert tool_results(fake_llm.requests[5])[-1]["total"] >= 1, "the queue in the next prompt"
    assert len(fake_llm.requests) == 6

    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": OFFICE_TVDB,
                                                   "delete_files": True})], ids="vllm")
    question = engine.handle(alex, "delete The Office")
    week = tool_results(fake_llm.requests[6])[-1]
    assert week["days"] == 7 and week.get("episodes")
    assert question.startswith("Remove The Office (2005) and delete its 62 GB")
    assert len(fake_llm.requests) == 7 and office_in_library(stack)
    assert engine.handle(alex, "Y") == "Removed The Office (2005) and deleted its files."
    assert len(fake_llm.requests) == 7 and not office_in_library(stack)

    fake_llm.enqueue_text("You added Dune (1984) and removed The Office.")
    engine.handle(alex, "what did we change today?")
    last = fake_llm.requests[-1]
    said = [m.get("content") or "" for m in last["messages"]]
    assert "Removed The Office (2005) and deleted its files." in said
    assert said[-2:] == ["Removed The Office (2005) and deleted its files.",
                         short_stamped("what did we change today?")]
    assert "Waiting for this person's answer" not in said[0]
    assert all(len(m.get("tool_call_id", "")) <= 40 for m in last["messages"])
    assert estimate_tokens(last["messages"]) <= 4000
    for request in fake_llm.requests:
        validate_messages(request["messages"])
        assert "Alex" in person_part(request)


def test_whats_downloading_is_one_request_answered_in_the_queues_own_words(engine, alex,
                                                                          fake_llm):
    fake_llm.enqueue_tool_calls([("download_queue", {})])
    reply = engine.handle(alex, "what's downloading?")
    assert len(fake_llm.requests) == 1, "the model is not asked to word the queue"
    assert reply == ("4 downloads: Severance S02E05 63%, 12 min left; Severance S02E06 stuck "
                     "at 0%: The download is stalled with no connections; Severance "
                     "S02E07-E10 81%, 48 min left; Dune: Part Two (2024) 63%, 2 h 15 min left.")
    stored = history.get_history(alex, 10)
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[-1]["content"] == reply


def test_the_next_prompt_holds_the_call_its_result_and_the_tools_answer(engine, alex,
                                                                       fake_llm):
    """As if the model had written the reply: the call, the result it would have read, and
    the reply as the assistant's, in the portable shape (one call, its result, the text)."""
    fake_llm.enqueue_tool_calls([("upcoming", {"days": 7})])
    reply = engine.handle(alex, "what's on this week?")
    fake_llm.enqueue_text("You're welcome.")
    engine.handle(alex, "thanks")
    turn = conversation(fake_llm.requests[1])[-4:]
    assert [m["role"] for m in turn] == ["assistant", "tool", "assistant", "user"]
    assert turn[0]["tool_calls"][0]["function"]["name"] == "upcoming"
    assert json.loads(turn[1]["content"])["days"] == 7
    assert turn[2] == {"role": "assistant", "content": reply}
    assert reply.startswith("Coming in the next 7 days: Slow Horses")
    validate_messages(fake_llm.requests[1]["messages"])


def test_the_tools_answer_is_in_the_persons_language(engine_for, fake_llm):
    engine = engine_for(arr=True, sms={"language": "de"})
    fake_llm.enqueue_tool_calls([("download_queue", {})])
    reply = engine.handle(db.User.get(phone=ADMIN).id, "was lädt gerade?")
    assert reply.startswith("4 Downloads: Severance S02E05 63%, noch 12 min;"), reply
    assert len(fake_llm.requests) == 1


def test_a_search_with_several_matches_is_still_worded_by_the_model(engine, alex, fake_llm):
    fake_llm.enqueue_tool_calls([("search_media", {"query": "dune", "kind": "movie"})])
    fake_llm.enqueue_text("Dune (2021) is here; Dune (1984) is not. Which one?")
    assert engine.handle(alex, "do we have dune?") == \
        "Dune (2021) is here; Dune (1984) is not. Which one?"
    assert len(fake_llm.requests) == 2
