"""``ChatModel.read_ahead`` against the fake OpenAI server answering llama-server's ``/props``
over loopback HTTP, through the real ``openai`` client: one request for one token, the same
tools and slot as the person's turn, sent only where the server did not read the prompt
already, never retried; and ``Reads``, what the server last read for each person."""

import pytest

from mediabot.model.chat import ChatModel, ModelError
from mediabot.model.read_ahead import Reads
from tests.support.config_files import make_config
from tests.support.messages import LLAMA_PROPS

TOOLS = [{"type": "function", "function": {"name": "download_queue", "description": "Queue",
                                           "parameters": {"type": "object", "properties": {}}}}]
ASKED = [{"role": "system", "content": "You are mediabot."},
         {"role": "user", "content": "what's downloading?"}]
STAND_IN = {"role": "user", "content": "ok"}


def model_on(fake_llm, slots: int = 1, **llm) -> ChatModel:
    fake_llm.serve_root("/props", {**LLAMA_PROPS, "total_slots": slots})
    return ChatModel.lazy(make_config(llm_url=fake_llm.url, llm=llm).llm)


def never() -> bool:
    return False


def test_a_prompt_the_server_did_not_read_is_read_for_one_token_on_the_persons_slot(fake_llm):
    model = model_on(fake_llm, slots=4)
    fake_llm.enqueue_text("Nothing is downloading.")
    answer = model.complete(ASKED, TOOLS, person=2).message
    reply = {"role": "assistant", "content": "Nothing is downloading right now."}
    done = model.read_ahead([*ASKED, answer | reply, STAND_IN], TOOLS, person=2,
                            waiting=never)
    turn, ahead = fake_llm.requests
    assert done.read and done.prompt_tokens is not None
    assert ahead["max_tokens"] == 1 and turn["max_tokens"] > 1
    assert ahead["id_slot"] == turn["id_slot"] == 2
    assert ahead["tools"] == turn["tools"] and ahead["tool_choice"] == "auto"


def test_what_the_server_read_is_not_sent_again(fake_llm):
    model = model_on(fake_llm)
    fake_llm.enqueue_text("Nothing is downloading.")
    answer = model.complete(ASKED, TOOLS, person=0).message
    done = model.read_ahead([*ASKED, answer, STAND_IN], TOOLS, person=0, waiting=never)
    assert done.skipped == "already read" and len(fake_llm.requests) == 1
    other_tools = model.read_ahead([*ASKED, answer, STAND_IN], [], person=0, waiting=never)
    assert other_tools.read, "other tools render another prompt"
    again = model.read_ahead([*ASKED, answer, STAND_IN], [], person=0, waiting=never)
    assert again.skipped == "already read", "a read-ahead counts as read"


@pytest.mark.parametrize("setup, skipped", [
    ({"props": None}, "not llama.cpp"),
    ({"read_ahead": False}, "off"),
    ({"waiting": True}, "a text waits"),
])
def test_no_request_where_it_does_not_pay_or_someone_waits(fake_llm, setup, skipped):
    if setup.get("props", True) is None:
        model = ChatModel.lazy(make_config(llm_url=fake_llm.url).llm)
    else:
        model = model_on(fake_llm, **{k: v for k, v in setup.items() if k == "read_ahead"})
    done = model.read_ahead([*ASKED, STAND_IN], TOOLS, person=0,
                            waiting=lambda: setup.get("waiting", False))
    assert done.skipped == skipped and fake_llm.requests == []


def test_a_failure_is_returned_once_never_retried(fake_llm):
    model = model_on(fake_llm, max_retries=3)
    fake_llm.enqueue_error(503, "loading model")
    done = model.read_ahead([*ASKED, STAND_IN], TOOLS, person=0, waiting=never)
    assert done.failed == "busy" and len(fake_llm.requests) == 1


def test_a_persons_failed_request_stops_reading_ahead_until_one_succeeds(fake_llm):
    model = model_on(fake_llm, max_retries=0)
    fake_llm.enqueue_error(500, "out of memory")
    with pytest.raises(ModelError, match="error"):
        model.complete(ASKED, TOOLS, person=0)
    assert model.read_ahead([*ASKED, STAND_IN], TOOLS, person=0,
                            waiting=never).skipped == "their last request failed"
    model.complete(ASKED, TOOLS, person=0)
    assert model.read_ahead([*ASKED, {"role": "assistant", "content": "Hi."}, STAND_IN], TOOLS,
                            person=0, waiting=never).read


def test_reads_are_kept_per_person():
    reads = Reads()
    reads.remember(1, TOOLS, ASKED)
    reads.remember(None, TOOLS, ASKED)   # nobody in particular: nothing kept
    assert reads.holds(1, TOOLS, ASKED) and not reads.holds(2, TOOLS, ASKED)
    assert not reads.holds(1, TOOLS, ASKED[:1]) and not reads.holds(1, None, ASKED)
    reads.remember(1, TOOLS, None)
    assert reads.failed(1) and not reads.holds(1, TOOLS, ASKED) and not reads.failed(2)


def turn_and_read_ahead(model: ChatModel, fake_llm, person: int):
    """One text of ``person``'s answered, then their next prompt weighed for a read-ahead."""
    fake_llm.enqueue_text("Nothing is downloading.")
    answer = model.complete(ASKED, TOOLS, person=person).message
    reply = {"role": "assistant", "content": "Nothing is downloading right now."}
    return model.read_ahead([*ASKED, answer | reply, STAND_IN], TOOLS, person=person,
                            waiting=never)


def test_a_slot_that_keeps_one_prompt_is_read_ahead_only_for_whoever_has_it_alone(fake_llm):
    """llama-server with ``--cache-ram 0`` and one slot for the household: a prompt read ahead
    for Sam is lost as soon as Alex texts, so none is read while members take turns; once
    Sam is the only one texting, his next prompt is read ahead again."""
    model = model_on(fake_llm, slots=1)
    fake_llm.restores_prompts = False
    sam, alex = 0, 1
    assert turn_and_read_ahead(model, fake_llm, sam).read, "nobody else has texted"
    assert turn_and_read_ahead(model, fake_llm, alex).skipped == \
        "another person's texts share the slot"
    assert turn_and_read_ahead(model, fake_llm, sam).skipped == \
        "another person's texts share the slot"
    assert turn_and_read_ahead(model, fake_llm, sam).read, "no one else since his last text"
    assert [r["max_tokens"] for r in fake_llm.requests].count(1) == 2


def test_a_server_that_restores_saved_prompts_is_read_ahead_for_every_member(fake_llm):
    """llama-server as it comes saves each member's prompt in host memory and gives it back:
    members taking turns on one slot still find their prompt read ahead."""
    model = model_on(fake_llm, slots=1)
    fake_llm.restores_prompts = True
    assert turn_and_read_ahead(model, fake_llm, 0).read
    assert turn_and_read_ahead(model, fake_llm, 1).read
    assert turn_and_read_ahead(model, fake_llm, 0).read


def test_who_shares_a_slot_is_counted_per_slot():
    reads = Reads()
    reads.remember(0, TOOLS, ASKED, slot=0)
    reads.remember(1, TOOLS, ASKED, slot=1)
    assert not reads.shared(0, 0) and not reads.shared(1, 1), "a slot each"
    reads.remember(2, TOOLS, ASKED, slot=0)
    assert reads.shared(0, 0), "someone else took slot 0 since"
    assert not reads.shared(0, 0), "no one since it was last weighed"
