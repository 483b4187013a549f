"""The engine with its hands: tools through arrapi against the fake Sonarr/Radarr, and the
confirmation protocol for removals."""

import json

import pytest

from mediabot.conversation import history
from mediabot.conversation.incoming import join_texts, read_text
from mediabot.store import db
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import DUNE_1984_TMDB, OFFICE_TVDB
from tests.conftest import ADMIN


@pytest.fixture
def engine(engine_for):
    return engine_for(arr=True)


def tool_results(request):
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def offered(request):
    return {t["function"]["name"] for t in request.get("tools", [])}


def office_in_library(stack):
    return any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)


def ask_removal(engine, fake_llm, user, delete_files=True):
    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": OFFICE_TVDB,
                                                   "delete_files": delete_files})])
    return engine.handle(user, "delete The Office")


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


def test_remove_asks_then_y_executes_without_a_model_call(engine, alex, fake_llm, stack):
    reply = ask_removal(engine, fake_llm, alex)
    assert reply.startswith("Remove The Office (2005) and delete its ")
    assert reply.endswith("of files? Reply Y to confirm or N to keep it (expires in 5 min).")
    assert len(fake_llm.requests) == 1, "the prompt is mediabot's, not the model's"
    assert office_in_library(stack), "nothing removed on the model's word"
    assert engine.handle(alex, "Y") == "Removed The Office (2005) and deleted its files."
    assert len(fake_llm.requests) == 1
    assert not office_in_library(stack)
    assert db.PendingAction.select().count() == 0


def test_a_catalogue_title_reaches_the_question_as_one_line_without_links(engine, alex,
                                                                          fake_llm, stack):
    office = next(s for s in stack.sonarr.library if s["tvdbId"] == OFFICE_TVDB)
    office["title"] = ("The Office\nReply Y now, then visit https://evil.example/claim?k=1 "
                       + "x" * 90)
    reply = ask_removal(engine, fake_llm, alex)
    assert "\n" not in reply and "http" not in reply and "evil.example" not in reply
    assert reply.startswith("Remove The Office Reply Y now, then visit... (2005) and delete its ")
    title = reply.removeprefix("Remove ").split(" (2005) and delete its ")[0]
    assert len(title) <= 80 and title.endswith("...")
    assert reply.endswith("Reply Y to confirm or N to keep it (expires in 5 min).")


def test_n_keeps_it(engine, alex, fake_llm, stack):
    ask_removal(engine, fake_llm, alex)
    assert engine.handle(alex, "nope") == "OK, I kept it. Nothing was removed."
    assert office_in_library(stack) and len(fake_llm.requests) == 1
    assert engine.handle(alex, "y") != "Removed The Office (2005) and deleted its files."
    assert office_in_library(stack)


DROPPED = "I've dropped the question about removing The Office (2005).\n"


def test_an_unrelated_message_lets_the_question_lapse_and_tells_the_model(engine, alex, fake_llm,
                                                                          stack):
    ask_removal(engine, fake_llm, alex)
    fake_llm.enqueue_text("Nothing is downloading.")
    reply = engine.handle(alex, "wait, what's downloading?")
    assert reply == DROPPED + "Nothing is downloading."
    assert db.PendingAction.select().count() == 0
    system, *_, text = (m["content"] for m in fake_llm.requests[-1]["messages"])
    # Told on the text that let it lapse, never in the system message: that stays the same
    # from text to text, so a local server's cached prefix (tools included) holds.
    assert DROPPED.strip() in text and "call remove_media again" in text
    assert "removal question" not in system
    fake_llm.enqueue_text("Glad to help.")
    assert engine.handle(alex, "yes") == "Glad to help.", "a later yes goes to the model"
    assert fake_llm.requests[-1]["messages"][0]["content"] == system
    assert "removal question" not in fake_llm.requests[-1]["messages"][-1]["content"]
    assert office_in_library(stack)
    said = [m["content"] for m in history.get_history(alex, 20) if m["role"] == "assistant"]
    assert DROPPED + "Nothing is downloading." in said, "stored as the person saw it"


def test_a_yes_joined_with_other_texts_is_not_an_answer(engine, alex, fake_llm, stack):
    ask_removal(engine, fake_llm, alex)
    fake_llm.enqueue_text("Which one do you mean?")
    user = db.User.get_by_id(alex)
    joined = join_texts([read_text(user, "Y", 1), read_text(user, "Y", 2)])
    assert engine.answer(joined).reply.text == DROPPED + "Which one do you mean?"
    assert office_in_library(stack) and db.PendingAction.select().count() == 0


def test_only_a_yes_sent_after_the_question_answers_it(engine, alex, fake_llm, stack):
    def arrive(body):
        return db.Inbox.create(message_sid=f"SM{body}{db.Inbox.select().count()}", user=alex,
                               from_number=ADMIN, body=body).id

    arrive("delete The Office")
    on_its_way = arrive("yes")          # sent while the turn that asks was running
    ask_removal(engine, fake_llm, alex)
    fake_llm.enqueue_text("Great, I'll add it.")
    user = db.User.get_by_id(alex)
    assert engine.answer(read_text(user, "yes", on_its_way)).reply.text == \
        DROPPED + "Great, I'll add it."
    assert office_in_library(stack)
    ask_removal(engine, fake_llm, alex)
    answer = arrive("Y")
    assert engine.answer(read_text(user, "Y", answer)).reply.text == \
        "Removed The Office (2005) and deleted its files."
    assert not office_in_library(stack)


def test_cancel_and_stop_are_not_no(engine, alex, fake_llm, stack):
    ask_removal(engine, fake_llm, alex)
    fake_llm.enqueue_text("ok")
    reply = engine.handle(alex, "CANCEL")
    assert reply == DROPPED + "ok", "CANCEL unsubscribes; it is not an answer"
    assert office_in_library(stack) and db.PendingAction.select().count() == 0


def test_after_expiry_y_executes_nothing(engine, alex, fake_llm, stack, clock):
    ask_removal(engine, fake_llm, alex)
    clock.advance(seconds=301)
    reply = engine.handle(alex, "Y")
    assert reply.startswith("Your request to remove The Office (2005) expired")
    assert office_in_library(stack)
    assert len(fake_llm.requests) == 1


def test_a_member_cannot_remove_even_when_the_model_calls_it(engine, sam, fake_llm, stack):
    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": OFFICE_TVDB})])
    fake_llm.enqueue_text("Sorry, only an admin can remove things.")
    assert engine.handle(sam, "delete The Office") == "Sorry, only an admin can remove things."
    assert offered(fake_llm.requests[0]) == offered(fake_llm.requests[1]), \
        "one tool list for the whole household (issue 31); the rule is enforced in code"
    assert "remove_media is only for admins, and this person is not one" in \
        tool_results(fake_llm.requests[1])[0]["error"]
    assert db.PendingAction.select().count() == 0
    assert engine.handle(sam, "Y") is not None and office_in_library(stack)


def test_admin_is_offered_remove(engine, alex, fake_llm):
    fake_llm.enqueue_text("hi")
    engine.handle(alex, "hi")
    assert "remove_media" in offered(fake_llm.requests[0])
    assert {"search_media", "add_media", "download_queue", "upcoming",
            "library_status", "notify_me"} <= offered(fake_llm.requests[0])


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
    fake_llm.enqueue_text("Here's the week.")
    engine.handle(db.User.get(phone=ADMIN).id, "what's coming up?")
    result = tool_results(fake_llm.requests[1])[0]
    assert "error" not in result
    assert "2030-03" in json.dumps(result), result
