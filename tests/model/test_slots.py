"""Each person keeps a llama-server slot of their own: the real ``openai`` client talks over
loopback HTTP to a fake that answers llama-server's ``/props`` (at the server's root, not
``/v1``) and records every request body. Two members' texts name different slots, all the
rounds of one member's turn the same; a server with one slot, Ollama, OpenAI-shaped servers
and a ``/props`` that fails get no ``id_slot`` (OpenAI refuses arguments it does not know),
and a person never notices the detection. A server that empties idle slots itself (one KV
buffer with the host-memory cache, llama-server's default: three short prompts tell) is left
to choose them from the first text on."""

import json
import threading
import time

import pytest

from mediabot.model.chat import ChatModel, ModelError
from mediabot.store import db
from mediabot.trial.sim.loopback import LoopbackServer, free_port
from tests.support.config_files import make_config
from tests.support.household import ADMIN, MEMBER
from tests.support.messages import LLAMA_PROPS

HELLO = [{"role": "user", "content": "hi"}]


def llama_server(fake_llm, slots: int) -> None:
    fake_llm.serve_root("/props", {**LLAMA_PROPS, "total_slots": slots})


@pytest.fixture
def engine(engine_for):
    return engine_for(arr=True)


def slots_named(requests: list[dict]) -> list[int | None]:
    return [body.get("id_slot") for body in requests]


def test_two_members_keep_their_own_slots_and_a_turn_keeps_one(engine, fake_llm):
    llama_server(fake_llm, 4)
    alex, sam = (db.User.get(phone=phone).id for phone in (ADMIN, MEMBER))
    fake_llm.enqueue_text("Hi Alex.")
    engine.handle(alex, "hi")
    fake_llm.enqueue_tool_calls([("search_media", {"query": "dune", "kind": "movie"})])
    fake_llm.enqueue_text("I found Dune (2021). Want it?")
    assert engine.handle(sam, "can you get dune?") == "I found Dune (2021). Want it?"
    fake_llm.enqueue_text("Hi again.")
    engine.handle(alex, "hi again")
    engine.handle(sam, "thanks")
    first, *sams_rounds, again, sams_next = slots_named(fake_llm.requests)
    assert len(sams_rounds) == 2, "the search and the answer after it"
    assert sams_rounds[0] == sams_rounds[1] == sams_next, "a person's rounds share a slot"
    assert first == again != sams_rounds[0]
    assert {first, *sams_rounds} <= set(range(4))
    assert fake_llm.requests[2]["messages"][-1]["role"] == "tool"


def test_a_server_that_empties_idle_slots_is_left_to_choose_them(engine, fake_llm):
    """llama-server's default (one KV buffer, the host-memory cache) empties every idle slot
    and restores prompts only into a slot it picked: three short prompts before the first
    text tell, and no request names a slot, not even the first texts'."""
    llama_server(fake_llm, 4)
    fake_llm.empties_idle_slots = True
    alex, sam = (db.User.get(phone=phone).id for phone in (ADMIN, MEMBER))
    for user, text in ((alex, "hi"), (sam, "hello"), (alex, "hi again"), (sam, "and me"),
                       (alex, "bye")):
        engine.handle(user, text)
    assert slots_named(fake_llm.requests) == [None] * 5
    assert fake_llm.root_asked.count("POST /completion") == 3


def test_a_server_that_keeps_idle_slots_is_asked_once_before_the_first_slot(engine, fake_llm):
    llama_server(fake_llm, 4)
    alex, sam = (db.User.get(phone=phone).id for phone in (ADMIN, MEMBER))
    for user, text in ((alex, "hi"), (sam, "hello"), (alex, "hi again")):
        engine.handle(user, text)
    named = slots_named(fake_llm.requests)
    assert named[0] == named[2] != named[1] and None not in named
    assert fake_llm.root_asked == ["/api/version", "/props", "POST /completion",
                                   "POST /completion", "POST /completion"]


def test_the_server_is_asked_once_not_per_request(engine, fake_llm):
    llama_server(fake_llm, 4)
    alex = db.User.get(phone=ADMIN).id
    for text in ("hi", "and again", "once more"):
        engine.handle(alex, text)
    assert fake_llm.root_asked.count("/props") == 1
    assert len(set(slots_named(fake_llm.requests))) == 1


def test_a_household_bigger_than_the_slots_wraps_round_them(fake_llm):
    llama_server(fake_llm, 2)
    model = ChatModel.lazy(make_config(llm_url=fake_llm.url).llm)
    for place in range(5):
        model.complete(HELLO, person=place)
    assert slots_named(fake_llm.requests) == [0, 1, 0, 1, 0]


@pytest.mark.parametrize("answers", [
    pytest.param({"/props": {**LLAMA_PROPS, "total_slots": 1}}, id="llama-server-one-slot"),
    pytest.param({"/api/version": {"version": "0.12.3"}, "/props": LLAMA_PROPS | {
        "total_slots": 4}}, id="ollama"),
    pytest.param({}, id="openai-shaped"),
    pytest.param({"/props": 500}, id="props-fails"),
    pytest.param({"/props": {"total_slots": 4}}, id="props-not-llama-server"),
])
def test_no_slot_is_named_unless_llama_server_has_several(engine, fake_llm, answers):
    for path, answer in answers.items():
        fake_llm.serve_root(path, answer)
    alex = db.User.get(phone=ADMIN).id
    fake_llm.enqueue_text("Hi Alex.")
    assert engine.handle(alex, "hi") == "Hi Alex."
    assert "id_slot" not in fake_llm.requests[0]


def test_pinning_can_be_turned_off(fake_llm):
    llama_server(fake_llm, 4)
    model = ChatModel.lazy(make_config(llm_url=fake_llm.url, llm={"pin_slots": False}).llm)
    model.complete(HELLO, person=1)
    assert "id_slot" not in fake_llm.requests[0] and fake_llm.root_asked == []


def test_a_call_for_nobody_in_particular_leaves_the_slot_to_the_server(fake_llm):
    llama_server(fake_llm, 4)
    model = ChatModel.lazy(make_config(llm_url=fake_llm.url).llm)
    model.complete(HELLO)
    assert "id_slot" not in fake_llm.requests[0] and fake_llm.root_asked == []


def test_a_server_that_hangs_on_props_costs_the_first_call_two_seconds_at_most(fake_llm):
    """A /props that never answers (a proxy in front of the model, say): no pinning, and the
    person's text is answered after at most the detection's short timeout."""
    release = threading.Event()

    def hang(environ, start_response):
        release.wait(10)
        start_response("404 Not Found", [("Content-Type", "application/json")])
        return [b"{}"]
    stalled = LoopbackServer(hang).start()
    config = make_config(llm_url=stalled.url).llm
    try:
        model = ChatModel.lazy(config)
        started = time.monotonic()
        assert model.pins.slot_for(1) is None
        assert time.monotonic() - started < 3
    finally:
        release.set()
        stalled.stop()


def test_a_server_down_at_the_first_call_is_asked_again_once_it_is_back(fake_llm):
    port = free_port()
    model = ChatModel.lazy(make_config(llm_url=f"http://127.0.0.1:{port}").llm)
    with pytest.raises(ModelError, match="unreachable"):
        model.complete(HELLO, person=1)
    back = LoopbackServer(fake_llm.wsgi_app).start(port)
    try:
        llama_server(fake_llm, 4)
        model.complete(HELLO, person=1)
    finally:
        back.stop()
    assert fake_llm.requests[-1]["id_slot"] == 1


def prompts_of(fake_llm, engine) -> tuple[list[dict], list[dict]]:
    """The messages of Alex's text and then Sam's."""
    alex, sam = (db.User.get(phone=phone).id for phone in (ADMIN, MEMBER))
    engine.handle(alex, "hi")
    engine.handle(sam, "hello")
    first, second = fake_llm.requests
    return first["messages"], second["messages"]


@pytest.mark.parametrize("slots,restores,empties", [
    pytest.param(1, True, False, id="one-slot-with-the-host-memory-cache"),
    pytest.param(4, True, True, id="four-slots-emptied-into-host-memory"),
])
def test_a_server_that_restores_each_members_prompt_reads_the_person_before_the_tools(
        engine, fake_llm, slots, restores, empties):
    """llama-server as it comes saves a member's prompt in host memory and restores it only
    when the slot's own prompt would mostly be lost: the person's name and role end the
    system text, before the tools, so members share only the rules and each gets their own
    prompt back."""
    llama_server(fake_llm, slots)
    fake_llm.restores_prompts, fake_llm.empties_idle_slots = restores, empties
    alex, sam = prompts_of(fake_llm, engine)
    assert "You are talking with Alex" in alex[0]["content"]
    assert "You are talking with Sam" in sam[0]["content"]
    assert "member, not an admin" in sam[0]["content"]
    assert "Alex" not in json.dumps(alex[1:]) and "Sam" not in json.dumps(sam[1:])
    shared_rules = _common_prefix(alex[0]["content"], sam[0]["content"])
    assert shared_rules.endswith("\n\nYou are talking with "), "the same up to the name"


@pytest.mark.parametrize("slots,restores", [
    pytest.param(1, False, id="one-slot-without-host-memory-cache"),
    pytest.param(4, False, id="four-slots-that-keep-their-prompts"),
])
def test_a_server_that_keeps_one_prompt_per_slot_shares_the_tools_too(engine, fake_llm, slots,
                                                                      restores):
    """With ``--cache-ram 0`` (or several slots keeping each pinned person's prompt) the
    household's system text is word for word the same, and the person follows the tools."""
    llama_server(fake_llm, slots)
    fake_llm.restores_prompts = restores
    alex, sam = prompts_of(fake_llm, engine)
    assert alex[0] == sam[0] and "Alex" not in alex[0]["content"]
    assert "You are talking with Alex" in alex[1]["content"]
    assert "You are talking with Sam" in sam[1]["content"]
    assert alex[1]["role"] == sam[1]["role"] == "user"


def _common_prefix(a: str, b: str) -> str:
    return a[:next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                   min(len(a), len(b)))]
