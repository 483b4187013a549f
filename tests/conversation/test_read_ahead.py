"""The person's next prompt read ahead once their reply has gone (``Engine.after_turn``),
against the fake OpenAI server answering llama-server's ``/props`` over loopback HTTP and
the real ``openai`` client: read after a tool's own answer and after the window slid, not
after a reply the model wrote (the server read that prompt already), never on another
server, while a text waits, or with ``[llm] read_ahead = false``; a failure costs nothing."""

import pytest

from mediabot.conversation.incoming import read_text
from mediabot.conversation.read_ahead import STAND_IN
from mediabot.store import db, people
from tests.support.clock import unstamped
from tests.support.household import ADMIN, MEMBER
from tests.support.messages import LLAMA_PROPS

QUEUE = [("download_queue", {})]


def llama_server(fake_llm, slots: int = 1) -> None:
    fake_llm.serve_root("/props", {**LLAMA_PROPS, "total_slots": slots})


def texted(engine, phone: str, text: str) -> str:
    """What the daemon does with a text: the reply, then the work after it; the reply."""
    person = people.get_person(db.User.get(phone=phone).id, "en")
    answer = engine.respond(read_text(person, text))
    engine.after_turn(answer)
    return answer.reply.text


def read_aheads(fake_llm) -> list[dict]:
    return [body for body in fake_llm.requests if body["max_tokens"] == 1]


def stored(phone: str) -> list[tuple]:
    return list(db.Message.select(db.Message.role, db.Message.content)
                .where(db.Message.user == db.User.get(phone=phone).id).tuples())


@pytest.fixture
def engine(engine_for):
    return engine_for(arr=True)


def test_a_tools_own_answer_is_read_ahead_with_a_stand_in_for_the_next_text(engine, fake_llm):
    llama_server(fake_llm)
    fake_llm.enqueue_tool_calls(QUEUE)
    reply = texted(engine, MEMBER, "what's downloading?")
    turn, ahead = fake_llm.requests
    assert turn["max_tokens"] > 1 and ahead["max_tokens"] == 1
    assert ahead["tools"] == turn["tools"]
    roles = [m["role"] for m in ahead["messages"][-4:]]
    assert roles == ["assistant", "tool", "assistant", "user"], "the call, its result, reply"
    assert ahead["messages"][-2]["content"] == reply
    assert unstamped(ahead["messages"][-1]["content"]) == STAND_IN
    assert ahead["messages"][:len(turn["messages"])] == turn["messages"]
    assert [content for role, content in stored(MEMBER) if role == "user"] == \
        ["what's downloading?"], "the stand-in is never stored"


def test_a_reply_the_model_wrote_is_not_read_again(engine, fake_llm):
    llama_server(fake_llm)
    fake_llm.enqueue_text("Hi Sam, what can I find for you?")
    texted(engine, MEMBER, "hi")
    fake_llm.enqueue_text("Dune is a fine choice.")
    texted(engine, MEMBER, "what about dune?")
    assert read_aheads(fake_llm) == []
    assert len(fake_llm.requests) == 2


def test_after_a_read_ahead_the_next_text_starts_with_what_was_read(engine, fake_llm):
    llama_server(fake_llm)
    fake_llm.enqueue_tool_calls(QUEUE)
    texted(engine, MEMBER, "what's downloading?")
    fake_llm.enqueue_text("Sure.")
    texted(engine, MEMBER, "and after that?")
    _, ahead, turn = fake_llm.requests
    assert turn["messages"][:-1] == ahead["messages"][:-1]
    assert len(read_aheads(fake_llm)) == 1, "the model wrote the second reply: nothing to read"


def test_a_window_that_slides_is_read_ahead(engine_for, fake_llm):
    engine = engine_for(arr=True, history={"max_messages": 6})
    llama_server(fake_llm)
    sent = []
    for number in range(4):
        fake_llm.enqueue_text(f"Answer {number}.")
        texted(engine, MEMBER, f"question {number}")
        sent.append(len(fake_llm.requests))
    turns = [fake_llm.requests[index - 1] for index in sent]
    ahead = read_aheads(fake_llm)
    assert ahead, "the window slides before the last text"
    first = ahead[0]["messages"]
    before = fake_llm.requests[fake_llm.requests.index(ahead[0]) - 1]["messages"]
    assert first[:len(before)] != before, "the slide changed what comes before the new text"
    assert any(turn["messages"][:-1] == first[:-1] for turn in turns), \
        "the next text's prompt began with what was read ahead"


def test_no_read_ahead_on_a_server_that_is_not_llama_cpp(engine, fake_llm):
    fake_llm.enqueue_tool_calls(QUEUE)
    texted(engine, MEMBER, "what's downloading?")
    assert len(fake_llm.requests) == 1 and read_aheads(fake_llm) == []


def test_no_read_ahead_when_turned_off(engine_for, fake_llm):
    engine = engine_for(arr=True, llm={"read_ahead": False})
    llama_server(fake_llm)
    fake_llm.enqueue_tool_calls(QUEUE)
    texted(engine, MEMBER, "what's downloading?")
    assert len(fake_llm.requests) == 1


def test_no_read_ahead_while_anyone_elses_text_waits(engine, fake_llm):
    llama_server(fake_llm)
    alex = db.User.get(phone=ADMIN)
    db.Inbox.create(message_sid="SMwaiting", user=alex, from_number=ADMIN, body="hi")
    fake_llm.enqueue_tool_calls(QUEUE)
    texted(engine, MEMBER, "what's downloading?")
    assert len(fake_llm.requests) == 1


def test_no_read_ahead_after_a_turn_the_model_failed(engine_for, fake_llm):
    """A server that timed out or failed the person's text gets no more work off their
    wait; the next text goes as usual."""
    engine = engine_for(arr=True, llm={"max_retries": 0})
    llama_server(fake_llm)
    fake_llm.enqueue_error(503, "loading model")
    assert texted(engine, MEMBER, "what's downloading?").startswith("Sorry")
    assert read_aheads(fake_llm) == []
    fake_llm.enqueue_tool_calls(QUEUE)
    texted(engine, MEMBER, "what's downloading?")
    assert len(read_aheads(fake_llm)) == 1, "once it answers again"


@pytest.mark.parametrize("failure", ["error", "slow"])
def test_a_read_ahead_that_fails_is_forgotten(engine_for, fake_llm, caplog, failure):
    engine = engine_for(arr=True, llm={"timeout_seconds": 1, "max_retries": 2})
    llama_server(fake_llm)
    fake_llm.enqueue_tool_calls(QUEUE)
    if failure == "error":
        fake_llm.enqueue_error(503, "loading model")
    else:
        fake_llm.enqueue_delay(1.5)
    caplog.set_level("INFO", "mediabot.conversation.read_ahead")
    before = None
    reply = texted(engine, MEMBER, "what's downloading?")
    before = stored(MEMBER)
    assert len(fake_llm.requests) == 2, "one try, never retried"
    assert [m for m in before if m[0] == "assistant" and m[1]][-1][1] == reply
    [line] = [r.getMessage() for r in caplog.records if "read ahead" in r.getMessage()]
    assert "failed" in line and STAND_IN not in line and "downloading" not in line
    fake_llm.enqueue_text("Sure.")
    assert texted(engine, MEMBER, "thanks") == "Sure."
