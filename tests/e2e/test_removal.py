"""End to end: a removal runs only on a Y that answers its question (a real `mediabot serve`).

The daemon runs as a child process against the fake OpenAI, Twilio, Sonarr and Radarr, and is
texted with signed posts, as in test_serve.py. What the household sees is read from the fake
Twilio; whether anything was removed from the fake Sonarr.
"""

import os
import sqlite3
import subprocess
import sys
import time

import pytest

from mediabot.trial.sim.arr_fixtures import OFFICE_TVDB
from mediabot.trial.sim.loopback import wait_for
from tests.support.household import ADMIN
from tests.support.household import SERVE_PUBLIC as PUBLIC

QUESTION = "Remove The Office (2005) and delete its 62 GB of files? Reply Y to confirm or N"
DROPPED = "I've dropped the question about removing The Office (2005).\n"
MODELS_OWN_QUESTION = "Want me to add Dune: Part Three? Reply yes!"
REMOVE_OFFICE = [("remove_media", {"kind": "series", "id": OFFICE_TVDB, "delete_files": True})]


@pytest.fixture
def daemon(serve, stack, fake_twilio):
    """The daemon, with Twilio's delivery reports for its public URL forwarded to it."""
    started = serve("\n" + stack.toml())
    fake_twilio.route_callbacks(PUBLIC, started.url)
    return started


def nothing_removed(stack) -> bool:
    in_library = any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)
    return in_library and not [r for r in stack.sonarr.requests if r.method == "DELETE"]


def replies(fake_twilio, count: int) -> list[str]:
    assert wait_for(lambda: len(fake_twilio.sent) >= count), fake_twilio.bodies()
    time.sleep(0.2)  # nothing more should follow
    assert len(fake_twilio.sent) == count, fake_twilio.bodies()
    return fake_twilio.bodies()


def remove_with_a_y(daemon, stack, fake_llm, fake_twilio, *, sent_before: int) -> None:
    """Ask to remove The Office, answer the question with a lone Y: it is removed."""
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    daemon.text("delete The Office")
    assert replies(fake_twilio, sent_before + 1)[-1].startswith(QUESTION)
    daemon.text("Y")
    assert replies(fake_twilio, sent_before + 2)[-1] == ("Removed The Office (2005) and "
                                                         "deleted its files.")
    assert not any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)


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
    remove_with_a_y(daemon, stack, fake_llm, fake_twilio, sent_before=3)
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


def message_sends(fake_twilio) -> int:
    return sum(r["path"].endswith("/Messages.json") for r in fake_twilio.requests)


def outbox(daemon) -> list[dict]:
    """Every text (its outbox row), as the daemon stored them."""
    connection = sqlite3.connect(daemon.config.parent / "mediabot.db", timeout=5)
    connection.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in connection.execute("SELECT * FROM outbox ORDER BY id")]
    finally:
        connection.close()


def history_show(daemon) -> str:
    """`mediabot history show` as the operator runs it, beside the daemon."""
    return subprocess.run(
        [sys.executable, "-m", "mediabot.cli", "history", "show", ADMIN, "--config",
         str(daemon.config)], capture_output=True, text=True, timeout=30, check=True,
        env={**os.environ, "MEDIABOT_TWILIO_AUTH_TOKEN": "secret-token"}).stdout


def test_a_y_sent_before_twilio_accepted_the_question_is_not_its_answer(daemon, stack,
                                                                       fake_llm, fake_twilio):
    """Issue 18: Twilio answers 429 three times, so the question waits in the outbox; the Y
    the admin sends meanwhile (for something else) removes nothing, and the question, now
    lapsed, is never sent. Asked again and accepted after two 429s, a Y then removes."""
    fake_twilio.fail_next(429, times=3)
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    daemon.text("delete The Office")
    assert wait_for(lambda: message_sends(fake_twilio) == 3, 20)
    assert wait_for(lambda: outbox(daemon) and outbox(daemon)[0]["attempts"] == 3)
    assert outbox(daemon)[0]["status"] == "pending"
    fake_llm.enqueue_text("Yes to what? I've no question waiting for you.")
    daemon.text("Y")
    assert replies(fake_twilio, 1) == [DROPPED + "Yes to what? I've no question waiting for you."]
    assert nothing_removed(stack)
    assert outbox(daemon)[0]["status"] == "cancelled", "the lapsed question is withdrawn"
    assert wait_for(daemon.settled)

    fake_twilio.fail_next(429, times=2)
    remove_with_a_y(daemon, stack, fake_llm, fake_twilio, sent_before=1)


def test_a_question_twilio_reports_undelivered_lapses(daemon, stack, fake_llm, fake_twilio):
    """The question was accepted, then reported undelivered (30003, phone unreachable): a Y
    afterwards removes nothing and goes to the model, whose prompt says the question never
    arrived; `mediabot history show` shows each text's state."""
    fake_twilio.report_next("undelivered", 30003)
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    daemon.text("delete The Office")
    assert replies(fake_twilio, 1)[0].startswith(QUESTION)
    assert wait_for(lambda: [c["status"] for c in fake_twilio.callbacks] == [204, 204])
    question = outbox(daemon)[0]
    assert (question["delivery"], question["delivery_error"]) == ("undelivered", 30003)
    fake_llm.enqueue_text("My question didn't reach you. Do you still want it removed?")
    daemon.text("Y")
    assert replies(fake_twilio, 2)[1] == ("My question didn't reach you. Do you still want it "
                                          "removed?")
    assert nothing_removed(stack)
    prompt = " ".join(str(m.get("content")) for m in fake_llm.requests[-1]["messages"])
    assert "did not reach this phone, so I dropped it and nothing was removed" in prompt
    assert wait_for(lambda: len(fake_twilio.callbacks) == 4)
    shown = history_show(daemon).splitlines()
    assert shown[-3] == f"texts to {ADMIN} (Alex):"
    assert "  undelivered 30003  Remove The Office (2005) and delete" in shown[-2]
    assert "  delivered          My question didn't reach you." in shown[-1]


FULL_QUESTION = QUESTION + " to keep it (expires in 5 min)."
ASKED_BACK = ("It would remove The Office (2005) from Sonarr and delete its 62 GB of files for "
              "good. If you still want that, tell me and I'll ask again.")


def ask_back(daemon, fake_llm, fake_twilio, asking: str, *, sent_before: int) -> str:
    """Ask to remove The Office, then answer the (accepted) question with ``asking``: the
    reply to it."""
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    daemon.text("delete the office")
    assert replies(fake_twilio, sent_before + 1)[-1] == FULL_QUESTION
    assert wait_for(daemon.settled), "Twilio accepted the question: a Y would answer it now"
    fake_llm.enqueue_text(ASKED_BACK)
    daemon.text(asking)
    return replies(fake_twilio, sent_before + 2)[-1]


@pytest.mark.parametrize("asking", ["delete it?", "sure?", "really?", "yes?", "Y?"])
def test_a_text_that_asks_back_is_no_yes(daemon, stack, fake_llm, fake_twilio, asking):
    """Issue 27: "delete it?" typed back at the question asks, it does not confirm; the
    question lapses as for any other text and the model answers. A plain "Y." then does."""
    assert ask_back(daemon, fake_llm, fake_twilio, asking, sent_before=0) == DROPPED + ASKED_BACK
    assert nothing_removed(stack)
    asked = fake_llm.requests[-1]["messages"][-1]["content"]
    assert f"] {asking}\n\n[Their text did not answer mediabot's removal question" in asked, \
        "the model read the text that asked, and that it dropped the question"
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    daemon.text("delete the office")
    assert replies(fake_twilio, 3)[-1] == FULL_QUESTION
    assert wait_for(daemon.settled)
    daemon.text("Y.")
    assert replies(fake_twilio, 4)[-1] == "Removed The Office (2005) and deleted its files."
    assert not any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)
