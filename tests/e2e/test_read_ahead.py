"""The next prompt read ahead through the daemon, texted as Twilio does, on a fake model that
answers llama-server's ``/props``: after "what's downloading?" (answered in the tool's own
words) the model gets one more request, for one token, whose messages end with a stand-in
for the next text after the reply; it comes once the reply is in the outbox, the person gets
that one reply, and nothing of the stand-in is stored."""

from mediabot.conversation.read_ahead import STAND_IN
from mediabot.store import db
from mediabot.trial.sim.arr import API_KEY
from tests.support.clock import unstamped
from tests.support.household import MEMBER
from tests.support.messages import LLAMA_PROPS
from tests.support.sent import sent_to
from tests.support.texting import by_sms, wait_until


def history_rows() -> list[tuple]:
    return list(db.Message.select(db.Message.id, db.Message.role, db.Message.content)
                .order_by(db.Message.id).tuples())


def test_a_tools_own_answer_is_read_ahead_after_the_reply_is_queued(daemon_for, stack,
                                                                     fake_llm, fake_twilio):
    arr = {"api_key": API_KEY}
    daemon = daemon_for(sonarr={**arr, "url": stack.servers["sonarr"].url},
                        radarr={**arr, "url": stack.servers["radarr"].url})
    fake_llm.serve_root("/props", {**LLAMA_PROPS, "total_slots": 1})
    seen = {}

    def read_ahead(body):
        """What the daemon had done when the one-token request came."""
        seen["replies"] = [row.body for row in db.Outbox.select()]
        seen["rows"] = history_rows()
        return "ignored"
    fake_llm.enqueue_tool_calls([("download_queue", {})])
    fake_llm.set_responder(read_ahead)
    by_sms(daemon, fake_twilio, "what's downloading?")
    assert wait_until(lambda: len(fake_llm.requests) == 2)
    turn, ahead = fake_llm.requests
    [reply] = sent_to(fake_twilio, MEMBER)
    assert turn["max_tokens"] > 1 and ahead["max_tokens"] == 1
    assert seen["replies"] == [reply], "the reply was queued before the read-ahead came"
    assert [m["role"] for m in ahead["messages"][-4:]] == ["assistant", "tool", "assistant",
                                                            "user"]
    assert ahead["messages"][-2]["content"] == reply
    assert unstamped(ahead["messages"][-1]["content"]) == STAND_IN
    assert daemon.worker.wait_idle(10)
    assert sent_to(fake_twilio, MEMBER) == [reply], "exactly one reply"
    assert history_rows() == seen["rows"], "the read-ahead stored nothing"
    assert [row[2] for row in history_rows() if row[1] == "user"] == ["what's downloading?"]
