"""Keywords in a burst: texts that arrive while a turn runs are read one by one.

A real Daemon in process (signed posts to /sms, the worker, the real engine) on the fake
OpenAI, Twilio, Sonarr and Radarr. A turn is held open by a slow fake model while the burst
arrives; what the household sees is read from the fake Twilio.
"""

import pytest

from mediabot.conversation.engine import NO_TEXT_REPLY, RESET_REPLY
from mediabot.store import db
from mediabot.text.keywords import HELP_TEXT
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import OFFICE_TVDB
from mediabot.trial.sim.loopback import wait_for
from tests.support.asking import office_in_library
from tests.support.clock import short_stamped, stamped, unstamped
from tests.support.household import ADMIN, URL
from tests.support.prompts import conversation
from tests.support.texting import params, sign, text

QUESTION = "Remove The Office (2005) and delete its 62 GB of files? Reply Y to confirm or N"
DROPPED = "I've dropped the question about removing The Office (2005).\n"
REMOVE_OFFICE = [("remove_media", {"kind": "series", "id": OFFICE_TVDB, "delete_files": True})]
FIRST_ANSWER = "Nothing is downloading right now."


@pytest.fixture
def daemon(daemon_for, stack, fake_llm):
    arr = {"url": None, "api_key": API_KEY}
    daemon = daemon_for(sonarr={**arr, "url": stack.servers["sonarr"].url},
                        radarr={**arr, "url": stack.servers["radarr"].url})
    fake_llm.set_responder(lambda body: "Answer to: " + typed(body["messages"][-1]["content"]))
    return daemon


def typed(content: str) -> str:
    """What the person typed: the stamp cut off, and a note for this turn only (a question
    the text let lapse: ``[Their text did not answer ...]``) cut off the end."""
    return unstamped(content).split("\n\n[Their text did not answer", 1)[0]


def burst_during_a_slow_turn(daemon, fake_llm, first: str, burst, *, asks_removal=False):
    """Text ``first``, hold its turn open with a slow model, text ``burst`` meanwhile, and
    wait until everything is answered."""
    client = daemon.app.test_client()
    fake_llm.enqueue_delay(0.7)
    if asks_removal:
        fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    else:
        fake_llm.enqueue_text(FIRST_ANSWER)
    text(client, first)
    assert wait_for(lambda: fake_llm.requests)
    for body in burst:
        text(client, body)
    assert len(fake_llm.requests) == 1, "the burst arrived while the first turn ran"
    assert daemon.worker.wait_idle(15)


def burst_after_the_question(daemon, fake_llm, fake_twilio, burst):
    """Ask the removal, then text ``burst`` as one burst (the turn waits while its texts are
    being acknowledged, as under a real burst) and wait until it is answered."""
    client = daemon.app.test_client()
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    text(client, "delete The Office")
    assert daemon.worker.wait_idle(15) and fake_twilio.bodies()[0].startswith(QUESTION)
    daemon.worker.ack_priority_seconds = 5
    with daemon.worker.acknowledging():
        for body in burst:
            text(client, body)
    assert daemon.worker.wait_idle(15)


def prompt_for(fake_llm, newest: str) -> list[dict]:
    """The messages of the model request whose newest message is ``newest`` (as the model
    received it, stamp and all): the system message and the conversation (the person's part
    after the system message left out)."""
    request = next(r for r in fake_llm.requests if r["messages"][-1]["content"] == newest)
    return request["messages"][:1] + conversation(request)


@pytest.mark.parametrize("burst, rest", [
    (["RESET", "what is new?"], "what is new?"),
    (["what is new?", "reset", "anything for the kids?"], "what is new?\nanything for the kids?"),
])
def test_reset_in_a_burst_resets_before_the_rest_is_answered(daemon, fake_llm, fake_twilio,
                                                             burst, rest):
    burst_during_a_slow_turn(daemon, fake_llm, "what's downloading?", burst)
    assert fake_twilio.bodies() == [FIRST_ANSWER, RESET_REPLY, "Answer to: " + rest]
    roles = [m["role"] for m in prompt_for(fake_llm, stamped(rest))]   # the first: in full
    assert roles == ["system", "user"], "the rest is answered from a clean history"


@pytest.mark.parametrize("burst", [["RESET", "what is new?"],
                                   ["RESET", "what is new?", "ok"]])
def test_reset_in_a_burst_drops_the_waiting_removal(daemon, fake_llm, fake_twilio, stack, burst):
    """Issue 15's case: RESET sent while the removal was being asked, then later an "ok"."""
    burst_during_a_slow_turn(daemon, fake_llm, "delete The Office", burst, asks_removal=True)
    rest = "\n".join(burst[1:])
    sent = fake_twilio.bodies()
    assert sent[0].startswith(QUESTION)
    assert sent[1:] == [DROPPED + RESET_REPLY, "Answer to: " + rest]
    assert db.PendingAction.select().count() == 0
    text(daemon.app.test_client(), "ok")
    assert daemon.worker.wait_idle(15)
    assert fake_twilio.bodies()[-1] == "Answer to: ok"
    assert office_in_library(stack)


@pytest.mark.parametrize("burst, rest", [
    (["HELP", "what is new?"], "what is new?"),
    (["what is new?", "help", "anything for the kids?"], "what is new?\nanything for the kids?"),
])
def test_help_in_a_burst_is_answered_and_the_rest_goes_on(daemon, fake_llm, fake_twilio,
                                                          burst, rest):
    burst_during_a_slow_turn(daemon, fake_llm, "what's downloading?", burst)
    assert fake_twilio.bodies() == [FIRST_ANSWER, HELP_TEXT, "Answer to: " + rest]
    assert [m["content"] for m in prompt_for(fake_llm, short_stamped(rest))[1:]] == [
        stamped("what's downloading?"), FIRST_ANSWER, short_stamped(rest)], \
        "HELP is not shown to the model"


@pytest.mark.parametrize("burst", [["Y", "what is new?"], ["yes", "Y"],
                                   ["what is new?", "N", "anything for the kids?"],
                                   ["Y", "Y", "Y"]])
def test_a_y_or_n_in_a_burst_after_the_question_is_not_its_answer(daemon, fake_llm, fake_twilio,
                                                                  stack, burst):
    burst_after_the_question(daemon, fake_llm, fake_twilio, burst)
    rest = "\n".join(burst)
    assert fake_twilio.bodies()[1:] == [DROPPED + "Answer to: " + rest]
    assert office_in_library(stack) and db.PendingAction.select().count() == 0
    system, *_, text = fake_llm.requests[-1]["messages"]
    assert text["content"].endswith(f"[Their text did not answer mediabot's removal question, "
                                    f"so nothing was removed and the person has been told: "
                                    f"\"{DROPPED.strip()}\" Answer their text. If they still "
                                    "want it removed, call remove_media again and mediabot "
                                    "will ask again.]"), "the model is told on the text itself"
    assert "removal question" not in system["content"], "the system message never changes"


@pytest.mark.parametrize("burst", [["Y", "what is new?"], ["Y", "Y", "thanks"]])
def test_a_y_sent_while_the_removal_is_asked_is_not_its_answer(daemon, fake_llm, fake_twilio,
                                                               stack, burst):
    burst_during_a_slow_turn(daemon, fake_llm, "delete The Office", burst, asks_removal=True)
    sent = fake_twilio.bodies()
    assert sent[0].startswith(QUESTION)
    assert sent[1:] == [DROPPED + "Answer to: " + "\n".join(burst)]
    assert office_in_library(stack)


@pytest.mark.parametrize("answer, removed", [("Y", True), ("n", False)])
def test_a_lone_y_or_n_burst_of_one_text_is_the_answer(daemon, fake_llm, fake_twilio, stack,
                                                       answer, removed):
    burst_after_the_question(daemon, fake_llm, fake_twilio, [answer])
    assert fake_twilio.bodies()[1:] == ["Removed The Office (2005) and deleted its files."
                                        if removed else "OK, I kept it. Nothing was removed."]
    assert office_in_library(stack) is not removed
    assert len(fake_llm.requests) == 1, "an answer needs no model call"


@pytest.mark.parametrize("burst", [["STOP", "START"], ["STOP", "START", "HELP"]])
def test_stop_and_start_in_a_burst_drop_the_waiting_question(daemon, fake_llm, fake_twilio, stack,
                                                             burst):
    """The answer must be the very next text: after STOP and START a Y asks the model."""
    burst_during_a_slow_turn(daemon, fake_llm, "delete The Office", burst, asks_removal=True)
    assert not db.User.get(phone=ADMIN).opted_out
    assert db.PendingAction.select().count() == 0
    text(daemon.app.test_client(), "Y")
    assert daemon.worker.wait_idle(15)
    assert fake_twilio.bodies()[-1] == "Answer to: Y"
    assert office_in_library(stack)


def test_a_picture_after_the_question_lets_it_lapse(daemon, fake_llm, fake_twilio, stack):
    burst_after_the_question(daemon, fake_llm, fake_twilio, [])
    form = {**params(""), "NumMedia": "1", "MediaUrl0": "https://api.twilio.com/m/ME1.jpg",
            "MediaContentType0": "image/jpeg"}
    client = daemon.app.test_client()
    client.post("/sms", data=form, headers={"X-Twilio-Signature": sign(URL, form)})
    assert daemon.worker.wait_idle(15)
    assert fake_twilio.bodies()[1:] == [DROPPED + NO_TEXT_REPLY]
    text(client, "Y")
    assert daemon.worker.wait_idle(15)
    assert fake_twilio.bodies()[-1] == "Answer to: Y" and office_in_library(stack)
