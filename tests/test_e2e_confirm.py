"""End to end: a removal runs only on a Y that answers its question (a real `mediabot serve`).

The daemon runs as a child process against the fake OpenAI, Twilio, Sonarr and Radarr, and is
texted with signed posts, as in test_e2e. What the household sees is read from the fake
Twilio; whether anything was removed from the fake Sonarr.
"""

import time

import pytest

from mediabot.sim.arr_fixtures import OFFICE_TVDB
from mediabot.sim.loopback import wait_for
from tests.test_e2e import serve  # noqa: F401  (the fixture that starts `mediabot serve`)

QUESTION = "Remove The Office (2005) and delete its 62 GB of files? Reply Y to confirm or N"
DROPPED = "I've dropped the question about removing The Office (2005).\n"
MODELS_OWN_QUESTION = "Want me to add Dune: Part Three? Reply yes!"
REMOVE_OFFICE = [("remove_media", {"kind": "series", "id": OFFICE_TVDB, "delete_files": True})]


@pytest.fixture
def daemon(serve, stack):  # noqa: F811
    return serve("\n" + stack.toml())


def nothing_removed(stack) -> bool:
    in_library = any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)
    return in_library and not [r for r in stack.sonarr.requests if r.method == "DELETE"]


def replies(fake_twilio, count: int) -> list[str]:
    assert wait_for(lambda: len(fake_twilio.sent) >= count), fake_twilio.bodies()
    time.sleep(0.2)  # nothing more should follow
    assert len(fake_twilio.sent) == count, fake_twilio.bodies()
    return fake_twilio.bodies()


def test_a_yes_to_the_models_own_question_never_removes_the_waiting_show(daemon, stack,
                                                                         fake_llm, fake_twilio):
    """The hijack from issue 15, then the real answer: only a lone Y right after asks."""
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    daemon.text("delete The Office")
    assert replies(fake_twilio, 1)[0].startswith(QUESTION)
    fake_llm.enqueue_text(MODELS_OWN_QUESTION)
    daemon.text("is Dune: Part Three out yet?")
    assert replies(fake_twilio, 2)[1] == DROPPED + MODELS_OWN_QUESTION
    fake_llm.enqueue_text("It isn't out yet, so there is nothing to add.")
    daemon.text("yes")
    assert replies(fake_twilio, 3)[2] == "It isn't out yet, so there is nothing to add."
    assert nothing_removed(stack)
    assert len(fake_llm.requests) == 3, "the yes went to the model"
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    daemon.text("delete The Office")
    assert replies(fake_twilio, 4)[3].startswith(QUESTION)
    daemon.text("Y")
    assert replies(fake_twilio, 5)[4] == "Removed The Office (2005) and deleted its files."
    assert not any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)
    assert len(fake_llm.requests) == 4, "a lone Y right after the question needs no model call"


def test_a_yes_sent_while_the_question_was_being_asked_is_not_its_answer(daemon, stack,
                                                                        fake_llm, fake_twilio):
    """The same hijack with other timing: the yes for the model's question is already on its
    way when the removal is asked, and arrives as a lone text right after."""
    fake_llm.enqueue_text(MODELS_OWN_QUESTION)
    daemon.text("is Dune: Part Three out yet?")
    replies(fake_twilio, 1)
    fake_llm.enqueue_delay(1.0)
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    daemon.text("delete The Office")
    assert wait_for(lambda: len(fake_llm.requests) == 2)
    daemon.text("yes")
    fake_llm.enqueue_text("Dune: Part Three isn't out yet, so there is nothing to add.")
    sent = replies(fake_twilio, 3)
    assert sent[1].startswith(QUESTION)
    assert sent[2] == DROPPED + "Dune: Part Three isn't out yet, so there is nothing to add."
    assert nothing_removed(stack)
