"""Rolling summaries (``conversation/summarizer.py``, ``[history] summaries``): off by
default; on, a summary of what fell out of the window replaces the pruned line, counted
against the prompt the turn really sent, and a failing summary is neither retried every
turn nor allowed to wipe the last good one."""

from mediabot.conversation.prompt.system_prompt import SUMMARY_PROMPT
from mediabot.store import db
from tests.fakes.openai import Reply
from tests.support.clock import stamped, unstamped
from tests.support.household import ADMIN
from tests.support.prompts import conversation, prelude
from tests.support.worker import answered


def test_summary_covers_what_the_turn_evicted_with_tool_schemas_counted(engine_for, fake_llm):
    """The rolling summary keeps up with the real window (system prompt and schemas count)."""
    engine = engine_for(arr=True, history={"max_messages": 40, "max_context_tokens": 1600,
                                 "summaries": True})
    alex = db.User.get(phone=ADMIN).id

    def respond(body):
        if len(body["messages"]) == 2 and "summary" in body["messages"][0]["content"].lower():
            return "Alex asked many padded questions."
        return "answer " * 20
    fake_llm.set_responder(respond)
    for i in range(40):
        engine.after_turn(answered(engine, alex, f"question {i} " + "pad " * 20))
    fake_llm.enqueue_text("ok")
    engine.handle(alex, "one more")
    seen = [m["content"] for m in conversation(fake_llm.requests[-1]) if m["role"] == "user"]
    first_seen = db.Message.get(db.Message.content == unstamped(seen[0])).id
    unseen = first_seen - 1 - db.User.get_by_id(alex).summary_through
    assert 0 <= unseen < 10, "at most one summary interval is neither summarised nor sent"


def test_a_failing_summary_is_not_retried_on_every_turn(engine_for, fake_llm):
    engine = engine_for(arr=False, history={"max_messages": 4, "summaries": True})
    alex = db.User.get(phone=ADMIN).id
    summary_calls = []

    def respond(body):
        if "summary" in body["messages"][0]["content"].lower():
            summary_calls.append(body)
            return Reply(status=400, error={"error": {"message": "Unsupported parameter: "
                                                      "'max_tokens'", "type": "x"}})
        return "ok"
    fake_llm.set_responder(respond)
    for i in range(30):
        engine.after_turn(answered(engine, alex, f"message {i}"))
    assert 1 <= len(summary_calls) <= 6, "one try per ten newly evicted messages, not 24"
    assert db.User.get_by_id(alex).summary is None


class TestSummaries:
    def test_the_summary_is_handed_the_prompt_the_turn_built(self, engine_for, fake_llm):
        """after_turn counts evictions against the very system prompt and tool schemas the
        model was shown, handed over by the turn rather than built again."""
        engine = engine_for(arr=True, history={"summaries": True})
        alex = db.User.get(phone=ADMIN).id
        fake_llm.enqueue_text("Hello!")
        answer = answered(engine, alex, "hi")
        shown = fake_llm.requests[-1]
        assert answer.reply.text == "Hello!"
        assert answer.frame.system == shown["messages"][0]["content"]
        assert answer.frame.schemas == shown["tools"]
        engine.after_turn(answer)
        assert len(fake_llm.requests) == 1, "nothing evicted yet: no summary call"

    def test_off_by_default_no_summary_calls(self, engine_for, fake_llm):
        engine = engine_for(history={"max_messages": 4})
        alex = db.User.get(phone=ADMIN).id
        fake_llm.set_responder(lambda body: "ok")
        for i in range(20):
            engine.after_turn(answered(engine, alex, f"message {i}"))
        assert len(fake_llm.requests) == 20
        assert db.User.get_by_id(alex).summary is None

    def test_on_summary_replaces_the_pruned_line(self, engine_for, fake_llm):
        engine = engine_for(history={"max_messages": 4, "summaries": True})
        alex = db.User.get(phone=ADMIN).id

        def respond(body):
            if "summary" in body["messages"][0]["content"].lower() and len(body["messages"]) == 2:
                return "Alex likes sci-fi and asked for Alien."
            return "ok"
        fake_llm.set_responder(respond)
        engine.after_turn(answered(engine, alex, "I like sci-fi; get me Alien"))
        for i in range(12):
            engine.after_turn(answered(engine, alex, f"message {i}"))
        user = db.User.get_by_id(alex)
        assert user.summary == "Alex likes sci-fi and asked for Alien."
        assert user.summary_through is not None
        turns = [r["messages"] for r in fake_llm.requests
                 if not r["messages"][0]["content"].startswith(SUMMARY_PROMPT)]
        last = turns[-1]   # evicted in blocks, a summary may be the very last request
        assert last[-1]["content"] == stamped("message 11")
        assert "A summary of them: Alex likes sci-fi" in prelude(last)   # after the shared part
        assert "summary" not in last[0]["content"]
        assert [m["role"] for m in last].count("system") == 1
        assert db.Message.select().count() == 26, "stored messages are never rewritten"

    def test_failed_summary_keeps_the_old_one(self, engine_for, fake_llm):
        engine = engine_for(history={"max_messages": 4, "summaries": True})
        alex = db.User.get(phone=ADMIN).id
        db.User.update(summary="old summary").execute()
        fake_llm.set_responder(lambda body: "ok")
        for i in range(8):
            last = answered(engine, alex, f"message {i}")
        fake_llm.enqueue_error(500, "boom")
        engine.after_turn(last)
        assert db.User.get_by_id(alex).summary == "old summary"
