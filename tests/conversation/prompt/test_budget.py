"""`[history] max_prompt_tokens`: what a text's first request may cost a cold read, in the
server's tokens (calibrated), whatever the message cap allows; a turn's tool rounds may run
past it (only `max_context_tokens` cuts inside a turn), and the history keeps at least
`MIN_HISTORY_TOKENS` however large the system prompt and tools are."""

import json

import pytest

from mediabot.config import HistoryConfig, parse_config
from mediabot.config.load import ConfigError
from mediabot.conversation.prompt.build import (
    CHARS_PER_TOKEN,
    MIN_HISTORY_TOKENS,
    build_prompt,
    estimate_tokens,
)
from mediabot.model import calibration
from mediabot.store import db
from tests.support.household import ADMIN

SYSTEM = "You are mediabot."
BUDGET = 900


def server_tokens(request: dict, scale: float) -> int:
    """What the fake server (``usage_scale``) counted for one request."""
    tools = request.get("tools")
    sent = request["messages"] + ([{"role": "system", "content": json.dumps(tools)}]
                                  if tools else [])
    return round(scale * estimate_tokens(sent))


def chat(turns: int, words: int = 30) -> list[dict]:
    history = []
    for number in range(turns):
        history += [{"role": "user", "content": f"question {number}: " + "tell me more " * words},
                    {"role": "assistant", "content": "Here is what I know. " * words}]
    return history


def test_the_default_budget_is_a_cold_read_of_about_1400_tokens():
    assert HistoryConfig().max_prompt_tokens == 1400
    assert HistoryConfig().max_context_tokens == 4000
    assert HistoryConfig().max_messages == 20


def test_a_text_s_first_request_fits_the_budget_where_the_message_cap_would_allow_more():
    history = chat(20) + [{"role": "user", "content": "and now?"}]
    capped = build_prompt(SYSTEM, history, max_messages=20, max_tokens=100_000)
    budgeted = build_prompt(SYSTEM, history, max_messages=20, max_tokens=100_000,
                            prompt_tokens=BUDGET)
    assert capped.metrics.estimated_tokens > BUDGET
    assert budgeted.metrics.estimated_tokens <= BUDGET
    assert budgeted.metrics.estimated_tokens >= BUDGET // 2, "evicted in a block, to about half"
    assert budgeted.messages[-1]["content"] == "and now?"


def test_the_tool_rounds_of_a_turn_run_past_the_budget_without_moving_its_start():
    history = chat(6) + [{"role": "user", "content": "search please"}]
    first = build_prompt(SYSTEM, history, max_tokens=100_000, prompt_tokens=BUDGET)
    for round_number in range(3):
        call_id = f"c{round_number}"
        history += [{"role": "assistant", "content": None, "tool_calls": [
                        {"id": call_id, "type": "function",
                         "function": {"name": "search_media", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": call_id, "content": "x" * 1200}]
        during = build_prompt(SYSTEM, history, max_tokens=100_000, prompt_tokens=BUDGET)
        assert during.messages[:len(first.messages)] == first.messages, "the turn's prefix"
    assert during.metrics.estimated_tokens > BUDGET
    hard = build_prompt(SYSTEM, history, max_tokens=BUDGET + 200, prompt_tokens=BUDGET)
    assert hard.metrics.estimated_tokens <= BUDGET + 200, "max_context_tokens still holds"


def test_a_system_prompt_larger_than_the_budget_still_leaves_the_history_its_floor():
    system = "Rules. " * 1000            # ~1750 estimated tokens, more than the budget
    history = chat(20, words=8) + [{"role": "user", "content": "add the british one"}]
    prompt = build_prompt(system, history, max_tokens=100_000, prompt_tokens=BUDGET)
    history_chars = sum(len(m["content"]) for m in prompt.messages[1:])
    assert MIN_HISTORY_TOKENS * CHARS_PER_TOKEN // 2 <= history_chars \
        <= MIN_HISTORY_TOKENS * CHARS_PER_TOKEN
    assert sum(m["role"] == "user" for m in prompt.messages) >= 3, "the turns before it too"


def test_the_budget_is_kept_in_the_server_s_tokens(engine_for, fake_llm):
    """A server that counts 1.5 of its tokens per estimated one: the first request of each
    text stays within the budget as the server counts it, once the ratio is learnt."""
    engine = engine_for(history={"max_messages": 60, "max_prompt_tokens": 1500})
    alex = db.User.get(phone=ADMIN).id
    fake_llm.usage_scale = 1.5
    fake_llm.set_responder(lambda body: "Sure, here is a fairly long answer to that. " * 4)
    for number in range(30):
        engine.handle(alex, f"question {number}: " + "tell me about this show please " * 8)
    counted = [server_tokens(r, 1.5) for r in fake_llm.requests[5:]]
    assert max(counted) <= 1500 * 1.1, counted
    assert max(counted) >= 1500 * 0.8, "the window still fills up to about the budget"
    assert calibration.ratio_for("gpt-4o-mini") == pytest.approx(1.5, rel=0.1)


def test_a_budget_of_zero_is_refused_with_the_key_named():
    with pytest.raises(ConfigError, match=r"\[history\] max_prompt_tokens = 0 must be greater"):
        parse_config({"server": {"public_url": "https://sms.example.com"},
                      "history": {"max_prompt_tokens": 0}}, environ={})


def test_what_a_summary_covers_is_not_sent_again_when_the_budget_grows_back():
    """A calibration that moves lets a later turn's budget grow; the window then starts
    after the rows the rolling summary covers, not at an earlier block it would replay."""
    history = [dict(m, _id=i) for i, m in enumerate(chat(12) + [
        {"role": "user", "content": "and now?"}], 1)]
    tight = build_prompt(SYSTEM, history, max_messages=40, max_tokens=100_000,
                         prompt_tokens=BUDGET)
    through = tight.metrics.first_kept_id - 1
    wide = build_prompt(SYSTEM, history, max_messages=40, max_tokens=100_000,
                        prompt_tokens=BUDGET * 3, summary="They talked.",
                        summary_through=through)
    unsummarised = build_prompt(SYSTEM, history, max_messages=40, max_tokens=100_000,
                                prompt_tokens=BUDGET * 3)
    assert unsummarised.metrics.first_kept_id <= through, "the wider budget reaches back"
    assert wide.metrics.first_kept_id == through + 1
    assert "They talked." in json.dumps(wide.messages)
