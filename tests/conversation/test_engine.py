"""The engine (``conversation/engine.py``): one turn, end to end against the fake OpenAI
server through the real openai SDK: what is stored and sent, HELP and RESET without the
model, onboarding and names, model failures and refused prompts, and random household
sessions that never send an invalid prompt."""

import json

import pytest

from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.conversation.engine import ONBOARDING_QUESTION, RESET_REPLY, extract_name
from mediabot.conversation.model_turn import (
    APOLOGIES,
    APOLOGY,
    ROUND_LIMIT_REPLY,
    STUCK_REPLY,
)
from mediabot.conversation.prompt.build import estimate_tokens
from mediabot.conversation.prompt.message_rules import find_violation
from mediabot.conversation.prompt.shape import UNANSWERED_LINE
from mediabot.store import db
from mediabot.text.keywords import HELP_TEXT
from mediabot.trial.sim.arr_fixtures import DUNE_TMDB
from tests.fakes.openai import error_reply
from tests.support.clock import short_stamped, stamped, unstamped
from tests.support.household import ADMIN
from tests.support.prompts import conversation, person_part


@pytest.fixture
def engine(engine_for):
    return engine_for()


def non_system(request):
    """The conversation: the messages after the system message and the person's part."""
    return conversation(request)


def test_a_plain_turn_stores_both_sides_with_prompt_tokens(engine, alex, fake_llm):
    fake_llm.enqueue_text("Hi Alex! What would you like to watch?")
    assert engine.handle(alex, "hello") == "Hi Alex! What would you like to watch?"
    stored = history.get_history(alex, 10)
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "hello"), ("assistant", "Hi Alex! What would you like to watch?")]
    row = db.Message.get(db.Message.role == "assistant")
    assert row.prompt_tokens and row.prompt_tokens > 0
    system = fake_llm.requests[0]["messages"][0]
    assert system["role"] == "system" and "Alex" in person_part(fake_llm.requests[0])
    assert "Alex" not in system["content"], "the system text is the household's, not Alex's"


def test_recall_across_turns_seed_004(engine, alex, fake_llm):
    """A fact from turn 1 reaches the model at turn 3 without being repeated."""
    for reply in ("Noted!", "Nothing is downloading.", "You said your favourite is Alien."):
        fake_llm.enqueue_text(reply)
    engine.handle(alex, "My favourite film is Alien, remember that.")
    engine.handle(alex, "What's downloading?")
    engine.handle(alex, "What's my favourite film?")
    third = fake_llm.requests[2]
    contents = [m.get("content") or "" for m in non_system(third)]
    assert any("Alien" in c for c in contents[:-1]), "turn 1's fact is in turn 3's prompt"
    assert contents[-1] == short_stamped("What's my favourite film?")   # after turn 2's
    assert sum("favourite film is Alien" in c for c in contents) == 1


def test_a_failure_after_a_parallel_tool_round_leaves_prompts_every_template_accepts(
        engine, alex, fake_llm):
    """Text beside two calls, then the model fails: the next turn's prompt is portable, says
    no answer was sent, and still holds both questions."""
    fake_llm.enqueue_tool_calls([("download_queue", {}), ("upcoming", "null")],
                                content="Checking both.", ids="ollama")
    fake_llm.enqueue_error(503, "The server is overloaded")
    assert engine.handle(alex, "what's downloading and what's coming?") in (
        APOLOGY, *APOLOGIES.values())
    fake_llm.enqueue_text("Nothing is downloading and nothing is coming this week.")
    engine.handle(alex, "hello?")
    for request in fake_llm.requests:
        assert find_violation(request["messages"], portable=True) is None
    sent = non_system(fake_llm.requests[-1])
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "tool",
                                         "assistant", "user"]
    assert sent[0]["content"] == stamped("what's downloading and what's coming?")
    assert [m["tool_calls"][0]["function"]["arguments"] for m in sent[1:5:2]] == ["{}", "{}"]
    assert [m["name"] for m in sent[2:5:2]] == ["download_queue", "upcoming"]
    assert sent[5]["content"] == "Checking both.\n\n" + UNANSWERED_LINE
    assert sent[6]["content"] == short_stamped("hello?")
    stored = history.get_history(alex, 20)
    assert stored[1]["content"] == "Checking both." and len(stored[1]["tool_calls"]) == 2


def test_model_error_then_recovery_leaves_no_orphans(engine, alex, fake_llm):
    fake_llm.enqueue_error(503, "The server is overloaded")   # busy: no second try
    assert engine.handle(alex, "add Dune") == ("Sorry, something went wrong on my side. "
                                               "Please try again in a moment.")
    fake_llm.enqueue_text("Which Dune: 1984 or 2021?")
    assert engine.handle(alex, "add Dune please") == "Which Dune: 1984 or 2021?"
    request = fake_llm.requests[-1]
    users = [m for m in non_system(request) if m["role"] == "user"]
    assert [m["content"] for m in users] == [stamped("add Dune please")], \
        "the failed turn's message was pruned"
    stored = [m["content"] for m in history.get_history(alex, 10) if m["role"] == "user"]
    assert stored == ["add Dune", "add Dune please"], "the user's message stayed stored"


def test_model_timeout_is_a_short_apology(engine_for, fake_llm, clock):
    engine = engine_for(llm={"timeout_seconds": 0.5})
    alex = db.User.get(phone=ADMIN).id
    fake_llm.enqueue_delay(2)
    fake_llm.enqueue_text("too late")
    assert engine.handle(alex, "hello?") == APOLOGIES["timeout"]


def test_model_unreachable(engine_for, fake_llm):
    engine = engine_for(llm={"base_url": "http://127.0.0.1:9/v1"})
    alex = db.User.get(phone=ADMIN).id
    assert engine.handle(alex, "hello?") == APOLOGIES["unreachable"]


def test_tool_round_limit(engine_for, fake_llm):
    engine = engine_for(llm={"max_tool_rounds": 3})
    alex = db.User.get(phone=ADMIN).id
    fake_llm.set_responder(lambda body: [("download_queue", {})])
    assert engine.handle(alex, "loop forever") == ROUND_LIMIT_REPLY
    assert len(fake_llm.requests) == 3


def test_unknown_tool_and_invalid_arguments_become_tool_errors(engine, alex, fake_llm):
    fake_llm.enqueue_tool_calls([("launch_rockets", "{not json")])
    fake_llm.enqueue_text("Sorry, I can't do that.")
    assert engine.handle(alex, "launch") == "Sorry, I can't do that."
    tool_message = non_system(fake_llm.requests[1])[-1]
    assert tool_message["role"] == "tool"
    assert "no tool called launch_rockets" in json.loads(tool_message["content"])["error"]


def test_ids_reused_across_turns_still_pair(engine, alex, fake_llm):
    """Some servers number calls per response (``call_0`` on every turn); Ollama's own
    random ids (the fake's ``ids="ollama"``) run through test_model_turn's long household
    conversation."""
    for _ in range(3):
        fake_llm.enqueue_tool_calls([("nothing_here", {})], ids=["call_0"])
        fake_llm.enqueue_text("done")
    for text in ("one", "two", "three"):
        assert engine.handle(alex, text) == "done"
    assert all("error" not in r for r in fake_llm.requests)


def test_help_and_reset_need_no_model(engine, alex, fake_llm):
    fake_llm.enqueue_text("Noted.")
    engine.handle(alex, "I like sci-fi")
    assert engine.handle(alex, "HELP") == HELP_TEXT
    assert engine.handle(alex, "reset") == RESET_REPLY
    assert history.get_history(alex, 10) == []
    assert len(fake_llm.requests) == 1


def test_reset_also_forgets_the_pending_removal_and_the_summary(engine, alex, fake_llm):
    db.User.update(summary="Alex likes Dune", summary_through=3).where(db.User.id == alex).execute()
    confirm.create_pending(alex, "remove_media", {"kind": "movie", "id": 1}, "Remove Dune?",
                           now=db.utcnow(), ttl_seconds=300)
    assert engine.handle(alex, "RESET") == ("I've dropped the question about removing Dune.\n"
                                            + RESET_REPLY)
    assert db.PendingAction.select().count() == 0
    user = db.User.get_by_id(alex)
    assert (user.summary, user.summary_through) == (None, None)
    assert fake_llm.requests == []


def test_a_hundred_turns_stay_within_window_and_budget(engine_for, fake_llm):
    engine = engine_for(history={"max_messages": 10, "max_context_tokens": 2500})
    alex = db.User.get(phone=ADMIN).id
    fake_llm.set_responder(lambda body: "Sure thing, here is a reasonably long answer " * 3)
    for i in range(100):
        engine.handle(alex, f"question number {i} " + "padding " * 10)
    assert len(fake_llm.requests) == 100
    for request in fake_llm.requests[20:]:
        assert len(non_system(request)) <= 10
        assert estimate_tokens(request["messages"]) <= 2500
    assert db.Message.select().count() == 200, "nothing stored is ever lost"


class TestOnboarding:
    @pytest.fixture
    def nameless(self, engine):
        return db.User.create(phone="+15559990000", role="member").id

    def test_asked_once_then_named_and_answered(self, engine, nameless, fake_llm):
        assert engine.handle(nameless, "can you get Dune?") == ONBOARDING_QUESTION
        assert fake_llm.requests == []
        fake_llm.enqueue_text("Nice to meet you, Jordan! Which Dune?")
        assert engine.handle(nameless, "I'm jordan") == "Nice to meet you, Jordan! Which Dune?"
        assert db.User.get_by_id(nameless).display_name == "Jordan"
        request = fake_llm.requests[0]
        assert "Jordan" in person_part(request)
        assert any("Dune" in (m.get("content") or "") for m in non_system(request))

    def test_not_asked_again_when_the_answer_is_not_a_name(self, engine, nameless, fake_llm):
        engine.handle(nameless, "hi")
        fake_llm.enqueue_text("Here's what's downloading.")
        engine.handle(nameless, "what is downloading right now for the house?")
        fake_llm.enqueue_text("Anything else?")
        assert engine.handle(nameless, "thanks") == "Anything else?"
        assert db.User.get_by_id(nameless).display_name is None


@pytest.mark.parametrize("text,name", [("Sam", "Sam"), ("i'm jo ann", "Jo Ann"),
                                       ("My name is Alex.", "Alex"), ("call me Kit", "Kit"),
                                       ("what's downloading right now", None), ("yes", None)])
def test_extract_name(text, name):
    assert extract_name(text) == name


@pytest.mark.parametrize("text,code,name", [
    ("me llamo Ana", "es", "Ana"), ("Hola, soy Inés", "es", "Inés"), ("Gracias", "es", None),
    ("Sí", "es", None), ("Ich heiße Jürgen", "de", "Jürgen"), ("ich heisse Jo", "de", "Jo"),
    ("Danke", "de", None), ("je m'appelle Émile", "fr", "Émile"), ("Merci", "fr", None),
    ("Meu nome é João", "pt", "João"), ("Olá, sou Ana Luísa", "pt", "Ana Luísa"),
    ("obrigada", "pt", None), ("ik heet Sanne", "nl", "Sanne"), ("ja", "nl", None),
    ("Zoë", "en", "Zoë")])
def test_a_name_is_taken_in_each_language(text, code, name):
    """Onboarding's "What should I call you?" is answered the way people answer in their
    own language, accented names included."""
    assert extract_name(text, code) == name


def test_a_model_that_refuses_temperature_is_asked_again_without_it(engine, alex, fake_llm):
    """OpenAI's reasoning models answer 400 to any temperature but the default."""
    fake_llm.enqueue_error(400, "Unsupported value: 'temperature' does not support 0.3 with "
                           "this model. Only the default (1) value is supported.",
                           param="temperature", code="unsupported_value")
    fake_llm.enqueue_text("Hello!")
    fake_llm.enqueue_text("Still here.")
    assert engine.handle(alex, "hi") == "Hello!"
    assert engine.handle(alex, "and again") == "Still here."
    sent = fake_llm.requests
    assert "temperature" in sent[0] and all("temperature" not in r for r in sent[1:])
    assert len(sent) == 3, "refused once, then never sent again"


def test_a_refused_prompt_is_tried_once_more_as_the_smallest_prompt(engine, alex, fake_llm,
                                                                     caplog):
    """Issue 10: a 4xx/5xx that is not "busy" says the server will not take this prompt;
    the turn is answered from the system prompt and the newest message instead."""
    fake_llm.enqueue_text("Noted.")
    engine.handle(alex, "my favourite film is Alien")
    fake_llm.enqueue_error(500, "Input should be a valid string", param="messages")
    fake_llm.enqueue_text("Nothing is downloading.")
    assert engine.handle(alex, "what's downloading?") == "Nothing is downloading."
    refused, smallest = fake_llm.requests[1:]
    assert len(non_system(refused)) == 3
    assert [m["role"] for m in smallest["messages"]] == ["system", "user"]
    assert smallest["messages"][1]["content"] == stamped("what's downloading?")
    assert smallest.get("tools") == refused.get("tools")
    assert "model failed" not in caplog.text
    assert "refused the prompt (error: HTTP 500: Input should be a valid string)" in caplog.text
    assert [m["content"] for m in history.get_history(alex, 10)][-2:] == [
        "what's downloading?", "Nothing is downloading."]


def test_the_smallest_prompt_keeps_this_turns_tool_round(engine_for, fake_llm):
    engine = engine_for(arr=True)
    alex = db.User.get(phone=ADMIN).id
    fake_llm.enqueue_error(400, "template error")
    fake_llm.enqueue_tool_calls([("search_media", {"query": "dune"})])
    fake_llm.enqueue_text("Two films are called Dune.")
    assert engine.handle(alex, "do we have dune?") == "Two films are called Dune."
    last = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool"]


def test_a_server_that_refuses_every_prompt_is_not_an_endless_apology(engine, alex, fake_llm,
                                                                      caplog):
    fake_llm.set_responder(lambda body: error_reply(400, "Conversation roles must alternate"))
    reply = engine.handle(alex, "hi")
    assert reply == STUCK_REPLY and "RESET" in reply and reply != APOLOGY
    assert len(fake_llm.requests) == 2, "one retry, not a loop"
    assert "model failed: rejected: HTTP 400: Conversation roles must alternate" in caplog.text
    fake_llm.set_responder(None)
    assert engine.handle(alex, "RESET") == RESET_REPLY
    fake_llm.enqueue_text("Hi again!")
    assert engine.handle(alex, "hi") == "Hi again!"


def test_a_history_the_server_cannot_take_does_not_stick(engine, alex, fake_llm):
    """A server that refuses any prompt longer than one exchange (as a strict chat template
    refuses a shape): every text still gets a real answer, never the same apology."""
    def strict(body):
        if len(non_system(body)) > 1:
            return error_reply(400, "After the optional system message, conversation roles "
                                    "must alternate user/assistant/user/assistant/...")
        return f"answer to {unstamped(body['messages'][-1]['content'])}"
    fake_llm.set_responder(strict)
    for text in ("hello", "add Dune", "what's new?"):
        assert engine.handle(alex, text) == f"answer to {text}"


@pytest.mark.parametrize("status, reply", [
    (429, APOLOGY), (503, APOLOGY), (401, APOLOGIES["misconfigured"]),
])
def test_busy_and_setup_errors_are_not_retried(engine, alex, fake_llm, status, reply):
    fake_llm.enqueue_error(status, "nope")
    assert engine.handle(alex, "hi") == reply
    assert len(fake_llm.requests) == 1


def test_under_a_template_without_tools_every_text_still_gets_an_answer(engine_for, fake_llm):
    """Gemma 3's own template knows no tool role and raises on the tool round (vLLM's 400):
    the turn, and every later one whose window holds that round, is answered from the
    smallest prompt instead of an apology until RESET."""
    engine = engine_for(arr=True)
    alex = db.User.get(phone=ADMIN).id
    fake_llm.use_template("gemma-3")
    fake_llm.enqueue_tool_calls([("search_media", {"query": "dune"})])
    fake_llm.enqueue_text("I can't look that up right now.")
    fake_llm.enqueue_text("Hello again!")
    assert engine.handle(alex, "do we have dune?") == "I can't look that up right now."
    assert engine.handle(alex, "hello") == "Hello again!"
    assert len(fake_llm.requests) == 5 and len(fake_llm.rendered) == 3, \
        "two refused, three rendered"
    assert [m["role"] for m in fake_llm.requests[-1]["messages"]] == ["system", "user"]


class TestOnboardingEdges:
    @pytest.fixture
    def engine(self, engine_for):
        """With the fake arrs, as a household has them."""
        return engine_for(arr=True)

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
